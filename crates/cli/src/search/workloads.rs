//! What each workload's load and figures are to a search: io (threads = workers, iodepth,
//! rate = --rate-iops), oltp run (threads = --n-threads), mailbox (threads), replay
//! (threads = --in-flight, rate = time-sync --speed) and wal (threads = --writers). The loads each has are its library
//! entry's (`Workload::loads`); a plan's options reach their search through
//! `Options::searching`, which each of these kinds answers in its entry.

use super::{LAT_STATS, SearchArgs, Searchable, Shown, latency_figures};
use crate::args::{IoJob, MailboxJob, OltpJob, OutputArgs, WalJob};
use crate::measure::Ran;
use crate::registry::Options;
use crate::subcommand::replay::args::ReplayJob;
use anyhow::{Result, bail};
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::StopFlag;
use storbench_bench::run::search::Load;
use storbench_bench::run::search::{CONFIRMATIONS, Figure, Statistic};
use storbench_bench::units::{Minutes, Seconds};
use storbench_bench::workload::io::options::IoOptions;
use storbench_bench::workload::registry::WORKLOADS;
use storbench_bench::workload::replay::options::{Pacing, ReplayOptions};
use storbench_bench::workload::wal::WalOptions;
use storbench_report::{LatencyNs, Results, Summary};

/// The kinds whose workloads a plan may search, as a message lists them: those whose library
/// entry has a load (`io, oltp, mailbox or replay`).
pub fn kinds_listed() -> String {
    let kinds: Vec<&str> = WORKLOADS.iter().filter(|w| !w.loads.is_empty()).map(|w| w.name).collect();
    match kinds.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => kinds.join(""),
    }
}

/// What an evaluation asks of a searchable workload's options, whatever its kind.
pub trait Searching {
    fn check_load(&self, p: Load) -> Result<()>;
    fn check_limits(&self, limits: &[storbench_bench::run::search::LatencyLimit]) -> Result<()>;
    fn search_in(&self, s: &SearchArgs, dir: &Path, stop: &StopFlag) -> Result<Ran>;
    fn longest(&self, s: &SearchArgs) -> Duration;
}

impl<W: Searchable> Searching for W {
    fn check_load(&self, p: Load) -> Result<()> {
        super::check_load(self, p)
    }

    fn check_limits(&self, limits: &[storbench_bench::run::search::LatencyLimit]) -> Result<()> {
        super::check_limits(self, limits)
    }

    fn search_in(&self, s: &SearchArgs, dir: &Path, stop: &StopFlag) -> Result<Ran> {
        super::search(self, s, dir, Shown::InRun, stop)
    }

    fn longest(&self, s: &SearchArgs) -> Duration {
        let p = s.search.unwrap_or(self.kind().workload.loads[0]);
        let step = s.search_step_time.map_or(SearchArgs::STEP_TIME, |t| t.0);
        let steps = s.search_steps.unwrap_or(SearchArgs::STEPS);
        let at = |length| self.at(p, self.load(p), length).expected();
        at(Some(step)) * steps + at(None) * CONFIRMATIONS
    }
}

/// A search's steps are fixed-length: steady-state rounds would make each step as long as the
/// rule takes.
fn fixed_steps(steady_state: Option<Seconds>) -> Result<()> {
    if steady_state.is_some() {
        bail!("--search runs steps of --search-step-time; drop --steady-state");
    }
    Ok(())
}

/// A type's figures where it has any.
fn figures_of(request: &str, l: Option<&LatencyNs>) -> Vec<Figure> {
    l.map(|l| latency_figures(request, l)).unwrap_or_default()
}

