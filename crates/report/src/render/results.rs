//! The results section: per workload, a scaling curve where it was swept, then a table per
//! configuration (and sweep point) with every repetition, the reported run marked, and the
//! spread under it.

use super::doc::{Block, Row, Table, num, opt, pct};
use super::svg::{Chart, Line};
use super::{ReportInput, RunData, at, plural, sweep_value, workloads};
use crate::columns::system;
use crate::evaluation::{Group, RunRecord, RunStatus};

pub(super) fn blocks(input: &ReportInput) -> Vec<Block> {
    let e = &input.evaluation;
    let mut out = vec![Block::Heading(2, "Results".into())];
    let points = crate::evaluation::points(e);
    for workload in workloads(e) {
        out.push(Block::Heading(3, format!("Workload {workload}")));
        let mine: Vec<&crate::evaluation::Point<'_>> =
            points.iter().filter(|p| p.workload == workload).collect();
        if mine.iter().any(|p| p.sweep.is_some()) {
            out.push(Block::Chart(scaling(workload, &mine)));
        }
        for p in mine.iter().filter(|p| p.groups.len() > 1) {
            out.extend(share_of_best(p));
        }
        for g in mine.iter().flat_map(|p| &p.groups) {
            out.push(Block::Para(format!("{}{}", g.configuration, at(g.sweep))));
            out.push(Block::Table(table(input, g)));
            out.push(Block::Para(spread_line(g)));
        }
    }
    out
}

/// 002's "% of best": each configuration's median at one point as a share of the best one's.
fn share_of_best(p: &crate::evaluation::Point<'_>) -> Vec<Block> {
    let medians: Vec<(&str, f64, bool, String)> = p
        .groups
        .iter()
        .filter_map(|g| {
            let h = g.reported()?.headline.as_ref()?;
            Some((g.configuration, g.spread()?.median, h.higher_is_better, h.metric.clone()))
        })
        .collect();
    let Some((_, _, higher, metric)) = medians.first().cloned() else { return Vec::new() };
    let best = medians.iter().map(|m| m.1).reduce(if higher { f64::max } else { f64::min }).unwrap_or(0.0);
    let mut t = Table::new(&["configuration", &format!("median {metric}"), "% of best"]);
    for (name, median, _, _) in &medians {
        let share = if higher { median / best } else { best / median };
        t.push(vec![
            name.to_string(),
            num(*median),
            if share.is_finite() { format!("{:.1} %", 100.0 * share) } else { "—".into() },
        ]);
    }
    vec![
        Block::Para(format!("Each configuration's median{} as a share of the best one's:", at(p.sweep))),
        Block::Table(t),
    ]
}

