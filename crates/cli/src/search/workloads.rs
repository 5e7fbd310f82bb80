//! What a search asks of any workload it moves ([`Searching`], for each kind's `Searchable`,
//! which the kind implements in its own folder, `subcommand/<kind>/search.rs`), and the
//! helpers those share. The loads each kind has are its library entry's (`Workload::loads`);
//! a plan's options reach their search through `Options::searching`, which each searchable
//! kind answers in its entry.

use super::args::{SearchArgs, Searching};
use super::{Searchable, Shown, latency_figures};
use crate::measure::Ran;
use anyhow::{Result, bail};
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::StopFlag;
use storbench_bench::run::search::{CONFIRMATIONS, Figure, Load};
use storbench_bench::units::Seconds;
use storbench_bench::workload::registry::WORKLOADS;
use storbench_report::LatencyNs;

/// The kinds whose workloads a plan may search, as a message lists them: those whose library
/// entry has a load (`io, oltp, mailbox or replay`).
pub fn kinds_listed() -> String {
    let kinds: Vec<&str> = WORKLOADS.iter().filter(|w| !w.loads.is_empty()).map(|w| w.name).collect();
    match kinds.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => kinds.join(""),
    }
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
pub(crate) fn fixed_steps(steady_state: Option<Seconds>) -> Result<()> {
    if steady_state.is_some() {
        bail!("--search runs steps of --search-step-time; drop --steady-state");
    }
    Ok(())
}

/// A type's figures where it has any.
pub(crate) fn figures_of(request: &str, l: Option<&LatencyNs>) -> Vec<Figure> {
    l.map(|l| latency_figures(request, l)).unwrap_or_default()
}
