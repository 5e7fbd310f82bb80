//! What an oltp run's load and figures are to a search: threads = --n-threads; latency by
//! the order and each transaction type.

use crate::args::OutputArgs;
use crate::args::oltp::OltpJob;
use crate::search::workloads::{figures_of, fixed_steps};
use crate::search::{LAT_STATS, Searchable};
use anyhow::Result;
use std::time::Duration;
use storbench_bench::run::search::{Figure, Load, Statistic};
use storbench_bench::units::Minutes;
use storbench_report::{Results, Summary};

impl Searchable for OltpJob {
    const THROUGHPUT: &'static str = "OPM";
    const STATS: &'static [Statistic] = &LAT_STATS;
    const DEFAULT_TYPES: &'static [&'static str] = &["order"];

    fn types(&self) -> Option<Vec<String>> {
        // The order's response time, then each transaction type's, as the summary names them.
        let txns = storbench_bench::workload::oltp::users::TXN_KINDS.iter().map(|k| k.as_str());
        Some(std::iter::once("order").chain(txns).map(String::from).collect())
    }

    fn searchable(&self) -> Result<()> {
        fixed_steps(self.options.steady_state)
    }

    fn load(&self, _p: Load) -> f64 {
        f64::from(self.options.n_threads.unwrap_or(1))
    }

    fn at(&self, _p: Load, load: f64, length: Option<Duration>) -> Self {
        let mut a = self.clone();
        a.options.n_threads = Some(load as u32);
        a.options.run_time = length.map(Minutes).or(a.options.run_time);
        a
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Oltp(r) = &s.results else { return (0.0, Vec::new()) };
        let mut f = figures_of("order", r.order_rt_ns.as_ref());
        for (name, t) in &r.transactions {
            f.extend(figures_of(name, t.lat_ns.as_ref()));
        }
        (r.opm, f)
    }
}
