//! wal's entry in the library's registry of workloads (`workload::registry`).

use crate::workload::declaration::Workload;

pub static WORKLOAD: Workload = Workload {
    name: "wal",
    what: "a wal workload",
    reported: storbench_report::workloads::wal::render::REPORTED,
    // Writers committing at once: the most that hold a latency limit.
    loads: &[crate::run::search::Load::Threads],
    rebuild: super::summary::rebuilt,
    columns: || vec![vec![storbench_report::workloads::wal::columns::ALL]],
    per_shard: &["writers"],
};
