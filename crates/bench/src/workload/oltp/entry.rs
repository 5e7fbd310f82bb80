//! oltp's entry in the library's registry of workloads (`workload::registry`).

use crate::run::search::Load;
use crate::workload::declaration::Workload;

pub static WORKLOAD: Workload = Workload {
    name: "oltp",
    what: "an oltp workload",
    reported: storbench_report::render::oltp::REPORTED,
    loads: &[Load::Threads],
    rebuild: crate::workload::oltp::summary::rebuilt,
    per_shard: &["n_threads"],
};
