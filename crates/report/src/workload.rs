//! What every reader of a run asks of its workload's results, answered once per workload in
//! its file under `render` (`io`, `oltp`, `mailbox`, `integrity`, `replay`) or in its folder under
//! `workloads` (`wal`): the figure a run is judged by, its failed I/Os, its own checks and the
//! status they give, why a check failed, its figures for requirements and what it reports.
//! [`Results::workload`] reaches it through `workloads::for_results`, so evaluations, decisions
//! and the report's pages ask and name none. A summary's failed I/Os are answered here too. How a workload's results are shown (latency columns, charts, sections) is
//! `render::workload`'s.

use crate::decision::figures::{Named, Value};
use crate::evaluation::{Headline, RunStatus};
use crate::latency::LatencyTypes;
use crate::model::IoErrors;
use crate::summary::Summary;
use crate::workloads::{Results, for_results};
use std::any::Any;

/// One workload's results as every reader of a run judges them.
pub trait WorkloadResults: Any {
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
    /// with a load to search has [`crate::decision::figures::searched_figures`] too.
    pub figures: fn() -> Vec<Named>,
    /// Its latency histograms' request types, as its spectra draw them.
    pub latency_types: LatencyTypes,
}

impl Results {
    /// The workload's own results, which answer everything the report asks of a workload.
    pub(crate) fn workload(&self) -> &dyn WorkloadResults {
        for_results!(self, r => r)
    }

    /// The results if they are workload `T`'s.
    pub(crate) fn get<T: WorkloadResults>(&self) -> Option<&T> {
        let any: &dyn Any = self.workload();
        any.downcast_ref()
    }
}

impl Summary {
    /// The I/Os the run attempted and those that failed; None for a workload whose errors are
    /// not I/Os (oltp: database calls).
    pub fn io_errors(&self) -> Option<IoErrors<'_>> {
        self.results.workload().io_errors()
    }

    /// Whether the user asked the run to go on despite failed I/Os (`continue_on_error`).
    pub fn continues_on_error(&self) -> bool {
        self.parameters["continue_on_error"].as_bool().unwrap_or(false)
    }

    /// Failed I/Os that fail the run: any, unless it was told to continue on errors.
    pub fn failed_ios(&self) -> Option<IoErrors<'_>> {
        self.io_errors().filter(|e| e.any() && !self.continues_on_error())
    }
}
