//! A block trace's fingerprint and a run's capture as the report keeps them: the figures a
//! person reads to know a workload's I/O (`storbench fingerprint`, a run's `--capture`) and
//! that a synthetic job is built from. The library computes them (`blocktrace::fingerprint`);
//! this is only their shape; so too a replay's (`replay-trace`) and its fidelity check.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Latency of one kind of request, µs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// The fingerprint of a trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Every request, flushes and discards included.
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    /// Reads among reads and writes.
    pub read_fraction: f64,
    /// Bytes read among bytes read and written.
    pub read_bytes_fraction: f64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Request size (bytes) -> requests, reads and writes.
    pub size_histogram: BTreeMap<u32, u64>,
    /// Reads and writes that begin where the one before ended.
    pub sequential_fraction: f64,
    /// Distance from the end of the request before (bytes, rounded up to a power of two; 0:
    /// sequential) -> requests.
    pub distance_histogram: BTreeMap<u64, u64>,
    /// Bytes of the fewest blocks (of `block_bytes`) that take 50, 90 and 99 % of the block
    /// accesses.
    pub hot_set_bytes: BTreeMap<String, u64>,
    /// Bytes of distinct blocks (of `block_bytes`) touched.
    pub footprint_bytes: u64,
    /// The trace ended before its capture did (killed, or its disk full): these figures are
    /// of what it holds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
    /// The unit the hot set and footprint count in: 4 KiB, doubled each time a trace touched
    /// more distinct blocks than a fingerprint keeps (a million), so memory stays bounded.
    #[serde(default = "four_kib")]
    pub block_bytes: u64,
    /// From the first issue to the last, seconds.
    pub duration_s: f64,
    pub mean_iops: f64,
    /// The busiest second's requests.
    pub peak_iops: u64,
    /// The spread of the per-second rate: its standard deviation over its mean.
    pub burstiness: f64,
    /// Requests issued in each second from the first.
    pub iops_per_second: Vec<u64>,
    /// Requests in flight, over time (Little's law: summed latency over the duration) and at
    /// most.
    pub mean_queue_depth: f64,
    pub max_queue_depth: u64,
    /// Flushes among all requests, and writes with FUA among writes.
    pub flush_fraction: f64,
    pub fua_fraction: f64,
    /// Per kind: read, write, flush, discard.
    pub latency: BTreeMap<String, Latency>,
}

/// A background capture of a run (`--capture`): the trace it wrote in the bundle, what the
/// capture counted and cost, and the trace's fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CaptureResult {
    /// The trace's file name in the bundle.
    pub trace: String,
    /// The captured device (`/dev/loop3`) and its `major,minor`.
    pub device: String,
    pub major_minor: String,
    /// Requests written to the trace.
    pub records: u64,
    /// Completions with no issue seen (a flush-and-write request's second half, or a request
    /// issued before the capture began).
    pub unmatched_completions: u64,
    /// Requests written without a completion (in flight at the end, or lost).
    pub never_completed: u64,
    /// Events the kernel dropped because its trace buffer was full (the capture fell behind):
    /// each a request or a completion missing from the trace.
    #[serde(default)]
    pub kernel_dropped: u64,
    /// The capture's own CPU time in storbench per request, µs; none when it recorded none.
    pub cpu_us_per_request: Option<f64>,
    pub fingerprint: Fingerprint,
}

/// What a replay of a block trace (`replay-trace`) replayed, beside its io figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceReplay {
    /// The trace file.
    pub trace: String,
    /// `as_recorded` (each request at its recorded time over the speed) or `fast`.
    pub mode: String,
    /// As recorded: how much faster than recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// The trace's reads, writes and flushes (what a replay issues).
    pub recorded_requests: u64,
    /// The trace's span, first request to last, over the speed.
    pub recorded_s: f64,
    /// Its reads and writes per second over that span.
    pub recorded_iops: f64,
    /// The trace's requests not replayed, by kind (discards).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_replayed: BTreeMap<String, u64>,
    /// `--check`: the replay's own capture against the trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<FidelityCheck>,
}

/// Whether a replay reproduced its trace: each figure compared, and whether all passed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FidelityCheck {
    pub figures: Vec<FidelityFigure>,
    pub pass: bool,
}

/// One figure of a fidelity check.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FidelityFigure {
    pub name: String,
    pub original: f64,
    pub replayed: f64,
    /// How far apart: % of the original, or percentage points for shares.
    pub distance: f64,
    pub unit: String,
    pub limit: f64,
    pub pass: bool,
    /// Whether the check holds it: false for a figure only told beside the others (the
    /// device's own answer, such as the flushes the block layer merged), whose `pass` is true.
    #[serde(default = "held_by_default")]
    pub held: bool,
}

/// The hot set's unit of a fingerprint written before it could change.
fn four_kib() -> u64 {
    4096
}

impl FidelityFigure {
    /// Its verdict as shown: `pass`, `FAIL`, or `told` for a figure the check does not hold.
    pub fn verdict(&self) -> &'static str {
        match (self.held, self.pass) {
            (false, _) => "told",
            (true, true) => "pass",
            (true, false) => "FAIL",
        }
    }
}

/// A figure of a check written before figures could be told only: every one was held.
fn held_by_default() -> bool {
    true
}
