//! The io workload's summary from its outcome: rates over the measured phase, latency
//! percentiles, errors by kind, storbench's CPU per I/O, and under a rate cap the schedule lag.
//!
//! In the record an interval's counts are `read.ios`, `read.bytes`, `write.ios`,
//! `write.bytes`, `flush.ios` and `errors.<kind>`; its histograms `read`, `write`, `flush`
//! where any, under a rate cap `read.service` and `write.service` (issue to completion) where
//! any, and `lag` (each I/O's schedule lag) where any.

use crate::metrics::{DirectionCounters, Recorder};
use crate::run::Outcome;
use crate::run::record::{RecordError, StoredRecord};
use crate::run::record::{Recordable, Tally};
use crate::workload::io::IoOutcome;
use serde::{Deserialize, Serialize};
use storbench_report::{DirectionResult, IoResults, Phases, Results, Summary, VerifyResult, error_rate_pct};

/// What only an io run's outcome holds, as the record keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IoFacts {
    /// The engine that ran (after any fallback).
    pub engine: String,
    pub errors_outside_window: u64,
    pub verify: VerifyResult,
    /// A replay of a block trace: what it replayed and its check (`replay-trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<storbench_report::fingerprint::TraceReplay>,
}

impl IoFacts {
    pub fn of(out: &IoOutcome) -> IoFacts {
        IoFacts {
            engine: out.detail.engine.name().into(),
            errors_outside_window: out.detail.errors_outside_window,
            verify: out.detail.verify.clone(),
            trace: None,
        }
    }
}

impl Recordable for Recorder {
    const ADDS_UP: bool = true;

    fn tally(&self) -> Tally<'_> {
        let mut t = Tally::default();
        t.direction("read", "read", &self.read);
        t.direction("write", "write", &self.write);
        t.direction_if_any("flush", "flush", &self.flush);
        t.hist_if_any("lag", &self.lag);
        t.errors("errors", &self.errors);
        t
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        Ok(Recorder {
            read: t.direction_counters("read", "read"),
            write: t.direction_counters("write", "write"),
            flush: t.direction_counters("flush", "flush"),
            errors: t.error_tally("errors"),
            lag: t.histogram("lag"),
        })
    }
}

/// The summary of a finished (or interrupted) run: `started` with the outcome's figures.
pub fn summary(started: Summary, out: &Outcome<Recorder, IoFacts>, ended_at: &str) -> Summary {
    let mut s = crate::run::record::summary::ended(started, ended_at);
    let secs = out.measured_s;
    let t = &out.totals;
    s.complete = out.complete && out.failures.is_empty();
    s.engine = out.detail.engine.clone();
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: secs };
    s.results = Results::Io(IoResults {
        read: direction(&t.read, secs),
        write: direction(&t.write, secs),
        flush: (t.flush.ios > 0).then(|| direction(&t.flush, secs)),
        errors: crate::run::record::summary::error_counts(&t.errors),
        error_rate_pct: error_rate_pct(t.errors.total(), t.ios()),
        errors_outside_window: out.detail.errors_outside_window,
        verify: out.detail.verify.clone(),
        schedule_lag_ms: crate::run::record::summary::schedule_lag_ms(&t.lag),
        trace: out.detail.trace.clone().map(Box::new),
    });
    s.cpu = crate::run::record::summary::cpu_usage(out, t.ios());
    s.warnings = out.warnings.clone();
    s.steady_state = out.steady.clone();
    s
}

/// An io run's summary built again from its record (a [`crate::run::record::summary::Rebuild`]).
pub fn rebuilt(
    record: &StoredRecord,
    started: Summary,
    window: Option<(f64, f64)>,
    at: &str,
) -> Result<Summary, RecordError> {
    Ok(summary(started, &crate::run::record::summary::outcome(record, window)?, at))
}

fn direction(c: &DirectionCounters, secs: f64) -> DirectionResult {
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    DirectionResult {
        ios: c.ios,
        bytes: c.bytes,
        iops: per_sec(c.ios),
        bytes_per_sec: per_sec(c.bytes),
        lat_ns: c.latency.summary(),
        service_lat_ns: c.service.summary(),
    }
}