impl Searchable for IoJob {
    const THROUGHPUT: &'static str = "IOPS";
    const STATS: &'static [Statistic] = &LAT_STATS;
    const DEFAULT_TYPES: &'static [&'static str] = &["read", "write"];

    fn types(&self) -> Option<Vec<String>> {
        Some(vec!["read".into(), "write".into()])
    }

    fn searchable(&self) -> Result<()> {
        let o = &self.options;
        if o.profile.is_some() {
            bail!(
                "--search runs one job; a profile set's jobs are searched one at a time, each with its options"
            );
        }
        if o.io_size.is_some() || o.steady_state.is_some() {
            bail!("--search runs steps of --search-step-time; drop --io-size and --steady-state");
        }
        if o.rate_bw.is_some() {
            bail!("--search moves the rate as --rate-iops; drop --rate-bw");
        }
        Ok(())
    }

    fn load(&self, p: Load) -> f64 {
        let o = &self.options;
        match p {
            Load::Threads => f64::from(o.workers.unwrap_or(1)),
            Load::Iodepth => f64::from(o.iodepth.unwrap_or(IoOptions::IODEPTH)),
            Load::Rate => o.rate_iops.unwrap_or(1000.0),
        }
    }

    fn at(&self, p: Load, load: f64, length: Option<Duration>) -> Self {
        let mut a = self.clone();
        let o = &mut a.options;
        match p {
            Load::Threads => o.workers = Some(load as u32),
            Load::Iodepth => o.iodepth = Some(load as u32),
            Load::Rate => o.rate_iops = Some(load),
        }
        o.runtime = length.map(Seconds).or(o.runtime);
        a
    }

    fn run_name(&self) -> String {
        self.out.name.clone().unwrap_or_else(|| self.label(None))
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Io(r) = &s.results else { return (0.0, Vec::new()) };
        let mut f = figures_of("read", r.read.lat_ns.as_ref());
        f.extend(figures_of("write", r.write.lat_ns.as_ref()));
        (r.read.iops + r.write.iops, f)
    }
}

impl Searchable for OltpJob {
    const THROUGHPUT: &'static str = "OPM";
    const STATS: &'static [Statistic] = &LAT_STATS;
    const DEFAULT_TYPES: &'static [&'static str] = &["order"];

    fn types(&self) -> Option<Vec<String>> {
        // The order's response time, then each transaction type's, as the summary names them.
        let txns = storbench_bench::workload::oltp::users::TXN_KINDS.iter().map(|k| k.as_str());
        Some(std::iter::once("order").chain(txns).map(String::from).collect())
    }

    fn searchable(&self) -> Result<()> {
        fixed_steps(self.options.steady_state)
    }

    fn load(&self, _p: Load) -> f64 {
        f64::from(self.options.n_threads.unwrap_or(1))
    }

    fn at(&self, _p: Load, load: f64, length: Option<Duration>) -> Self {
        let mut a = self.clone();
        a.options.n_threads = Some(load as u32);
        a.options.run_time = length.map(Minutes).or(a.options.run_time);
        a
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Oltp(r) = &s.results else { return (0.0, Vec::new()) };
        let mut f = figures_of("order", r.order_rt_ns.as_ref());
        for (name, t) in &r.transactions {
            f.extend(figures_of(name, t.lat_ns.as_ref()));
        }
        (r.opm, f)
    }
}

/// One stream of a mailbox database's results.
type StreamOf = fn(&storbench_report::MailboxDbResult) -> &storbench_report::StreamResult;

impl Searchable for MailboxJob {
    const THROUGHPUT: &'static str = "transactional IOPS";
    const STATS: &'static [Statistic] = &LAT_STATS;
    const DEFAULT_TYPES: &'static [&'static str] = &["db_read", "db_write", "log_write"];

    fn types(&self) -> Option<Vec<String>> {
        Some(["db_read", "db_write", "log_write", "bdm_read"].map(String::from).to_vec())
    }

    fn searchable(&self) -> Result<()> {
        if self.options.tune {
            bail!("--search and --tune both move the thread count; give one of them");
        }
        fixed_steps(self.options.steady_state)
    }

    fn load(&self, _p: Load) -> f64 {
        let o = &self.options;
        f64::from(o.threads.unwrap_or(4 * o.databases.unwrap_or(1)))
    }

    fn at(&self, _p: Load, load: f64, length: Option<Duration>) -> Self {
        let mut a = self.clone();
        a.options.threads = Some(load as u32);
        a.options.duration = length.map(Seconds).or(a.options.duration);
        // Databases made by the first step serve every step; `cleanup` removes them.
        a.options.keep = true;
        a
    }

    fn cleanup(&self) -> Option<Box<dyn FnOnce()>> {
        let there = crate::subcommand::mailbox::has_databases(self);
        let args = self.clone();
        (!self.options.keep && !there).then(|| {
            Box::new(move || crate::subcommand::mailbox::remove_kept_databases(&args)) as Box<dyn FnOnce()>
        })
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    /// Each stream's worst database: percentiles from its histogram, the mean as Jetstress
    /// averages it over the run.
    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Mailbox(r) = &s.results else { return (0.0, Vec::new()) };
        let mut f = Vec::new();
        let streams: [(&str, StreamOf); 4] = [
            ("db_read", |d| &d.db_reads),
            ("db_write", |d| &d.db_writes),
            ("log_write", |d| &d.log_writes),
            ("bdm_read", |d| &d.bdm_reads),
        ];
        for (name, of) in streams {
            for d in &r.databases {
                let stream = of(d);
                f.extend(
                    figures_of(name, stream.lat_ns.as_ref())
                        .into_iter()
                        .filter(|x| x.statistic != Statistic::Mean),
                );
                if let Some(ms) = stream.avg_ms {
                    f.push(Figure { request: name.into(), statistic: Statistic::Mean, ns: ms * 1e6 });
                }
            }
        }
        (r.transactional_iops, f)
    }
}

