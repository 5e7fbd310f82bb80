//! The command line. Each option is defined once, here: its doc comment is the `--help` text,
//! its field name is the plan-file key (snake_case) and the flag (kebab-case). Nothing here
//! has side effects; `subcommand::*` validates these plain values into the library's typed jobs.

mod integrity;
mod mailbox;
mod oltp;
mod report;
mod trace;

pub use integrity::*;
pub use mailbox::*;
pub use oltp::*;
pub use report::*;
pub use trace::*;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;
use storbench_bench::target::Remedy;
use storbench_bench::units::{ByteSize, Seconds};

/// Storage evaluation for database servers.
///
/// storbench measures what storage gives a database: each workload below is a command of its
/// own, with latency from HDR histograms, disk, CPU and database counters every second, and a
/// result bundle per run that scripts can read; `run` evaluates storage with all of them.
#[derive(Parser, Debug)]
#[command(name = "storbench", version, max_term_width = 100, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Value names of the options that take a number, a size or a duration.
const NUMBER_VALUES: [&str; 11] = [
    "N",
    "SIZE",
    "SIZE[/WEIGHT:...]",
    "DURATION",
    "ROUND",
    "PCT",
    "IOPS",
    "MS",
    "SECONDS",
    "USERS_PER_S",
    "PASSES",
];

/// The command line as clap reads it, with one change the derive cannot state once for all
/// options: a value starting with '-' given to an option that takes a number, size or duration
/// reaches that option's parser, which says why a negative value does not work. Clap alone
/// reads `--runtime -5s` as an unknown flag `-5`.
pub fn command() -> clap::Command {
    reflowed(negatives_reach_parsers(crate::registry::with_subcommands(Cli::command())))
}

/// Every help text as the terminal's width should wrap it: doc comments keep their examples'
/// lines (`verbatim_doc_comment`), and so their prose's line breaks too, which a narrower
/// terminal would wrap again into ragged lines.
fn reflowed(cmd: clap::Command) -> clap::Command {
    let text = |s: Option<&clap::builder::StyledStr>| s.map(|s| reflow(&s.to_string()));
    let (about, long) = (text(cmd.get_about()), text(cmd.get_long_about()));
    let mut cmd = cmd.mut_args(|a| match text(a.get_long_help()) {
        Some(help) => a.long_help(help),
        None => a,
    });
    if let Some(about) = about {
        cmd = cmd.about(about);
    }
    if let Some(long) = long {
        cmd = cmd.long_about(long);
    }
    let subcommands: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_owned()).collect();
    subcommands.into_iter().fold(cmd, |cmd, name| cmd.mut_subcommand(name, reflowed))
}

/// `text` with each prose paragraph's lines joined into one; blank lines, indented lines
/// (examples, a list's continuation) and list items stay as written.
pub fn reflow(text: &str) -> String {
    let mut out = String::new();
    let mut in_prose = false;
    for line in text.lines() {
        let kept = line.trim().is_empty() || line.starts_with(' ') || line.starts_with("- ");
        if in_prose && !kept {
            out.push(' ');
            out.push_str(line.trim());
        } else {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(line);
        }
        in_prose = !line.starts_with(' ') && !line.trim().is_empty() && !line.ends_with(':');
    }
    out
}

/// A workload's command line `argv` (from "storbench") as its command parses it.
#[cfg(test)]
pub fn parse_kind<C: clap::FromArgMatches>(argv: &[String]) -> C {
    let matches = command().get_matches_from(argv);
    C::from_arg_matches(matches.subcommand().expect("a subcommand").1).expect("its options")
}

fn negatives_reach_parsers(cmd: clap::Command) -> clap::Command {
    let numeric = |a: &clap::Arg| {
        a.get_value_names().is_some_and(|names| names.iter().any(|n| NUMBER_VALUES.contains(&n.as_str())))
    };
    let cmd = cmd.mut_args(|a| if numeric(&a) { a.allow_hyphen_values(true) } else { a });
    let subcommands: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_owned()).collect();
    subcommands.into_iter().fold(cmd, |cmd, name| cmd.mut_subcommand(name, negatives_reach_parsers))
}

