//! What the integrity workload counts over an interval: per activity its reads and writes
//! (with latency), the time its I/Os took, its throttling and delayed I/Os; errors by class
//! with their records; the data file's size; and the notices naming I/Os outstanding past the
//! delay threshold. Merged exactly across intervals and activities.

use super::verdict::{ErrorClass, ErrorRecord};
use crate::metrics::DirectionCounters;

/// The simulated activities, each its own stream with its own counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// User threads reading runs of 1-100 random pages and dirtying some of them.
    Random,
    /// Large sequential reads of 32-64 pages.
    ReadAhead,
    /// Writes of 64-128 pages at once, appending at the end of the data or rewriting a run.
    Bulk,
    /// Writing the dirty pages, coalesced into runs of up to 32 pages.
    LazyWriter,
    /// The sequential log writer with group commit.
    Log,
}

impl Activity {
    pub const ALL: [Activity; 5] =
        [Activity::Random, Activity::ReadAhead, Activity::Bulk, Activity::LazyWriter, Activity::Log];

    pub fn name(self) -> &'static str {
        match self {
            Activity::Random => "random",
            Activity::ReadAhead => "read_ahead",
            Activity::Bulk => "bulk",
            Activity::LazyWriter => "lazy_writer",
            Activity::Log => "log_writer",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// One activity's figures.
#[derive(Debug, Clone, Default)]
pub struct ActivityCounters {
    pub reads: DirectionCounters,
    pub writes: DirectionCounters,
    /// The sum of its I/Os' durations, ns.
    pub io_time_ns: u64,
    /// Times it cut its outstanding I/O after an I/O over the target duration.
    pub throttled: u64,
    /// I/Os that completed after the delay threshold.
    pub delayed: u64,
    /// Pages checked on reads.
    pub pages_checked: u64,
}

impl ActivityCounters {
    pub fn merge(&mut self, o: &ActivityCounters) {
        self.reads.merge(&o.reads);
        self.writes.merge(&o.writes);
        self.io_time_ns += o.io_time_ns;
        self.throttled += o.throttled;
        self.delayed += o.delayed;
        self.pages_checked += o.pages_checked;
    }

    pub fn ios(&self) -> u64 {
        self.reads.ios + self.writes.ios
    }
}

/// Error records an interval keeps at most; the counts go on.
pub const MAX_RECORDS_PER_INTERVAL: usize = 1000;

/// The error classes in the order of the summary's fields.
pub const CLASSES: [ErrorClass; 7] = [
    ErrorClass::LostWrites,
    ErrorClass::StaleReads,
    ErrorClass::TornPages,
    ErrorClass::MisplacedPages,
    ErrorClass::Checksum,
    ErrorClass::ReadErrors,
    ErrorClass::WriteErrors,
];

#[derive(Debug, Clone, Default)]
pub struct IntegrityRecorder {
    pub activities: [ActivityCounters; 5],
    /// Errors by class, indexed as `CLASSES`.
    pub errors: [u64; 7],
    pub records: Vec<ErrorRecord>,
    /// The data file's size at the interval's end, bytes (0: not sampled).
    pub data_file_bytes: u64,
    /// I/Os in flight at the interval's end.
    pub outstanding: u64,
    /// Messages naming I/Os outstanding past the delay threshold, as they were seen.
    pub notices: Vec<String>,
}

impl IntegrityRecorder {
    pub fn activity(&mut self, a: Activity) -> &mut ActivityCounters {
        &mut self.activities[a.index()]
    }

    pub fn error(&mut self, record: ErrorRecord) {
        let at = CLASSES.iter().position(|&c| c == record.class).expect("every class is listed");
        self.errors[at] += 1;
        if self.records.len() < MAX_RECORDS_PER_INTERVAL {
            self.records.push(record);
        }
    }

    pub fn errors_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    pub fn count_of(&self, class: ErrorClass) -> u64 {
        CLASSES.iter().position(|&c| c == class).map_or(0, |at| self.errors[at])
    }

    pub fn total(&self) -> ActivityCounters {
        let mut all = ActivityCounters::default();
        self.activities.iter().for_each(|a| all.merge(a));
        all
    }
}

impl crate::run::IntervalData for IntegrityRecorder {
    fn merge(&mut self, o: &Self) {
        for (a, b) in self.activities.iter_mut().zip(&o.activities) {
            a.merge(b);
        }
        for (a, b) in self.errors.iter_mut().zip(o.errors) {
            *a += b;
        }
        let room = MAX_RECORDS_PER_INTERVAL.saturating_sub(self.records.len());
        self.records.extend(o.records.iter().take(room).cloned());
        if o.data_file_bytes > 0 {
            self.data_file_bytes = o.data_file_bytes;
        }
        self.outstanding = o.outstanding;
        self.notices.extend(o.notices.iter().cloned());
    }

    fn ops(&self) -> u64 {
        self.activities.iter().map(ActivityCounters::ios).sum()
    }
}
