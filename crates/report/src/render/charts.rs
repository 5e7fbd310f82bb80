//! The per-second charts of each group's reported run: the headline rate, latency, disk
//! counters, CPU and power, with the measured phase shaded. Which columns make a chart is a
//! table: the host's here, each workload's in its own file (`Shown::charts`); a chart
//! whose columns a bundle lacks (no disk under tmpfs, no power meter) is left out, and so is a
//! line that stays at zero.

use super::doc::Block;
use super::svg::{Chart, Line};
use super::workload::{Shown, shown};
use super::{ReportInput, Series, at};
use crate::columns::{Column, Unit, pace, rebuild, system};

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
        let Some(run) = g.shown() else { continue };
        let Some(data) = input.runs.get(&run.id) else { continue };
        let Some(series) = data.series.as_ref() else { continue };
        // Under steady state only the last rounds count: shade those.
        let shade = series.counted_window(data.summary.steady_state.as_ref());
        let workload = shown(&data.summary.results);
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

/// The workload's charts and the host's that a series has columns for, then each device's
/// bytes when the run used several and the rebuild progress of every stack that rebuilt.
pub(super) fn of(workload: &dyn Shown, series: &Series, shade: Option<(f64, f64)>) -> Vec<Chart> {
    let fixed = workload.charts().iter().chain(HOST).filter_map(|spec| chart(series, spec, shade));
    fixed.chain(by_device(series, shade)).chain(rebuild_progress(series, shade)).collect()
}

fn chart(series: &Series, spec: &Spec, shade: Option<(f64, f64)>) -> Option<Chart> {
    let lines = spec
        .columns
        .iter()
        .filter_map(|(column, name)| line(series, name.to_string(), series.column(*column)?));
    titled(spec.title.into(), spec.columns[0].0.unit, lines.collect(), shade)
}

/// A line of `values` against the series' seconds; none for one at zero or empty throughout
/// (writes in a read-only job, an idle array's progress), which says nothing.
fn line(series: &Series, name: String, values: &[Option<f64>]) -> Option<Line> {
    values
        .iter()
        .any(|x| x.is_some_and(|x| x != 0.0))
        .then(|| Line { name, points: series.t_s.iter().copied().zip(values.iter().copied()).collect() })
}

fn titled(title: String, unit: Unit, lines: Vec<Line>, shade: Option<(f64, f64)>) -> Option<Chart> {
    (!lines.is_empty()).then(|| Chart {
        title,
        x_label: "seconds since the run started".into(),
        y_label: unit.label().into(),
        lines,
        shade,
        x_start: Some(0.0),
        ..Chart::default()
    })
}

/// Each device's read and write bytes per second, when the run used several devices (the
/// members of a btrfs RAID1, a database and its log on their own volumes).
fn by_device(series: &Series, shade: Option<(f64, f64)>) -> Option<Chart> {
    let directions =
        [(system::DISK_READ_BYTES_PER_SEC, "reads"), (system::DISK_WRITE_BYTES_PER_SEC, "writes")];
    let lines = directions.iter().flat_map(|(column, what)| {
        let each = series.each_device(*column);
        each.into_iter().filter_map(move |(name, values)| line(series, format!("{name} {what}"), values))
    });
    titled(
        "Disk bytes per second by device".into(),
        system::DISK_READ_BYTES_PER_SEC.unit,
        lines.collect(),
        shade,
    )
}

/// The percent done of each md array or btrfs filesystem that rebuilt, resynced, scrubbed or
/// balanced during the run: the degraded seconds beside the workload's.
fn rebuild_progress(series: &Series, shade: Option<(f64, f64)>) -> Option<Chart> {
    let busy: Vec<&str> = series
        .each(rebuild::PREFIX, rebuild::ACTION)
        .into_iter()
        .filter(|(_, codes)| codes.iter().any(|c| c.is_some_and(|c| c > 0.0)))
        .map(|(stack, _)| stack)
        .collect();
    let lines =
        series.each(rebuild::PREFIX, rebuild::PCT_DONE).into_iter().filter(|(stack, _)| busy.contains(stack));
    // A rebuild at 0 % for its first seconds is still one: drawn whatever its values.
    let lines = lines.map(|(stack, values)| Line {
        name: format!("{stack} % done"),
        points: series.t_s.iter().copied().zip(values.iter().copied()).collect(),
    });
    titled("Rebuild progress".into(), rebuild::PCT_DONE.unit, lines.collect(), shade)
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

    #[test]
    fn a_run_on_several_devices_charts_each_and_a_rebuild_charts_its_progress() {
        let csv = "t_s,phase,disk.loop0.read_bytes_per_sec,disk.loop0.write_bytes_per_sec,\
                   disk.loop1.read_bytes_per_sec,disk.loop1.write_bytes_per_sec,\
                   rebuild./mnt/a.b.action,rebuild./mnt/a.b.pct_done,rebuild.md0.action,rebuild.md0.pct_done\n\
                   1,measure,10,0,20,0,0,,0,\n2,measure,10,0,20,5,6,0,0,\n3,measure,10,0,20,5,6,40,0,\n";
        let series = Series::parse(csv).unwrap();
        let devices = by_device(&series, None).unwrap();
        let names: Vec<&str> = devices.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["loop0 reads", "loop1 reads", "loop1 writes"]);
        let progress = rebuild_progress(&series, None).unwrap();
        assert_eq!(progress.lines.len(), 1, "an idle array has no line");
        assert_eq!(progress.lines[0].name, "/mnt/a.b % done");
        assert_eq!(progress.lines[0].points, [(1.0, None), (2.0, Some(0.0)), (3.0, Some(40.0))]);
        let idle =
            Series::parse("t_s,phase,rebuild.md0.action,rebuild.md0.pct_done\n1,measure,0,\n").unwrap();
        assert!(rebuild_progress(&idle, None).is_none() && by_device(&idle, None).is_none());
    }
}
