//! Options of `storbench capture` and `storbench fingerprint`: a block device's requests
//! recorded from the kernel's tracepoints, and what a trace says.

use crate::units::Seconds;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct CaptureArgs {
    /// The block device whose requests to record (/dev/nvme0n1, /dev/sdb, /dev/loop3): every
    /// request's time, place, size, kind (read, write, flush, discard, FUA), issue-to-complete
    /// latency and issuing process. Never its data: nothing on the device is read or written.
    #[arg(long, value_name = "DEV", value_parser = crate::units::place)]
    pub device: PathBuf,

    /// How long to record, e.g. 60s or 10m. Default: until Ctrl-C.
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<Seconds>,

    /// The trace file to write; a new file (an existing one is never replaced). Default:
    /// storbench-<device>-<time>.sbtrace in the current directory.
    #[arg(long, value_name = "FILE", value_parser = crate::units::file_place)]
    pub out: Option<PathBuf>,

    /// Print the capture's figures and the trace's fingerprint as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct FingerprintArgs {
    /// A trace `storbench capture` wrote.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,

    /// Print the fingerprint as JSON (requests, read_fraction, size_histogram,
    /// sequential_fraction, mean_iops and the rest) instead of a table.
    #[arg(long)]
    pub json: bool,
}
