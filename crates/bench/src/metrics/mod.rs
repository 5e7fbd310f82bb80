//! Latency histograms and the per-worker counters that workloads record into.
//!
//! Each worker owns its recorders (no sharing, no locks); the run merges them at interval
//! boundaries. Merging HDR histograms is exact: the merged histogram is the one a single
//! recorder would have produced.

mod histogram;
mod hlog;
mod recorder;

pub use histogram::{BucketSum, HISTOGRAM_MAX_NS, Inflater, LatencyHistogram, TagSums};
pub use hlog::{EncodedLog, HlogWriter, LogCursor, histogram_from_text, histogram_text, read_hlog};
pub use recorder::{DirectionCounters, ErrorTally, Recorder};
