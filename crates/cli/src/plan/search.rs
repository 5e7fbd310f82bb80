//! A `[[workload]]`'s search keys (`search`, `latency_limit` and the search's bounds): the
//! command line's options of the same names (`crate::search::args::SearchArgs`, whose doc comments
//! are their help), taken out of the workload's table, checked as the command line checks
//! them, and refused at their line where the workload cannot be searched so.

use super::Workload;
use super::table::{PlanError, Source, keys_of, typed, words};
use crate::search::args::SearchArgs;
use storbench_report::decision::requirement::Requirement;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The plan keys of the search.
pub fn keys() -> Vec<String> {
    keys_of::<SearchArgs>(&[])
}

/// The search keys of a workload's table, taken out of `options` (the table at `span`), as
/// the search's options; None where it has none.
pub(super) fn take(
    src: &Source,
    options: &mut DeTable,
    span: std::ops::Range<usize>,
    what: &str,
) -> Result<Option<SearchArgs>, PlanError> {
    let keys = keys();
    let keys = words(&keys);
    let mut own = DeTable::new();
    for key in &keys {
        if let Some((k, v)) = options.remove_entry(*key) {
            own.insert(k, v);
        }
    }
    if own.is_empty() {
        return Ok(None);
    }
    let s: SearchArgs = typed(src, &own, span, what, &keys)?;
    let at = |key: &str| own.get(key).map_or(0..0, Spanned::span);
    if s.search.is_none() {
        let (key, _) = own.iter().next().expect("a key");
        let hint =
            Some("add search = \"threads\", \"iodepth\" or \"rate\" (as the workload has them)".into());
        return Err(src.error(key.span(), format!("`{}` needs `search`", key.get_ref()), hint));
    }
    if s.latency_limit.is_empty() {
        let hint =
            Some("add latency_limit = \"p99<=50ms\" (or a list of limits, all of which must hold)".into());
        return Err(src.error(at("search"), "`search` needs a `latency_limit`", hint));
    }
    Ok(Some(s))
}

/// Refuses a search the workload `w` (made from `table`) cannot run, at the key at fault: a
/// load it lacks or options it cannot be searched with (`search`), a limit on a request type
/// or statistic it does not report (`latency_limit`).
pub(super) fn check(src: &Source, w: &Workload, table: &DeTable) -> Result<(), PlanError> {
    let Some(s) = &w.search else { return Ok(()) };
    let Err((fault, e)) = crate::search::check_options(&*w.args, s) else { return Ok(()) };
    let load = fault == crate::search::AtFault::Load;
    let key = if load { "search" } else { "latency_limit" };
    let span = table.get(key).map_or(0..0, Spanned::span);
    let hint = match load {
        true => {
            "search a load the workload has with options it can be searched with, or drop search and latency_limit to measure at the given load"
        }
        false => "limit a request type and statistic the workload reports",
    };
    let message = format!("workload {}: {}", w.label, super::terms::in_plan_terms(&e.to_string()));
    Err(src.error(span, message, Some(hint.into())))
}

/// The figure a search reports, which only a workload with `search` has.
const SEARCH_LOAD: &str = storbench_report::render::SEARCH_LOAD;

/// Refuses a requirement on `search_load` of workloads none of which search (located at its key
/// in `value`, the `[requirements]` table).
pub(super) fn check_requirements(
    src: &Source,
    value: &Spanned<DeValue>,
    requirements: &[Requirement],
    workloads: &[Workload],
) -> Result<(), PlanError> {
    for r in requirements.iter().filter(|r| r.figure == SEARCH_LOAD) {
        let named = workloads.iter().filter(|w| w.label == r.workload || w.args.kind().name == r.workload);
        if named.clone().all(|w| w.search.is_none()) {
            let key = format!("{}.{}", r.workload, r.figure);
            let span =
                value.get_ref().as_table().and_then(|t| t.get(key.as_str())).map_or(0..0, Spanned::span);
            let hint = Some(format!(
                "give workload {} search = \"threads\" and a latency_limit, or require another figure",
                r.workload
            ));
            return Err(src.error(span, format!("`{key}`: {} runs no search", r.workload), hint));
        }
    }
    Ok(())
}
