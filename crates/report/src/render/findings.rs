//! Key findings in the reference reports' words: "A delivered 35 % more OPM than B", power
//! when active and idle, performance per watt; and, as plainly, a difference that lies within
//! the run-to-run spread is said not to be a finding.
//!
//! Two configurations that ran on one disk measured the same storage: a difference between
//! them is said to be no finding.
//!
//! Every figure is a group's reported (median) run; power figures are that run's own.

use super::doc::{Finding, num, pct};
use super::{at, plural, points};
use crate::evaluation::{Evaluation, Group, RunStatus, Spread, SweepPoint, difference};
use crate::input::ReportInput;

/// The findings of a whole evaluation, point by point.
pub(super) fn of(input: &ReportInput) -> Vec<Finding> {
    let e = &input.evaluation;
    // Results whose runs disagree widely come first: every figure below stands on them.
    let mut out: Vec<Finding> = crate::stability::unstable(input)
        .into_iter()
        .map(|u| Finding { text: u.text, claim: false })
        .collect();
    let kind_of = super::conditions::comparable(e);
    // The differences of configurations that share a disk, said once per pair.
    let mut shared: Vec<(&str, &str, f64)> = Vec::new();
    for p in points(e) {
        let mut measured: Vec<(&Group<'_>, Spread)> =
            p.groups.iter().filter_map(|g| g.spread().map(|s| (g, s))).collect();
        let Some(higher) = measured.first().and_then(|(g, _)| higher_is_better(g)) else { continue };
        measured.sort_by(|a, b| {
            let o = a.1.median.total_cmp(&b.1.median);
            if higher { o.reverse() } else { o }
        });
        let place = format!("{}{}", p.workload, at(p.sweep));
        let mut kinds: Vec<&str> = Vec::new();
        for (g, _) in &measured {
            if !kinds.contains(&kind_of(g.configuration)) {
                kinds.push(kind_of(g.configuration));
            }
        }
        for kind in kinds {
            let alike: Vec<&(&Group<'_>, Spread)> =
                measured.iter().filter(|(g, _)| kind_of(g.configuration) == kind).collect();
            match alike.as_slice() {
                [(g, s)] => out.push(alone(&place, g, s)),
                [best, rest @ ..] => {
                    for other in rest {
                        let (a, b) = ((best.0, &best.1), (other.0, &other.1));
                        if input.one_disk(a.0.configuration, b.0.configuration).is_none() {
                            out.extend(pair(&place, a, b));
                        } else if let Some(d) = higher_is_better(a.0).and_then(|h| difference(a.1, b.1, h)) {
                            shared.push((a.0.configuration, b.0.configuration, d.pct.abs()));
                        }
                    }
                }
                [] => {}
            }
        }
    }
    out.extend(one_disk(input, &shared));
    out.extend(scaling(e));
    if out.is_empty() {
        let failed = e.runs.iter().filter(|r| r.status == RunStatus::Failed).count();
        let text = match failed {
            0 => "No run has finished with a result yet.".into(),
            n => format!("No run has a result that counts: {n} failed (see Results for why)."),
        };
        out.push(Finding { text, claim: false });
    }
    out
}

/// A point of a scaling curve: where, the spread there, and the metric's name.
type CurvePoint<'a> = (&'a SweepPoint, Spread, String);

/// A sweep in one sentence per configuration, as a lab report describes its scaling curve:
/// from the first point to the last, and the peak when it is elsewhere.
fn scaling(e: &Evaluation) -> Vec<Finding> {
    let mut curves: Vec<(&str, &str, Vec<CurvePoint<'_>>)> = Vec::new();
    for g in e.groups() {
        let (Some(point), Some(s)) = (g.sweep, g.spread()) else { continue };
        let entry = (point, s, metric(&g));
        match curves.iter_mut().find(|c| c.0 == g.workload && c.1 == g.configuration) {
            Some(c) => c.2.push(entry),
            None => curves.push((g.workload, g.configuration, vec![entry])),
        }
    }
    curves
        .into_iter()
        .filter(|c| c.2.len() >= 2)
        .map(|(workload, configuration, points)| {
            let (first, last) = (&points[0], &points[points.len() - 1]);
            let peak = points.iter().max_by(|a, b| a.1.median.total_cmp(&b.1.median)).unwrap_or(last);
            let value = |p: &SweepPoint| p.value.to_string().trim_matches('"').to_string();
            let ratio = if first.1.median != 0.0 { last.1.median / first.1.median } else { f64::NAN };
            let mut text = format!(
                "{configuration} on {workload} went from {} {} at {} = {} to {} at {} = {} ({ratio:.2}x)",
                num(first.1.median),
                first.2,
                first.0.param,
                value(first.0),
                num(last.1.median),
                last.0.param,
                value(last.0),
            );
            if !std::ptr::eq(peak, last) {
                text.push_str(&format!(
                    "; highest at {} = {}: {}",
                    peak.0.param,
                    value(peak.0),
                    num(peak.1.median)
                ));
            }
            text.push('.');
            Finding { text, claim: true }
        })
        .collect()
}

fn higher_is_better(g: &Group<'_>) -> Option<bool> {
    Some(g.reported()?.headline.as_ref()?.higher_is_better)
}

fn metric(g: &Group<'_>) -> String {
    g.reported().and_then(|r| r.headline.as_ref()).map(|h| h.metric.clone()).unwrap_or_default()
}

/// Said after a claim from fewer than 3 runs of either side.
pub(super) const FEW_RUNS: &str = " Fewer than 3 runs each cannot tell this from chance: repeat to confirm.";

/// One configuration: its median and spread.
fn alone(place: &str, g: &Group<'_>, s: &Spread) -> Finding {
    if s.n == 1 {
        let text = format!(
            "{} on {place}: {} {}{} (one run, so the run-to-run spread is unknown).",
            g.configuration,
            num(s.median),
            metric(g),
            g.errors_note()
        );
        return Finding { text, claim: true };
    }
    let text = format!(
        "{} on {place}: {} {}{} (median of {} run{}; min–max {}–{}, a range of {}).",
        g.configuration,
        num(s.median),
        metric(g),
        g.errors_note(),
        s.n,
        plural(s.n),
        num(s.min),
        num(s.max),
        pct(s.range_pct),
    );
    Finding { text, claim: true }
}

/// Each pair of configurations that ran on one disk, once: their differences (`gaps`, percent,
/// on every workload point both measured) said to be none of storage.
fn one_disk(input: &ReportInput, gaps: &[(&str, &str, f64)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (a, b, disk) in input.shared_disks() {
        let theirs: Vec<f64> =
            gaps.iter().filter(|(x, y, _)| (*x, *y) == (a, b) || (*x, *y) == (b, a)).map(|g| g.2).collect();
        let (Some(lo), Some(hi)) =
            (theirs.iter().copied().reduce(f64::min), theirs.iter().copied().reduce(f64::max))
        else {
            continue;
        };
        let range = if theirs.len() == 1 { pct(lo) } else { format!("{} to {}", pct(lo), pct(hi)) };
        let text = format!(
            "{a} and {b} ran on one disk ({disk}): they measured the same storage, so no difference \
             between them is a finding ({range} on {} workload point{}); give each configuration its own \
             device to compare them.",
            theirs.len(),
            plural(theirs.len())
        );
        out.push(Finding { text, claim: false });
    }
    out
}

/// The better configuration `a` against `b`: the headline, then power and per watt.
pub(super) fn pair(place: &str, a: (&Group<'_>, &Spread), b: (&Group<'_>, &Spread)) -> Vec<Finding> {
    let (ga, gb) = (a.0, b.0);
    let Some(higher) = higher_is_better(ga) else { return Vec::new() };
    let Some(d) = difference(a.1, b.1, higher) else { return Vec::new() };
    let metric = metric(ga);
    let figures = format!(
        "{}{} vs {}{} {metric}",
        num(a.1.median),
        ga.errors_note(),
        num(b.1.median),
        gb.errors_note()
    );
    if d.within_spread {
        let text = format!(
            "On {place}, {} and {} differ by {} in {metric} ({figures}), which lies within the \
             run-to-run spread ({}: {}–{}, {}: {}–{}): not a finding.",
            ga.configuration,
            gb.configuration,
            pct(d.pct),
            ga.configuration,
            num(a.1.min),
            num(a.1.max),
            gb.configuration,
            num(b.1.min),
            num(b.1.max),
        );
        return vec![Finding { text, claim: false }];
    }
    let (verb, word) = if higher { ("delivered", "more") } else { ("needed", "less") };
    let caveat = if d.few { FEW_RUNS } else { "" };
    let text = format!(
        "{} {verb} {} {word} {metric} than {} on {place}: {figures} (medians of {} and {} runs).{caveat}",
        ga.configuration,
        pct(d.pct),
        gb.configuration,
        a.1.n,
        b.1.n,
    );
    let mut out = vec![Finding { text, claim: !d.few }];
    out.extend(power(ga, gb, &metric, caveat));
    out
}

/// Power when active and idle (lower is better) and headline per watt, from the reported runs;
/// the per-watt line, made of the headline, carries the headline's `caveat` and is claimed
/// only where the headline is.
fn power(a: &Group<'_>, b: &Group<'_>, metric: &str, caveat: &str) -> Vec<Finding> {
    let (Some(ra), Some(rb)) = (a.reported(), b.reported()) else { return Vec::new() };
    let per_watt = (format!("{metric} per watt"), format!("{metric}/W"));
    let cases = [
        ("used", ra.active_watts, rb.active_watts, "power when active", "W"),
        ("used", ra.idle_watts, rb.idle_watts, "power when idle", "W"),
        ("delivered", ra.per_watt, rb.per_watt, per_watt.0.as_str(), per_watt.1.as_str()),
    ];
    let mut out = Vec::new();
    for (verb, x, y, what, unit) in cases {
        if let (Some(x), Some(y)) = (x, y)
            && y > 0.0
        {
            let change = 100.0 * (x - y) / y;
            let word = if change < 0.0 { "less" } else { "more" };
            let derived = what == per_watt.0;
            let text = format!(
                "{} {verb} {} {word} {what} than {}: {} vs {} {unit}.{}",
                a.configuration,
                pct(change),
                b.configuration,
                num(x),
                num(y),
                if derived { caveat } else { "" }
            );
            out.push(Finding { text, claim: !derived || caveat.is_empty() });
        }
    }
    out
}
