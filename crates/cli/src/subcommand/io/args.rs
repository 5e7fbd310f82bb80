//! The command line of `storbench io`: its flags, each a key of the library's `IoOptions`
//! (but --verbose, the command line's), and `io`'s own subcommands.

use crate::args::{EngineArg, Job, OutputArgs};
use clap::Args;
use std::path::PathBuf;
use storbench_bench::units::{ByteSize, Seconds};

pub use storbench_bench::workload::io::options::{BlockSizes, IoOptions, RateProfile, Rw};

/// Options of `storbench io`; the same keys work in a plan file's io workload, but for
/// --verbose (the command line's). Each other flag is a key of the library's `IoOptions`,
/// which the flags convert into (`IoArgs::job`).
#[derive(Args, Debug, Clone, Default)]
pub struct IoArgs {
    /// A fio job file to run (a plan's io workload: fio_job = "path"): its [global] and job
    /// sections, include lines, $ncpus/$pagesize/$mb_memory and ${VAR} expanded; each job
    /// runs in turn (a stonewall's order), jobs fio starts at once being one job with their
    /// workers together. fio's defaults hold where the file is silent (psync, buffered,
    /// sequential reads, no warm-up, the job ends after its size). Options given here apply
    /// over every job's (--target over its filename and directory; --runtime or --io-size
    /// replace its end). An option storbench does not run is refused with its line.
    #[arg(value_name = "JOBFILE.fio", value_parser = storbench_bench::units::place)]
    pub fio_job: Option<PathBuf>,

    /// File, directory or block device to test. A directory gets a file named storbench-io.dat
    /// (shard I of a sharded run: storbench-io.shardI.dat, so shards can share a directory),
    /// created and filled at --size and reused by later runs. An existing file storbench did
    /// not create is only read, unless --force. A block device needs --allow-device.
    /// Default: the current directory.
    #[arg(long, value_name = "PATH", value_parser = storbench_bench::units::place)]
    pub target: Option<PathBuf>,

    /// A job like a captured trace (`storbench capture`), for storage too small or too
    /// different for the trace itself: each option not given here is taken from the trace's
    /// fingerprint: --rw (sequential when most requests follow the one before),
    /// --percentage-random (the requests that did not follow the one before, and as many
    /// more as random ones are expected to follow theirs by chance), --rwmix-read,
    /// --fdatasync (its writes per flush), --bs (the sizes of 99 % of its requests,
    /// weighted), --iodepth (its mean queue depth), --rate-profile (its reads and writes
    /// second by second; a trace under 2 s: --rate-iops, its mean rate),
    /// --random-distribution (zones taking 50, 40, 9 and 1 % of
    /// the accesses over the space of its hot sets), --size (its footprint) and --runtime (its
    /// length).
    #[arg(long, value_name = "TRACE", value_parser = storbench_bench::units::place)]
    pub like: Option<PathBuf>,

    /// Run a named set of jobs instead of one: `sqlio` runs the six SQLIO profiles of the
    /// SATA study (8k random read and write at depth 4 and 1, 64k sequential read and write at
    /// depth 4) and shows them in one table with "% of best".
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Access pattern: read, write (sequential), randread, randwrite, rw (sequential mix) or
    /// randrw (random mix). Default: randread.
    #[arg(long, value_name = "PATTERN")]
    pub rw: Option<Rw>,

    /// Share of reads in rw and randrw, percent from 0 to 100, to a hundredth (70, 3.5).
    /// Default: 50.
    #[arg(long, value_name = "PCT")]
    pub rwmix_read: Option<storbench_bench::workload::io::Share>,

    /// Share of random requests in randread, randwrite and randrw, percent to a hundredth;
    /// the rest continue where the worker's request before ended (fio's percentage_random).
    /// Default: 100.
    #[arg(long, value_name = "PCT")]
    pub percentage_random: Option<storbench_bench::workload::io::Share>,

