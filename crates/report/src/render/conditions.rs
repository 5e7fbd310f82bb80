//! Normal and degraded, as 002's Tables 1-6 put them: where an evaluation measured one storage
//! under more than one condition (normal, during a rebuild), a table per workload with each
//! condition's median headline and that median as a percentage of the storage's best
//! condition ("% of best"), and a key finding per storage and degraded condition: how much of
//! its normal figure it kept, its p99 latencies beside it, and plainly when the difference lies
//! within the runs' spread. An evaluation without such a storage gets neither.
//!
//! A configuration's storage and condition are `evaluation.json`'s (`Configuration::storage`,
//! `Configuration::condition`); a storage's conditions are compared with its `normal` one, or
//! with its best where it has no normal figure.

use super::doc::{Block, Finding, Table, num, pct};
use super::findings::FEW_RUNS;
use super::{ReportInput, at, workloads};
use crate::evaluation::{Evaluation, Group, NORMAL, Spread, difference};
use crate::evaluation::{Point, points};

/// A storage measured under two conditions or more.
pub(super) struct Storage<'a> {
    name: &'a str,
    /// Each condition and the configuration that measured the storage in it, in plan order.
    conditions: Vec<(&'a str, &'a str)>,
}

/// The storages measured under more than one condition, in plan order; empty when none was.
pub(super) fn storages(e: &Evaluation) -> Vec<Storage<'_>> {
    let mut out: Vec<Storage<'_>> = Vec::new();
    for c in &e.configurations {
        let entry = (c.condition(), c.name.as_str());
        match out.iter_mut().find(|s| s.name == c.storage()) {
            // One configuration per condition: the plan's checks refuse a second one.
            Some(s) if s.conditions.iter().any(|(k, _)| *k == entry.0) => {}
            Some(s) => s.conditions.push(entry),
            None => out.push(Storage { name: c.storage(), conditions: vec![entry] }),
        }
    }
    out.retain(|s| s.conditions.len() > 1);
    out
}

/// What the key findings compare configurations within: their condition where the evaluation
/// measured a storage under several (normal beside normal, rebuild beside rebuild; the
/// conditions of one storage are this module's findings), else nothing apart ("").
pub(super) fn comparable<'a>(e: &'a Evaluation) -> impl Fn(&str) -> &'a str {
    let apart = !storages(e).is_empty();
    move |configuration| match e.configurations.iter().find(|c| c.name == configuration) {
        Some(c) if apart => c.condition(),
        _ => "",
    }
}

/// The table's condition columns: normal first, then as the plan names them.
fn columns<'a>(storages: &[Storage<'a>]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for k in storages.iter().flat_map(|s| s.conditions.iter().map(|(k, _)| *k)) {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    // Stable: normal moves first, the others keep the plan's order.
    out.sort_by_key(|k| *k != NORMAL);
    out
}

