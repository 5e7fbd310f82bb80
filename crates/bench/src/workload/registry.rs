//! The workloads storbench has, as values of the library: one entry each, declared in the
//! workload's own folder (`workload/io/entry.rs`, `blocktrace/entry.rs`) and listed once, in
//! [`WORKLOADS`] beside the workloads' modules, saying once what the
//! rest of storbench asks of a kind: its name, what it reports (the figures a requirement or
//! the decision names, the request types its spectra draw), the loads a search may move and
//! how its summary is built again from its record. Requirements, the decision, spectra, the search, `summarize`, merge and the
//! command line's own entries (`crates/cli/src/registry.rs`, which add flags and the terminal) look a
//! kind up here and name none.

pub use super::WORKLOADS;
pub use super::declaration::Workload;
use crate::run::record::summary::Rebuild;
use storbench_report::decision::figures::Named;

/// The workload named `name` (a plan's `kind = "..."`, a summary's `workload`).
pub fn workload(name: &str) -> Option<&'static Workload> {
    WORKLOADS.iter().copied().find(|w| w.name == name)
}

/// The figures workload `name` reports, the searched load where it has a load to search;
/// None for a kind storbench does not have.
pub fn figures_of(name: &str) -> Option<Vec<Named>> {
    let w = workload(name)?;
    let mut figures = (w.reported.figures)();
    if !w.loads.is_empty() {
        figures.extend(storbench_report::render::searched_figures());
    }
    Some(figures)
}

/// How the summary of a record of workload `name` is built again; None for a kind storbench
/// does not have.
pub fn rebuild_of(name: &str) -> Option<Rebuild> {
    workload(name).map(|w| w.rebuild)
}

/// The kinds' names as a message lists them: `"io", "oltp", ... or "wal"`.
pub fn names_listed() -> String {
    let quoted: Vec<String> = WORKLOADS.iter().map(|w| format!("\"{}\"", w.name)).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_has_one_entry_that_reports_figures_and_is_found_by_its_name() {
        for w in WORKLOADS {
            assert!(std::ptr::eq(workload(w.name).unwrap(), *w), "{} is listed twice", w.name);
            assert!(!figures_of(w.name).unwrap().is_empty(), "{} reports no figure", w.name);
        }
        assert!(workload("fio").is_none());
    }

    #[test]
    fn a_workload_reports_the_searched_load_exactly_when_it_has_a_load_to_search() {
        use storbench_report::render::SEARCH_LOAD;
        for w in WORKLOADS {
            let searched = figures_of(w.name).unwrap().iter().any(|f| f.name == SEARCH_LOAD);
            assert_eq!(searched, !w.loads.is_empty(), "{}", w.name);
        }
    }

    #[test]
    fn a_requirement_may_name_every_figure_of_every_workload() {
        use storbench_report::decision::requirement::{check, parse};
        // (A requirement on a replay-trace workload was refused as naming no figure when the
        // report kept its own list of kinds.)
        for w in WORKLOADS {
            for figure in figures_of(w.name).unwrap() {
                let limit = if figure.is_word() { "pass" } else { "1" };
                let r = parse(&format!("w.{}", figure.name), limit).unwrap();
                assert_eq!(check(&r, &[("w", w.name)], figures_of), Ok(()), "{} {}", w.name, figure.name);
            }
        }
    }
}
