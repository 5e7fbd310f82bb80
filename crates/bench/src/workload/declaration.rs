//! What a workload declares in its registry entry (`workload::registry`): the type each
//! workload's `entry.rs` fills in, apart from the list of entries, so that an entry and the
//! list never import each other.

use crate::run::record::summary::Rebuild;
use crate::run::search::Load;
use storbench_report::columns::Column;
use storbench_report::render::Reported;

/// A workload kind.
pub struct Workload {
    /// Its name in plans, summaries and run ids, and its subcommand's.
    pub name: &'static str,
    /// How messages name one: "an io workload".
    pub what: &'static str,
    /// What it reports: its figures and latency types, declared in its report file.
    pub reported: Reported,
    /// The loads a search may move (`--search`), the first the default; none where it has no
    /// load to search.
    pub loads: &'static [Load],
    /// Its summary built again from a bundle's record (`summarize`, `report --window`, merge).
    pub rebuild: Rebuild,
    /// The columns it writes to `timeseries.csv` under its own names, one list per shape its
    /// file takes (a mailbox's test and its backup write different ones), the host's aside:
    /// how a merge finds how shards add each up (`merge::header`).
    pub columns: fn() -> Vec<Vec<&'static [Column]>>,
    /// Its parameters that are one shard's share of the load (writers, threads): a run merged
    /// from shards has their sum.
    pub per_shard: &'static [&'static str],
}
