//! Reports from a bundle: `report.html` (with per-second charts as inline SVG, readable
//! offline) and `report.md` (the same minus charts), and the comparison of two bundles.
//!
//! Pure: the caller reads the files into a [`ReportInput`] (an evaluation, or one run wrapped
//! as a one-run evaluation by [`ReportInput::single_run`]) and gets strings back. The content
//! is built once as a [`doc`] of plain blocks; `html`, `markdown` and `text` only write it.
//!
//! - `decision`: the first screen where the evaluation states requirements: the
//!   configuration to choose and why, the verdicts, costs and pairs (`crate::decision`).
//! - `findings`: the key findings (who delivered how much more, power, per watt, and what lies
//!   within the run-to-run spread).
//! - `conditions`: one storage normal and degraded side by side, "% of best" and what a
//!   rebuild cost, where the evaluation measured a storage under more than one condition.
//! - `results`: a table per workload and configuration with every repetition, scaling curves.
//! - `shards`: a merged bundle's shards (`storbench merge`): each one's part, which are missing.
//! - `setup`: the setup checks per configuration (alignment, block and page sizes, flushes, ...).
//! - `spectrum`: each workload's latency at every percentile, configurations overlaid.
//! - `charts`: which per-second charts a run gets; `svg` draws them.
//! - `appendix`: the method followed, the notes and the full disclosure.
//! - `search`: the search for the highest load under a latency limit, per step.
//! - `compare`: two bundles side by side, matched by workload.
//! - `workload`: what the report asks of each workload's results, answered in the workload's
//!   own file (`io`, `oltp`, `mailbox`, `integrity`: headline, status, latencies, charts, and
//!   any findings and section of its own).

mod appendix;
mod background;
mod charts;
pub mod compare;
mod conditions;
mod decision;
pub mod doc;
mod findings;
mod html;
mod markdown;
mod results;
mod search;
mod setup;
mod shards;
pub mod spectrum;
pub mod svg;
mod text;
pub mod timeseries;
mod workload;

// The workloads, each answering `WorkloadResults` for its own results and declaring what it
// reports (`REPORTED`, which the library's registry entry names).
pub mod integrity;
pub mod io;
pub mod mailbox;
pub mod oltp;
pub mod replay;

use crate::disclosure::Disclosure;
use crate::evaluation::{self, Configuration, Evaluation, Method, RunRecord, RunStatus};
use crate::model::Summary;
use doc::Block;
pub(crate) use findings::points;
pub use spectrum::Spectrum;
use std::collections::BTreeMap;
pub use timeseries::Series;
pub use workload::Reported;
pub(crate) use workload::WorkloadResults;
pub use workload::{SEARCH_LOAD, searched_figures, summary_figure};

/// Everything a report is made from, read from a bundle by the caller.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportInput {
    pub evaluation: Evaluation,
    /// Each run's own bundle, by run id; runs without one (pending, failed, unreadable) are
    /// reported from `evaluation.json` alone.
    pub runs: BTreeMap<String, RunData>,
    pub disclosure: Option<Disclosure>,
    /// What could not be read (a run's missing file), shown with the notes.
    pub problems: Vec<String>,
    /// By run id, the measured phase's latency spectra by histogram tag (`read`, `order`) of
    /// the runs whose histograms the caller read (each group's shown run); a run without
    /// them has no line in the latency pictures.
    pub spectra: BTreeMap<String, BTreeMap<String, Spectrum>>,
    /// A merged bundle's shards (`shards.json`); None for any other bundle.
    pub shards: Option<crate::ShardsFile>,
}

/// One run's bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct RunData {
    pub summary: Summary,
    /// None where `timeseries.csv` is missing: the run then has no charts.
    pub series: Option<Series>,
}

