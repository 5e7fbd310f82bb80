//! Options of `storbench mailbox`: Jetstress's test parameters, each overridable.

use super::{EngineArg, OutputArgs, SteadyArgs};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use storbench_bench::engine::EngineKind;
use storbench_bench::units::{ByteSize, Seconds};
use storbench_bench::workload::mailbox::{MailboxOptions, TestType};

/// `storbench mailbox [OPTIONS]` runs a test; `storbench mailbox verify` checks databases.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct MailboxCommand {
    #[command(subcommand)]
    pub sub: Option<MailboxSub>,
    #[command(flatten)]
    pub run: MailboxArgs,
    #[command(flatten)]
    pub search: crate::search::args::SearchArgs,
}

#[derive(Subcommand, Debug)]
pub enum MailboxSub {
    /// Check every database page and every log block of the databases in --target against
    /// their checksums, in parallel. Corrupt pages are listed by file and offset; exit code 1
    /// when there is any.
    Verify(MailboxVerifyArgs),
    /// Soft recovery of databases left by a dirty shutdown (a run that was killed or failed):
    /// replays their log files into the databases, as Exchange's `eseutil /r` does, and marks
    /// them cleanly shut down. Verify them afterwards.
    Recover(MailboxRecoverArgs),
}

#[derive(Args, Debug, Clone, Default)]
pub struct MailboxRecoverArgs {
    /// Directory holding the databases (storbench-mailbox.json and mailbox<N>.edb).
    #[arg(long, value_name = "DIR", default_value = "storbench-mailbox", value_parser = storbench_bench::units::place)]
    pub target: PathBuf,
}

#[derive(Args, Debug, Clone, Default)]
pub struct MailboxVerifyArgs {
    /// Directory holding the databases (storbench-mailbox.json and mailbox<N>.edb).
    #[arg(long, value_name = "DIR", default_value = "storbench-mailbox", value_parser = storbench_bench::units::place)]
    pub target: PathBuf,

    /// Threads reading in parallel. Default: the number of CPUs.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Print the verification as JSON to stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestArg {
    /// The transactional workload judged by the strict thresholds (Jetstress's default).
    Performance,
    /// The same workload judged by the lenient thresholds (maxima 200 ms), for long runs.
    Stress,
    /// Sequential read of every database, all in parallel: MB/s per database.
    Backup,
    /// Fill --log-files log files per database, stop without a clean shutdown, then replay
    /// them: seconds per log file.
    #[value(name = "soft-recovery", alias = "soft_recovery")]
    SoftRecovery,
}

impl From<TestArg> for TestType {
    fn from(t: TestArg) -> Self {
        match t {
            TestArg::Performance => TestType::Performance,
            TestArg::Stress => TestType::Stress,
            TestArg::Backup => TestType::Backup,
            TestArg::SoftRecovery => TestType::SoftRecovery,
        }
    }
}

/// Options of `storbench mailbox`; the same keys work in a plan file's mailbox workload. Each
/// flag is a key of the library's `MailboxOptions`, which the flags convert into
/// (`MailboxArgs::job`).
#[derive(Args, Debug, Clone, Default)]
pub struct MailboxArgs {
    /// Directory for the databases; created if missing. Holds storbench-mailbox.json and
    /// mailbox<N>.edb; nothing else in it is touched. Databases already there (from --keep)
    /// are reused when their shape matches. Default: ./storbench-mailbox.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub target: Option<PathBuf>,

    /// Directory for the log files (a separate volume, as Exchange deployments use).
    /// Default: --target.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub log_target: Option<PathBuf>,

    /// Jetstress generation whose engine is emulated: 2007 (8 KB pages, 40/30/5/25 mix with
    /// 55 % lazy commits, maxima 50 ms), 2010 (32 KB pages, background maintenance 5 MB/s per
    /// database) or 2013 (32 KB pages, 40/20/5/35 with 70 % lazy, maintenance 1.5 MB/s,
    /// maxima 100 ms; also Exchange 2016/2019). Default: 2013.
    #[arg(long, value_name = "YEAR")]
    pub preset: Option<String>,

    /// Test type. Default: performance.
    #[arg(long, value_enum, value_name = "TYPE")]
    pub test: Option<TestArg>,

    /// Mailboxes in all. Default: as many --mailbox-size mailboxes as fill --capacity-pct of
    /// the target filesystem's formatted capacity, rounded down to a multiple of 50.
    #[arg(long, value_name = "N")]
    pub mailboxes: Option<u64>,

    /// Size of one mailbox. Default: 250MB.
    #[arg(long, value_name = "SIZE")]
    pub mailbox_size: Option<ByteSize>,

    /// Share of the formatted capacity the mailboxes fill when --mailboxes is not given.
    /// Default: 60.
    #[arg(long, value_name = "PCT")]
    pub capacity_pct: Option<u32>,

    /// Target I/O per mailbox per second (DB reads + writes): the run is paced to
    /// mailboxes × this and fails if it delivers less than 95 % of it. Default: unthrottled.
    #[arg(long, value_name = "IOPS")]
    pub iops_per_mailbox: Option<f64>,

    /// Sessions in all, spread over the databases (Jetstress 2013's global thread count).
    /// Default: 1 per 135 target IOPS × 1.5 with a target (Microsoft's rule of thumb),
    /// else 4 per database.
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,

