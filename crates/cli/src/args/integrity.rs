//! Options of `storbench integrity`: SQLIOSim's file and simulation parameters, each
//! overridable, with its two file sets of the reference evaluation as presets.

use super::{EngineArg, OutputArgs};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Duration;
use storbench_bench::engine::EngineKind;
use storbench_bench::units::{ByteSize, Seconds};
use storbench_bench::workload::integrity::{IntegrityOptions, IntegrityPreset};

/// `storbench integrity [OPTIONS]` runs the stress; `storbench integrity verify` checks kept
/// files.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct IntegrityCommand {
    #[command(subcommand)]
    pub sub: Option<IntegritySub>,
    #[command(flatten)]
    pub run: IntegrityArgs,
}

#[derive(Subcommand, Debug)]
pub enum IntegritySub {
    /// Check the files a run kept (--keep, or a run that was killed) against its journal of
    /// acknowledged writes: every page must hold at least the generation last acknowledged.
    /// Writes in flight when a run died may hold either generation, and are no error. Exit
    /// code 1 on any error.
    Verify(IntegrityVerifyArgs),
}

#[derive(Args, Debug, Clone, Default)]
pub struct IntegrityVerifyArgs {
    /// Directory holding the files (storbench-integrity.json, .mdf, .ldf and .journal); for a
    /// run on a device, the --journal-dir it used (its manifest names the device).
    #[arg(long, value_name = "DIR", default_value = ".", value_parser = storbench_bench::units::place)]
    pub target: PathBuf,

    /// Print the verification as JSON to stdout.
    #[arg(long)]
    pub json: bool,
}

/// Options of `storbench integrity`; the same keys work in a plan file's integrity workload,
/// but for the crash cycles ([`CrashArgs`], the command line's). Each other flag is a key of
/// the library's `IntegrityOptions`, which the flags convert into (`IntegrityArgs::job`).
#[derive(Args, Debug, Clone, Default)]
pub struct IntegrityArgs {
    /// Directory for the files: storbench-integrity.mdf (data), .ldf (log), .journal (the
    /// acknowledged writes) and .json (what they are). The directory must not hold them
    /// already. Or a block device with --allow-device: the data from its first byte up to
    /// --data-max, the log after it, and the journal and manifest in --journal-dir. Default:
    /// the current directory.
    #[arg(long, value_name = "PATH", value_parser = storbench_bench::units::place)]
    pub target: Option<PathBuf>,

    /// Allow --target to be a block device, whose data from byte 0 up to --data-max plus
    /// --log-size is overwritten. Refused when mounted or in use; a device with partitions,
    /// a partition table or a filesystem signature also needs --force.
    #[arg(long)]
    pub allow_device: bool,

    /// Write to a device although it has partitions, a partition table or a filesystem
    /// signature (never to one mounted or in use).
    #[arg(long)]
    pub force: bool,

    /// With a device target: the directory for the journal and the manifest (kept apart from
    /// the data). Default: the current directory.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub journal_dir: Option<PathBuf>,

    /// The file sizes of one of the reference evaluation's two sets: small (data 500 MB to
    /// 1,000 MB by 50 MB, log 50 MB; the default) or big (5,000 MB to 10,000 MB by 500 MB).
    #[arg(long, value_name = "SET")]
    pub preset: Option<IntegrityPreset>,

    /// Initial size of the data file. Default: the preset's (500MB).
    #[arg(long, value_name = "SIZE")]
    pub data_size: Option<ByteSize>,

    /// Largest size the data file grows to; at it, the file shrinks by --data-growth every
    /// --shrink-every and grows again. Default: the preset's (1000MB).
    #[arg(long, value_name = "SIZE")]
    pub data_max: Option<ByteSize>,

    /// How much the data file grows at a time. Default: the preset's (50MB).
    #[arg(long, value_name = "SIZE")]
    pub data_growth: Option<ByteSize>,

    /// Size of the log file (fixed; written circularly). Default: the preset's (50MB).
    #[arg(long, value_name = "SIZE")]
    pub log_size: Option<ByteSize>,

    /// How long the activities run; the final audit of every page comes after. Default: 5m
    /// (SQLIOSim's TestCycleDuration).
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<Seconds>,

    /// Not for integrity (hidden): accepted only to refuse it with the reason, that its
    /// result is a pass or fail over the whole run with no figure per round to judge.
    #[arg(long, value_name = "ROUND", hide = true)]
    pub steady_state: Option<Seconds>,

    /// User threads doing random I/O in runs of 1-100 pages. Default: twice the CPUs, at
    /// most 8 (SQLIOSim's).
    #[arg(long, value_name = "N")]
    pub users: Option<u32>,

    /// An I/O slower than this makes its activity halve its outstanding I/O (a throttle
    /// event). Default: 100 (SQLIOSim's TargetIODuration).
    #[arg(long, value_name = "MS")]
    pub target_io_ms: Option<u64>,

    /// At its maximum size the data file is cut by one --data-growth increment at most this
    /// often (and bulk inserts then grow it again). Default: 2m (SQLIOSim shrinks and grows
    /// every 2 to 10 minutes).
    #[arg(long, value_name = "DURATION")]
    pub shrink_every: Option<Seconds>,

