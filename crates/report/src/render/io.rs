//! The synthetic I/O workload (`storbench io`) in the report: IOPS (reads and writes) as its
//! headline, its failed I/Os in and outside the measured window, data verification as its
//! check, read and write latencies, and its per-second charts.

use super::charts::{SCHEDULE_LAG, Spec, spec};
use super::workload::{WorkloadResults, p50_ms, p99_ms};
use crate::columns::io;
use crate::evaluation::Headline;
use crate::model::{IoErrors, IoResults};

const CHARTS: &[Spec] = &[
    spec("I/O per second", &[(io::READ_IOPS, "read"), (io::WRITE_IOPS, "write")]),
    spec(
        "Latency",
        &[
            (io::READ_LAT_P50_US, "read p50"),
            (io::READ_LAT_P99_US, "read p99"),
            (io::WRITE_LAT_P50_US, "write p50"),
            (io::WRITE_LAT_P99_US, "write p99"),
        ],
    ),
    SCHEDULE_LAG,
];

impl WorkloadResults for IoResults {
    fn headline(&self) -> Option<Headline> {
        Some(Headline::new("IOPS", self.read.iops + self.write.iops, true))
    }

    fn io_errors(&self) -> Option<IoErrors<'_>> {
        Some(IoErrors {
            failed: self.errors.total,
            completed: self.read.ios.saturating_add(self.write.ios),
            outside: self.errors_outside_window,
            by_kind: &self.errors.by_kind,
        })
    }

    fn check_failed(&self) -> bool {
        self.verify.mismatches > 0
    }

    fn latencies(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![
            ("read p50", p50_ms(&self.read.lat_ns)),
            ("read p99", p99_ms(&self.read.lat_ns)),
            ("write p50", p50_ms(&self.write.lat_ns)),
            ("write p99", p99_ms(&self.write.lat_ns)),
        ]
    }

    fn charts(&self) -> &'static [Spec] {
        CHARTS
    }
}
