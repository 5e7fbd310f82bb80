//! `--search` with `--latency-limit`: the highest load (threads, queue depth or rate) at which
//! every limit holds, for any workload that has such a load ([`Searchable`], one impl per
//! workload in its own folder, `subcommand/<kind>/search.rs`; what they share in
//! `workloads.rs`). The search itself is the library's (`run::search`); this runs
//! its steps as ordinary runs, each into a bundle of its own under one directory, shows a line
//! per step, and writes the search into the confirmed run's summary.json. A plan's workload
//! asks for it with the same keys (`search`, `latency_limit`); an evaluation runs each of its
//! repetitions as a search into the run's bundle ([`in_evaluation`]).

pub mod args;
#[cfg(test)]
mod failed_tests;
pub(crate) mod workloads;

use args::SearchArgs;
pub use workloads::kinds_listed;

use crate::console::{self, RunLine};
use crate::measure::{Measured, Ran};
use crate::registry::kind::Options;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::time::{Duration, Instant};
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::run::search::{Bounds, Figure, LatencyLimit, Load, Next, Search, Statistic};
use storbench_report::evaluation::{RunStatus, status, status_reason};
use storbench_report::{LimitedLatency, SearchResult, SearchStep, Summary};

/// The statistics a report's `LatencyNs` carries.
pub const LAT_STATS: [Statistic; 6] = [
    Statistic::Mean,
    Statistic::Percentile(50.0),
    Statistic::Percentile(90.0),
    Statistic::Percentile(99.0),
    Statistic::Percentile(99.9),
    Statistic::Percentile(99.99),
];

/// A request type's figures from its `LatencyNs`.
pub fn latency_figures(request: &str, l: &storbench_report::LatencyNs) -> Vec<Figure> {
    let ns = [l.mean, l.p50 as f64, l.p90 as f64, l.p99 as f64, l.p999 as f64, l.p9999 as f64];
    LAT_STATS
        .iter()
        .zip(ns)
        .map(|(&statistic, ns)| Figure { request: request.into(), statistic, ns })
        .collect()
}

/// A workload whose load a search can move: its options, as a run takes them.
/// Runs go through [`Options::measure`], as an evaluation's do.
pub trait Searchable: Options + Clone {
    /// What its throughput counts (`IOPS`).
    const THROUGHPUT: &'static str;
    /// The statistics its latencies report.
    const STATS: &'static [Statistic];
    /// The types a limit without one covers.
    const DEFAULT_TYPES: &'static [&'static str];
    /// Its request types; None where only a run knows them (replay).
    fn types(&self) -> Option<Vec<String>>;
    /// Refuses options a search cannot run with (a profile set, a run ended by bytes).
    fn searchable(&self) -> Result<()>;
    /// The load as given, where the search starts.
    fn load(&self, p: Load) -> f64;
    /// The options at `load`, measuring for `length` (None: the run's own length).
    fn at(&self, p: Load, load: f64, length: Option<Duration>) -> Self;
    /// Where its bundles go and what it is called.
    fn out(&self) -> &crate::args::OutputArgs;
    /// Its run's name for the search's directory.
    fn run_name(&self) -> String {
        self.out().name.clone().unwrap_or_else(|| self.kind().name.into())
    }

    /// Its throughput and latency figures.
    fn figures(s: &Summary) -> (f64, Vec<Figure>);
    /// What to undo once the search ends, asked before its first step (the mailbox's
    /// databases, kept from step to step, go unless --keep or they were there before).
    fn cleanup(&self) -> Option<Box<dyn FnOnce()>> {
        None
    }
}

/// Runs a workload's cleanup when the search ends, however it ends.
struct Cleanup(Option<Box<dyn FnOnce()>>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(undo) = self.0.take() {
            undo();
        }
    }
}

/// Runs the search for `w` as `s` asks; the confirmed run is handed back with the search in
/// its summary. Exit 1 when no load held.
pub fn run<W: Searchable>(w: &W, s: &SearchArgs, stop: &StopFlag) -> Result<Ending> {
    let param = s.search.expect("run only with --search");
    check_load(w, param)?;
    check_limits(w, &s.latency_limit)?;
    let root = crate::preflight::results_root(w.out().output_dir.as_deref())?;
    let dir =
        storbench_bench::run::bundle::new_dir(&root, &format!("{}-search-{}", w.run_name(), param.name()))?;
    let ran = search(w, s, &dir, Shown::Terminal, stop)?;
    // As a run shows its result: the confirmed run's table, or its summary with --json.
    if let Some(m) = &ran.measured {
        let json = w.out().json;
        crate::output::print_result(|| match json {
            true => storbench_report::export::summary_json(&m.summary),
            false => (w.kind().table)(&m.summary) + "\n",
        })?;
    }
    Ok(ran.ending)
}