/// The commands that are not a workload's; each workload's subcommand is its registry entry's
/// (`registry::KINDS`).
#[derive(Subcommand, Debug)]
pub enum Command {
    /// An evaluation: every workload of a plan on every configuration, repeated, with idle
    /// and active power, into one evaluation bundle. Without a plan: a quick evaluation of the
    /// current directory (the six SQLIO profiles, DVD Store on SQLite, the mailbox workload;
    /// a few minutes).
    ///
    /// Examples:
    ///   storbench run                                   # the quick evaluation, here
    ///   storbench plan init && storbench run storbench-plan.toml
    ///   storbench run plan.toml --repetitions 5 --idle-power 0
    ///   storbench run --resume storbench-results/20261122-101500-ssd-vs-hdd
    #[command(verbatim_doc_comment)]
    Run(Box<RunArgs>),
    /// Evaluation plans: `plan init` writes a commented example, `plan check` checks one without
    /// running it.
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Write report.html and report.md for a bundle: key findings, every repetition with the
    /// spread, latency spectra and per-second charts (inline SVG, readable offline), the method
    /// and the full disclosure of the system under test; each latency spectrum also as
    /// latency-<workload>[-<type>].svg.
    ///
    /// Examples:
    ///   storbench report ./storbench-eval                  # an evaluation from `storbench run`
    ///   storbench report ./storbench-results/20260101T120000-randread --out /tmp/rep
    #[command(verbatim_doc_comment)]
    Report(ReportArgs),
    /// Compare two bundles (evaluations or single runs, possibly from different machines):
    /// matched by workload, A against B, saying where a difference lies within the run-to-run
    /// spread.
    ///
    /// Examples:
    ///   storbench compare ./eval-lab1 ./eval-lab2
    ///   storbench compare ./run-a ./run-b --out ./compared   # also compare.html, compare.md
    #[command(verbatim_doc_comment)]
    Compare(CompareArgs),
    /// Build a run's summary again from its bundle's record alone (per-interval counts and
    /// histograms) and compare it with its summary.json.
    ///
    /// Examples:
    ///   storbench summarize ./storbench-results/20260101-120000-randread
    ///   storbench summarize ./run --check      # exit 1 naming the first field that differs
    #[command(verbatim_doc_comment)]
    Summarize(SummarizeArgs),
    /// Merge the bundles of one run's shards (run from several hosts at once) into one bundle:
    /// counts summed and histograms merged exactly over the common measured window, the
    /// per-second series summed by wall-clock second, and shards.json saying what each shard
    /// did and which are missing or failed.
    ///
    /// Examples:
    ///   storbench merge ./shard-*/2026* --out ./merged
    ///   storbench merge ./a ./b --out ./merged --json
    #[command(verbatim_doc_comment)]
    Merge(MergeArgs),
    /// Record every request a block device gets, from the kernel's block tracepoints
    /// (block_rq_issue, block_rq_complete, through a tracefs instance of storbench's own;
    /// root), into a compact trace file, streamed to disk as it goes; then print the trace's
    /// fingerprint. Run the database (or any workload) on the device meanwhile.
    ///
    /// Examples:
    ///   storbench capture --device /dev/nvme0n1 --duration 10m --out prod.sbtrace
    ///   storbench capture --device /dev/loop3 --json        # until Ctrl-C
    #[command(verbatim_doc_comment)]
    Capture(CaptureArgs),
    /// What a trace says: the read/write mix by requests and bytes, request sizes,
    /// sequentiality and locality (distance to the request before, hot set at 50/90/99 %),
    /// arrival (rate per second, burstiness), queue depth, flush and FUA share, latency per
    /// kind.
    ///
    /// Examples:
    ///   storbench fingerprint prod.sbtrace
    ///   storbench fingerprint prod.sbtrace --json | jq .read_fraction
    #[command(verbatim_doc_comment)]
    Fingerprint(FingerprintArgs),
    /// Judge an evaluation against requirements without running anything: for each
    /// configuration, each requirement met or not with its margin ("not shown either way"
    /// where the repetitions lie either side of the limit), then the configuration to choose
    /// (the cheapest that meets every requirement, else the lowest active power), the cost per
    /// unit of work and each pair compared. Exit 1 when requirements were given and no
    /// configuration meets them all.
    ///
    /// Examples:
    ///   storbench decide ./storbench-results/20261122-101500-ssd-vs-hdd
    ///   storbench decide ./eval --requirements needs.toml --json
    #[command(verbatim_doc_comment)]
    Decide(DecideArgs),
}

