//! replay's entry in the library's registry of workloads (`workload::registry`).

use crate::run::search::Load;
use crate::workload::declaration::Workload;
use storbench_report::columns::replay;

pub static WORKLOAD: Workload = Workload {
    name: "replay",
    what: "a replay workload",
    reported: storbench_report::render::replay::REPORTED,
    loads: &[Load::Threads, Load::Rate],
    rebuild: crate::workload::replay::summary::rebuilt,
    columns: || vec![vec![replay::ALL]],
    per_shard: &[],
};
