//! io's entry in the library's registry of workloads (`workload::registry`).

use crate::run::search::Load;
use crate::workload::declaration::Workload;
use storbench_report::columns::{io, pace};

pub static WORKLOAD: Workload = Workload {
    name: "io",
    what: "an io workload",
    reported: storbench_report::render::io::REPORTED,
    loads: &[Load::Threads, Load::Iodepth, Load::Rate],
    rebuild: crate::workload::io::summary::rebuilt,
    columns: || vec![vec![io::ALL, pace::ALL]],
    per_shard: &["workers"],
};