/// Options of `storbench run`.
#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// The plan (TOML). Without one, the built-in quick evaluation runs on the current
    /// directory. `storbench plan init` writes an example that documents every key.
    #[arg(value_name = "PLAN")]
    pub plan: Option<PathBuf>,

    /// Finish an interrupted evaluation: the directory it was writing. Runs that finished
    /// are kept; the others run again. The plan saved there is run, unless its passwords are
    /// hidden (storbench writes none): then give the plan again, `--resume DIR PLAN`.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub resume: Option<PathBuf>,

    /// Where the evaluation bundle goes: a directory <time>-<plan name> inside. Default:
    /// ./storbench-results.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub output_dir: Option<PathBuf>,

    /// Run the quick evaluation on this directory instead of the current one. Repeat it to
    /// compare storage: each directory is a configuration of its own (named after it, or
    /// NAME=DIR), the runs take turns, and the report compares them. A plan names its places
    /// in [[configuration]] instead.
    #[arg(long = "target", value_name = "[NAME=]DIR", conflicts_with_all = ["plan", "resume"])]
    pub targets: Vec<String>,

    /// Show each run's own output live (its per-second lines, DS3's lines, database creation
    /// and verification), as the workload's command does, besides the line per run. Each
    /// run's output.log has it either way.
    #[arg(long)]
    pub verbose: bool,

    #[command(flatten)]
    pub metrics: MetricsArgs,

    #[command(flatten)]
    pub cluster: crate::cluster::ClusterArgs,

    #[command(flatten)]
    pub method: crate::plan::Method,
}

#[derive(Subcommand, Debug)]
pub enum PlanCommand {
    /// Write a commented example plan, every key documented; it is never written over an
    /// existing file.
    Init {
        /// Where to write it.
        #[arg(value_name = "FILE", default_value = "storbench-plan.toml", value_parser = storbench_bench::units::file_place)]
        file: PathBuf,
    },
    /// Check a plan without running it: everything `storbench run` checks before its first
    /// run (keys, requirements against the workloads' figures, places, database servers,
    /// background streams, power meters), every problem listed, exit 2 if there is one;
    /// nothing is written.
    ///
    /// Examples:
    ///   storbench plan check storbench-plan.toml && storbench run storbench-plan.toml
    #[command(verbatim_doc_comment)]
    Check {
        /// The plan to check.
        #[arg(value_name = "PLAN")]
        file: PathBuf,
    },
}

pub use storbench_bench::workload::io::options::{BlockSizes, IoOptions, RateProfile, Rw};

/// Options of `storbench io`; the same keys work in a plan file's io workload, but for
/// --verbose (the command line's). Each other flag is a key of the library's `IoOptions`,
/// which the flags convert into (`IoArgs::job`).
#[derive(Args, Debug, Clone, Default)]
pub struct IoArgs {
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
    /// --io-size or --steady-state ends the job.
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

    /// End the job after transferring this much (over all workers) instead of after --runtime.
    #[arg(long, value_name = "SIZE", conflicts_with = "runtime")]
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
    pub search: crate::search::SearchArgs,
}

