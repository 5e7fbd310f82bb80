//! Key findings in the reference reports' words: "A delivered 35 % more OPM than B", power
//! when active and idle, performance per watt; and, as plainly, a difference that lies within
//! the run-to-run spread is said not to be a finding.
//!
//! Every figure is a group's reported (median) run; power figures are that run's own.

use super::doc::{Finding, num, pct};
use super::{at, plural};
use crate::evaluation::{Evaluation, Group, Spread, SweepPoint, difference};

/// One workload at one sweep point, with its configurations' groups in plan order.
pub(super) struct Point<'a> {
    pub workload: &'a str,
    pub sweep: Option<&'a SweepPoint>,
    pub groups: Vec<Group<'a>>,
}

pub(super) fn points(e: &Evaluation) -> Vec<Point<'_>> {
    let mut points: Vec<Point<'_>> = Vec::new();
    for g in e.groups() {
        match points.iter_mut().find(|p| p.workload == g.workload && p.sweep == g.sweep) {
            Some(p) => p.groups.push(g),
            None => points.push(Point { workload: g.workload, sweep: g.sweep, groups: vec![g] }),
        }
    }
    points
}

/// The findings of a whole evaluation, point by point.
pub(super) fn of(e: &Evaluation) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in points(e) {
        let mut measured: Vec<(&Group<'_>, Spread)> =
            p.groups.iter().filter_map(|g| g.spread().map(|s| (g, s))).collect();
        let Some(higher) = measured.first().and_then(|(g, _)| higher_is_better(g)) else { continue };
        measured.sort_by(|a, b| {
            let o = a.1.median.total_cmp(&b.1.median);
            if higher { o.reverse() } else { o }
        });
        let place = format!("{}{}", p.workload, at(p.sweep));
        match measured.as_slice() {
            [(g, s)] => out.push(alone(&place, g, s)),
            [best, rest @ ..] => {
                for other in rest {
                    out.extend(pair(&place, (best.0, &best.1), (other.0, &other.1)));
                }
            }
            [] => {}
        }
    }
    if out.is_empty() {
        out.push(Finding { text: "No run has finished with a result yet.".into(), claim: false });
    }
    out
}

fn higher_is_better(g: &Group<'_>) -> Option<bool> {
    Some(g.reported()?.headline.as_ref()?.higher_is_better)
}

fn metric(g: &Group<'_>) -> String {
    g.reported().and_then(|r| r.headline.as_ref()).map(|h| h.metric.clone()).unwrap_or_default()
}

/// One configuration: its median and spread.
fn alone(place: &str, g: &Group<'_>, s: &Spread) -> Finding {
    if s.n == 1 {
        let text = format!(
            "{} on {place}: {} {} (one run, so the run-to-run spread is unknown).",
            g.configuration,
            num(s.median),
            metric(g)
        );
        return Finding { text, claim: true };
    }
    let text = format!(
        "{} on {place}: {} {} (median of {} run{}; min–max {}–{}, a range of {}).",
        g.configuration,
        num(s.median),
        metric(g),
        s.n,
        plural(s.n),
        num(s.min),
        num(s.max),
        pct(s.range_pct),
    );
    Finding { text, claim: true }
}

/// The better configuration `a` against `b`: the headline, then power and per watt.
pub(super) fn pair(place: &str, a: (&Group<'_>, &Spread), b: (&Group<'_>, &Spread)) -> Vec<Finding> {
    let (ga, gb) = (a.0, b.0);
    let Some(higher) = higher_is_better(ga) else { return Vec::new() };
    let Some(d) = difference(a.1, b.1, higher) else { return Vec::new() };
    let metric = metric(ga);
    let figures = format!("{} vs {} {metric}", num(a.1.median), num(b.1.median));
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
    // Ranges of one or two runs fail to overlap by chance too often (1 in 3 for two runs of
    // the same distribution) to carry a claim.
    let few = a.1.n < 3 || b.1.n < 3;
    let caveat =
        if few { " Fewer than 3 runs each cannot tell this from chance: repeat to confirm." } else { "" };
    let text = format!(
        "{} {verb} {} {word} {metric} than {} on {place}: {figures} (medians of {} and {} runs).{caveat}",
        ga.configuration,
        pct(d.pct),
        gb.configuration,
        a.1.n,
        b.1.n,
    );
    let mut out = vec![Finding { text, claim: !few }];
    out.extend(power(ga, gb, &metric));
    out
}

/// Power when active and idle (lower is better) and headline per watt, from the reported runs.
fn power(a: &Group<'_>, b: &Group<'_>, metric: &str) -> Vec<Finding> {
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
            let text = format!(
                "{} {verb} {} {word} {what} than {}: {} vs {} {unit}.",
                a.configuration,
                pct(change),
                b.configuration,
                num(x),
                num(y)
            );
            out.push(Finding { text, claim: true });
        }
    }
    out
}
