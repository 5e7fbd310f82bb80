//! The replay workload (`storbench replay`) in the report: calls per second as its headline,
//! and a section with 002's two tables per configuration: each source's calls and calls per
//! second (Table 7), and each request type's calls and response times with the maximum over
//! all runs and the average of each run's maximum (Table 8). Its errors are failed requests,
//! not I/Os.

use super::ReportInput;
use super::charts::{Spec, spec};
use super::doc::{Block, Table, num};
use super::spectrum::LatencyTypes;
use super::svg::Band;
use super::workload::{Shown, p50_ms, p99_ms};
use crate::columns::replay;
use crate::decision::figures::{Figure, Value, ms, n, names, read};
use crate::evaluation::{Group, Headline};
use crate::model::{IoErrors, ReplayResults};
use crate::workload::{OwnCheck, Reported, WorkloadResults};
use std::collections::BTreeMap;

const CHARTS: &[Spec] = &[
    spec("Calls per second", &[(replay::CALLS_PER_SEC, "calls/s")]),
    spec("Response time", &[(replay::LAT_P50_MS, "p50"), (replay::LAT_P99_MS, "p99")]),
    spec(
        "Lateness against the log's times",
        &[(replay::LATENESS_P99_MS, "p99"), (replay::LATENESS_MAX_MS, "max")],
    ),
];

/// The figures a requirement may name (`replay.p99_ms`), over the replay.
pub(super) const FIGURES: &[Figure<ReplayResults>] = &[
    Figure { name: "calls_per_sec", unit: "calls/s", get: |r| n(r.calls_per_sec) },
    Figure { name: "p50_ms", unit: "ms p50", get: |r| r.lat_ns.as_ref().and_then(|l| ms(l.p50)) },
    Figure { name: "p99_ms", unit: "ms p99", get: |r| r.lat_ns.as_ref().and_then(|l| ms(l.p99)) },
    Figure { name: "errors", unit: "failed calls", get: |r| n(r.errors.total as f64) },
    Figure {
        name: "lateness_p99_ms",
        unit: "ms late p99",
        get: |r| r.lateness_ms.as_ref().and_then(|l| n(l.p99)),
    },
];

/// What replay reports (its registry entry's `reported`).
pub const REPORTED: Reported = Reported { figures: || names(FIGURES), latency_types: LatencyTypes::Named };

impl WorkloadResults for ReplayResults {
    fn reported(&self) -> Reported {
        REPORTED
    }

    fn figure(&self, name: &str) -> Option<Option<Value>> {
        read(FIGURES, self, name)
    }

    fn headline(&self) -> Option<Headline> {
        (self.calls > 0).then(|| Headline::new("calls/s", self.calls_per_sec, true))
    }

    fn io_errors(&self) -> Option<IoErrors<'_>> {
        None
    }

    /// A replay reproduces its log: every request sent (none lost for want of a connection) and
    /// no more of them failed than the stated share (`--max-errors`, where the run recorded it).
    fn checks(&self) -> Vec<OwnCheck> {
        let sent = OwnCheck {
            name: "requests sent".into(),
            measured: Some(format!("{} not sent for want of a connection", self.not_connected)),
            limit: "none unsent".into(),
            held: Some(self.not_connected == 0),
        };
        let failed = self.max_errors_pct.map(|max| {
            let pct = (self.calls > 0).then(|| self.errors.total as f64 * 100.0 / self.calls as f64);
            OwnCheck {
                name: "failed requests".into(),
                measured: pct.map(|p| format!("{p:.2} % ({} of {})", self.errors.total, self.calls)),
                limit: format!("at most {max} %"),
                held: pct.map(|p| p <= max),
            }
        });
        std::iter::once(sent).chain(failed).collect()
    }
}

impl Shown for ReplayResults {
    fn latencies(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![("p50", p50_ms(&self.lat_ns)), ("p99", p99_ms(&self.lat_ns))]
    }