/// One storage at one point: per condition, its group and spread where it has a measured run.
type Cells<'a, 'g> = Vec<(&'a str, Option<(&'g Group<'a>, Spread)>)>;

fn cells<'a, 'g>(storage: &Storage<'a>, point: &'g Point<'a>) -> Cells<'a, 'g> {
    storage
        .conditions
        .iter()
        .map(|(condition, configuration)| {
            let group = point.groups.iter().find(|g| g.configuration == *configuration);
            (*condition, group.and_then(|g| g.spread().map(|s| (g, s))))
        })
        .collect()
}

/// The headline's name and direction at a point, from its first measured run.
fn metric_of(point: &Point<'_>) -> Option<(String, bool)> {
    point
        .groups
        .iter()
        .find_map(|g| g.reported()?.headline.as_ref().map(|h| (h.metric.clone(), h.higher_is_better)))
}

/// A median as a percentage of the best: 100 for the best, less for the others, whichever way
/// the metric is better (for a time, best / value).
fn of_best(value: f64, best: f64, higher_is_better: bool) -> f64 {
    let ratio = if higher_is_better { value / best } else { best / value };
    if ratio.is_finite() { 100.0 * ratio } else { f64::NAN }
}

fn best_of(cells: &Cells<'_, '_>, higher_is_better: bool) -> Option<f64> {
    let medians = cells.iter().filter_map(|(_, c)| c.as_ref().map(|(_, s)| s.median));
    if higher_is_better { medians.reduce(f64::max) } else { medians.reduce(f64::min) }
}

/// The section: what it shows, then a table per workload.
pub(super) fn blocks(input: &ReportInput) -> Vec<Block> {
    let e = &input.evaluation;
    let storages = storages(e);
    if storages.is_empty() {
        return Vec::new();
    }
    let measured: Vec<String> = storages
        .iter()
        .map(|s| {
            let each: Vec<String> = s.conditions.iter().map(|(k, c)| format!("{k} ({c})")).collect();
            format!("{}: {}", s.name, each.join(", "))
        })
        .collect();
    let mut out = vec![
        Block::Heading(2, "Normal and degraded".into()),
        Block::Para(format!(
            "Each storage measured under more than one condition, side by side: every condition's \
             median headline, that median as a percentage of the storage's best condition \
             (% of best), and the figures beside the headline (MB/s) of each condition's reported run. Conditions and their configurations: {}.",
            measured.join("; ")
        )),
    ];
    let all = points(e);
    for workload in workloads(e) {
        let mine: Vec<&Point<'_>> = all.iter().filter(|p| p.workload == workload).collect();
        let Some((metric, higher)) = mine.iter().find_map(|p| metric_of(p)) else { continue };
        out.push(Block::Heading(3, format!("Workload {workload}")));
        out.push(Block::Table(table(input, &storages, &mine, (&metric, higher))));
    }
    out
}

/// Rows: each storage (at each sweep point); columns: each condition's median, then each
/// condition's % of best, then the figures its workload puts beside the headline (io's MB/s),
/// each condition's from its reported run.
fn table(
    input: &ReportInput,
    storages: &[Storage<'_>],
    points: &[&Point<'_>],
    (metric, higher): (&str, bool),
) -> Table {
    let columns = columns(storages);
    let beside_names: Vec<&str> = points
        .iter()
        .flat_map(|p| p.groups.iter())
        .find_map(|g| beside(input, g))
        .map(|b| b.iter().map(|(n, _, _)| *n).collect())
        .unwrap_or_default();
    let mut header = vec!["storage".to_string()];
    header.extend(columns.iter().map(|k| format!("{k} {metric}")));
    header.extend(columns.iter().map(|k| format!("{k} % of best")));
    header.extend(beside_names.iter().flat_map(|n| columns.iter().map(move |k| format!("{k} {n}"))));
    let mut t = Table { header, rows: Vec::new() };
    for p in points {
        for s in storages {
            let cells = cells(s, p);
            let best = best_of(&cells, higher);
            let median = |k: &str| cells.iter().find(|(c, _)| *c == k).and_then(|(_, c)| c.as_ref());
            let mut row = vec![format!("{}{}", s.name, at(p.sweep))];
            row.extend(
                columns
                    .iter()
                    .map(|k| median(k).map_or("—".into(), |(g, s)| num(s.median) + &g.errors_note())),
            );
            row.extend(columns.iter().map(|k| match (median(k), best) {
                (Some((_, s)), Some(best)) => percent(of_best(s.median, best, higher)),
                _ => "—".into(),
            }));
            for name in &beside_names {
                row.extend(columns.iter().map(|k| {
                    let figures = median(k).and_then(|(g, _)| beside(input, g));
                    let value = figures.and_then(|b| b.into_iter().find(|(n, _, _)| n == name)?.1);
                    value.map_or("—".into(), num)
                }));
            }
            t.push(row);
        }
    }
    t
}

/// The figures group `g`'s workload puts beside its headline, from its reported run.
fn beside(input: &ReportInput, g: &Group<'_>) -> Option<Vec<(&'static str, Option<f64>, bool)>> {
    let run = g.reported()?;
    let figures = super::shown(&input.runs.get(&run.id)?.summary.results).beside();
    (!figures.is_empty()).then_some(figures)
}

fn percent(v: f64) -> String {
    if v.is_finite() { pct(v) } else { "—".into() }
}

/// A finding per storage, point and condition other than the one it is compared with.
pub(super) fn findings(input: &ReportInput) -> Vec<Finding> {
    let e = &input.evaluation;
    let storages = storages(e);
    let mut out = Vec::new();
    for p in points(e) {
        let Some((metric, higher)) = metric_of(&p) else { continue };
        let place = format!("{}{}", p.workload, at(p.sweep));
        for s in &storages {
            let cells = cells(s, &p);
            let measured: Vec<(&str, &Group<'_>, &Spread)> =
                cells.iter().filter_map(|(k, c)| c.as_ref().map(|(g, s)| (*k, *g, s))).collect();
            let Some(reference) = reference(&measured, higher) else { continue };
            for other in measured.iter().filter(|m| m.0 != reference.0) {
                let what = Compared { storage: s.name, place: &place, metric: &metric, higher };
                out.extend(finding(input, &what, *other, reference));
            }
        }
    }
    out
}

/// The condition a storage's others are compared with: normal where it has a measured normal
/// figure, else its best.
fn reference<'a, 'g>(
    measured: &[(&'a str, &'g Group<'a>, &'g Spread)],
    higher: bool,
) -> Option<(&'a str, &'g Group<'a>, &'g Spread)> {
    measured.iter().find(|m| m.0 == NORMAL).copied().or_else(|| {
        measured.iter().copied().max_by(|a, b| {
            let o = a.2.median.total_cmp(&b.2.median);
            if higher { o } else { o.reverse() }
        })
    })
}

/// What a finding is about.
struct Compared<'a> {
    storage: &'a str,
    place: &'a str,
    metric: &'a str,
    higher: bool,
}

/// "During rebuild, ssd kept 31 % of its normal IOPS on randread: ...", or that the difference
/// lies within the runs' spread; then the p99 latencies of both reported runs.
fn finding(
    input: &ReportInput,
    w: &Compared<'_>,
    (condition, g, s): (&str, &Group<'_>, &Spread),
    (normal, ng, ns): (&str, &Group<'_>, &Spread),
) -> Option<Finding> {
    let d = difference(s, ns, w.higher)?;
    let share = 100.0 * s.median / ns.median;
    let verb = match (w.higher, share <= 100.0) {
        (true, true) => "kept",
        (true, false) => "delivered",
        (false, _) => "took",
    };
    let (storage, place, metric) = (w.storage, w.place, w.metric);
    let figures =
        format!("{}{} vs {}{} {metric}", num(s.median), g.errors_note(), num(ns.median), ng.errors_note());
    let head =
        format!("During {condition}, {storage} {verb} {} of its {normal} {metric} on {place}", pct(share));
    let mut text = if d.within_spread {
        format!(
            "{head} ({figures}), a difference within the runs' spread ({condition}: {}–{}, {normal}: {}–{}): \
             not a finding.",
            num(s.min),
            num(s.max),
            num(ns.min),
            num(ns.max)
        )
    } else {
        let caveat = if d.few { FEW_RUNS } else { "" };
        format!("{head}: {figures} (medians of {} and {} runs).{caveat}", s.n, ns.n)
    };
    text.push_str(&latencies(input, g, ng));
    Some(Finding { text, claim: d.claimed() })
}

/// " In the reported runs, read p99 went from 0.900 ms to 3.10 ms." for each p99 latency both
/// reported runs have.
fn latencies(input: &ReportInput, degraded: &Group<'_>, normal: &Group<'_>) -> String {
    let p99 = |g: &Group<'_>| -> Vec<(&'static str, f64)> {
        let Some(data) = g.reported().and_then(|r| input.runs.get(&r.id)) else { return Vec::new() };
        let all = super::shown(&data.summary.results).latencies();
        all.into_iter().filter(|(name, _)| name.contains("p99")).filter_map(|(n, v)| Some((n, v?))).collect()
    };
    let after = p99(degraded);
    let changes: Vec<String> = p99(normal)
        .into_iter()
        .filter_map(|(name, before)| {
            let (_, now) = after.iter().find(|(n, _)| *n == name)?;
            Some(format!("{name} went from {} ms to {} ms", num(before), num(*now)))
        })
        .collect();
    if changes.is_empty() {
        return String::new();
    }
    // The reported runs' own percentiles: no spread is known for them.
    format!(" In the reported runs, {}.", changes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::of_best;

    #[test]
    fn percent_of_best_is_100_for_the_best_whichever_way_the_metric_is_better() {
        assert_eq!(of_best(315.0, 1050.0, true), 30.0);
        assert_eq!(of_best(1050.0, 1050.0, true), 100.0);
        // Seconds per log: twice as long is half as good.
        assert_eq!(of_best(4.0, 2.0, false), 50.0);
        assert!(of_best(5.0, 0.0, true).is_nan() && of_best(0.0, 2.0, false).is_nan());
    }
}
