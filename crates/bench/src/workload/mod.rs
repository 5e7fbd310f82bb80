//! Workloads, one module each, each with one entry point that measures and returns data:
//! `io` (synthetic profiles), `oltp` (DVD Store 3 on a database), `mailbox` (Jetstress-class
//! mailbox databases), `integrity` (SQLIOSim-class stress that proves storage keeps what it
//! acknowledged), `replay` (production requests from logs against a database) and `wal` (the
//! commit path: small writes each made durable before the next).
//! Each workload's summary, built again from a bundle's record, is in `run::record::summary`
//! (wal's in its own folder, where the others' are to go). Each kind's entry is declared in its
//! folder's `entry.rs` and listed here, once, in [`WORKLOADS`]; `registry` looks them up.

pub mod declaration;
pub mod integrity;
pub mod io;
pub mod mailbox;
pub mod oltp;
pub mod registry;
pub mod replay;
pub mod wal;

use declaration::Workload;

/// Every workload, in the order `--help` and messages list them.
pub static WORKLOADS: &[&Workload] = &[
    &io::entry::WORKLOAD,
    &oltp::entry::WORKLOAD,
    &mailbox::entry::WORKLOAD,
    &integrity::entry::WORKLOAD,
    &replay::entry::WORKLOAD,
    &crate::blocktrace::entry::WORKLOAD,
    &wal::entry::WORKLOAD,
];
