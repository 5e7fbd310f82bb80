//! What a worker counts over an interval: per direction I/Os, bytes and latency, plus errors,
//! and under a rate cap each I/O's schedule lag.

use super::LatencyHistogram;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Completed I/Os of one direction.
#[derive(Clone, Debug, Default)]
pub struct DirectionCounters {
    pub ios: u64,
    pub bytes: u64,
    /// Latency: completion minus (intended) start.
    pub latency: LatencyHistogram,
    /// Under a rate cap only: completion minus the actual issue, the device's service time
    /// beside the latency a paced user sees.
    pub service: LatencyHistogram,
}

impl DirectionCounters {
    #[inline]
    pub fn record(&mut self, bytes: u64, latency_ns: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.latency.record(latency_ns);
    }

    pub fn merge(&mut self, other: &DirectionCounters) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.latency.merge(&other.latency);
        self.service.merge(&other.service);
    }

    pub fn reset(&mut self) {
        self.ios = 0;
        self.bytes = 0;
        self.latency.reset();
        self.service.reset();
    }
}

/// Failed operations by kind (errno name, `short`, ...). A kind is borrowed where counted
/// (no allocation on the hot path) and owned where read back from a stored record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorTally {
    pub by_kind: BTreeMap<Cow<'static, str>, u64>,
}

impl ErrorTally {
    pub fn count(&mut self, kind: &'static str) {
        self.add(Cow::Borrowed(kind), 1);
    }

    /// Adds `n` failures of `kind`.
    pub fn add(&mut self, kind: Cow<'static, str>, n: u64) {
        *self.by_kind.entry(kind).or_insert(0) += n;
    }

    pub fn total(&self) -> u64 {
        self.by_kind.values().sum()
    }

    pub fn merge(&mut self, other: &ErrorTally) {
        for (k, v) in &other.by_kind {
            self.add(k.clone(), *v);
        }
    }
}

/// One worker's counters for one interval (or, merged, for a whole phase).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub read: DirectionCounters,
    pub write: DirectionCounters,
    /// Flushes (`--fdatasync`): counted apart from reads and writes, bytes 0.
    pub flush: DirectionCounters,
    pub errors: ErrorTally,
    /// Under a rate cap only: each I/O's schedule lag, its actual issue minus its intended
    /// start (`run::pace`).
    pub lag: LatencyHistogram,
}

impl Recorder {
    pub fn merge(&mut self, other: &Recorder) {
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.flush.merge(&other.flush);
        self.errors.merge(&other.errors);
        self.lag.merge(&other.lag);
    }

    pub fn reset(&mut self) {
        self.read.reset();
        self.write.reset();
        self.flush.reset();
        self.errors = ErrorTally::default();
        self.lag.reset();
    }

    pub fn ios(&self) -> u64 {
        self.read.ios + self.write.ios
    }
}

impl crate::run::pace::Lagged for Recorder {
    fn lag(&self) -> &LatencyHistogram {
        &self.lag
    }
}