    /// Flush after every N writes (fdatasync: the written data made durable, a block device's
    /// cache flushed), as fio's fdatasync; N may be fractional (2.5: two flushes every five
    /// writes, in a seeded random order). Each flush is issued once its write has completed
    /// and is not paced by --rate-iops; flushes are counted, with their latency, beside reads
    /// and writes. Default: no flushes.
    #[arg(long, value_name = "N")]
    pub fdatasync: Option<f64>,

    /// As --fdatasync, with fsync: the file's metadata (its size and times) made durable
    /// too, as fio's fsync. Default: no flushes.
    #[arg(long, value_name = "N", conflicts_with = "fdatasync")]
    pub fsync: Option<f64>,

    /// Block size (512, 4k, 64KiB), or a weighted mix as fio's bssplit writes it:
    /// 4k/60:64k/40 means 60 % of I/Os are 4 KiB and 40 % are 64 KiB. Default: 4k.
    #[arg(long, value_name = "SIZE[/WEIGHT:...]")]
    pub bs: Option<BlockSizes>,

    /// Where random offsets fall: uniform, zipf:THETA (THETA > 0, e.g. zipf:1.2; higher is more
    /// skewed), hotspot:IO/SPACE (IO % of I/Os go to the first SPACE % of the target, e.g.
    /// hotspot:90/10) or fio's zoned:IO/SPACE:IO/SPACE:... (consecutive zones from the start,
    /// each with its percent of the I/Os over its percent of the space, to a hundredth; each
    /// adds up to 100, e.g. zoned:60/10:30/20:10/70). Default: uniform.
    #[arg(long, value_name = "DIST")]
    pub random_distribution: Option<String>,

    /// Requests in flight per worker. Default: 1.
    #[arg(long, value_name = "N")]
    pub iodepth: Option<u32>,

    /// Worker threads, each with its own engine and --iodepth requests. Sequential jobs give
    /// each worker its own slice of the target. Default: 1.
    #[arg(long, value_name = "N")]
    pub workers: Option<u32>,

    /// Length of the measured phase (30s, 5m; a bare number is seconds). Default: 30s, unless
    /// --io-size or --steady-state ends the job; with --io-size, the job ends at whichever
    /// comes first.
    #[arg(long, value_name = "DURATION")]
    pub runtime: Option<Seconds>,

    /// Warm-up before the measured phase; its I/O is logged per second but excluded from the
    /// results. Default: 2s.
    #[arg(long, value_name = "DURATION")]
    pub ramp: Option<Seconds>,

    /// Run until the SNIA PTS steady state holds, in rounds of this length (60s; a whole number
    /// of seconds): after each round, the last 5 rounds' IOPS must lie within 20 % of their
    /// mean (max − min) and their least-squares line must move by at most 10 % of the mean
    /// across them. The run then ends and the results cover only those 5 rounds. --runtime is
    /// the cap (default: 25 rounds); a run that reaches it reports its last 5 rounds and warns
    /// that steady state was not reached.
    #[arg(long, value_name = "ROUND", conflicts_with = "io_size")]
    pub steady_state: Option<Seconds>,

    /// Size of the test file, or how much of a file or device to use. Default: 1GiB for a new
    /// file, the whole of an existing file or device.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<ByteSize>,

    /// Start the job's I/O this far into the target (fio's offset): it uses --size bytes from
    /// there, or the rest of an existing file or device; a new file is made --size plus this
    /// long. Default: 0.
    #[arg(long, value_name = "SIZE")]
    pub offset: Option<ByteSize>,

    /// End the job after transferring this much (over all workers) instead of after 30 s; with
    /// --runtime too, at whichever comes first (as fio's size with runtime).
    #[arg(long, value_name = "SIZE")]
    pub io_size: Option<ByteSize>,

    /// I/O engine: io_uring (default; falls back to psync with a warning where the kernel
    /// refuses it), psync (one pread/pwrite at a time per worker), or null (no I/O: measures
    /// storbench's own cost per I/O).
    #[arg(long, value_enum, value_name = "ENGINE")]
    pub engine: Option<EngineArg>,

    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,

    /// Cap the rate at this many I/Os per second (all workers together). Latency is then
    /// measured from each I/O's intended start, so a stalled device shows up in it.
    #[arg(long, value_name = "IOPS", conflicts_with = "rate_bw")]
    pub rate_iops: Option<f64>,