    /// I/Os outstanding longer than this are delayed: named in the log while outstanding and
    /// counted. Default: 15s (SQL Server's message 833).
    #[arg(long, value_name = "DURATION")]
    pub delay_threshold: Option<Seconds>,

    /// Go through the page cache instead of O_DIRECT (SQLIOSim's NoBuffering off).
    #[arg(long)]
    pub buffered: bool,

    /// Open the files with O_DSYNC, so every write is on stable storage when it completes
    /// (SQLIOSim's WriteThrough; FUA where the device has it).
    #[arg(long)]
    pub write_through: bool,

    /// Keep the files and the journal after the run (for `storbench integrity verify`).
    /// Files with errors are kept either way.
    #[arg(long)]
    pub keep: bool,

    /// I/O engine: io_uring (default) or psync.
    #[arg(long, value_enum)]
    pub engine: Option<EngineArg>,

    /// Seed for every random choice and every page's contents. Default: 1.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub crash: CrashArgs,

    #[command(flatten)]
    pub out: OutputArgs,
}

/// Crash cycles: the command line's alone (a plan's run is one process the evaluation
/// watches).
#[derive(Args, Debug, Clone, Default)]
pub struct CrashArgs {
    /// Crash consistency: run the stress as a separate writer process and kill it (SIGKILL) at
    /// a random point between half this and this after its activities start, then check
    /// that every acknowledged write is on disk. Report: cycles, writes acknowledged, found,
    /// lost. Command line only.
    #[arg(long, value_name = "DURATION")]
    pub crash_after: Option<Seconds>,

    /// With --crash-after: at the crash point run this command (through sh -c) instead of
    /// killing the writer, e.g. a power cut through the test machine's BMC. A writer still
    /// alive 10 s after the command is killed. A command that exits non-zero or outlives
    /// --crash-cmd-timeout fails its cycle and the run (exit 1); its output goes to the
    /// bundle's output.log.
    #[arg(long, value_name = "COMMAND", requires = "crash_after")]
    pub crash_cmd: Option<String>,

    /// With --crash-cmd: how long the command may run; then it is killed, with everything it
    /// started, and its cycle fails. Default: 60s.
    #[arg(long, value_name = "DURATION", requires = "crash_cmd", value_parser = command_time_limit)]
    pub crash_cmd_timeout: Option<Seconds>,

    /// With --crash-after: how many crash cycles (1 or more), each on new files. Default: 1.
    #[arg(long, value_name = "N", requires = "crash_after", value_parser = crash_cycles)]
    pub crash_cycles: Option<u32>,

    /// Internal: run as the writer of a crash cycle (create, say "ready", run until killed)
    /// on the parent's validated spec (--writer-spec); its --target only names it to a
    /// crash command that looks for it.
    #[arg(long, hide = true, requires = "writer_spec")]
    pub crash_writer: bool,

    /// Internal: a crash writer's spec, as JSON.
    #[arg(long, hide = true, value_name = "JSON")]
    pub writer_spec: Option<String>,
}

impl IntegrityArgs {
    /// The flags as the library's options, the crash cycles, and where the output goes.
    pub fn job(self) -> IntegrityJob {
        // Every key of the options set here; every flag but the crash cycles' is one of them
        // (a test holds it).
        let options = IntegrityOptions {
            target: self.target,
            allow_device: self.allow_device,
            force: self.force,
            journal_dir: self.journal_dir,
            preset: self.preset,
            data_size: self.data_size,
            data_max: self.data_max,
            data_growth: self.data_growth,
            log_size: self.log_size,
            duration: self.duration,
            steady_state: self.steady_state,
            users: self.users,
            target_io_ms: self.target_io_ms,
            shrink_every: self.shrink_every,
            delay_threshold: self.delay_threshold,
            buffered: self.buffered,
            write_through: self.write_through,
            keep: self.keep,
            engine: self.engine.map(EngineKind::from),
            seed: self.seed,
        };
        IntegrityJob { options, cli: self.crash, out: self.out }
    }
}

/// An integrity workload as the command line and a plan run it: the crash cycles are the
/// command line's.
pub type IntegrityJob = super::Job<IntegrityOptions, CrashArgs>;

impl CrashArgs {
    /// How long --crash-cmd may run when --crash-cmd-timeout is not given: a BMC's power cut
    /// answers within seconds; one that has not answered in a minute will not.
    pub const CRASH_CMD_TIMEOUT: Duration = Duration::from_secs(60);

    pub fn crash_cmd_timeout_or_default(&self) -> Duration {
        self.crash_cmd_timeout.map_or(Self::CRASH_CMD_TIMEOUT, |t| t.0)
    }
}

/// `--crash-cmd-timeout`: a duration above zero.
fn command_time_limit(s: &str) -> Result<Seconds, String> {
    let limit: Seconds = s.parse()?;
    if limit.0.is_zero() {
        return Err("a time limit of 0 would kill the command at once; give one such as 60s".into());
    }
    Ok(limit)
}

/// `--crash-cycles`: 1 or more.
fn crash_cycles(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("0 crash cycles would test nothing; give 1 or more".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("'{s}' is not a number of cycles ({e}); give 1 or more")),
    }
}