    fn charts(&self) -> &'static [Spec] {
        CHARTS
    }

    fn band(&self) -> Option<Band> {
        let to = self.cold_start_s.filter(|&s| s > 0.0)?;
        Some(Band { from: 0.0, to, what: format!("cold start: the first {} s", num(to)) })
    }

    fn section(&self, input: &ReportInput) -> Vec<Block> {
        let groups = groups(input);
        if groups.is_empty() {
            return Vec::new();
        }
        let mut out = vec![
            Block::Heading(2, "Replay".into()),
            Block::Para(
                "Per workload and configuration, over its runs that passed: each source's calls and calls per second, \
                 then each request type's calls and response times (from each request's intended \
                 start), with the maximum over all runs and the average of each run's maximum."
                    .into(),
            ),
        ];
        for (g, runs) in &groups {
            out.push(Block::Heading(3, heading(g, runs.len())));
            out.extend(super::workload::left_out(g).map(Block::Para));
            if runs.is_empty() {
                continue;
            }
            out.extend(cold_start(runs).map(Block::Para));
            // Every run of a configuration reads the same logs: the first one's count is theirs.
            let unmatched = ReplayResults::unmatched_said(&runs[0].unmatched_paths);
            out.extend(unmatched.map(|u| Block::Para(format!("Skipped: {u}."))));
            let withheld = ReplayResults::not_sent_said(&runs[0].not_sent).map(|w| format!("Withheld: {w}."));
            out.extend(withheld.map(Block::Para));
            let allowed = ReplayResults::allowed_said(&runs[0].allowed_statements).map(|a| format!("{a}."));
            out.extend(allowed.map(Block::Para));
            out.extend(runs[0].backwards_said().map(|b| Block::Para(format!("{b}."))));
            out.push(Block::Table(sources(runs)));
            out.push(Block::Table(types(runs)));
        }
        out
    }
}

/// `replay-fire-hose on ssd (speed = 2), 3 runs`: the workload, where, and how many runs the
/// tables under it cover.
fn heading(g: &Group, runs: usize) -> String {
    let sweep = g.sweep.map(|s| format!(" ({} = {})", s.param, s.value)).unwrap_or_default();
    format!("{} on {}{sweep}, {runs} run{}", g.workload, g.configuration, if runs == 1 { "" } else { "s" })
}

/// Each group's replay runs that passed, with their results.
fn groups<'a>(input: &'a ReportInput) -> Vec<(Group<'a>, Vec<&'a ReplayResults>)> {
    let groups = super::workload::groups_of::<ReplayResults>(input).into_iter();
    groups
        .map(|(g, _)| {
            let passed = super::workload::passed_runs::<ReplayResults>(input, &g);
            (g, passed.into_iter().map(|(_, r)| r).collect())
        })
        .collect()
}

/// The runs that began cold (002: the long delays came at the very start, the database waking
/// up), in a sentence; None when none did.
fn cold_start(runs: &[&ReplayResults]) -> Option<String> {
    let cold: Vec<f64> = runs.iter().filter_map(|r| r.cold_start_s).filter(|&s| s > 0.0).collect();
    let longest = cold.iter().copied().fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))))?;
    Some(format!(
        "Cold start in {} of {} run(s), up to the first {} s: the leading seconds whose p99 \
         response time was over twice the median second's.",
        cold.len(),
        runs.len(),
        num(longest)
    ))
}

/// 002's Table 7: per source, the mean over the runs of its calls per second and its calls.
fn sources(runs: &[&ReplayResults]) -> Table {
    let mut t = Table::new(&["source", "calls per s", "calls", "errors"]);
    let mut by: BTreeMap<&str, (f64, u64, u64)> = BTreeMap::new();
    for s in runs.iter().flat_map(|r| &r.by_source) {
        let e = by.entry(&s.name).or_default();
        (e.0, e.1, e.2) = (e.0 + s.calls_per_sec, e.1 + s.calls, e.2 + s.errors);
    }
    let n = runs.len() as f64;
    for (name, (per_sec, calls, errors)) in by {
        t.push(vec![name.into(), num(per_sec / n), count(calls as f64 / n), count(errors as f64 / n)]);
    }
    t
}

