//! A validated synthetic I/O job: what every worker of `workload::io::run` does.

use super::blocksize::BlockSizeMix;
use super::offsets::{Pattern, Region};
use crate::engine::EngineKind;
use std::time::Duration;

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// After this long (the ramp comes before it).
    Time(Duration),
    /// When this many bytes were transferred, over all workers (fio's size-based job).
    Bytes(u64),
}

/// One synthetic I/O job.
#[derive(Debug, Clone, PartialEq)]
pub struct IoSpec {
    pub name: String,
    pub pattern: Pattern,
    /// Share of reads, percent; the rest are writes.
    pub read_pct: u8,
    pub block_sizes: BlockSizeMix,
    /// Requests in flight per worker.
    pub iodepth: u32,
    pub workers: u32,
    pub ramp: Duration,
    pub end: End,
    /// Total I/O rate over all workers, per second; latency is then measured from each
    /// request's intended start.
    pub rate_iops: Option<f64>,
    pub seed: u64,
    pub verify: bool,
    pub engine: EngineKind,
    /// The part of the target the job uses.
    pub region: Region,
    pub interval: Duration,
    /// Round length for SNIA PTS steady state (a whole number of intervals): the run ends once
    /// the rule holds over the last rounds, the results cover only those rounds, and
    /// `End::Time` is the cap.
    pub steady_state: Option<Duration>,
}

impl IoSpec {
    /// Worker `index`'s region: workers share the whole region for random I/O, but get their
    /// own slice for sequential streams and under `verify` (so each block has one writer).
    pub fn worker_region(&self, index: u32) -> Region {
        let own_slice = self.verify || matches!(self.pattern, Pattern::Sequential);
        if !own_slice || self.workers == 1 {
            return self.region;
        }
        let align = self.block_sizes.max() as u64;
        let slice = (self.region.len / self.workers as u64) / align * align;
        Region { start: self.region.start + slice * index as u64, len: slice }
    }

    /// Smallest region a worker gets; must hold at least one largest block.
    pub fn min_worker_region(&self) -> u64 {
        (0..self.workers).map(|w| self.worker_region(w).len).min().unwrap_or(0)
    }
}
