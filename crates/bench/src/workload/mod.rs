//! Workloads, one module each, each with one entry point that measures and returns data:
//! `io` (synthetic profiles), `oltp` (DVD Store 3 on a database), `mailbox` (Jetstress-class
//! mailbox databases), `integrity` (SQLIOSim-class stress that proves storage keeps what it
//! acknowledged) and `replay` (production requests from logs against a database).
//! Each workload's summary, built again from a bundle's record, is in `run::record::summary`;
//! `registry` holds each kind's entry (declared in its folder's `entry.rs`).

pub mod declaration;
pub mod integrity;
pub mod io;
pub mod mailbox;
pub mod oltp;
pub mod registry;
pub mod replay;
pub mod wal;