    /// Cap the rate at this many bytes per second (100M, 1G), all workers together.
    #[arg(long, value_name = "SIZE")]
    pub rate_bw: Option<ByteSize>,

    /// A rate that changes each second: the I/Os of each second of the measured phase, all
    /// workers together, comma-separated (120,340,0,90), repeated past its end; the warm-up
    /// runs at its mean. Latency and schedule lag are measured as under --rate-iops. In a plan,
    /// a list of numbers. `--like` takes it from the trace, so its bursts come back.
    #[arg(long, value_name = "IOPS,IOPS,...", conflicts_with_all = ["rate_iops", "rate_bw"])]
    pub rate_profile: Option<RateProfile>,

    /// Seed for every random choice (offsets, mixes, data); the same seed repeats the same
    /// I/O sequence. Default: 1.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Write verifiable blocks (offset, seed, generation and a crc32c in a header), check every
    /// block read back, and after the run read back every block written. Mismatches are
    /// reported with offset, expected and found values. Needs a single block size.
    #[arg(long)]
    pub verify: bool,

    /// Allow --target to be a block device. storbench still refuses a device that is mounted
    /// or in use, and one with partitions or a filesystem unless --force.
    #[arg(long)]
    pub allow_device: bool,

    /// Use a target that holds data: an existing file storbench did not create, or a device
    /// with a partition table or filesystem signature. Its contents will be overwritten.
    #[arg(long)]
    pub force: bool,

    /// Keep a run whose I/Os fail (a full or failing device) as a measurement: exit 0 instead
    /// of 1, and show the error rate (failed I/Os as a percentage of those attempted) beside
    /// every figure. Without it, any failed I/O fails the run. Either way IOPS, bandwidth and
    /// latency count completed I/Os only.
    #[arg(long)]
    pub continue_on_error: bool,

    /// With --profile: show each job's own output (its per-second status, warnings, bundle)
    /// as a single run does, instead of one line per job. Each job's output.log has it either
    /// way.
    #[arg(long)]
    pub verbose: bool,

    #[command(flatten)]
    pub out: OutputArgs,
}

// `storbench io`'s command line: the options a plan's io workload takes, and the search's,
// which only the command line takes (no doc comment: it would be the command's help).
#[derive(Args, Debug, Clone, Default)]
pub struct IoCommand {
    #[command(flatten)]
    pub args: IoArgs,
    #[command(flatten)]
    pub search: crate::search::args::SearchArgs,
}

impl IoArgs {
    /// The flags as the library's options, the command line's own, and where the output goes.
    pub fn job(self) -> IoJob {
        // Every key of the options set here; every flag but --verbose is one of them (a test
        // holds it).
        let options = IoOptions {
            fio_job: self.fio_job,
            target: self.target,
            like: self.like,
            profile: self.profile,
            rw: self.rw,
            rwmix_read: self.rwmix_read,
            percentage_random: self.percentage_random,
            fdatasync: self.fdatasync,
            fsync: self.fsync,
            bs: self.bs,
            random_distribution: self.random_distribution,
            iodepth: self.iodepth,
            workers: self.workers,
            runtime: self.runtime,
            ramp: self.ramp,
            steady_state: self.steady_state,
            size: self.size,
            offset: self.offset,
            io_size: self.io_size,
            engine: self.engine.map(Into::into),
            buffered: self.buffered,
            rate_iops: self.rate_iops,
            rate_bw: self.rate_bw,
            rate_profile: self.rate_profile,
            seed: self.seed,
            verify: self.verify,
            allow_device: self.allow_device,
            force: self.force,
            continue_on_error: self.continue_on_error,
        };
        IoJob { options, cli: IoCli { verbose: self.verbose }, out: self.out }
    }
}

/// What only `storbench io`'s command line gives: how much a profile set shows.
#[derive(Debug, Clone, Default)]
pub struct IoCli {
    pub verbose: bool,
}

/// An io workload as the command line and a plan run it.
pub type IoJob = Job<IoOptions, IoCli>;