/// A plan's run as a search, its steps' bundles in the run's bundle directory `dir` (whose
/// output.log takes every step's line and output): the confirmed run, its summary with the
/// search, or no run when no load held ([`none_held`] says so). Its checks were made when
/// the plan was read ([`check_options`]).
pub fn in_evaluation(args: &dyn Options, s: &SearchArgs, dir: &Path, stop: &StopFlag) -> Result<Ran> {
    searching(args)?.search_in(s, dir, stop)
}

/// What an evaluation records for a search in which no load held.
pub fn none_held(s: &SearchArgs) -> String {
    let param = s.search.map_or("load", Load::name);
    format!("no {param} held {}", limits_text(&s.latency_limit))
}

/// Which of a search's options a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtFault {
    /// The load: the workload has no such load, or options it cannot be searched with.
    Load,
    /// A latency limit: on a request type or statistic the workload does not report.
    Limit,
}

/// The checks of a plan's search on a workload's options, before anything runs.
pub fn check_options(args: &dyn Options, s: &SearchArgs) -> Result<(), (AtFault, anyhow::Error)> {
    let w = searching(args).map_err(|e| (AtFault::Load, e))?;
    let param = s.search.expect("checked only with a search");
    w.check_load(param).map_err(|e| (AtFault::Load, e))?;
    w.check_limits(&s.latency_limit).map_err(|e| (AtFault::Limit, e))
}

/// The longest a plan's search can take, for the evaluation's ETA: every short step, then
/// every confirmation at full length, each with its warm-up.
pub fn longest(args: &dyn Options, s: &SearchArgs) -> Option<Duration> {
    searching(args).ok().map(|w| w.longest(s))
}

/// `args` as a workload a search can move.
fn searching(args: &dyn Options) -> Result<&dyn args::Searching> {
    args.searching().ok_or_else(|| {
        anyhow::anyhow!(
            "{} has no load to search; search works on {} workloads",
            args.kind().what,
            kinds_listed()
        )
    })
}

/// Where a search's steps are shown: on the command line, a line per step on the terminal and
/// each step's output in its own bundle's output.log; in an evaluation, everything in the
/// run's log, the evaluation showing one line for the whole search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Terminal,
    InRun,
}

/// The load is one the workload has, with options it can be searched with.
fn check_load<W: Searchable>(w: &W, param: Load) -> Result<()> {
    let (kind, loads) = (w.kind().name, w.kind().workload.loads);
    if !loads.contains(&param) {
        let have: Vec<&str> = loads.iter().map(|p| p.name()).collect();
        bail!("--search {}: {kind} has no such load; it has {}", param.name(), have.join(", "));
    }
    w.searchable()
}