impl Searchable for ReplayJob {
    const THROUGHPUT: &'static str = "calls/s";
    const STATS: &'static [Statistic] =
        &[Statistic::Mean, Statistic::Percentile(50.0), Statistic::Percentile(99.0)];
    const DEFAULT_TYPES: &'static [&'static str] = &["all"];

    fn types(&self) -> Option<Vec<String>> {
        None
    }

    fn searchable(&self) -> Result<()> {
        fixed_steps(self.options.steady_state)
    }

    /// threads: requests in flight per log (fire-hose); rate: time-sync's speed.
    fn load(&self, p: Load) -> f64 {
        match p {
            Load::Rate => self.options.speed.unwrap_or(ReplayOptions::SPEED),
            _ => f64::from(
                self.options.in_flight.unwrap_or(storbench_bench::workload::replay::DEFAULT_IN_FLIGHT),
            ),
        }
    }

    /// A short step replays `length` of each log from --start.
    fn at(&self, p: Load, load: f64, length: Option<Duration>) -> Self {
        let mut a = self.clone();
        let o = &mut a.options;
        match p {
            Load::Rate => (o.mode, o.speed) = (Some(Pacing::TimeSync), Some(load)),
            _ => (o.mode, o.in_flight) = (Some(Pacing::FireHose), Some(load as u32)),
        }
        let from = o.start.map_or(Duration::ZERO, |s| s.0);
        o.end = length.map(|l| Seconds(from + l)).or(o.end);
        a
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Replay(r) = &s.results else { return (0.0, Vec::new()) };
        let mut f = figures_of("all", r.lat_ns.as_ref());
        for (name, t) in &r.by_type {
            let stats = [
                (Statistic::Mean, t.mean_ms),
                (Statistic::Percentile(50.0), t.p50_ms),
                (Statistic::Percentile(99.0), t.p99_ms),
            ];
            f.extend(stats.into_iter().filter_map(|(statistic, ms)| {
                Some(Figure { request: name.clone(), statistic, ns: ms? * 1e6 })
            }));
        }
        (r.calls_per_sec, f)
    }
}

impl Searchable for WalJob {
    const THROUGHPUT: &'static str = "commits/s";
    const STATS: &'static [Statistic] = &LAT_STATS;
    const DEFAULT_TYPES: &'static [&'static str] = &["commit"];

    fn types(&self) -> Option<Vec<String>> {
        Some(vec!["commit".into()])
    }

    /// One method at a time: `all` is a set of runs, not one to search.
    fn searchable(&self) -> Result<()> {
        if self.options.sync_method.as_deref() == Some("all") {
            bail!("--search measures one sync method: give --sync-method (fdatasync, fsync, ...), not all");
        }
        Ok(())
    }

    fn load(&self, _p: Load) -> f64 {
        f64::from(self.options.writers.unwrap_or(1))
    }

    fn at(&self, _p: Load, load: f64, length: Option<Duration>) -> Self {
        // A search measures one method: fdatasync where none is named.
        let o = &self.options;
        let sync_method = o.sync_method.clone().or_else(|| Some("fdatasync".into()));
        let options = WalOptions {
            writers: Some(load as u32),
            runtime: length.map(Seconds).or(o.runtime),
            sync_method,
            ..o.clone()
        };
        WalJob { options, cli: (), out: self.out.clone() }
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Wal(r) = &s.results else { return (0.0, Vec::new()) };
        (r.commits_per_sec, figures_of("commit", r.commit_lat_ns.as_ref()))
    }
}
