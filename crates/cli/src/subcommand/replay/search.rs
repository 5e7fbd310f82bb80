//! What a replay's load and figures are to a search: threads = --in-flight (fire-hose),
//! rate = time-sync's --speed; latency of all requests and by type.

use super::args::ReplayJob;
use crate::args::OutputArgs;
use crate::search::Searchable;
use crate::search::workloads::{figures_of, fixed_steps};
use anyhow::Result;
use std::time::Duration;
use storbench_bench::run::search::{Figure, Load, Statistic};
use storbench_bench::units::Seconds;
use storbench_bench::workload::replay::options::{Pacing, ReplayOptions};
use storbench_report::{Results, Summary};

impl Searchable for ReplayJob {
    const THROUGHPUT: &'static str = "calls/s";
    const STATS: &'static [Statistic] =
        &[Statistic::Mean, Statistic::Percentile(50.0), Statistic::Percentile(99.0)];
    const DEFAULT_TYPES: &'static [&'static str] = &["all"];

    fn types(&self) -> Option<Vec<String>> {
        None
    }

    fn searchable(&self) -> Result<()> {
        fixed_steps(self.options.steady_state)
    }

    /// threads: requests in flight per log (fire-hose); rate: time-sync's speed.
    fn load(&self, p: Load) -> f64 {
        match p {
            Load::Rate => self.options.speed.unwrap_or(ReplayOptions::SPEED),
            _ => f64::from(
                self.options.in_flight.unwrap_or(storbench_bench::workload::replay::DEFAULT_IN_FLIGHT),
            ),
        }
    }

    /// A short step replays `length` of each log from --start.
    fn at(&self, p: Load, load: f64, length: Option<Duration>) -> Self {
        let mut a = self.clone();
        let o = &mut a.options;
        match p {
            Load::Rate => (o.mode, o.speed) = (Some(Pacing::TimeSync), Some(load)),
            _ => (o.mode, o.in_flight) = (Some(Pacing::FireHose), Some(load as u32)),
        }
        let from = o.start.map_or(Duration::ZERO, |s| s.0);
        o.end = length.map(|l| Seconds(from + l)).or(o.end);
        a
    }

    fn out(&self) -> &OutputArgs {
        &self.out
    }

    fn figures(s: &Summary) -> (f64, Vec<Figure>) {
        let Results::Replay(r) = &s.results else { return (0.0, Vec::new()) };
        let mut f = figures_of("all", r.lat_ns.as_ref());
        for (name, t) in &r.by_type {
            let stats = [
                (Statistic::Mean, t.mean_ms),
                (Statistic::Percentile(50.0), t.p50_ms),
                (Statistic::Percentile(99.0), t.p99_ms),
            ];
            f.extend(stats.into_iter().filter_map(|(statistic, ms)| {
                Some(Figure { request: name.clone(), statistic, ns: ms? * 1e6 })
            }));
        }
        (r.calls_per_sec, f)
    }
}
