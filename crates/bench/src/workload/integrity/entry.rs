//! integrity's entry in the library's registry of workloads (`workload::registry`).

use crate::workload::declaration::Workload;
use storbench_report::columns::integrity;

pub static WORKLOAD: Workload = Workload {
    name: "integrity",
    what: "an integrity workload",
    reported: storbench_report::render::integrity::REPORTED,
    loads: &[],
    rebuild: crate::workload::integrity::summary::rebuilt,
    columns: || vec![vec![integrity::ALL]],
    per_shard: &[],
};