impl IoArgs {
    /// The flags as the library's options, the command line's own, and where the output goes.
    pub fn job(self) -> IoJob {
        // Every key of the options set here; every flag but --verbose is one of them (a test
        // holds it).
        let options = IoOptions {
            target: self.target,
            like: self.like,
            profile: self.profile,
            rw: self.rw,
            rwmix_read: self.rwmix_read,
            percentage_random: self.percentage_random,
            fdatasync: self.fdatasync,
            bs: self.bs,
            random_distribution: self.random_distribution,
            iodepth: self.iodepth,
            workers: self.workers,
            runtime: self.runtime,
            ramp: self.ramp,
            steady_state: self.steady_state,
            size: self.size,
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

    /// A target refusal's remedy as the flag to pass, for a command-line user.
    pub fn flag_for(remedy: Remedy) -> String {
        match remedy {
            Remedy::Force => "pass --force",
            Remedy::AllowDevice => "pass --allow-device",
            Remedy::SmallerSize => "give a smaller --size",
            Remedy::Buffered => "pass --buffered",
        }
        .to_string()
    }
}

/// What only `storbench io`'s command line gives: how much a profile set shows.
#[derive(Debug, Clone, Default)]
pub struct IoCli {
    pub verbose: bool,
}

/// An io workload as the command line and a plan run it.
pub type IoJob = Job<IoOptions, IoCli>;

/// `--steady-state` of the workloads besides io that have a headline figure per round (oltp,
/// the mailbox, replay); io's has its own words (IOPS, --runtime, --io-size) and the same
/// checks (`SteadyArgs::round`).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct SteadyArgs {
    /// Run until the SNIA PTS steady state holds, in rounds of this length (60s; a whole number
    /// of seconds): after each round, the last 5 rounds' headline figure (oltp: OPM; mailbox:
    /// transactional IOPS; replay: calls/s) must lie within 20 % of their mean (max − min) and
    /// their least-squares line must move by at most 10 % of the mean across them. The run
    /// then ends and the results (figures, histograms, CPU, power, a mailbox's thresholds)
    /// cover only those 5 rounds. The measured phase's length (oltp --run-time, mailbox
    /// --duration) is the cap (default: 25 rounds; a replay's log is its own); a run that
    /// reaches it reports its last 5 rounds and warns that steady state was not reached.
    #[arg(long, value_name = "ROUND")]
    pub steady_state: Option<Seconds>,
}

impl SteadyArgs {
    /// The cap in rounds when no measured length is given (SNIA PTS allows up to 25).
    pub const DEFAULT_ROUNDS: u32 = storbench_bench::run::Rule::SNIA_PTS_MAX_ROUNDS;

    /// `round` checked: whole seconds (rounds are made of one-second intervals) and, where the
    /// measured phase is capped by `cap` (its flag and length), room for the rule's window of
    /// rounds within it.
    pub fn round(round: Option<Seconds>, cap: Option<(&str, Duration)>) -> anyhow::Result<Option<Duration>> {
        let Some(round) = round.map(|r| r.0) else {
            return Ok(None);
        };
        if round.is_zero() || round.subsec_nanos() != 0 {
            anyhow::bail!(
                "--steady-state {}: a round is a whole number of seconds above 0, such as 60s",
                Seconds(round)
            );
        }
        let window = storbench_bench::run::Rule::SNIA_PTS.window as u32;
        if let Some((flag, cap)) = cap
            && cap < round * window
        {
            anyhow::bail!(
                "{flag} {} leaves no room for the {window} rounds of {} that steady state is judged on; use {flag} {} or more, or drop {flag} (the cap is then {} rounds)",
                Seconds(cap),
                Seconds(round),
                Seconds(round * window),
                Self::DEFAULT_ROUNDS
            );
        }
        Ok(Some(round))
    }

