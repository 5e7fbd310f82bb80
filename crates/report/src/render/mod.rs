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
//! - `volumes`: each device's disk counters per run (001's Figures 8-9, 003's Figure 2).
//! - `compare`: two bundles side by side, matched by workload.
//! - `workload`: how each workload's results are shown (`Shown`: latencies, charts, and any
//!   findings and section of its own), answered in the workload's own file (`io`, `oltp`,
//!   `mailbox`, `integrity`, `replay`), which also answers `crate::workload::WorkloadResults`.

mod appendix;
mod background;
pub(crate) mod charts;
pub mod compare;
mod conditions;
mod decision;
pub mod doc;
mod findings;
mod html;
mod markdown;
mod recommend;
mod results;
mod search;
mod setup;
mod shards;
pub mod spectrum;
pub mod svg;
mod text;
pub mod timeseries;
mod volumes;
pub(crate) mod workload;

// The workloads, each answering `WorkloadResults` and `Shown` for its own results and declaring what it
// reports (`REPORTED`, which the library's registry entry names).
pub mod integrity;
pub mod io;
pub mod mailbox;
pub mod oltp;
pub mod replay;

pub use crate::decision::figures::{SEARCH_LOAD, searched_figures, summary_figure};
use crate::evaluation::{Evaluation, RunStatus};
pub(crate) use crate::evaluation::{at, points, sweep_value, workloads};
pub use crate::input::{ReportInput, RunData};
pub use crate::workload::Reported;
use doc::Block;
pub use spectrum::Spectrum;
pub use timeseries::Series;
pub(crate) use workload::shown;

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
    d.extend(input.window_said().map(Block::Para));
    // The first screen: the decision, where the evaluation states requirements, with what to
    // change; else what to change comes after the key findings.
    let decided = decision::blocks(input);
    let on_decision = !decided.is_empty();
    d.extend(decided);
    if on_decision {
        d.extend(recommend::blocks(input, 3));
    }
    d.push(Block::Heading(2, "Key findings".into()));
    let workloads = workload::present(input);
    // A workload's own findings (storage that lost data it acknowledged) come first.
    let mut found: Vec<doc::Finding> = workloads.iter().flat_map(|w| w.findings(input)).collect();
    found.extend(findings::of(input));
    found.extend(conditions::findings(input));
    d.push(Block::Findings(found));
    if !on_decision {
        d.extend(recommend::blocks(input, 2));
    }
    d.extend(conditions::blocks(input));
    d.extend(results::blocks(input));
    d.extend(shards::blocks(input));
    d.extend(setup::blocks(input));
    d.extend(workloads.iter().flat_map(|w| w.section(input)));
    d.extend(volumes::blocks(input));
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

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests;
