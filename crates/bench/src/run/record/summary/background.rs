//! A background stream's figures (`summary.background`), built from its measured intervals
//! merged: at the end of a run from the stream's own totals, and from the record by `rebuild`.

use crate::metrics::{LatencyHistogram, Recorder};
use storbench_report::BackgroundResult;

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
