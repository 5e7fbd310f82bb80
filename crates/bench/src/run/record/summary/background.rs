//! A background stream's figures (`summary.background`), built from its measured intervals
//! merged: at the end of a run from the stream's own totals, and from the record by `rebuild`.

use crate::metrics::{LatencyHistogram, Recorder};
use storbench_report::{BackgroundResult, CommandRun};

/// The figures of an io or a rebuild stream (`kind`; both count their I/Os in a `Recorder`).
pub fn of(kind: &str, totals: &Recorder, measured_s: f64) -> BackgroundResult {
    match kind {
        "rebuild" => rebuild(totals, measured_s),
        _ => io(totals, measured_s),
    }
}

/// An emulated rebuild's figures: as an io stream's, with `bytes_per_sec` the bytes it copied
/// (written to its destination) a second.
pub fn rebuild(totals: &Recorder, measured_s: f64) -> BackgroundResult {
    let copied = io(totals, measured_s);
    BackgroundResult { kind: "rebuild".into(), bytes_per_sec: copied.write_bytes_per_sec, ..copied }
}

/// An io stream's figures over `measured_s` seconds of measured intervals with `totals`.
pub fn io(totals: &Recorder, measured_s: f64) -> BackgroundResult {
    let per_s = |n: u64| if measured_s > 0.0 { n as f64 / measured_s } else { 0.0 };
    let p99 = |h: &LatencyHistogram| (!h.is_empty()).then(|| h.quantile_ns(0.99) as f64 / 1e3);
    BackgroundResult {
        kind: "io".into(),
        measured_s,
        read_iops: per_s(totals.read.ios),
        write_iops: per_s(totals.write.ios),
        read_bytes_per_sec: per_s(totals.read.bytes),
        write_bytes_per_sec: per_s(totals.write.bytes),
        bytes_per_sec: per_s(totals.read.bytes.saturating_add(totals.write.bytes)),
        read_lat_p99_us: p99(&totals.read.latency),
        write_lat_p99_us: p99(&totals.write.latency),
        errors: totals.errors.total(),
        schedule_lag_ms: super::schedule_lag_ms(&totals.lag),
        ..BackgroundResult::default()
    }
}

/// A background command's entry: how it ran, no I/O of storbench's own.
pub fn command(run: &CommandRun) -> BackgroundResult {
    BackgroundResult { kind: "cmd".into(), command: Some(run.clone()), ..BackgroundResult::default() }
}
