//! What one database instance counts over an interval: its four I/O streams, operations,
//! commits, stalls and failures, and under a target the operations' schedule lag. Merged
//! exactly across intervals and databases.

use crate::metrics::{DirectionCounters, ErrorTally, LatencyHistogram};

/// A page or log block that failed its check during the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    pub file: String,
    pub offset: u64,
    pub what: String,
}

/// Corruptions kept per interval; the count goes on.
pub const MAX_CORRUPTIONS_KEPT: usize = 20;

#[derive(Debug, Clone, Default)]
pub struct MailboxRecorder {
    /// Page reads on cache misses (what the sessions wait for).
    pub db_reads: DirectionCounters,
    /// Dirty pages written by checkpoint and avail-pool maintenance, coalesced.
    pub db_writes: DirectionCounters,
    pub log_writes: DirectionCounters,
    /// Background maintenance reads and log-file creation writes.
    pub bdm_reads: DirectionCounters,
    pub log_creates: DirectionCounters,
    /// Operations completed: insert, delete, replace, read.
    pub ops: [u64; 4],
    pub sync_commits: u64,
    pub lazy_commits: u64,
    /// Page faults that found no free buffer (the engine's page fault stalls).
    pub page_fault_stalls: u64,
    /// Times a session waited for log buffer space or for the next log file.
    pub log_stalls: u64,
    pub errors: ErrorTally,
    pub checksum_errors: u64,
    pub corruptions: Vec<Corruption>,
    /// Under a target only: each operation's schedule lag, its start minus its intended start
    /// (`run::pace`).
    pub lag: LatencyHistogram,
}

impl MailboxRecorder {
    pub fn merge(&mut self, o: &MailboxRecorder) {
        self.db_reads.merge(&o.db_reads);
        self.db_writes.merge(&o.db_writes);
        self.log_writes.merge(&o.log_writes);
        self.bdm_reads.merge(&o.bdm_reads);
        self.log_creates.merge(&o.log_creates);
        for (a, b) in self.ops.iter_mut().zip(o.ops) {
            *a += b;
        }
        self.sync_commits += o.sync_commits;
        self.lazy_commits += o.lazy_commits;
        self.page_fault_stalls += o.page_fault_stalls;
        self.log_stalls += o.log_stalls;
        self.errors.merge(&o.errors);
        self.checksum_errors += o.checksum_errors;
        let room = MAX_CORRUPTIONS_KEPT.saturating_sub(self.corruptions.len());
        self.corruptions.extend(o.corruptions.iter().take(room).cloned());
        self.lag.merge(&o.lag);
    }

    /// Takes the errors and corruption of `all` (a span that holds this one), so that faults
    /// outside this recorder's span count too.
    pub fn take_faults_of(&mut self, all: &MailboxRecorder) {
        self.errors = all.errors.clone();
        self.checksum_errors = all.checksum_errors;
        self.corruptions.clone_from(&all.corruptions);
    }

    pub fn merged(parts: &[MailboxRecorder]) -> MailboxRecorder {
        let mut m = MailboxRecorder::default();
        parts.iter().for_each(|p| m.merge(p));
        m
    }

    pub fn operations(&self) -> u64 {
        self.ops.iter().sum()
    }

    /// DB reads + DB writes: Jetstress's transactional I/O.
    pub fn transactional_ios(&self) -> u64 {
        self.db_reads.ios + self.db_writes.ios
    }

    pub fn corrupt(&mut self, file: &str, offset: u64, what: String) {
        self.checksum_errors += 1;
        if self.corruptions.len() < MAX_CORRUPTIONS_KEPT {
            self.corruptions.push(Corruption { file: file.to_string(), offset, what });
        }
    }
}

impl crate::run::IntervalData for MailboxRecorder {
    /// Jetstress's transactional IOPS: DB reads + DB writes a second.
    const HEADLINE: crate::run::Headline =
        crate::run::Headline { name: "transactional IOPS", per_op_per_s: 1.0 };

    fn merge(&mut self, other: &Self) {
        MailboxRecorder::merge(self, other)
    }
    fn ops(&self) -> u64 {
        self.transactional_ios()
    }
}

impl crate::run::pace::Lagged for MailboxRecorder {
    fn lag(&self) -> &LatencyHistogram {
        &self.lag
    }
}
