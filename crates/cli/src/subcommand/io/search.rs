//! What io's load and figures are to a search: threads = --workers, iodepth, rate =
//! --rate-iops; latency by reads and writes.

use crate::args::OutputArgs;
use crate::registry::kind::Options;
use crate::search::workloads::figures_of;
use crate::search::{LAT_STATS, Searchable};
use crate::subcommand::io::args::IoJob;
use anyhow::{Result, bail};
use std::time::Duration;
use storbench_bench::run::search::{Figure, Load, Statistic};
use storbench_bench::units::Seconds;
use storbench_bench::workload::io::options::IoOptions;
use storbench_report::{Results, Summary};

impl Searchable for IoJob {
    const THROUGHPUT: &'static str = "IOPS";
    const STATS: &'static [Statistic] = &LAT_STATS;
    const DEFAULT_TYPES: &'static [&'static str] = &["read", "write"];

    fn types(&self) -> Option<Vec<String>> {
        Some(vec!["read".into(), "write".into()])
    }

    fn searchable(&self) -> Result<()> {
        let o = &self.options;
        if o.profile.is_some() {
            bail!(
                "--search runs one job; a profile set's jobs are searched one at a time, each with its options"
            );
        }
        if o.io_size.is_some() || o.steady_state.is_some() {
            bail!("--search runs steps of --search-step-time; drop --io-size and --steady-state");
        }
        if o.rate_bw.is_some() {
            bail!("--search moves the rate as --rate-iops; drop --rate-bw");
        }
        Ok(())
    }

    fn load(&self, p: Load) -> f64 {
        let o = &self.options;
        match p {
            Load::Threads => f64::from(o.workers.unwrap_or(1)),
            Load::Iodepth => f64::from(o.iodepth.unwrap_or(IoOptions::IODEPTH)),
            Load::Rate => o.rate_iops.unwrap_or(1000.0),
        }
    }

    fn at(&self, p: Load, load: f64, length: Option<Duration>) -> Self {
        let mut a = self.clone();
        let o = &mut a.options;
        match p {
            Load::Threads => o.workers = Some(load as u32),
            Load::Iodepth => o.iodepth = Some(load as u32),
            Load::Rate => o.rate_iops = Some(load),
        }
        o.runtime = length.map(Seconds).or(o.runtime);
        a
    }

    fn run_name(&self) -> String {
        self.out.name.clone().unwrap_or_else(|| self.label(None))
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Io(r) = &s.results else { return (0.0, Vec::new()) };
        let mut f = figures_of("read", r.read.lat_ns.as_ref());
        f.extend(figures_of("write", r.write.lat_ns.as_ref()));
        (r.read.iops + r.write.iops, f)
    }
}
