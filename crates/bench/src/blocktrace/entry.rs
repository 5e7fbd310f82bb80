//! replay-trace's entry in the library's registry of workloads (`workload::registry`). A replay of a block trace is an io job whose requests come from the trace: it reports io's
//! figures and its summary is io's, with the trace's.

use crate::workload::declaration::Workload;
use storbench_report::columns::{io, pace};

pub static WORKLOAD: Workload = Workload {
    name: "replay-trace",
    what: "a replay-trace workload",
    reported: storbench_report::render::io::REPORTED,
    loads: &[],
    rebuild: crate::workload::io::summary::rebuilt,
    columns: || vec![vec![io::ALL, pace::ALL]],
    per_shard: &[],
};
