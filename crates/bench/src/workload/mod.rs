//! Workloads, one module each, each with one entry point (`io::run`, ...). `integrity` holds
//! so far only its page format, journal and verdicts; its entry point comes with the workload.

pub mod integrity;
pub mod io;
pub mod mailbox;
pub mod oltp;
