//! Evaluation plans: the TOML file `storbench run` reads, parsed (`parse`), checked and
//! expanded into the list of runs (`expand`), and the commented example `storbench plan init`
//! writes (`init`).
//!
//! A plan has a `name`, a `[method]` table (the options below, also accepted on the command
//! line), `[[configuration]]` tables (the storage under test) and `[[workload]]` tables, each
//! with a `kind` of the registry's (`crate::registry::KINDS`) and that command's options under the same
//! names as its flags (snake_case), plus an optional `label`, `sweep` and search (`search`).

pub mod condition;
pub mod configuration;
pub mod expand;
pub mod init;
pub mod method;
pub mod parse;
pub mod quick;
pub mod requirements;
pub mod search;
pub mod table;
pub mod terms;

use crate::registry::kind::Options;
use configuration::Configuration;
use method::Method;

/// The built-in quick evaluation `storbench run` performs without a plan: the six SQLIO
/// profiles, DVD Store on SQLite and the mailbox workload, each small and short, on the
/// current directory.
pub const QUICK_PLAN: &str = include_str!("quick.toml");

/// A point of a workload: the swept key and its value (none without a sweep), and the
/// workload's options there.
pub type Point = (Option<(String, serde_json::Value)>, Box<dyn Options>);

/// One `[[workload]]`: its options, and the values of one option to sweep over.
#[derive(Debug, Clone)]
pub struct Workload {
    pub label: String,
    pub args: Box<dyn Options>,
    /// Each point's options (the sweep's key set to one of its values), in order; a workload
    /// without a sweep has one point.
    pub points: Vec<Point>,
    /// Per configuration (in the plan's order), its own options for each point where its
    /// `set` table gives this workload values of its own (003 and 004 run 17 threads on the
    /// SSDs and 73 on the HDDs).
    pub by_configuration: Vec<Option<Vec<Box<dyn Options>>>>,
    /// Its search (`search`, `latency_limit`): each run is a search for the highest load
    /// that holds the limits, the confirmed run its figures.
    pub search: Option<crate::search::args::SearchArgs>,
}

/// A parsed, checked plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub method: Method,
    pub configurations: Vec<Configuration>,
    pub workloads: Vec<Workload>,
    /// The `[requirements]` table, checked against the workloads.
    pub requirements: Vec<storbench_report::decision::requirement::Requirement>,
}

impl Plan {
    /// The configurations with a meter of their own: `(name, power)` each.
    pub fn own_meters(&self) -> Vec<(&str, &str)> {
        self.configurations.iter().filter_map(|c| Some((c.name.as_str(), c.power.as_deref()?))).collect()
    }
}

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
