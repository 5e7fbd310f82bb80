//! What a search is asked for (`SearchArgs`: on the command line and as a plan workload's keys)
//! and what an evaluation asks of a searchable workload's options ([`Searching`]), whatever
//! its kind.

use crate::measure::Ran;
use anyhow::Result;
use clap::Args;
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::StopFlag;
use storbench_bench::run::search::{LatencyLimit, Load};
use storbench_bench::units::Seconds;

/// Options of the search, shared by io, oltp run, mailbox and replay: on their command lines,
/// and as the same keys in a plan's `[[workload]]` of those kinds (`search = "threads"`,
/// `latency_limit = "p99<=50ms"` or a list of limits).
#[derive(Args, Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchArgs {
    /// A latency that must hold: [TYPE:]STATISTIC<=LATENCY, e.g. p99<=50ms, order:p99<=50ms
    /// (oltp), read:p99.9<=5ms (io), db_read:mean<=20ms (mailbox), or a replay's request type
    /// by name. STATISTIC: mean (or avg), p50, p90, p95, p99, p99.9, p99.99; LATENCY in us, ms
    /// or s. Without a TYPE it holds for every type the workload is judged by (io: read and
    /// write; oltp: order; mailbox: db_read, db_write, log_write; replay: all requests). Give
    /// it again for more (in a plan: a list); all must hold. Needs --search.
    #[arg(long, value_name = "LIMIT", value_parser = parse_limit, requires = "search")]
    #[serde(deserialize_with = "limits_of")]
    pub latency_limit: Vec<LatencyLimit>,

    /// Search for the highest load at which every --latency-limit holds: threads, iodepth or
    /// rate (as the workload has them). Short steps double the load from its given value until
    /// a limit breaks, then bisect; the best load that held runs once more at full length to
    /// confirm it (one step down if it breaks). Every step has its own bundle under one
    /// directory (in an evaluation: the run's); the confirmed run's summary.json has the
    /// search, and its figures are the run's (the headline: the throughput at the most load
    /// that held).
    #[arg(long, value_name = "LOAD", value_parser = load_parser(), requires = "latency_limit")]
    pub search: Option<Load>,

    /// Short steps the search may take at most, confirmations not counted. Default: 12.
    #[arg(long, value_name = "N", requires = "search")]
    pub search_steps: Option<u32>,

    /// Measured length of each short step; the warm-up comes before it as in any run.
    /// Default: 10s.
    #[arg(long, value_name = "DURATION", requires = "search")]
    pub search_step_time: Option<Seconds>,

    /// Highest load the search tries. Default: 256 threads, iodepth 1024, or 1000 × the
    /// starting rate.
    #[arg(long, value_name = "LOAD", requires = "search")]
    pub search_max: Option<f64>,
}

impl SearchArgs {
    pub const STEPS: u32 = 12;
    pub const STEP_TIME: Duration = Duration::from_secs(10);
}

/// `--search`'s values: the loads, listed in `--help`.
fn load_parser() -> impl clap::builder::TypedValueParser<Value = Load> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Load::ALL.map(Load::name)).try_map(|s| s.parse::<Load>())
}

fn parse_limit(s: &str) -> Result<LatencyLimit, String> {
    s.parse()
}

/// A plan's `latency_limit`: one limit, or a list of them.
fn limits_of<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<LatencyLimit>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMore {
        One(String),
        More(Vec<String>),
    }
    let texts = match OneOrMore::deserialize(d).map_err(|_| {
        serde::de::Error::custom("latency_limit is a limit such as \"p99<=50ms\", or a list of them")
    })? {
        OneOrMore::One(t) => vec![t],
        OneOrMore::More(t) => t,
    };
    texts.iter().map(|t| t.parse().map_err(serde::de::Error::custom)).collect()
}

/// What an evaluation asks of a searchable workload's options, whatever its kind.
pub trait Searching {
    fn check_load(&self, p: Load) -> Result<()>;
    fn check_limits(&self, limits: &[storbench_bench::run::search::LatencyLimit]) -> Result<()>;
    fn search_in(&self, s: &SearchArgs, dir: &Path, stop: &StopFlag) -> Result<Ran>;
    fn longest(&self, s: &SearchArgs) -> Duration;
}
