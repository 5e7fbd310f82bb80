//! The replay's summary from its outcome (`summary`), at the end of a run and, by the same
//! function, from a bundle's record (`rebuilt`): calls and calls per second, per request type
//! (002's Table 8) and per source (Table 7), latency from each request's intended start,
//! time-sync's lateness, errors by kind, the lines that could not be read.
//!
//! The record's end holds the outcome's `ReplayDetail` as its `detail` (`End::of(ended_at,
//! &outcome, &outcome.detail)`); everything else is rebuilt from the intervals.

use super::{ReplayData, ReplayOutcome, TypeFigures};
use crate::run::record::summary::{cpu_usage, ended, error_counts, outcome, schedule_lag_ms};
use crate::run::record::{RecordError, StoredRecord};
use storbench_report::{Phases, ReplayResults, ReplaySourceResult, ReplayTypeResult, Results, Summary};

/// The summary of a finished (or interrupted) replay: `started` with the outcome's figures.
pub fn summary(started: Summary, out: &ReplayOutcome, ended_at: &str) -> Summary {
    let mut s = ended(started, ended_at);
    s.complete = out.complete;
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: out.measured_s };
    s.results = Results::Replay(results(out));
    s.cpu = cpu_usage(out, out.totals.calls());
    s.warnings.extend(out.warnings.iter().cloned());
    s.warnings.extend(out.failures.iter().cloned());
    s.steady_state = out.steady.clone();
    s
}

/// A replay's summary built again from its record (a `run::record::summary::Rebuild`).
pub fn rebuilt(
    record: &StoredRecord,
    started: Summary,
    window: Option<(f64, f64)>,
    at: &str,
) -> Result<Summary, RecordError> {
    Ok(summary(started, &outcome(record, window)?, at))
}

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

fn results(out: &ReplayOutcome) -> ReplayResults {
    let (t, d, secs) = (&out.totals, &out.detail, out.measured_s);
    ReplayResults {
        mode: d.mode.clone(),
        speed: d.speed,
        in_flight: Some(d.in_flight),
        recorded_calls: d.recorded_calls,
        calls: t.calls(),
        calls_per_sec: per_sec(t.calls(), secs),
        elapsed_s: secs,
        errors: error_counts(&t.errors),
        lat_ns: t.latency.summary(),
        by_type: t.by_type.iter().map(|(name, f)| (name.clone(), type_result(f, secs))).collect(),
        by_source: sources(t, &d.sources, secs),
        lateness_ms: schedule_lag_ms(&t.lateness),
        cold_start_s: d.cold_start_s,
        unread_lines: d.unread_lines,
        first_unread: d.first_unread.clone(),
        unmatched_paths: d.unmatched_paths.clone(),
        not_sent: d.not_sent.clone(),
        allowed_statements: d.allowed_statements.clone(),
        not_connected: out.all.refused,
        backwards: d.backwards,
        max_errors_pct: d.max_errors_pct,
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn type_result(f: &TypeFigures, secs: f64) -> ReplayTypeResult {
    let answered = f.calls.saturating_sub(f.errors);
    let at = |q: f64| (!f.latency.is_empty()).then(|| ms(f.latency.quantile_ns(q)));
    ReplayTypeResult {
        calls: f.calls,
        errors: f.errors,
        per_sec: per_sec(f.calls, secs),
        mean_ms: (answered > 0).then(|| f.sum_ns as f64 / answered as f64 / 1e6),
        p50_ms: at(0.5),
        p95_ms: at(0.95),
        p99_ms: at(0.99),
        max_ms: at(1.0),
    }
}

fn sources(t: &ReplayData, names: &[String], secs: f64) -> Vec<ReplaySourceResult> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let s = t.by_source.get(i).copied().unwrap_or_default();
            ReplaySourceResult {
                name: name.clone(),
                calls: s.calls,
                errors: s.errors,
                calls_per_sec: per_sec(s.calls, secs),
            }
        })
        .collect()
}