impl ReportInput {
    /// One run's bundle as a one-run evaluation: the configuration is the host and target,
    /// active power the mean of `power_watts` over the seconds its results cover.
    pub fn single_run(id: &str, data: RunData, disclosure: Option<Disclosure>) -> ReportInput {
        let s = &data.summary;
        let headline = evaluation::headline(s);
        let active_watts = data.series.as_ref().and_then(|x| x.active_watts(s));
        let per_watt =
            headline.as_ref().zip(active_watts).and_then(|(h, w)| evaluation::perf_per_watt(h.value, w));
        let configuration = format!("{}:{}", s.host.hostname, s.target.path);
        let run = RunRecord {
            id: id.to_string(),
            workload: s.name.clone(),
            kind: s.workload.clone(),
            configuration: configuration.clone(),
            repetition: 1,
            status: evaluation::status(s),
            error: s.failed_ios().map(|e| e.to_string()),
            bundle: Some(".".into()),
            headline,
            active_watts,
            per_watt,
            reported: true,
            started_at: Some(s.started_at.clone()),
            seconds: Some(s.phases.measured_s),
            ..RunRecord::default()
        };
        let method = Method {
            repetitions: 1,
            window: "fixed".into(),
            power_source: active_watts.map(|_| "the run's power_watts column".into()),
            seed: s.seed,
            ..Method::default()
        };
        let evaluation = Evaluation {
            evaluation_version: evaluation::EVALUATION_VERSION,
            tool_version: s.tool.version.clone(),
            name: s.name.clone(),
            complete: s.complete,
            started_at: s.started_at.clone(),
            ended_at: s.ended_at.clone(),
            method,
            configurations: vec![Configuration {
                name: configuration,
                target: s.target.path.clone(),
                description: None,
                own_values: Vec::new(),
                background: s.background.iter().map(|b| b.spec.clone()).collect(),
                ..Configuration::default()
            }],
            runs: vec![run],
            notes: s.warnings.clone(),
            requirements: Vec::new(),
        };
        let runs = BTreeMap::from([(id.to_string(), data)]);
        ReportInput { evaluation, runs, disclosure, ..ReportInput::default() }
    }
}

/// `report.html`: findings, tables, per-second charts, method and disclosure in one file.
pub fn report_html(input: &ReportInput) -> String {
    html::page(&title(input), &document(input))
}

/// `report.md`: the same as the HTML report without the charts.
pub fn report_markdown(input: &ReportInput) -> String {
    markdown::page(&document(input))
}

/// Whether a file's text is a report storbench wrote (HTML or Markdown, report or
/// comparison), which a new report may replace.
pub fn is_own_report(text: &str) -> bool {
    text.contains(html::GENERATOR) || text.starts_with(markdown::GENERATOR)
}

fn title(input: &ReportInput) -> String {
    format!("storbench report: {}", input.evaluation.name)
}

/// The report's content in reading order.
fn document(input: &ReportInput) -> Vec<Block> {
    let e = &input.evaluation;
    let mut d = vec![Block::Heading(1, title(input)), Block::Para(intro(e))];
    // The first screen: the decision, where the evaluation states requirements.
    d.extend(decision::blocks(input));
    d.push(Block::Heading(2, "Key findings".into()));
    let workloads = workload::present(input);
    // A workload's own findings (storage that lost data it acknowledged) come first.
    let mut found: Vec<doc::Finding> = workloads.iter().flat_map(|w| w.findings(input)).collect();
    found.extend(findings::of(e));
    found.extend(conditions::findings(input));
    d.push(Block::Findings(found));
    d.extend(conditions::blocks(input));
    d.extend(results::blocks(input));
    d.extend(shards::blocks(input));
    d.extend(setup::blocks(input));
    d.extend(workloads.iter().flat_map(|w| w.section(input)));
    d.extend(background::blocks(input));
    d.extend(search::blocks(input));
    d.extend(spectrum::blocks(input));
    d.extend(charts::blocks(input));
    d.extend(appendix::method(e));
    d.extend(appendix::notes(input));
    d.extend(appendix::disclosure(input.disclosure.as_ref()));
    d
}

fn intro(e: &Evaluation) -> String {
    let done = e.runs.iter().filter(|r| r.status != RunStatus::Pending).count();
    let state = if e.complete { "complete" } else { "incomplete: it shows what finished" };
    format!(
        "{} run{} of {} workload{} on {} configuration{}, started {} with storbench {}; {state}.",
        done,
        plural(done),
        workloads(e).len(),
        plural(workloads(e).len()),
        configurations(e),
        plural(configurations(e)),
        e.started_at,
        e.tool_version,
    )
}

/// How many configurations ran, or were planned to.
fn configurations(e: &Evaluation) -> usize {
    let mut names: Vec<&str> = e.runs.iter().map(|r| r.configuration.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.len().max(e.configurations.len())
}

/// The workload labels in plan order.
pub(crate) fn workloads(e: &Evaluation) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for r in &e.runs {
        if !seen.contains(&r.workload.as_str()) {
            seen.push(&r.workload);
        }
    }
    seen
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// " at iodepth = 4" for a sweep point, "" otherwise.
pub(crate) fn at(sweep: Option<&evaluation::SweepPoint>) -> String {
    sweep.map(|p| format!(" at {} = {}", p.param, sweep_value(p))).unwrap_or_default()
}

pub(crate) fn sweep_value(p: &evaluation::SweepPoint) -> String {
    match &p.value {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests;
