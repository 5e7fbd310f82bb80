//! How the report's pages show a workload's results, answered once per workload in its own
//! file beside this one (`io`, `oltp`, `mailbox`, `integrity`, `replay`): its latency columns,
//! the figures beside its headline, its per-second charts, its page size for the setup checks,
//! and any findings and section of its own. What its results say of a run (headline, checks,
//! status, figures) is `crate::workload::WorkloadResults`, which `Shown` extends. The pages
//! reach a run's answers through [`shown`] and name no workload.

use super::ReportInput;
use super::charts::Spec;
use super::doc::{Block, Finding};
use super::svg::Band;

use crate::disclosure::Disclosure;
use crate::evaluation::{Group, RunRecord, RunStatus};
use crate::model::LatencyNs;
use crate::setup::PageSize;
use crate::summary::Summary;
use crate::workload::WorkloadResults;
use crate::workloads::{Results, for_results};
use std::any::{Any, TypeId};

/// One workload's results as the report's pages show them (its judgement is
/// `crate::workload::WorkloadResults`).
pub(crate) trait Shown: WorkloadResults {
    /// Figures the reference reports put beside the headline (io's MB/s beside IOPS, as 002's
    /// tables; the mailbox's database plus log IOPS, as 003 counts them), by column name, and
    /// whether a per-watt column goes with each.
    fn beside(&self) -> Vec<(&'static str, Option<f64>, bool)> {
        Vec::new()
    }

    /// The latencies a reader of the workload looks at, in milliseconds, by column name.
    fn latencies(&self) -> Vec<(&'static str, Option<f64>)>;

    /// Its per-second charts, drawn before the host's where its series has the columns.
    fn charts(&self) -> &'static [Spec];

    /// A stretch of its per-second charts to mark apart (a replay's cold start).
    fn band(&self) -> Option<Band> {
        None
    }

    /// The page size of the databases its run `s` used, for the setup checks (`d`: the
    /// disclosure, where a database's settings are stated); None where it has no database.
    fn page_size(&self, _s: &Summary, _d: &Disclosure) -> Option<PageSize> {
        None
    }

    /// Findings of its own over every run of this workload in `input`, put before the
    /// comparisons.
    fn findings(&self, _input: &ReportInput) -> Vec<Finding> {
        Vec::new()
    }

    /// A section of its own over every run of this workload in `input`, after the results.
    fn section(&self, _input: &ReportInput) -> Vec<Block> {
        Vec::new()
    }

    /// The changes its own results over every run of this workload in `input` support, for
    /// the report's "What to change" (`render::recommend`).
    fn recommendations(&self, _input: &ReportInput) -> Vec<Recommendation> {
        Vec::new()
    }
}

/// One change to make to one configuration, with what supports it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recommendation {
    pub configuration: String,
    pub change: String,
    /// The figure or the setting that supports it.
    pub because: String,
}

/// The results of a run as its workload's page shows them: the render side of
/// `Results::workload`, naming no workload.
pub(crate) fn shown(results: &Results) -> &dyn Shown {
    for_results!(results, r => r)
}

/// Each workload among the input's runs once, in plan order, as the results of its first run
/// with a bundle: whom to ask for findings and sections of their own.
pub(super) fn present(input: &ReportInput) -> Vec<&dyn Shown> {
    let mut seen: Vec<&dyn Shown> = Vec::new();
    for r in &input.evaluation.runs {
        let Some(data) = input.runs.get(&r.id) else { continue };
        let w = shown(&data.summary.results);
        if !seen.iter().any(|s| type_of(*s) == type_of(w)) {
            seen.push(w);
        }
    }
    seen
}

/// Each group of workload `T`'s runs: the group, and the results of its runs that have them.
pub(crate) fn groups_of<'a, T: WorkloadResults>(input: &'a ReportInput) -> Vec<(Group<'a>, Vec<&'a T>)> {
    input
        .evaluation
        .groups()
        .into_iter()
        .filter_map(|g| {
            let results: Vec<&T> =
                g.runs.iter().filter_map(|r| input.runs.get(&r.id)?.summary.results.get::<T>()).collect();
            (!results.is_empty()).then_some((g, results))
        })
        .collect()
}

/// Group `g`'s runs that passed, each with its results of workload `T`: a run that did not pass
/// is in no table of figures ([`left_out`] says which).
pub(super) fn passed_runs<'a, T: WorkloadResults>(
    input: &'a ReportInput,
    g: &Group<'a>,
) -> Vec<(&'a RunRecord, &'a T)> {
    g.runs
        .iter()
        .filter(|r| r.status == RunStatus::Done)
        .filter_map(|r| Some((*r, input.runs.get(&r.id)?.summary.results.get::<T>()?)))
        .collect()
}

/// Group `g`'s runs that did not pass, in a sentence for under a table of the others.
pub(super) fn left_out(g: &Group) -> Option<String> {
    let out: Vec<String> = g
        .runs
        .iter()
        .filter(|r| r.status != RunStatus::Done)
        .map(|r| format!("{} ({})", r.id, r.status))
        .collect();
    (!out.is_empty()).then(|| format!("Not in these tables, as they did not pass: {}.", out.join(", ")))
}

fn type_of(w: &dyn Shown) -> TypeId {
    let any: &dyn Any = w;
    any.type_id()
}

/// A latency's median in milliseconds.
pub(super) fn p50_ms(l: &Option<LatencyNs>) -> Option<f64> {
    l.as_ref().map(|l| l.p50 as f64 / 1e6)
}

/// A latency's 99th percentile in milliseconds.
pub(super) fn p99_ms(l: &Option<LatencyNs>) -> Option<f64> {
    l.as_ref().map(|l| l.p99 as f64 / 1e6)
}
