//! The synthetic I/O workload (`storbench io`) in the report: IOPS (reads and writes) as its
//! headline, its failed I/Os in and outside the measured window, data verification as its
//! check, read and write latencies, and its per-second charts.

use super::charts::{SCHEDULE_LAG, Spec, spec};
use super::workload::{WorkloadResults, p50_ms, p99_ms};
use crate::columns::io;
use crate::decision::figures::{Figure, Value, ms, n, pass_fail, read};
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

/// The figures a requirement may name (`randread.iops`), each read from the measured phase.
pub(super) const FIGURES: &[Figure<IoResults>] = &[
    Figure { name: "iops", unit: "IOPS", get: |r| n(r.read.iops + r.write.iops) },
    Figure { name: "read_iops", unit: "read IOPS", get: |r| n(r.read.iops) },
    Figure { name: "write_iops", unit: "write IOPS", get: |r| n(r.write.iops) },
    Figure {
        name: "mb_per_s",
        unit: "MB/s",
        get: |r| n((r.read.bytes_per_sec + r.write.bytes_per_sec) / 1e6),
    },
    Figure {
        name: "read_mean_ms",
        unit: "ms read mean",
        get: |r| r.read.lat_ns.as_ref().and_then(|l| n(l.mean / 1e6)),
    },
    Figure {
        name: "read_p99_ms",
        unit: "ms read p99",
        get: |r| r.read.lat_ns.as_ref().and_then(|l| ms(l.p99)),
    },
    Figure {
        name: "read_p999_ms",
        unit: "ms read p99.9",
        get: |r| r.read.lat_ns.as_ref().and_then(|l| ms(l.p999)),
    },
    Figure {
        name: "write_mean_ms",
        unit: "ms write mean",
        get: |r| r.write.lat_ns.as_ref().and_then(|l| n(l.mean / 1e6)),
    },
    Figure {
        name: "write_p99_ms",
        unit: "ms write p99",
        get: |r| r.write.lat_ns.as_ref().and_then(|l| ms(l.p99)),
    },
    Figure {
        name: "write_p999_ms",
        unit: "ms write p99.9",
        get: |r| r.write.lat_ns.as_ref().and_then(|l| ms(l.p999)),
    },
    Figure { name: "flushes_per_s", unit: "flushes/s", get: |r| r.flush.as_ref().and_then(|f| n(f.iops)) },
    Figure {
        name: "flush_p99_ms",
        unit: "ms flush p99",
        get: |r| r.flush.as_ref().and_then(|f| f.lat_ns.as_ref()).and_then(|l| ms(l.p99)),
    },
    Figure { name: "errors", unit: "failed I/Os", get: |r| n(r.errors.total as f64) },
    Figure { name: "error_rate_pct", unit: "% of I/Os failed", get: |r| n(r.error_rate_pct.unwrap_or(0.0)) },
    Figure { name: "verify", unit: "", get: |r| pass_fail(r.verify.mismatches == 0) },
];

impl WorkloadResults for IoResults {
    fn figure(&self, name: &str) -> Option<Option<Value>> {
        read(FIGURES, self, name)
    }

    fn beside(&self) -> Vec<(&'static str, Option<f64>, bool)> {
        vec![("MB/s", Some((self.read.bytes_per_sec + self.write.bytes_per_sec) / 1e6), false)]
    }

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
