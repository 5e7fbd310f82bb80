//! A validated synthetic I/O job: what every worker of `workload::io::run` does.

use super::blocksize::BlockSizeMix;
use super::offsets::{Pattern, Region};
use crate::engine::EngineKind;
use std::time::Duration;

/// A share of a job's requests (of reads, of random requests), in hundredths of a percent
/// (10000: all): whole percents for a profile, finer for a trace's 3.5 % (`io --like`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Share(u16);

impl Share {
    pub const READS: Share = Share(10_000);
    pub const WRITES: Share = Share(0);
    pub const ALL: Share = Share(10_000);

    /// A whole percent, at most 100.
    pub fn percent(pct: u8) -> Share {
        Share(u16::from(pct.min(100)) * 100)
    }

    /// A fraction from 0 to 1, to the nearest hundredth of a percent.
    pub fn of_fraction(f: f64) -> Share {
        Share((f.clamp(0.0, 1.0) * 10_000.0).round() as u16)
    }

    /// Hundredths of a percent.
    pub fn hundredths(self) -> u16 {
        self.0
    }

    /// As a share of reads: whether any request writes.
    pub fn writes(self) -> bool {
        self.0 < 10_000
    }

    /// The percent as the summary keeps it: a whole number when it is one.
    pub fn json(self) -> serde_json::Value {
        if self.0.is_multiple_of(100) { (self.0 / 100).into() } else { (f64::from(self.0) / 100.0).into() }
    }
}

impl std::str::FromStr for Share {
    type Err = String;

    /// A percent from 0 to 100, to a hundredth (`70`, `3.5`).
    fn from_str(text: &str) -> Result<Share, String> {
        let bad = || format!("'{text}' is not a percentage; give 0 to 100, e.g. 70 or 3.5");
        let pct: f64 = text.trim().trim_end_matches('%').parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&pct) {
            return Err(bad());
        }
        Ok(Share::of_fraction(pct / 100.0))
    }
}

/// From a plan: a number (`70`, `3.5`) or the same as text.
impl<'de> serde::Deserialize<'de> for Share {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Share, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Given {
            Number(f64),
            Text(String),
        }
        let text = match Given::deserialize(d)? {
            Given::Number(n) => n.to_string(),
            Given::Text(t) => t,
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for Share {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.json())
    }
}

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// After this long (the ramp comes before it).
    Time(Duration),
    /// When this many bytes were transferred, over all workers (fio's size-based job).
    Bytes(u64),
    /// When this many bytes were transferred, or after this long, whichever comes first
    /// (fio's job that has both a size and a runtime).
    BytesWithin(u64, Duration),
    /// When the trace (`IoSpec::trace`) has been replayed to its last request.
    Trace,
}

/// One synthetic I/O job.
#[derive(Debug, Clone, PartialEq)]
pub struct IoSpec {
    pub name: String,
    pub pattern: Pattern,
    /// Share of reads; the rest are writes.
    pub reads: Share,
    /// Under a random pattern, the share of requests at a random offset; the rest continue
    /// where the worker's request before ended (fio's percentage_random).
    pub random: Share,
    /// A flush (fdatasync) after this many writes on average, in hundredths (250: two flushes
    /// every five writes), each issued once its write completed; None: no flushes.
    pub writes_per_flush: Option<u32>,
    /// The flushes are fsync (the file's metadata made durable too), not fdatasync.
    pub fsync: bool,
    pub block_sizes: BlockSizeMix,
    /// Requests in flight per worker.
    pub iodepth: u32,
    pub workers: u32,
    pub ramp: Duration,
    pub end: End,
    /// Total I/O rate over all workers, per second; latency is then measured from each
    /// request's intended start.
    pub rate_iops: Option<f64>,
    /// Under a rate, the rate of each second of the measured phase (over all workers), the
    /// profile repeated past its end; the warm-up runs at `rate_iops`, the profile's mean.
    pub rate_profile: Option<std::sync::Arc<[f64]>>,
    pub seed: u64,
    pub verify: bool,
    pub engine: EngineKind,
    /// The part of the target the job uses.
    pub region: Region,
    pub interval: Duration,
    /// A trace the one worker replays instead of drawing requests (`replay-trace`); `end`
    /// is then `End::Trace`, `iodepth` the most in flight.
    pub trace: Option<crate::blocktrace::replay::TraceSource>,
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

#[cfg(test)]
mod tests {
    use super::Share;

    #[test]
    fn a_read_share_is_kept_to_a_hundredth_of_a_percent_and_said_as_given() {
        let share: Share = "3.5".parse().unwrap();
        assert_eq!((share.hundredths(), share.json()), (350, serde_json::json!(3.5)));
        assert_eq!("70".parse::<Share>().unwrap().json(), serde_json::json!(70));
        assert_eq!(Share::of_fraction(0.03456).hundredths(), 346);
        assert!(!"100".parse::<Share>().unwrap().writes());
        for bad in ["100.5", "-1", "NaN", "inf", "lots", ""] {
            assert!(bad.parse::<Share>().unwrap_err().contains("0 to 100"), "{bad}");
        }
        // A plan gives a number or text.
        let from_plan: Share = serde_json::from_str("3.25").unwrap();
        assert_eq!(from_plan.hundredths(), 325);
    }
}
