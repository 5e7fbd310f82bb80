//! Options of `storbench capture` and `storbench fingerprint`: a block device's requests
//! recorded from the kernel's tracepoints, and what a trace says.

use clap::Args;
use std::path::PathBuf;
use storbench_bench::blocktrace::options::ReplayTraceOptions;
use storbench_bench::units::Seconds;

#[derive(Args, Debug, Clone)]
pub struct CaptureArgs {
    /// The block device whose requests to record (/dev/nvme0n1, /dev/sdb, /dev/loop3): every
    /// request's time, place, size, kind (read, write, flush, discard, FUA), issue-to-complete
    /// latency and issuing process. Never its data: nothing on the device is read or written.
    #[arg(long, value_name = "DEV", value_parser = storbench_bench::units::place)]
    pub device: PathBuf,

    /// How long to record, e.g. 60s or 10m. Default: until Ctrl-C.
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<Seconds>,

    /// The trace file to write; a new file (an existing one is never replaced). Default:
    /// storbench-<device>-<time>.sbtrace in the current directory.
    #[arg(long, value_name = "FILE", value_parser = storbench_bench::units::file_place)]
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

/// Options of `storbench replay-trace`; the same keys work in a plan file's replay-trace
/// workload (its target, allow_device and force are the configuration's). Each flag is a key
/// of the library's `ReplayTraceOptions`, which the flags convert into (`ReplayTraceArgs::job`).
#[derive(Args, Debug, Clone, Default)]
pub struct ReplayTraceArgs {
    /// A trace `storbench capture` (or a run's --capture) wrote.
    #[arg(value_name = "TRACE", value_parser = storbench_bench::units::file_place)]
    pub trace: PathBuf,

    /// Where to replay: a block device (with --allow-device; never the captured device unless
    /// --force), or a file storbench creates and fills at the captured device's size (or
    /// --footprint), or reuses; a directory gets storbench-io.dat. Default: the current
    /// directory.
    #[arg(long, value_name = "PATH", value_parser = storbench_bench::units::place)]
    pub target: Option<PathBuf>,

    /// Allow a block device as the target: the replay's writes overwrite what is on it.
    #[arg(long)]
    pub allow_device: bool,

    /// Write to a target storbench would otherwise refuse: a device holding a filesystem, a
    /// file storbench did not create, the captured device itself.
    #[arg(long)]
    pub force: bool,

    /// As recorded, this many times as fast (2 = twice the rate, 0.5 = half). Default: 1.
    #[arg(long, value_name = "X")]
    pub speed: Option<f64>,

    /// As fast as the target takes them, at the recorded queue depth (or --iodepth), instead
    /// of at the recorded times.
    #[arg(long)]
    pub fast: bool,

    /// With --fast: requests in flight, 1 to 4096. Default: the most the trace had in flight.
    #[arg(long, value_name = "N")]
    pub iodepth: Option<u32>,

    /// Fold the offsets into this many bytes (a tenth of the data, a target smaller than the
    /// captured device): an offset past it wraps around. Default: the target's size.
    #[arg(long, value_name = "SIZE")]
    pub footprint: Option<storbench_bench::units::ByteSize>,

    /// Through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,

    /// Capture the replay itself (the target must be a block device) into the bundle
    /// (bg<N>.sbtrace) and compare its fingerprint with the trace's, figure by figure, each
    /// with its distance, limit and pass (summary.json: results.trace.check); exit 1 when a
    /// figure fails.
    #[arg(long)]
    pub check: bool,

    #[command(flatten)]
    pub out: crate::args::OutputArgs,
}

impl ReplayTraceArgs {
    /// The flags as the library's options, and where the output goes.
    pub fn job(self) -> ReplayTraceJob {
        // Every key of the options set here; every flag is one of them (a test holds it).
        let options = ReplayTraceOptions {
            trace: self.trace,
            target: self.target,
            allow_device: self.allow_device,
            force: self.force,
            speed: self.speed,
            fast: self.fast,
            iodepth: self.iodepth,
            footprint: self.footprint,
            buffered: self.buffered,
            check: self.check,
        };
        ReplayTraceJob { options, cli: (), out: self.out }
    }
}

/// A replay-trace workload as the command line and a plan run it.
pub type ReplayTraceJob = crate::args::Job<ReplayTraceOptions>;