/// Median headline against the swept value, a line per configuration. The sweep's points are
/// spaced evenly in plan order and labelled with their values (sweeps usually double).
fn scaling(workload: &str, points: &[&crate::evaluation::Point<'_>]) -> Chart {
    let mut lines: Vec<Line> = Vec::new();
    let mut metric = String::new();
    for (i, p) in points.iter().enumerate() {
        for g in &p.groups {
            let y = g.spread().map(|s| s.median);
            if let Some(h) = g.reported().and_then(|r| r.headline.as_ref()) {
                metric = h.metric.clone();
            }
            let point = (i as f64, y);
            match lines.iter_mut().find(|l| l.name == g.configuration) {
                Some(l) => l.points.push(point),
                None => lines.push(Line { name: g.configuration.to_string(), points: vec![point] }),
            }
        }
    }
    let param = points.iter().find_map(|p| p.sweep.map(|s| s.param.clone())).unwrap_or_default();
    Chart {
        title: format!("{workload}: median {metric} by {param}"),
        x_label: param,
        y_label: metric,
        lines,
        x_names: points.iter().map(|p| p.sweep.map(sweep_value).unwrap_or_default()).collect(),
        dots: true,
        ..Chart::default()
    }
}

/// Every repetition of one group; columns no run has a value for are left out.
fn table(input: &ReportInput, g: &Group<'_>) -> Table {
    let metric =
        g.runs.iter().find_map(|r| r.headline.as_ref()).map_or("result".into(), |h| h.metric.clone());
    let first = g.runs.iter().find_map(|r| input.runs.get(&r.id));
    let lat_names = first.map(latencies).unwrap_or_default();
    let beside_names = first.map(beside).unwrap_or_default();
    let mut header: Vec<String> = vec!["run".into(), "status".into(), metric.clone()];
    header.extend(beside_names.iter().map(|(n, _, _)| n.to_string()));
    header.extend(lat_names.iter().map(|(n, _)| format!("{n} ms")));
    header.extend(["CPU %", "idle W", "active W"].map(String::from));
    let meter_names: Vec<String> =
        first.map(meters).unwrap_or_default().into_iter().map(|(n, _)| n).collect();
    header.extend(meter_names.iter().map(|n| format!("{n} W")));
    header.push(format!("{metric}/W"));
    header.extend(beside_names.iter().filter(|(_, _, w)| *w).map(|(n, _, _)| format!("{n}/W")));
    header.push("reported".into());
    let mut t = Table { header, rows: Vec::new() };
    // The median by the group itself, whatever evaluation.json's flags say.
    let reported = g.reported().map(|r| r.id.as_str());
    for r in &g.runs {
        let marked = reported == Some(r.id.as_str());
        let data = input.runs.get(&r.id);
        let figure = r.headline.as_ref().map_or_else(|| opt(None, ""), |h| num(h.value) + &h.errors_note());
        let mut cells = vec![format!("r{}", r.repetition), status(r, data), figure];
        let also = data.map(beside).unwrap_or_default();
        let also_of = |n: &str| also.iter().find(|(m, _, _)| *m == n).and_then(|(_, v, _)| *v);
        cells.extend(beside_names.iter().map(|(n, _, _)| opt(also_of(n), "")));
        let lats = data.map(latencies).unwrap_or_default();
        cells.extend(
            lat_names.iter().map(|(n, _)| opt(lats.iter().find(|(m, _)| m == n).and_then(|(_, v)| *v), "")),
        );
        cells.push(opt(data.and_then(cpu_pct), ""));
        cells.extend([r.idle_watts, r.active_watts].map(|v| opt(v, "")));
        let each = data.map(meters).unwrap_or_default();
        cells.extend(
            meter_names.iter().map(|n| opt(each.iter().find(|(m, _)| m == n).and_then(|(_, w)| *w), "")),
        );
        cells.push(opt(r.per_watt, ""));
        let per_watt = |n: &str| Some(also_of(n)? / r.active_watts.filter(|w| *w > 0.0)?);
        cells.extend(beside_names.iter().filter(|(_, _, w)| *w).map(|(n, _, _)| opt(per_watt(n), "")));
        cells.push(if marked { "◀ median".into() } else { String::new() });
        t.rows.push(Row { cells, marked });
    }
    t.rows.extend(median_idle(g, &t.header));
    drop_empty_columns(&mut t);
    t
}

/// Under the runs, the median of their idle power (each run's idle window is the machine's,
/// whatever the run did after it), where any was measured.
fn median_idle(g: &Group<'_>, header: &[String]) -> Option<Row> {
    let mut idle: Vec<f64> = g.runs.iter().filter_map(|r| r.idle_watts).collect();
    let column = header.iter().position(|h| h == "idle W")?;
    idle.sort_by(f64::total_cmp);
    let median = match idle.len() {
        0 => return None,
        n if n % 2 == 1 => idle[n / 2],
        n => (idle[n / 2 - 1] + idle[n / 2]) / 2.0,
    };
    let mut cells = vec![String::new(); header.len()];
    cells[0] = format!("median idle ({} run{})", idle.len(), plural(idle.len()));
    cells[column] = num(median);
    Some(Row { cells, marked: false })
}

/// The run's status, with why it failed: the run's error, or else (a check that failed) what
/// its summary says went wrong.
fn status(r: &RunRecord, data: Option<&RunData>) -> String {
    let s = r.status;
    let why = r.error.clone().or_else(|| {
        let checked = r.status == RunStatus::CheckFailed;
        data.filter(|_| checked).and_then(|d| d.summary.results.workload().failure())
    });
    match why {
        Some(e) => format!("{s}: {e}"),
        None => s.to_string(),
    }
}

/// Each named power meter's active watts (001: the server and the enclosure, each and the
/// total), where the run read several.
fn meters(data: &RunData) -> Vec<(String, Option<f64>)> {
    let Some(s) = &data.series else { return Vec::new() };
    let each = s.measured_means_each(crate::columns::meter::PREFIX, crate::columns::meter::WATTS);
    each.into_iter().map(|(n, w)| (n.to_string(), w)).collect()
}

/// The figures its workload puts beside the headline.
fn beside(data: &RunData) -> Vec<(&'static str, Option<f64>, bool)> {
    super::shown(&data.summary.results).beside()
}

/// The latencies a reader of the run's workload looks at, in milliseconds.
fn latencies(data: &RunData) -> Vec<(&'static str, Option<f64>)> {
    super::shown(&data.summary.results).latencies()
}

/// Host CPU busy (user + system) over the measured phase.
fn cpu_pct(data: &RunData) -> Option<f64> {
    let s = data.series.as_ref()?;
    Some(s.measured_mean(system::CPU_USER_PCT)? + s.measured_mean(system::CPU_SYSTEM_PCT).unwrap_or(0.0))
}

/// Removes the columns in which every row has a dash or nothing.
fn drop_empty_columns(t: &mut Table) {
    let keep: Vec<bool> = (0..t.header.len())
        .map(|i| t.rows.iter().any(|r| r.cells.get(i).is_some_and(|c| !c.is_empty() && c != "—")))
        .collect();
    let filter = |cells: &mut Vec<String>| {
        let mut i = 0;
        cells.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    };
    filter(&mut t.header);
    for r in &mut t.rows {
        filter(&mut r.cells);
    }
}

fn spread_line(g: &Group<'_>) -> String {
    match g.spread() {
        Some(s) if s.n < 2 => format!(
            "One measured run: {}{}; with one run its spread is unknown (repeat it to know it).",
            num(s.median),
            g.errors_note()
        ),
        Some(s) => format!(
            "Spread over {} measured run{}: median {}{}, min–max {}–{}, a range of {} of the median.",
            s.n,
            plural(s.n),
            num(s.median),
            g.errors_note(),
            num(s.min),
            num(s.max),
            pct(s.range_pct)
        ),
        None => {
            let failed = g
                .runs
                .iter()
                .filter(|r| matches!(r.status, RunStatus::CheckFailed | RunStatus::Failed))
                .count();
            match failed {
                0 => "No measured run yet.".into(),
                n => format!(
                    "No run passed: {n} of {} failed (their status below says why), so there is no median.",
                    g.runs.len()
                ),
            }
        }
    }
}
