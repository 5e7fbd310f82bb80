//! What wal's load and figures are to a search: threads = --writers, one sync method;
//! commit latency.

use super::args::WalJob;
use crate::args::OutputArgs;
use crate::search::workloads::figures_of;
use crate::search::{LAT_STATS, Searchable};
use anyhow::{Result, bail};
use std::time::Duration;
use storbench_bench::run::search::{Figure, Load, Statistic};
use storbench_bench::units::Seconds;
use storbench_bench::workload::wal::WalOptions;
use storbench_report::{Results, Summary};

impl Searchable for WalJob {
    const THROUGHPUT: &'static str = "commits/s";
    const STATS: &'static [Statistic] = &LAT_STATS;
    const DEFAULT_TYPES: &'static [&'static str] = &["commit"];

    fn types(&self) -> Option<Vec<String>> {
        Some(vec!["commit".into()])
    }

    /// One method at a time: `all` is a set of runs, not one to search.
    fn searchable(&self) -> Result<()> {
        if self.options.sync_method.as_deref() == Some("all") {
            bail!("--search measures one sync method: give --sync-method (fdatasync, fsync, ...), not all");
        }
        Ok(())
    }

    fn load(&self, _p: Load) -> f64 {
        f64::from(self.options.writers.unwrap_or(1))
    }

    fn at(&self, _p: Load, load: f64, length: Option<Duration>) -> Self {
        // A search measures one method: fdatasync where none is named.
        let o = &self.options;
        let sync_method = o.sync_method.clone().or_else(|| Some("fdatasync".into()));
        let options = WalOptions {
            writers: Some(load as u32),
            runtime: length.map(Seconds).or(o.runtime),
            sync_method,
            ..o.clone()
        };
        WalJob { options, cli: (), out: self.out.clone() }
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Wal(r) = &s.results else { return (0.0, Vec::new()) };
        (r.commits_per_sec, figures_of("commit", r.commit_lat_ns.as_ref()))
    }
}
