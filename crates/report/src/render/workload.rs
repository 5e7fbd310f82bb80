//! What the report asks of a workload's results, answered once per workload in its own file
//! beside this one (`io`, `oltp`, `mailbox`, `integrity`): the figure a run is judged by, its
//! failed I/Os, its status and why its check failed, its latency columns, its per-second
//! charts, and any findings and section of its own. The shared parts of the report reach a
//! run's answers through `Results::workload` and name no workload, so a new workload adds its
//! file here, its variant in `model::Results` and its columns, and nothing else.

use super::ReportInput;
use super::charts::Spec;
use super::doc::{Block, Finding};
use super::spectrum::LatencyTypes;
use super::svg::Band;
use crate::decision::figures::{Figure, Named, Value, n, names, read};
use crate::disclosure::Disclosure;
use crate::evaluation::{Group, Headline, RunStatus};
use crate::model::{IoErrors, LatencyNs, Summary};
use crate::setup::PageSize;
use std::any::{Any, TypeId};

/// One workload's results as the report sees them.
pub(crate) trait WorkloadResults: Any {
    /// The figure its runs are judged and compared by, without the error rate (which
    /// `evaluation::headline` adds); None when the run has none (a backup that read nothing).
    fn headline(&self) -> Option<Headline>;

    /// The I/Os it attempted and those that failed; None where its errors are not I/Os.
    fn io_errors(&self) -> Option<IoErrors<'_>>;

    /// Its own pass/fail checks on the run (a Jetstress threshold, data verification, a
    /// replay's fidelity to its trace), each by name with what was measured.
    fn checks(&self) -> Vec<OwnCheck> {
        Vec::new()
    }

    /// Whether its own check failed: one of [`Self::checks`] did not hold or was not judged
    /// (measured nothing), which is never a pass.
    fn check_failed(&self) -> bool {
        self.checks().iter().any(|c| c.held != Some(true))
    }

    /// The status of a run that ended with these results, its failed I/Os aside (the caller
    /// judges those): interrupted when it did not complete, else whether its check failed.
    fn status(&self, complete: bool) -> RunStatus {
        match (complete, self.check_failed()) {
            (false, _) => RunStatus::Interrupted,
            (true, true) => RunStatus::CheckFailed,
            (true, false) => RunStatus::Done,
        }
    }

    /// Why its check failed, beside the status: each check that did not hold or was not
    /// judged, by name with what was measured and its limit; None where none failed.
    fn failure(&self) -> Option<String> {
        let failed: Vec<String> =
            self.checks().iter().filter(|c| c.held != Some(true)).map(OwnCheck::describe).collect();
        (!failed.is_empty()).then(|| failed.join("; "))
    }

    /// What it reports: its figures and latency types (its file's `REPORTED`).
    fn reported(&self) -> Reported;

    /// The value of its figure `name` (a requirement's key after the dot), read through the
    /// workload's figure table: None where the table has no such figure, Some(None) where
    /// this run did not measure it.
    fn figure(&self, name: &str) -> Option<Option<Value>>;

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
}

/// Each workload among the input's runs once, in plan order, as the results of its first run
/// with a bundle: whom to ask for findings and sections of their own.
pub(super) fn present(input: &ReportInput) -> Vec<&dyn WorkloadResults> {
    let mut seen: Vec<&dyn WorkloadResults> = Vec::new();
    for r in &input.evaluation.runs {
        let Some(data) = input.runs.get(&r.id) else { continue };
        let w = data.summary.results.workload();
        if !seen.iter().any(|s| type_of(*s) == type_of(w)) {
            seen.push(w);
        }
    }
    seen
}

/// One of a workload's own pass/fail checks on a run, as its results judge it.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnCheck {
    /// What it checks, as a reader names it: `db_read_avg_ms (database 2)`.
    pub name: String,
    /// What the run measured, with its unit; None where nothing was measured.
    pub measured: Option<String>,
    /// The limit, in words: `at most 20`.
    pub limit: String,
    /// Whether it held; None where nothing was measured: not judged, never a pass.
    pub held: Option<bool>,
}

impl OwnCheck {
    /// `db_read_avg_ms (database 2): 23.4 (at most 20)`.
    pub fn describe(&self) -> String {
        let measured = self.measured.as_deref().unwrap_or("not judged, no sample");
        format!("{}: {measured} ({})", self.name, self.limit)
    }
}

/// What a workload reports, declared once in its file here and named by its registry entry
/// in the library (`storbench_bench::workload::registry`): the figures a requirement or a
/// search may name, and the request types its latency histograms are kept by.
#[derive(Clone, Copy)]
pub struct Reported {
    /// Its results' figures (a requirement's key after the dot) with their units; a workload
    /// with a load to search has [`searched_figures`] too.
    pub figures: fn() -> Vec<Named>,
    /// Its latency histograms' request types, as its spectra draw them.
    pub latency_types: LatencyTypes,
}

/// The figures a run's summary holds beyond its results, on every workload with a load to
/// search (its registry entry's `loads`): the searched load.
pub fn searched_figures() -> Vec<Named> {
    names(SEARCHED)
}

/// The figure of a run whose load a search chose (a workload with `search` and
/// `latency_limit`): the load confirmed to hold every limit.
pub const SEARCH_LOAD: &str = "search_load";

/// The figures of a run beyond its workload's results, kept in its summary, on every workload
/// with a load to search: the searched load. (Its other figures are those of the confirmed
/// run, read from the results as for any run: "oltp.opm" of a search is the most OPM that held
/// the limits.)
const SEARCHED: &[Figure<Summary>] = &[Figure {
    name: SEARCH_LOAD,
    unit: "at the latency limit",
    get: |s| s.search.as_ref()?.chosen.and_then(n),
}];

/// A run's figure `name` that its summary holds beyond its results: None where there is no such
/// figure, Some(None) where the run did not measure it (it ran no search, or no load held).
pub fn summary_figure(s: &Summary, name: &str) -> Option<Option<Value>> {
    read(SEARCHED, s, name)
}

/// Each group of workload `T`'s runs: the group, and the results of its runs that have them.
pub(super) fn groups_of<'a, T: WorkloadResults>(input: &'a ReportInput) -> Vec<(Group<'a>, Vec<&'a T>)> {
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

fn type_of(w: &dyn WorkloadResults) -> TypeId {
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
