//! mailbox's entry in the library's registry of workloads (`workload::registry`).

use crate::run::search::Load;
use crate::workload::declaration::Workload;

pub static WORKLOAD: Workload = Workload {
    name: "mailbox",
    what: "a mailbox workload",
    reported: storbench_report::render::mailbox::REPORTED,
    loads: &[Load::Threads],
    rebuild: crate::workload::mailbox::summary::rebuilt,
    per_shard: &[],
};
