//! The commit path's columns of `timeseries.csv` (`storbench wal`): commits a second, bytes a
//! second, commit latency and failed commits.

use crate::columns::{Column, Quantity, Unit, columns};

columns! {
    COMMITS_PER_SEC = "commits_per_sec", PerSecond, Rate;
    BYTES_PER_SEC = "commit_bytes_per_sec", BytesPerSecond, Rate;
    COMMIT_P50_US = "commit_p50_us", Microseconds, Latency;
    COMMIT_P99_US = "commit_p99_us", Microseconds, Latency;
    /// Commits whose write or sync failed in the interval.
    COMMIT_ERRORS = "commit_errors", Count, Count;
}
