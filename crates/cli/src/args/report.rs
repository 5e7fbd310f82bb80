//! Options of `storbench report` and `storbench compare`: they read bundles and write reports,
//! measuring nothing.

use clap::Args;
use std::path::PathBuf;

/// `--window`, as `report` and `decide` take it.
#[derive(Args, Debug, Clone, Default)]
pub struct WindowArgs {
    /// Recompute every figure of each run from its record over this part of it, in seconds
    /// counted from the run's start (its warm-up included), the whole measured intervals
    /// inside it: `1000s..1200s` (a duration each side, a bare number is seconds). The pages
    /// and the decision say the window they stand on.
    #[arg(long, value_name = "FROM..TO", value_parser = window)]
    pub window: Option<(f64, f64)>,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// The bundle to report on: an evaluation's directory (holding evaluation.json, as
    /// `storbench run` writes it) or one run's (holding summary.json, as io, oltp run and
    /// mailbox write it).
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,

    #[command(flatten)]
    pub window: WindowArgs,

    #[command(flatten)]
    pub out: ReportOutArgs,
}

#[derive(Args, Debug, Clone)]
pub struct SummarizeArgs {
    /// One run's bundle (holding record.jsonl, as io, oltp run, mailbox and integrity write
    /// it).
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,

    /// Compare the rebuilt summary with summary.json and exit 1 naming the first field that
    /// differs.
    #[arg(long)]
    pub check: bool,

    /// Print the rebuilt summary as JSON (as summary.json holds it) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct MergeArgs {
    /// The shards' run bundles (two or more), each holding record.jsonl: one run of one job
    /// measured from several hosts or processes at once.
    #[arg(value_name = "BUNDLE", required = true)]
    pub bundles: Vec<PathBuf>,

    /// The directory to write the merged bundle into (created if missing; only files storbench
    /// wrote there are replaced).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Print the merged summary as JSON (as summary.json holds it) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// The first bundle (evaluation or run directory); its figures are "A".
    #[arg(value_name = "A")]
    pub a: PathBuf,

    /// The second bundle, possibly from another machine; its figures are "B".
    #[arg(value_name = "B")]
    pub b: PathBuf,

    #[command(flatten)]
    pub out: ReportOutArgs,
}

/// Where a report's files go.
#[derive(Args, Debug, Clone)]
pub struct ReportOutArgs {
    /// Directory for the files (created if missing): report.html and report.md for `report`
    /// (default: the bundle itself), compare.html and compare.md for `compare` (default: none,
    /// the findings go to stdout only), and for both the latency spectra as
    /// latency-<workload>[-<type>].svg. storbench replaces a report it wrote earlier there,
    /// never any other file.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct DecideArgs {
    /// An evaluation's directory (holding evaluation.json, as `storbench run` writes it), or
    /// one run's.
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,

    /// Requirements to judge instead of the plan's: a TOML file with a [requirements] table
    /// as a plan has it ("oltp.opm" = ">= 20000", "mailbox.result" = "pass"), and optionally
    /// [[configuration]] tables giving a configuration's name with its price, currency,
    /// capacity and devices.
    #[arg(long, value_name = "FILE")]
    pub requirements: Option<PathBuf>,

    #[command(flatten)]
    pub window: WindowArgs,

    /// Print the decision as JSON: `chosen` (a configuration's name, or null when none meets
    /// every requirement), `why`, and `configurations`, each with `name`, `meets` (true,
    /// false, or null when not shown either way) and `verdicts` (requirement, value, limit,
    /// met, margin_pct).
    #[arg(long)]
    pub json: bool,
}

/// `--window FROM..TO`: seconds since a run's start, each a duration (`1000s`, `20m`, `1200`).
pub fn window(s: &str) -> Result<(f64, f64), String> {
    let (from, to) =
        s.split_once("..").ok_or_else(|| format!("'{s}' is not a window; write it like 1000s..1200s"))?;
    let secs = |t: &str| t.parse::<storbench_bench::units::Seconds>().map(|d| d.0.as_secs_f64());
    let (from, to) = (secs(from)?, secs(to)?);
    if from >= to {
        return Err(format!("'{s}' ends before it starts; write it like 1000s..1200s"));
    }
    Ok((from, to))
}
