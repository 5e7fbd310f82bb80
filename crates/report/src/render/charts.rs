//! The per-second charts of each group's reported run: the headline rate, latency, disk
//! counters, CPU and power, with the measured phase shaded. Which columns make a chart is a
//! table here; a chart whose columns a bundle lacks (no disk under tmpfs, no power meter) is
//! left out, and so is a line that stays at zero.

use super::doc::Block;
use super::svg::{Chart, Line};
use super::{ReportInput, Series, at};

/// A chart: its title, the unit of its y axis, and (column, legend name) for each line.
struct Spec {
    title: &'static str,
    unit: &'static str,
    columns: &'static [(&'static str, &'static str)],
}

const SPECS: &[Spec] = &[
    Spec {
        title: "I/O per second",
        unit: "IOPS",
        columns: &[("read_iops", "read"), ("write_iops", "write")],
    },
    Spec { title: "Orders per minute", unit: "OPM", columns: &[("opm", "OPM")] },
    Spec {
        title: "Mailbox I/O per second",
        unit: "I/O per s",
        columns: &[
            ("transactional_iops", "transactional"),
            ("db_reads_per_sec", "DB reads"),
            ("db_writes_per_sec", "DB writes"),
            ("log_writes_per_sec", "log writes"),
        ],
    },
    Spec {
        title: "Latency",
        unit: "µs",
        columns: &[
            ("read_lat_p50_us", "read p50"),
            ("read_lat_p99_us", "read p99"),
            ("write_lat_p50_us", "write p50"),
            ("write_lat_p99_us", "write p99"),
        ],
    },
    Spec {
        title: "Order response time",
        unit: "ms",
        columns: &[("order_rt_p50_ms", "p50"), ("order_rt_p99_ms", "p99")],
    },
    Spec {
        title: "Mailbox latency",
        unit: "ms",
        columns: &[
            ("db_read_avg_ms", "DB read"),
            ("db_write_avg_ms", "DB write"),
            ("log_write_avg_ms", "log write"),
        ],
    },
    Spec { title: "Disk busy", unit: "%", columns: &[("disk_busy_pct", "busy")] },
    Spec {
        title: "Disk I/O per second",
        unit: "per s",
        columns: &[("disk_reads_per_sec", "reads"), ("disk_writes_per_sec", "writes")],
    },
    Spec {
        title: "CPU",
        unit: "%",
        columns: &[
            ("cpu_user_pct", "user"),
            ("cpu_system_pct", "system"),
            ("cpu_iowait_pct", "iowait"),
            ("storbench_cpu_pct", "storbench, % of one core"),
        ],
    },
    Spec { title: "Power", unit: "W", columns: &[("power_watts", "power")] },
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
    let lines: Vec<Line> = spec
        .columns
        .iter()
        .filter_map(|(column, name)| {
            // A line at zero throughout (writes in a read-only job) says nothing.
            let values = series.values(column).filter(|v| v.iter().any(|x| x.is_some_and(|x| x != 0.0)))?;
            let points = series.t_s.iter().copied().zip(values.iter().copied()).collect();
            Some(Line { name: name.to_string(), points })
        })
        .collect();
    (!lines.is_empty()).then(|| Chart {
        title: spec.title.into(),
        x_label: "seconds since the run started".into(),
        y_label: spec.unit.into(),
        lines,
        shade,
        x_start: Some(0.0),
        ..Chart::default()
    })
}
