//! oltp's entry in the library's registry of workloads (`workload::registry`).

use crate::run::search::Load;
use crate::workload::declaration::Workload;
use storbench_report::columns::{Column, db, oltp};

pub static WORKLOAD: Workload = Workload {
    name: "oltp",
    what: "an oltp workload",
    reported: storbench_report::render::oltp::REPORTED,
    loads: &[Load::Threads],
    rebuild: crate::workload::oltp::summary::rebuilt,
    columns: || {
        let txn: &'static [[Column; 3]] = &oltp::TXN;
        vec![vec![oltp::ALL, txn.as_flattened(), db::ALL]]
    },
    per_shard: &["n_threads"],
};