    /// The measured phase's length: `given`, else under steady state the default cap of
    /// rounds, else `default`.
    pub fn length(&self, given: Option<Duration>, default: Duration) -> Duration {
        storbench_bench::run::Rule::measured_length(self.steady_state.map(|r| r.0), given, default)
    }

    /// Under steady state without a given length, how long a run is expected to take:
    /// steady state usually comes within a few rounds of the first five; count eight.
    pub fn expected(&self, given: Option<Duration>) -> Option<Duration> {
        match (self.steady_state, given) {
            (Some(round), None) => Some(round.0 * 8),
            _ => None,
        }
    }
}

/// A workload as the command line and a plan run it: the library's options `O` (a plan's
/// workload table deserializes into them; the flags convert into them), what only the
/// command line gives (`C`: integrity's crash cycles, oltp's extra output files; a plan's is
/// the default) and where its output goes (a plan's is the evaluation's).
#[derive(Debug, Clone, Default)]
pub struct Job<O, C = ()> {
    pub options: O,
    pub cli: C,
    pub out: OutputArgs,
}

impl<'de, O: Deserialize<'de>, C: Default> Deserialize<'de> for Job<O, C> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Job { options: O::deserialize(d)?, cli: C::default(), out: OutputArgs::default() })
    }
}

/// Where a run's bundle goes and what stdout carries; shared by every measuring command.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Name of the run, used in the bundle directory. Default: derived from the job.
    #[arg(long, value_name = "NAME", value_parser = storbench_bench::units::plain_text)]
    pub name: Option<String>,

    /// Where result bundles go: one directory per run, <time>-<name>. Default:
    /// ./storbench-results.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub output_dir: Option<PathBuf>,

    /// Print summary.json to stdout instead of the table (io with --profile:
    /// {"profiles": [summary, ...]}; oltp: DS3's lines then go to stderr). Progress and
    /// messages go to stderr.
    #[arg(long)]
    pub json: bool,

    /// Power meter for the power_watts column, sampled every second: auto (RAPL or IPMI where
    /// the machine has one; the default), none, rapl, ipmi, file:PATH (a file holding watts),
    /// cmd:COMMAND (prints watts within 5 s; run in a process group of its own, ended with
    /// the run), redfish:URL (http or https; credentials in the URL, https://user:pw@bmc/...,
    /// or better from STORBENCH_REDFISH_USER and STORBENCH_REDFISH_PASSWORD, which no process
    /// listing shows; a BMC's own CA or certificate as a PEM file in STORBENCH_REDFISH_CA, or
    /// STORBENCH_REDFISH_INSECURE=1 to accept any) or ptdaemon:HOST:PORT (a SPEC PTDaemon; no
    /// credentials). Several named meters, summed, each less an optional baseline: 'server=ipmi;
    /// enclosure=file:/run/w; enclosure.baseline=108.2' (a power.<name>.watts column each). A
    /// meter silent for 10 s is a warning in the summary; passwords are never printed or
    /// written.
    #[arg(long, value_name = "SOURCE")]
    pub power: Option<String>,

    /// A stream to run beside the workload, from its start to its end, with its figures in
    /// summary.json's background (an entry per stream: name bg1, bg2, ..., kind, spec). Give
    /// it again for more streams. Kinds:
    ///
    /// io[:KEY=VALUE,...], a sequential stream of storbench's, with its own columns in the
    /// time series (bg1.write_bytes_per_sec). Keys: rw=write (or read), bs=1M,
    /// rate=BYTES_PER_S (e.g. 10MiB; unthrottled without), size=256MiB (its file
    /// storbench-bg1.dat, made and filled once, then reused), dir=PATH (default: beside the
    /// run's target; the null engine for a run without one), iodepth=1, direct=yes.
    ///
    /// rebuild[:KEY=VALUE,...], an emulated mirror rebuild: it reads the source in order and
    /// writes the same bytes at the same offset of the destination, wrapping around, with io's
    /// columns (bg1.read_bytes_per_sec, bg1.write_bytes_per_sec); bytes_per_sec in the summary
    /// is what it copied. Keys: source=PATH (default: storbench-bg1-source.dat beside the
    /// target, filled with incompressible data: the measured volume rebuilds itself; a
    /// directory elsewhere puts it there, another device's being a controller's rebuild; or any
    /// readable file or block device, only read, at least size bytes), dest=PATH (default:
    /// storbench-bg1-dest.dat beside the target; a directory puts it there; a file must be one
    /// storbench made), rate=BYTES_PER_S (unthrottled without), bs=1M, size=256MiB (bytes
    /// copied before it wraps), iodepth=4 (blocks in flight), direct=yes. A destination
    /// holding data storbench did not make, or a source smaller than size, is refused before
    /// the run.
    ///
    /// cmd:COMMAND, your command (e.g. cmd:btrfs replace start -B 2 /dev/loop2 /mnt), run by sh
    /// -c from the measured phase's start in a session of its own, its output in the bundle's
    /// output.log; when the run ends it is stopped (SIGTERM, then 5 s later killed with all it
    /// started) unless --background-wait. Its entry: command, exit_code (null when storbench
    /// stopped it), seconds, stopped; a command that fails is a warning. A program that is not
    /// there or not executable is refused before the run.
    #[arg(long, value_name = "SPEC")]
    pub background: Vec<crate::background::Background>,

    /// Record the run's block requests, from the measured phase's start to its end, into
    /// bg<N>.sbtrace in its bundle: the kernel's block tracepoints (root and tracefs), only the
    /// requests' time, place, size and kind, never data. Its entry in summary.json's background
    /// has the trace's fingerprint (read and write mix, sizes, sequential share, hot set, rate,
    /// queue depth, latency per kind) and the capture's own CPU per request; the report shows
    /// them. The device is the disk under the run's target (--capture, or --capture=auto), or DEV
    /// (--capture=/dev/sdb). The
    /// same as --background capture[:device=DEV]; `storbench replay-trace` replays the trace
    /// on other storage.
    #[arg(long, value_name = "DEV", num_args = 0..=1, require_equals = true, default_missing_value = "auto")]
    pub capture: Option<PathBuf>,

    /// With a cmd: background stream: the run's end waits until the command exits (at most 24
    /// hours; Ctrl-C ends it), so that its exit_code and seconds are the whole rebuild's, e.g.
    /// how long a btrfs replace took under the workload. Without it the command is stopped
    /// when the measured phase ends.
    #[arg(long, requires = "background")]
    pub background_wait: bool,

    /// Run as shard I of N started together on many load hosts (1 <= I <= N): `{shard}` in
    /// any argument (a target, a URL, --name) becomes I, and the summary records the shard,
    /// its host and its clock for `storbench merge`. `env` reads Slurm's SLURM_PROCID and
    /// SLURM_NTASKS or MPI's OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE; `env/N` a
    /// Kubernetes Indexed Job's JOB_COMPLETION_INDEX, with N its completions.
    #[arg(long, value_name = "I/N", value_parser = crate::shard::parse_shard)]
    pub shard: Option<crate::shard::ShardArg>,

    /// Start the run at this instant, after its setup (a file's fill, a database's load): RFC
    /// 3339 (2026-11-26T18:00:00Z) or Unix seconds (date -d '+60 sec' +%s), at most a day
    /// ahead. Shards given the same time start together; one whose setup ends later says so and
    /// is marked late.
    #[arg(long, value_name = "TIME", value_parser = crate::shard::parse_start_at)]
    pub start_at: Option<jiff::Timestamp>,

    #[command(flatten)]
    pub metrics: MetricsArgs,
}

