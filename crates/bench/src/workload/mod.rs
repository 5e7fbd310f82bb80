//! Workloads, one module each, each with one entry point (`io::run`, ...).

pub mod io;
pub mod mailbox;
pub mod oltp;
