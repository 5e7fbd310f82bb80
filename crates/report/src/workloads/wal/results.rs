//! The commit path's results (`storbench wal`): one point of a method, a write size and a
//! number of writers, as `summary.json` holds it under `results`.

use crate::model::LatencyNs;
use serde::{Deserialize, Serialize};

/// One point of the commit path (`storbench wal`): commits of one size by one sync method,
/// from one or more writers at once, each made durable before the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WalResults {
    /// How each commit was made durable: `fdatasync`, `fsync`, `open_datasync`, `open_sync`,
    /// `open_direct_datasync`.
    pub sync_method: String,
    /// `preallocated` (over zeros written first) or `growing` (appended).
    pub layout: String,
    pub bytes_per_commit: u32,
    /// Writers committing at once.
    pub writers: u32,
    /// Why the platform did not offer the point (O_DIRECT refused); its figures are then 0.
    pub not_offered: Option<String>,
    /// Commits over the measured phase, and their rate.
    pub commits: u64,
    pub commits_per_sec: f64,
    pub bytes_per_sec: f64,
    /// Commit latency (the write and its sync together).
    pub commit_lat_ns: Option<LatencyNs>,
    /// Commits that failed, warm-up included, and the first one's error.
    pub errors: u64,
    pub first_error: Option<String>,
    /// Why these commits are too fast to have been durable on the device, where they are
    /// (a volatile cache answered).
    pub implausible: Option<String>,
}
