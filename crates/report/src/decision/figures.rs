//! The figures a requirement may name: each workload's own (defined once, in a table beside
//! its report code in `render/<workload>.rs` or `workloads/<workload>/render.rs`), and every run's power figures. A figure is a
//! number or, for a workload's own pass/fail rule, a word.

use crate::evaluation::RunRecord;
use serde::{Deserialize, Serialize};

/// A figure's value in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Num(f64),
    Text(String),
}

impl Value {
    pub fn num(&self) -> Option<f64> {
        match self {
            Value::Num(v) => Some(*v),
            Value::Text(_) => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Num(v) => f.write_str(&crate::format::num(*v)),
            Value::Text(t) => f.write_str(t),
        }
    }
}

/// One figure of workload results `T`: its name (the requirement's key after the dot), its
/// unit as a sentence shows it, and how to read it.
pub struct Figure<T: ?Sized> {
    pub name: &'static str,
    pub unit: &'static str,
    pub get: fn(&T) -> Option<Value>,
}

/// A figure's name and unit, without its reader: what a plan is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    pub name: &'static str,
    pub unit: &'static str,
}

/// The unit of a word figure, a workload's own verdict (`pass`, `fail`): it has none, and a
/// requirement on it names a word, never a number.
pub const WORD: &str = "";

impl Named {
    /// Whether its value is a word (a verdict) rather than a number.
    pub fn is_word(&self) -> bool {
        self.unit == WORD
    }
}

/// The value of `name` in `results`, where the table has it.
pub fn read<T: ?Sized>(table: &[Figure<T>], results: &T, name: &str) -> Option<Option<Value>> {
    table.iter().find(|f| f.name == name).map(|f| (f.get)(results))
}

/// A table's names.
pub fn names<T: ?Sized>(table: &[Figure<T>]) -> Vec<Named> {
    table.iter().map(|f| Named { name: f.name, unit: f.unit }).collect()
}

/// Shorthands for the tables.
pub fn n(v: f64) -> Option<Value> {
    v.is_finite().then_some(Value::Num(v))
}

pub fn ms(ns: u64) -> Option<Value> {
    n(ns as f64 / 1e6)
}

pub fn pass_fail(pass: bool) -> Option<Value> {
    Some(Value::Text(if pass { "pass" } else { "fail" }.into()))
}

/// Every run's power figures, on any workload.
pub const POWER: &[Figure<RunRecord>] = &[
    Figure { name: "active_w", unit: "W active", get: |r| r.active_watts.and_then(n) },
    Figure { name: "idle_w", unit: "W idle", get: |r| r.idle_watts.and_then(n) },
    Figure { name: "per_watt", unit: "per watt", get: |r| r.per_watt.and_then(n) },
];

/// The figures of a workload kind, as `figures_of` gives them (the library's registry: `io`,
/// `oltp`, ...), its power figures included; None for a kind it does not know.
pub fn of_kind(figures_of: FiguresOf, kind: &str) -> Option<Vec<Named>> {
    let mut out = figures_of(kind)?;
    out.extend(names(POWER));
    Some(out)
}

/// Where the figures of a workload kind come from: the library's registry
/// (`storbench_bench::workload::registry::figures_of`), each workload's `Reported`.
pub type FiguresOf = fn(&str) -> Option<Vec<Named>>;

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
const SEARCHED: &[Figure<crate::summary::Summary>] = &[Figure {
    name: SEARCH_LOAD,
    unit: "at the latency limit",
    get: |s| s.search.as_ref()?.chosen.and_then(n),
}];

/// A run's figure `name` that its summary holds beyond its results: None where there is no such
/// figure, Some(None) where the run did not measure it (it ran no search, or no load held).
pub fn summary_figure(s: &crate::summary::Summary, name: &str) -> Option<Option<Value>> {
    read(SEARCHED, s, name)
}
