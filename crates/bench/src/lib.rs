//! storbench's measuring library: I/O engines, targets, workloads, metrics and host monitors.
//!
//! It measures and returns data; it prints nothing and knows nothing of the command line.
//! Layout: `engine` (io_uring, psync, null), `target` (files and block devices: create, fill,
//! safety checks, the one-run-per-target lock), `workload` (one module and one entry point per
//! workload: `io`, `oltp`, `mailbox`, `integrity`), `db` (the database layer: SQLite,
//! PostgreSQL, MariaDB/MySQL connections, sessions running any SQL, counters, server facts,
//! ownership; DS3 is built on it in `workload::oltp::ds3`), `metrics` (HDR histograms and per-worker recorders), `monitor` (/proc and /sys
//! samplers, power meters, the disclosure), `run` (phases, intervals, stop requests, own CPU
//! time, steady state, a run into its bundle: `run::measure`), `rng` (seeded random streams), `files` (the one module that creates,
//! opens and removes files, and reads the user's input files), `secret` (hiding passwords in
//! everything printed or written), `command` (every outside command: contained, time-limited,
//! its output captured), `units` (sizes and durations as users write them: `4k`, `30s`),
//! `testing` (what every crate's tests share: the rule for a test its machine cannot run,
//! waiting on a condition).

// The library prints nothing; its tests may say why they skipped (cargo shows it on failure).
#![cfg_attr(test, allow(clippy::disallowed_macros))]

/// `return Err(format!(...))`: an option refused, as the library's option checks say it (a
/// `String` naming the flag, what was wrong and what to give instead), or as an [`Error::Said`].
macro_rules! refuse {
    ($($t:tt)*) => { return Err(format!($($t)*).into()) };
}

pub mod background;
pub mod blocktrace;
pub mod cluster;
pub mod command;
pub mod db;
pub mod engine;
mod error;
pub mod files;
pub mod merge;
pub mod metrics;
pub mod monitor;
pub mod rng;
pub mod run;
pub mod secret;
pub mod target;
pub mod testing;
pub mod units;
pub mod workload;

pub use error::{Error, Result};
/// Reading the files a user names as input (kept at its old path for callers).
pub use files::input;