    /// Databases, each with its own log stream and its own thread. Default: 1.
    #[arg(long, value_name = "N")]
    pub databases: Option<u32>,

    /// Length of the measured phase (2h, 30m; a bare number is seconds). Default: 2h for
    /// performance, 24h for stress.
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<Seconds>,

    #[command(flatten)]
    pub steady: SteadyArgs,

    /// The warm-up ends when every database cache is 90 % full, or after this long.
    /// Default: 10m.
    #[arg(long, value_name = "DURATION")]
    pub max_warmup: Option<Seconds>,

    /// Maximum database cache per database. Default: 256MB (Jetstress 2007's).
    #[arg(long, value_name = "SIZE")]
    pub cache_size: Option<ByteSize>,

    /// Dirty pages are written once this much log follows their first change. Default: 20MB
    /// (2007, 2010), 100MB (2013).
    #[arg(long, value_name = "SIZE")]
    pub checkpoint_depth: Option<ByteSize>,

    /// Operation mix as INSERT/DELETE/REPLACE/READ percentages adding up to 100, e.g.
    /// 40/20/5/35. Default: the preset's.
    #[arg(long, value_name = "I/D/R/S")]
    pub mix: Option<String>,

    /// Share of commits that do not wait for the log, percent. Default: the preset's.
    #[arg(long, value_name = "PCT")]
    pub lazy_commits: Option<u32>,

    /// Background database maintenance read rate per database (0 = off). Default: the
    /// preset's (2007: off).
    #[arg(long, value_name = "SIZE")]
    pub bdm_rate: Option<ByteSize>,

    /// Limit on the average database read latency, ms. Default: 20.
    #[arg(long, value_name = "MS")]
    pub db_read_avg_ms: Option<f64>,

    /// Limit on the database read latency of any sample window, ms. Default: 50 (2007), 100
    /// (2010, 2013), 200 (stress).
    #[arg(long, value_name = "MS")]
    pub db_read_max_ms: Option<f64>,

    /// Limit on the average log write latency, ms. Default: 10.
    #[arg(long, value_name = "MS")]
    pub log_write_avg_ms: Option<f64>,

    /// Limit on the log write latency of any sample window, ms. Default: as --db-read-max-ms.
    #[arg(long, value_name = "MS")]
    pub log_write_max_ms: Option<f64>,

    /// Limit on operations per second that found no free cache buffer (the engine's page
    /// fault stalls), averaged over the run. Default: 1.
    #[arg(long, value_name = "N")]
    pub page_fault_stalls: Option<f64>,

    /// Window over which the maxima are averaged (Jetstress samples every 15 s). Default: 15s.
    #[arg(long, value_name = "DURATION")]
    pub sample_window: Option<Seconds>,

    /// Soft recovery: log files to generate and replay per database. Default: 100.
    #[arg(long, value_name = "N")]
    pub log_files: Option<u32>,

    /// Find the most threads that pass: start from an estimate, add a thread while trial runs
    /// pass, step back when one fails (fewer mailboxes if even one thread fails), then run the
    /// best setting three times and report the median.
    #[arg(long)]
    pub tune: bool,

    /// Length of each tuning trial's measured phase. Default: 2m.
    #[arg(long, value_name = "DURATION")]
    pub trial_duration: Option<Seconds>,

    /// Leave the databases in place after the run, for another test (they are reused when
    /// the next run asks for the same shape). Default: databases this run created are removed.
    #[arg(long)]
    pub keep: bool,

    /// Skip checking every page and log block after the run.
    #[arg(long)]
    pub no_verify: bool,

    /// I/O engine: io_uring (default) or psync.
    #[arg(long, value_enum, value_name = "ENGINE")]
    pub engine: Option<EngineArg>,

    /// Seed for every random choice and for the database content. Default: 1.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub out: OutputArgs,
}

impl MailboxArgs {
    /// The flags as the library's options, and where the output goes.
    pub fn job(self) -> MailboxJob {
        // Every key of the options set here; every flag is one of them (a test holds it).
        let options = MailboxOptions {
            target: self.target,
            log_target: self.log_target,
            preset: self.preset,
            test: self.test.map(TestType::from),
            mailboxes: self.mailboxes,
            mailbox_size: self.mailbox_size,
            capacity_pct: self.capacity_pct,
            iops_per_mailbox: self.iops_per_mailbox,
            threads: self.threads,
            databases: self.databases,
            duration: self.duration,
            steady_state: self.steady.steady_state,
            max_warmup: self.max_warmup,
            cache_size: self.cache_size,
            checkpoint_depth: self.checkpoint_depth,
            mix: self.mix,
            lazy_commits: self.lazy_commits,
            bdm_rate: self.bdm_rate,
            db_read_avg_ms: self.db_read_avg_ms,
            db_read_max_ms: self.db_read_max_ms,
            log_write_avg_ms: self.log_write_avg_ms,
            log_write_max_ms: self.log_write_max_ms,
            page_fault_stalls: self.page_fault_stalls,
            sample_window: self.sample_window,
            log_files: self.log_files,
            tune: self.tune,
            trial_duration: self.trial_duration,
            keep: self.keep,
            no_verify: self.no_verify,
            engine: self.engine.map(EngineKind::from),
            seed: self.seed,
        };
        MailboxJob { options, cli: (), out: self.out }
    }
}

/// A mailbox workload as the command line and a plan run it.
pub type MailboxJob = crate::args::Job<MailboxOptions>;