impl OutputArgs {
    /// The streams to run beside the workload: every --background, then --capture's.
    pub fn streams(&self) -> Vec<crate::background::Background> {
        let mut streams = self.background.clone();
        streams.extend(self.capture.as_ref().map(|dev| crate::background::Background::capture(dev)));
        streams
    }
}

/// `--metrics-listen`, of every measuring command and of `run`.
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve live figures for Prometheus at http://ADDR/metrics while the command runs: the
    /// latest second's row of timeseries.csv (every column, in base units: read_lat_p99_us as
    /// storbench_read_lat_p99_seconds), counters of the run so far (storbench_ios_total,
    /// storbench_errors_total, orders, calls), the phase (storbench_phase{phase="measure"}),
    /// each series labelled run, workload, configuration (in an evaluation) and shard.
    /// OpenMetrics to a scraper that asks for it (Prometheus does), else the Prometheus text
    /// format (curl, promtool). ADDR: HOST:PORT, or :PORT for every interface (:9464). An
    /// address in use or not this host's is refused before anything runs.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineArg {
    #[value(name = "io_uring", alias = "io-uring", alias = "uring")]
    IoUring,
    Psync,
    Null,
}

impl From<EngineArg> for storbench_bench::engine::EngineKind {
    fn from(e: EngineArg) -> Self {
        use storbench_bench::engine::EngineKind;
        match e {
            EngineArg::IoUring => EngineKind::IoUring,
            EngineArg::Psync => EngineKind::Psync,
            EngineArg::Null => EngineKind::Null,
        }
    }
}

