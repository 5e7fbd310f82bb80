//! Workloads, one module each, each with one entry point: `io::run` (synthetic profiles),
//! `oltp::run` (DVD Store 3 on a database), `mailbox::run` (Jetstress-class mailbox database)
//! and `integrity::run::run` (SQLIOSim-class stress that proves storage keeps what it
//! acknowledged).

pub mod integrity;
pub mod io;
pub mod mailbox;
pub mod oltp;
pub mod replay;