/// 002's Table 8: per request type, over the runs: calls, the mean response time (weighted by
/// calls), the maximum over all runs and the average of each run's maximum.
fn types(runs: &[&ReplayResults]) -> Table {
    let mut t =
        Table::new(&["request type", "calls", "errors", "avg ms", "p99 ms", "max ms", "avg of max ms"]);
    let mut by: BTreeMap<&str, TypeOverRuns> = BTreeMap::new();
    for r in runs {
        for (name, x) in &r.by_type {
            by.entry(name).or_default().add(x);
        }
    }
    let n = runs.len() as f64;
    let ms = |v: Option<f64>| v.map_or_else(|| "—".into(), num);
    for (name, x) in by {
        t.push(vec![
            name.into(),
            count(x.calls as f64 / n),
            count(x.errors as f64 / n),
            ms((x.answered > 0).then(|| x.weighted_mean / x.answered as f64)),
            ms(x.worst_p99),
            ms(x.max),
            ms((x.runs > 0).then(|| x.sum_of_max / x.runs as f64)),
        ]);
    }
    t
}

/// One request type summed over runs.
#[derive(Default)]
struct TypeOverRuns {
    calls: u64,
    errors: u64,
    /// Sum of mean × answered calls, over the runs with a mean.
    weighted_mean: f64,
    /// Calls answered (not failed) in the runs with a mean.
    answered: u64,
    worst_p99: Option<f64>,
    max: Option<f64>,
    sum_of_max: f64,
    /// Runs with a maximum.
    runs: u32,
}

impl TypeOverRuns {
    fn add(&mut self, x: &crate::model::ReplayTypeResult) {
        self.calls += x.calls;
        self.errors += x.errors;
        if let Some(mean) = x.mean_ms {
            let answered = x.calls.saturating_sub(x.errors);
            self.weighted_mean += mean * answered as f64;
            self.answered += answered;
        }
        self.worst_p99 = larger(self.worst_p99, x.p99_ms);
        self.max = larger(self.max, x.max_ms);
        if let Some(m) = x.max_ms {
            self.sum_of_max += m;
            self.runs += 1;
        }
    }
}

/// A count per run: whole where it is whole (43, not 43.00).
fn count(v: f64) -> String {
    let text = num(v);
    match text.split_once('.') {
        Some((whole, _)) if v.fract() == 0.0 => whole.to_string(),
        _ => text,
    }
}

fn larger(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation::RunStatus;

    fn replayed(calls: u64, errors: u64, max: Option<f64>, not_connected: u64) -> ReplayResults {
        let errors = crate::model::ErrorCounts { total: errors, ..Default::default() };
        ReplayResults { calls, errors, max_errors_pct: max, not_connected, ..Default::default() }
    }

    /// A replay's status is its own checks': the share of failed requests against the stated
    /// one, every request sent; a share nothing measured is not judged, never a pass.
    #[test]
    fn a_replay_fails_its_check_on_too_many_failed_requests_or_one_never_sent() {
        let status = |r: &ReplayResults| r.status(true);
        assert_eq!(status(&replayed(8, 1, Some(20.0), 0)), RunStatus::Done);
        let over = replayed(8, 1, Some(1.0), 0);
        assert_eq!(status(&over), RunStatus::CheckFailed);
        assert_eq!(over.failure().unwrap(), "failed requests: 12.50 % (1 of 8) (at most 1 %)");
        let unsent = replayed(6, 0, Some(1.0), 2);
        assert_eq!(status(&unsent), RunStatus::CheckFailed);
        assert_eq!(
            unsent.failure().unwrap(),
            "requests sent: 2 not sent for want of a connection (none unsent)"
        );
        let nothing = replayed(0, 0, Some(1.0), 0);
        assert_eq!(status(&nothing), RunStatus::CheckFailed, "no call: the share is not judged");
        assert!(nothing.failure().unwrap().contains("not judged"));
        assert_eq!(
            status(&replayed(8, 8, None, 0)),
            RunStatus::Done,
            "a summary from before the limit was recorded"
        );
        assert_eq!(replayed(8, 0, Some(1.0), 0).status(false), RunStatus::Interrupted);
    }
}
