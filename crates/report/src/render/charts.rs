//! The per-second charts of each group's reported run: the headline rate, latency, disk
//! counters, CPU and power, with the measured phase shaded. Which columns make a chart is a
//! table here; a chart whose columns a bundle lacks (no disk under tmpfs, no power meter) is
//! left out, and so is a line that stays at zero.

use super::doc::Block;
use super::svg::{Chart, Line};
use super::{ReportInput, Series, at};
use crate::columns::{Column, integrity, io, mailbox, oltp, system};

/// A chart: its title and (column, legend name) for each line; the y axis is in the columns'
/// unit, which they share.
struct Spec {
    title: &'static str,
    columns: &'static [(Column, &'static str)],
    /// A column only the workload's own file has: the chart is drawn only where it is, since
    /// a name it shares (`errors`) means another workload's counter in another file.
    needs: Option<Column>,
}

const fn spec(title: &'static str, columns: &'static [(Column, &'static str)]) -> Spec {
    Spec { title, columns, needs: None }
}

const fn integrity_spec(title: &'static str, columns: &'static [(Column, &'static str)]) -> Spec {
    Spec { title, columns, needs: Some(integrity::DELAYED) }
}

const SPECS: &[Spec] = &[
    spec("I/O per second", &[(io::READ_IOPS, "read"), (io::WRITE_IOPS, "write")]),
    spec("Orders per minute", &[(oltp::OPM, "OPM")]),
    spec(
        "Mailbox I/O per second",
        &[
            (mailbox::TRANSACTIONAL_IOPS, "transactional"),
            (mailbox::DB_READS_PER_SEC, "DB reads"),
            (mailbox::DB_WRITES_PER_SEC, "DB writes"),
            (mailbox::LOG_WRITES_PER_SEC, "log writes"),
        ],
    ),
    spec(
        "Latency",
        &[
            (io::READ_LAT_P50_US, "read p50"),
            (io::READ_LAT_P99_US, "read p99"),
            (io::WRITE_LAT_P50_US, "write p50"),
            (io::WRITE_LAT_P99_US, "write p99"),
        ],
    ),
    spec("Order response time", &[(oltp::ORDER_RT_P50_MS, "p50"), (oltp::ORDER_RT_P99_MS, "p99")]),
    spec(
        "Mailbox latency",
        &[
            (mailbox::DB_READ_AVG_MS, "DB read"),
            (mailbox::DB_WRITE_AVG_MS, "DB write"),
            (mailbox::LOG_WRITE_AVG_MS, "log write"),
        ],
    ),
    integrity_spec(
        "Integrity I/O per second",
        &[
            (integrity::IOPS, "all"),
            (integrity::RANDOM_IOPS, "random"),
            (integrity::READ_AHEAD_IOPS, "read-ahead"),
            (integrity::BULK_IOPS, "bulk"),
            (integrity::LAZY_WRITER_IOPS, "lazy writer"),
            (integrity::LOG_IOPS, "log writer"),
        ],
    ),
    integrity_spec(
        "Integrity latency (mean)",
        &[
            (integrity::AVG_MS, "all"),
            (integrity::RANDOM_AVG_MS, "random"),
            (integrity::READ_AHEAD_AVG_MS, "read-ahead"),
            (integrity::BULK_AVG_MS, "bulk"),
            (integrity::LAZY_WRITER_AVG_MS, "lazy writer"),
            (integrity::LOG_AVG_MS, "log writer"),
        ],
    ),
    integrity_spec("Integrity data file", &[(integrity::DATA_FILE_BYTES, "size")]),
    integrity_spec(
        "Integrity errors, throttled and delayed I/Os",
        &[
            (integrity::ERRORS, "errors"),
            (integrity::THROTTLED, "throttled"),
            (integrity::DELAYED, "delayed"),
        ],
    ),
    spec("Disk busy", &[(system::DISK_BUSY_PCT, "busy")]),
    spec(
        "Disk I/O per second",
        &[(system::DISK_READS_PER_SEC, "reads"), (system::DISK_WRITES_PER_SEC, "writes")],
    ),
    spec(
        "CPU",
        &[
            (system::CPU_USER_PCT, "user"),
            (system::CPU_SYSTEM_PCT, "system"),
            (system::CPU_IOWAIT_PCT, "iowait"),
            (system::STORBENCH_CPU_PCT, "storbench, % of one core"),
        ],
    ),
    spec("Power", &[(system::POWER_WATTS, "power")]),
];

pub(super) fn blocks(input: &ReportInput) -> Vec<Block> {
    let mut out = Vec::new();
    for g in input.evaluation.groups() {
        let Some(run) = g.reported() else { continue };
        let Some(data) = input.runs.get(&run.id) else { continue };
        let Some(series) = data.series.as_ref() else { continue };
        // Under steady state only the last rounds count: shade those.
        let charts = of(series, series.counted_window(data.summary.steady_state.as_ref()));
        if charts.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push(Block::Heading(2, "Per second".into()));
            out.push(Block::Para(
                "Each group's reported run, second by second; the shaded band is the measured \
                 phase that counts (warm-up before it, verification after it, and under steady state the \
                 rounds before the steady window are not counted)."
                    .into(),
            ));
        }
        out.push(Block::Heading(
            3,
            format!("{} on {}{} (run {})", g.workload, g.configuration, at(g.sweep), run.id),
        ));
        out.extend(charts.into_iter().map(Block::Chart));
    }
    out
}

/// The charts a series has columns for.
pub(super) fn of(series: &Series, shade: Option<(f64, f64)>) -> Vec<Chart> {
    SPECS.iter().filter_map(|spec| chart(series, spec, shade)).collect()
}

fn chart(series: &Series, spec: &Spec, shade: Option<(f64, f64)>) -> Option<Chart> {
    if spec.needs.is_some_and(|c| series.column(c).is_none()) {
        return None;
    }
    let lines: Vec<Line> = spec
        .columns
        .iter()
        .filter_map(|(column, name)| {
            // A line at zero throughout (writes in a read-only job) says nothing.
            let values = series.values(*column).filter(|v| v.iter().any(|x| x.is_some_and(|x| x != 0.0)))?;
            let points = series.t_s.iter().copied().zip(values.iter().copied()).collect();
            Some(Line { name: name.to_string(), points })
        })
        .collect();
    (!lines.is_empty()).then(|| Chart {
        title: spec.title.into(),
        x_label: "seconds since the run started".into(),
        y_label: spec.columns[0].0.unit.label().into(),
        lines,
        shade,
        x_start: Some(0.0),
        ..Chart::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_of_a_chart_share_its_axis_unit() {
        for spec in SPECS {
            let unit = spec.columns[0].0.unit;
            assert!(spec.columns.iter().all(|(c, _)| c.unit == unit), "{}", spec.title);
        }
    }
}
