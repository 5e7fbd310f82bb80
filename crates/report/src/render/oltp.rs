//! The DVD Store workload (`storbench oltp run`) in the report: orders per minute as its
//! headline, the order response time, and its per-second charts. Its errors are failed
//! database calls, not I/Os, and it has no check of its own.

use super::charts::{Spec, spec};
use super::workload::{WorkloadResults, p99_ms};
use crate::columns::oltp;
use crate::evaluation::Headline;
use crate::model::{IoErrors, OltpResults};

const CHARTS: &[Spec] = &[
    spec("Orders per minute", &[(oltp::OPM, "OPM")]),
    spec("Order response time", &[(oltp::ORDER_RT_P50_MS, "p50"), (oltp::ORDER_RT_P99_MS, "p99")]),
];

impl WorkloadResults for OltpResults {
    fn headline(&self) -> Option<Headline> {
        Some(Headline::new("OPM", self.opm, true))
    }

    fn io_errors(&self) -> Option<IoErrors<'_>> {
        None
    }

    fn latencies(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![("order mean", self.order_rt_mean_ns.map(|v| v / 1e6)), ("order p99", p99_ms(&self.order_rt_ns))]
    }

    fn charts(&self) -> &'static [Spec] {
        CHARTS
    }
}
