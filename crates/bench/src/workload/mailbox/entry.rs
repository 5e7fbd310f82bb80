//! mailbox's entry in the library's registry of workloads (`workload::registry`).

use crate::run::search::Load;
use crate::workload::declaration::Workload;
use storbench_report::columns::{Column, backup, mailbox, pace};

pub static WORKLOAD: Workload = Workload {
    name: "mailbox",
    what: "a mailbox workload",
    reported: storbench_report::render::mailbox::REPORTED,
    loads: &[Load::Threads],
    rebuild: crate::workload::mailbox::summary::rebuilt,
    columns: || {
        let backup_dbs: &'static [Column] = &backup::DB_MB_PER_SEC;
        vec![vec![mailbox::ALL, pace::ALL], vec![backup::ALL, backup_dbs]]
    },
    per_shard: &[],
};
