//! A `wal` point's summary from its outcome: commits a second over the measured phase, commit
//! latency percentiles, failed commits, storbench's CPU per commit, and whether its figures are
//! too fast to have been durable. Built at the end of the run and again from the bundle's
//! record by the same function (`rebuilt`), so `summarize --check` holds it field for field.
//!
//! In the record an interval's counts are `commits`, `bytes` and `errors`, its histogram
//! `commit`; what is not counted (the point, the first error's text, the device's verdict) is
//! the end's `detail` ([`WalFacts`]).

use super::judge::{self, Device};
use super::spec::Point;
use super::writer::WalRecorder;
use crate::run::Outcome;
use crate::run::record::summary;
use crate::run::record::{RecordError, Recordable, StoredRecord, Tally};
use serde::{Deserialize, Serialize};
use storbench_report::workloads::wal::results::WalResults;
use storbench_report::{Phases, Results, Summary};

impl Recordable for WalRecorder {
    const ADDS_UP: bool = true;

    fn tally(&self) -> Tally<'_> {
        let mut t = Tally::default();
        t.count("commits", self.commits);
        t.count("bytes", self.bytes);
        t.count("errors", self.errors);
        t.hist("commit", &self.latency);
        t
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        Ok(WalRecorder {
            commits: t.get("commits"),
            bytes: t.get("bytes"),
            latency: t.histogram("commit"),
            errors: t.get("errors"),
            first_error: None,
        })
    }
}

/// What only a wal point's outcome holds, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalFacts {
    pub point: Point,
    /// Why the platform did not offer the point.
    pub not_offered: Option<String>,
    pub first_error: Option<String>,
    /// The device under the log file as the run found it.
    pub device: Option<String>,
    pub rotational: Option<bool>,
}

impl WalFacts {
    pub fn of(point: Point, out: &Outcome<WalRecorder>, device: &Device) -> WalFacts {
        WalFacts {
            point,
            not_offered: None,
            first_error: out.all.first_error.clone(),
            device: device.name.clone(),
            rotational: device.rotational,
        }
    }
}

/// The summary of a finished (or interrupted) point: `started` with the outcome's figures.
pub fn summary(started: Summary, out: &Outcome<WalRecorder, WalFacts>, ended_at: &str) -> Summary {
    let mut s = summary::ended(started, ended_at);
    let f = &out.detail;
    let t = &out.totals;
    let secs = out.measured_s;
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let device = Device { name: f.device.clone(), rotational: f.rotational };
    s.complete = out.complete && out.failures.is_empty();
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: secs };
    // A run merged from shards has its shards' writers, as its parameters say.
    let writers = s.parameters.get("writers").and_then(|w| w.as_u64()).and_then(|w| u32::try_from(w).ok());
    s.results = Results::Wal(WalResults {
        sync_method: f.point.method.name().into(),
        layout: f.point.layout.name().into(),
        bytes_per_commit: f.point.size,
        writers: writers.unwrap_or(f.point.writers),
        not_offered: f.not_offered.clone(),
        commits: t.commits,
        commits_per_sec: rate(t.commits),
        bytes_per_sec: rate(t.bytes),
        commit_lat_ns: t.latency.summary(),
        errors: out.all.errors,
        first_error: f.first_error.clone(),
        implausible: judge::implausible(f.point.method, &t.latency, &device),
    });
    s.cpu = summary::cpu_usage(out, t.commits);
    s.warnings = out.warnings.clone();
    s.warnings.extend(out.failures.iter().cloned());
    s
}

/// A wal point's summary built again from its record (a `run::record::summary::Rebuild`).
pub fn rebuilt(
    record: &StoredRecord,
    started: Summary,
    window: Option<(f64, f64)>,
    at: &str,
) -> Result<Summary, RecordError> {
    Ok(self::summary(started, &summary::outcome(record, window)?, at))
}