/// The limits name the workload's request types and statistics.
fn check_limits<W: Searchable>(w: &W, limits: &[LatencyLimit]) -> Result<()> {
    let types = w.types();
    let types: Option<Vec<&str>> = types.as_ref().map(|t| t.iter().map(String::as_str).collect());
    for l in limits {
        l.check(w.kind().name, types.as_deref(), W::STATS).map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// The search's steps into `dir`, checked before.
fn search<W: Searchable>(w: &W, s: &SearchArgs, dir: &Path, shown: Shown, stop: &StopFlag) -> Result<Ran> {
    let param = s.search.expect("run only with --search");
    let step = s.search_step_time.map_or(SearchArgs::STEP_TIME, |t| t.0);
    let limits = limits_text(&s.latency_limit);
    say!("search: the highest {} holding {limits} ({})", param.name(), dir.display());
    let began = Instant::now();
    let _cleanup = Cleanup(w.cleanup());
    let mut walk =
        Walk { search: Search::new(bounds(param, s, w.load(param))), steps: Vec::new(), best: None };
    while let Some((load, confirm)) = walk.next() {
        let n = walk.steps.len() + 1;
        let point = Point { n, param, load, confirm, length: (!confirm).then_some(step) };
        let Some((st, m)) = one_step(w, &s.latency_limit, dir, &point, shown, stop)? else {
            return Ok(Ran { ending: Ending::InterruptedBeforeRun, measured: None });
        };
        if n == 1 && w.types().is_none() {
            types_seen::<W>(w.kind().name, &m.summary, &s.latency_limit)?;
        }
        if stop.is_stopped() {
            return Ok(Ran { ending: Ending::Interrupted, measured: Some(m) });
        }
        walk.record(st, m);
    }
    finish::<W>(walk, param, s, step, began.elapsed())
}

/// The search's bounds from the options: the given load to the maximum, `--search-steps`.
fn bounds(param: Load, s: &SearchArgs, start: f64) -> Bounds {
    Bounds {
        start,
        min: if param.integer() { 1.0 } else { start / 1024.0 },
        max: s.search_max.unwrap_or_else(|| param.default_max(start)),
        integer: param.integer(),
        resolution: 0.05,
        steps: s.search_steps.unwrap_or(SearchArgs::STEPS),
    }
}

/// One step of the search: its number, load, and length (None: the run's own, a confirmation).
struct Point {
    n: usize,
    param: Load,
    load: f64,
    confirm: bool,
    length: Option<Duration>,
}

/// Runs `p` into a bundle of its own under `dir`, with a line on the terminal; the step as
/// judged and the run, or None when a stop came before it measured.
fn one_step<W: Searchable>(
    w: &W,
    limits: &[LatencyLimit],
    dir: &Path,
    p: &Point,
    shown: Shown,
    stop: &StopFlag,
) -> Result<Option<(SearchStep, Measured)>> {
    let what = if p.confirm { "confirm" } else { "step" };
    let name = format!("{:02}-{what}-{}-{}", p.n, p.param.name(), p.load);
    let step_dir = dir.join(&name);
    storbench_bench::files::create_dir(&step_dir)
        .with_context(|| format!("creating {}", step_dir.display()))?;
    let confirming = if p.confirm { " (confirm)" } else { "" };
    let line = StepLine::start(format!("[{}] {} = {}{confirming}", p.n, p.param.name(), p.load), shown);
    let t0 = Instant::now();
    let measure = || Options::measure(&w.at(p.param, p.load, p.length), &step_dir, stop);
    let ran = match shown {
        Shown::Terminal => console::capture(&step_dir, false).and_then(|_log| measure()),
        Shown::InRun => measure(),
    };
    let Some(m) = ran.as_ref().ok().and_then(|r| r.measured.as_ref()) else {
        line.end(if ran.is_ok() { "interrupted" } else { "failed" });
        return ran.map(|_| None);
    };
    let st = judged::<W>(m, limits, p.load, p.confirm, &name, t0.elapsed());
    line.end(&step_text(&st, W::THROUGHPUT));
    Ok(ran?.measured.map(|m| (st, m)))
}

/// A step's line: on the terminal as it runs, or said into the run's log once it ended.
enum StepLine {
    Terminal(RunLine),
    InRun(String),
}

impl StepLine {
    fn start(text: String, shown: Shown) -> StepLine {
        match shown {
            Shown::Terminal => StepLine::Terminal(RunLine::start(&text)),
            Shown::InRun => StepLine::InRun(text),
        }
    }

    fn end(self, result: &str) {
        match self {
            StepLine::Terminal(line) => line.end(result),
            StepLine::InRun(text) => say!("{text}: {result}"),
        }
    }
}

/// For a workload whose request types only a run knows (replay): refuses a limit on a type the
/// first step did not see, naming those it saw, rather than letting it hold with no figure.
fn types_seen<W: Searchable>(kind: &str, summary: &Summary, limits: &[LatencyLimit]) -> Result<()> {
    let (_, figures) = W::figures(summary);
    let mut seen: Vec<&str> = figures.iter().map(|f| f.request.as_str()).collect();
    seen.dedup();
    for l in limits {
        if let Some(r) = l.request.as_deref().filter(|r| !seen.contains(r)) {
            bail!("latency limit `{l}`: the {kind} had no request of type `{r}`; it had {}", seen.join(", "));
        }
    }
    Ok(())
}

/// The search with what each step measured.
struct Walk {
    search: Search,
    steps: Vec<SearchStep>,
    /// The last confirmation that held.
    best: Option<Measured>,
}

impl Walk {
    fn next(&self) -> Option<(f64, bool)> {
        match self.search.next() {
            Next::Step(l) => Some((l, false)),
            Next::Confirm(l) => Some((l, true)),
            Next::Done(_) => None,
        }
    }

    fn record(&mut self, st: SearchStep, m: Measured) {
        self.search.record(st.held);
        if st.confirm && st.held {
            self.best = Some(m);
        }
        self.steps.push(st);
    }
}

/// A step as the summary keeps it: its figures judged against every limit.
fn judged<W: Searchable>(
    m: &Measured,
    limits: &[LatencyLimit],
    load: f64,
    confirm: bool,
    name: &str,
    took: Duration,
) -> SearchStep {
    let (throughput, figures) = W::figures(&m.summary);
    let latencies: Vec<LimitedLatency> = limits
        .iter()
        .map(|l| {
            let j = l.judge(&figures, W::DEFAULT_TYPES);
            LimitedLatency { limit: j.limit, ms: j.worst_ns.map(|ns| ns / 1e6), held: j.held }
        })
        .collect();
    // A run that is not done holds nothing, whatever its latencies: its I/Os failed, one of
    // its workload's own checks failed (Jetstress's thresholds), or it was cut short.
    let status = status(&m.summary);
    SearchStep {
        load,
        confirm,
        throughput,
        held: status == RunStatus::Done && latencies.iter().all(|l| l.held),
        failed: (status != RunStatus::Done)
            .then(|| status_reason(&m.summary).unwrap_or_else(|| status.to_string())),
        latencies,
        measured_s: m.summary.phases.measured_s,
        seconds: took.as_secs_f64(),
        bundle: format!("../{name}"),
    }
}

/// "held: 8.0k IOPS, p99<=42ms 40.100 ms (1.4 s)".
fn step_text(st: &SearchStep, unit: &str) -> String {
    let lat: Vec<String> = st
        .latencies
        .iter()
        .map(|l| {
            let ms = l.ms.map_or("not judged (no sample)".into(), |ms| crate::output::latency(ms * 1e6));
            format!("{} {ms}", l.limit)
        })
        .collect();
    let held = if st.held { "held" } else { "broke" };
    let failed = st.failed.as_deref().map(|why| format!("; the run failed: {why}")).unwrap_or_default();
    format!(
        "{held}: {} {unit}, {}{failed} ({:.1} s)",
        crate::output::si(st.throughput),
        lat.join(", "),
        st.seconds
    )
}

fn limits_text(limits: &[LatencyLimit]) -> String {
    limits.iter().map(ToString::to_string).collect::<Vec<_>>().join(" and ")
}

/// Writes the search into the confirmed run's summary; exit 1 when no load held.
fn finish<W: Searchable>(
    walk: Walk,
    param: Load,
    s: &SearchArgs,
    step: Duration,
    took: Duration,
) -> Result<Ran> {
    let chosen = match walk.search.next() {
        Next::Done(d) => d,
        _ => None,
    };
    let measured_s: f64 = walk.steps.iter().map(|st| st.measured_s).sum();
    let result = SearchResult {
        parameter: param.name().into(),
        limits: s.latency_limit.iter().map(ToString::to_string).collect(),
        throughput: W::THROUGHPUT.into(),
        step_budget: s.search_steps.unwrap_or(SearchArgs::STEPS),
        step_s: step.as_secs_f64(),
        chosen,
        steps: walk.steps,
        elapsed_s: took.as_secs_f64(),
        measured_s,
        overhead_s: (took.as_secs_f64() - measured_s).max(0.0),
    };
    say!(
        "search: {} steps in {:.1} s, {:.1} s measured, {:.1} s overhead",
        result.steps.len(),
        result.elapsed_s,
        result.measured_s,
        result.overhead_s
    );
    let Some(mut best) = walk.best else {
        say!("search: {}", none_held(s));
        return Ok(Ran { ending: Ending::CheckFailed, measured: None });
    };
    best.summary.search = Some(result);
    let json = storbench_report::export::summary_json(&best.summary);
    storbench_bench::run::bundle::write_atomic(&best.bundle.join("summary.json"), &json)?;
    say!(
        "search: {} = {} confirmed; bundle: {}",
        param.name(),
        chosen.unwrap_or_default(),
        best.bundle.display()
    );
    Ok(Ran { ending: Ending::Ok, measured: Some(best) })
}