#[cfg(test)]
mod steady_tests {
    use super::*;
    use crate::plan::{Configuration, Method};
    use crate::registry::Options;
    use storbench_bench::units::Minutes;

    /// An evaluation's `window = "steady_state"` reaches every workload that has rounds: its
    /// expected length is then eight rounds (here of 1 s), not its fixed measured phase.
    #[test]
    fn an_evaluations_steady_state_window_reaches_every_workload_with_rounds() {
        let secs = |s| Seconds(Duration::from_secs(s));
        let steady =
            Method { window: Some("steady_state".into()), round: Some(secs(1)), ..Method::default() };
        let (c, fixed, eight) = (Configuration::default(), Method::default(), Duration::from_secs(8));
        let io =
            IoJob { options: IoOptions { ramp: Some(secs(0)), ..IoOptions::default() }, ..IoJob::default() };
        assert_eq!(io.for_configuration(&c, &steady).expected(), eight);
        use storbench_bench::workload::oltp::options::OltpOptions;
        let oltp = OltpOptions { warmup_time: Some(Minutes(Duration::ZERO)), ..OltpOptions::default() };
        let oltp = OltpJob { options: oltp, ..OltpJob::default() };
        assert_eq!(oltp.for_configuration(&c, &steady).expected(), eight);
        assert_eq!(oltp.for_configuration(&c, &fixed).expected(), OltpOptions::RUN_TIME);
        use storbench_bench::workload::mailbox::{MailboxOptions, TestType};
        let job = |options| MailboxJob { options, cli: (), out: OutputArgs::default() };
        let mailbox = MailboxOptions { max_warmup: Some(secs(0)), ..MailboxOptions::default() };
        assert_eq!(job(mailbox.clone()).for_configuration(&c, &steady).expected(), eight);
        let backup = MailboxOptions { test: Some(TestType::Backup), ..mailbox };
        assert_eq!(
            job(backup).for_configuration(&c, &steady).expected(),
            MailboxOptions::DURATION,
            "no rounds"
        );
        // A plan's workload takes the key as the command line takes the flag.
        let planned: OltpJob = toml::from_str("steady_state = \"2s\"\nrun_time = 1").unwrap();
        assert_eq!(
            (planned.options.steady_state, planned.options.run_time),
            (Some(secs(2)), Some(Minutes(Duration::from_secs(60))))
        );
        assert!(toml::from_str::<OltpJob>("steady = \"2s\"").is_err(), "unknown keys are still refused");
    }
}
