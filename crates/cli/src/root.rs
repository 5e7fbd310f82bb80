//! The root command: `storbench`, the commands that are not a workload's (`run`, `plan`,
//! `report`, ...) and every workload's subcommand from the registry, as `main` parses them.

use crate::args::MetricsArgs;
use crate::args::report::{CompareArgs, DecideArgs, MergeArgs, ReportArgs, SummarizeArgs};
use crate::args::trace::{CaptureArgs, FingerprintArgs};
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

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
    pub method: crate::plan::method::Method,
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
