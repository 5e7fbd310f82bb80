//! What the mailbox's load and figures are to a search: threads (the sessions); latency by
//! each stream's worst database, the mean as Jetstress averages it.

use crate::args::OutputArgs;
use crate::args::mailbox::MailboxJob;
use crate::search::workloads::{figures_of, fixed_steps};
use crate::search::{LAT_STATS, Searchable};
use anyhow::{Result, bail};
use std::time::Duration;
use storbench_bench::run::search::{Figure, Load, Statistic};
use storbench_bench::units::Seconds;
use storbench_report::{Results, Summary};

/// One stream of a mailbox database's results.
type StreamOf = fn(&storbench_report::MailboxDbResult) -> &storbench_report::StreamResult;

impl Searchable for MailboxJob {
    const THROUGHPUT: &'static str = "transactional IOPS";
    const STATS: &'static [Statistic] = &LAT_STATS;
    const DEFAULT_TYPES: &'static [&'static str] = &["db_read", "db_write", "log_write"];

    fn types(&self) -> Option<Vec<String>> {
        Some(["db_read", "db_write", "log_write", "bdm_read"].map(String::from).to_vec())
    }

    fn searchable(&self) -> Result<()> {
        if self.options.tune {
            bail!("--search and --tune both move the thread count; give one of them");
        }
        fixed_steps(self.options.steady_state)
    }

    fn load(&self, _p: Load) -> f64 {
        let o = &self.options;
        f64::from(o.threads.unwrap_or(4 * o.databases.unwrap_or(1)))
    }

    fn at(&self, _p: Load, load: f64, length: Option<Duration>) -> Self {
        let mut a = self.clone();
        a.options.threads = Some(load as u32);
        a.options.duration = length.map(Seconds).or(a.options.duration);
        // Databases made by the first step serve every step; `cleanup` removes them.
        a.options.keep = true;
        a
    }

    fn cleanup(&self) -> Option<Box<dyn FnOnce()>> {
        let there = crate::subcommand::mailbox::has_databases(self);
        let args = self.clone();
        (!self.options.keep && !there).then(|| {
            Box::new(move || crate::subcommand::mailbox::remove_kept_databases(&args)) as Box<dyn FnOnce()>
        })
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    /// Each stream's worst database: percentiles from its histogram, the mean as Jetstress
    /// averages it over the run.
    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Mailbox(r) = &s.results else { return (0.0, Vec::new()) };
        let mut f = Vec::new();
        let streams: [(&str, StreamOf); 4] = [
            ("db_read", |d| &d.db_reads),
            ("db_write", |d| &d.db_writes),
            ("log_write", |d| &d.log_writes),
            ("bdm_read", |d| &d.bdm_reads),
        ];
        for (name, of) in streams {
            for d in &r.databases {
                let stream = of(d);
                f.extend(
                    figures_of(name, stream.lat_ns.as_ref())
                        .into_iter()
                        .filter(|x| x.statistic != Statistic::Mean),
                );
                if let Some(ms) = stream.avg_ms {
                    f.push(Figure { request: name.into(), statistic: Statistic::Mean, ns: ms * 1e6 });
                }
            }
        }
        (r.transactional_iops, f)
    }
}
