//! The per-second charts of each group's reported run: the headline rate, latency, disk
//! counters, CPU and power, with the measured phase shaded. Which columns make a chart is a
//! table: the host's here, each workload's in its own file (`WorkloadResults::charts`); a chart
//! whose columns a bundle lacks (no disk under tmpfs, no power meter) is left out, and so is a
//! line that stays at zero.

use super::doc::Block;
use super::svg::{Chart, Line};
use super::workload::WorkloadResults;
use super::{ReportInput, Series, at};
use crate::columns::{Column, pace, system};

/// A chart: its title and (column, legend name) for each line; the y axis is in the columns'
/// unit, which they share.
pub(crate) struct Spec {
    title: &'static str,
    columns: &'static [(Column, &'static str)],
}

/// A chart of these columns. Chart tables are constants, so one whose lines do not share a
/// unit does not compile.
pub(crate) const fn spec(title: &'static str, columns: &'static [(Column, &'static str)]) -> Spec {
    let mut i = 1;
    while i < columns.len() {
        assert!(
            columns[i].0.unit as u8 == columns[0].0.unit as u8,
            "the lines of a chart share its axis unit"
        );
        i += 1;
    }
    Spec { title, columns }
}

/// A paced run's schedule lag (io under a rate cap, the mailbox under a target): left out of
/// an unpaced run's report, whose lag columns are empty.
pub(crate) const SCHEDULE_LAG: Spec =
    spec("Schedule lag", &[(pace::SCHEDULE_LAG_P99_MS, "p99"), (pace::SCHEDULE_LAG_MAX_MS, "max")]);

/// The host's charts, after the workload's own.
const HOST: &[Spec] = &[
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
        let shade = series.counted_window(data.summary.steady_state.as_ref());
        let workload = data.summary.results.workload();
        let mut charts = of(workload, series, shade);
        charts.iter_mut().for_each(|c| c.band = workload.band());
        if charts.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push(Block::Heading(2, "Per second".into()));
            out.push(Block::Para(
                "Each group's reported run, second by second; the shaded band is the measured \
                 phase that counts (warm-up before it, verification after it, and under steady state the \
                 rounds before the steady window are not counted); a replay's cold start, the leading \
                 seconds until its response time settled, is marked in orange."
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

/// The workload's charts and the host's that a series has columns for.
pub(super) fn of(workload: &dyn WorkloadResults, series: &Series, shade: Option<(f64, f64)>) -> Vec<Chart> {
    workload.charts().iter().chain(HOST).filter_map(|spec| chart(series, spec, shade)).collect()
}

fn chart(series: &Series, spec: &Spec, shade: Option<(f64, f64)>) -> Option<Chart> {
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
    #[should_panic(expected = "the lines of a chart share its axis unit")]
    fn the_lines_of_a_chart_share_its_axis_unit() {
        // Every chart table is a constant of `spec`s, where this fails to compile.
        let _ = spec("mixed", &[(system::CPU_USER_PCT, "user"), (system::POWER_WATTS, "power")]);
    }
}
