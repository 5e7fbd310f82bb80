//! Options of `storbench wal`: the commit path's point (sync method, write size, writers, log
//! file layout) and its timing.

use crate::args::OutputArgs;
use clap::Args;
use std::path::PathBuf;
use storbench_bench::units::{ByteSize, Seconds};
use storbench_bench::workload::wal::WalOptions;

/// `storbench wal [OPTIONS]`, with `--search threads` to find the most writers whose commits
/// hold a latency limit.
#[derive(Args, Debug)]
pub struct WalCommand {
    #[command(flatten)]
    pub run: WalArgs,
    #[command(flatten)]
    pub search: crate::search::args::SearchArgs,
}

/// Options of `storbench wal`; the same keys work in a plan file's wal workload (there one
/// sync method per workload: sweep it with `sweep = { sync_method = [...] }`). Each flag is a
/// key of the library's `WalOptions`, which the flags convert into (`WalArgs::job`).
#[derive(Args, Debug, Clone, Default)]
pub struct WalArgs {
    /// Directory for the log file: a new file per run (storbench-wal-<pid>-<n>.log), removed
    /// after it. Default: the current directory.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub target: Option<PathBuf>,

    /// How each commit is made durable, as PostgreSQL's wal_sync_method names it: fdatasync,
    /// fsync, open_datasync (O_DSYNC), open_sync (O_SYNC), open_direct_datasync (O_DIRECT
    /// with O_DSYNC), or all: each in turn, a bundle each. Default: all (a plan: fdatasync).
    #[arg(long, value_name = "METHOD")]
    pub sync_method: Option<String>,

    /// Bytes each commit writes, a multiple of 512 up to 16MiB. Default: 8k (PostgreSQL's WAL
    /// block).
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<ByteSize>,

    /// Writers committing at once on the same log, each its own commits (group commit).
    /// Default: 1.
    #[arg(long, value_name = "N")]
    pub writers: Option<u32>,

    /// preallocated: the commits overwrite a file of zeros written and synced first
    /// (PostgreSQL's WAL segments); growing: each commit extends the file, so each sync carries
    /// its new size too (SQLite's WAL, a binary log). Default: preallocated.
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,

    /// Size of the log file; the commits start again at its beginning when they reach its
    /// end (a growing file is cut back to empty). Default: 16MiB (a PostgreSQL segment).
    #[arg(long, value_name = "SIZE")]
    pub file_size: Option<ByteSize>,

    /// Warm-up before the measured time; its commits are not counted. Default: 1s.
    #[arg(long, value_name = "DURATION")]
    pub ramp: Option<Seconds>,

    /// Measured time. Default: 5s.
    #[arg(long, value_name = "DURATION")]
    pub runtime: Option<Seconds>,

    /// Seed of the bytes written (random, so no device compresses them). Default: fixed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub out: OutputArgs,
}

impl WalArgs {
    /// The flags as the library's options, and where the output goes.
    pub fn job(self) -> WalJob {
        let WalArgs { target, sync_method, bs, writers, layout, file_size, ramp, runtime, seed, out } = self;
        let options = WalOptions { target, sync_method, bs, writers, layout, file_size, ramp, runtime, seed };
        WalJob { options, cli: (), out }
    }
}

/// A wal workload as the command line and a plan run it.
pub type WalJob = crate::args::Job<WalOptions>;
