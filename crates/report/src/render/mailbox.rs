//! The mailbox workload (`storbench mailbox`) in the report: its test's headline (transactional
//! IOPS, backup MB/s or seconds per log), its failed I/Os, its thresholds and checksums as its
//! check, the database and log latencies, and its per-second charts.

use super::charts::{SCHEDULE_LAG, Spec, spec};
use super::workload::WorkloadResults;
use crate::columns::mailbox;
use crate::evaluation::Headline;
use crate::model::{IoErrors, MailboxResults};

const CHARTS: &[Spec] = &[
    spec(
        "Mailbox I/O per second",
        &[
            (mailbox::TRANSACTIONAL_IOPS, "transactional"),
            (mailbox::DB_READS_PER_SEC, "DB reads"),
            (mailbox::DB_WRITES_PER_SEC, "DB writes"),
            (mailbox::LOG_WRITES_PER_SEC, "log writes"),
        ],
    ),
    spec(
        "Mailbox latency",
        &[
            (mailbox::DB_READ_AVG_MS, "DB read"),
            (mailbox::DB_WRITE_AVG_MS, "DB write"),
            (mailbox::LOG_WRITE_AVG_MS, "log write"),
        ],
    ),
    SCHEDULE_LAG,
];

impl WorkloadResults for MailboxResults {
    /// A backup's MB/s, a soft recovery's seconds per log, else (performance, stress) the
    /// achieved transactional IOPS.
    fn headline(&self) -> Option<Headline> {
        Some(match self.test.as_str() {
            "backup" => Headline::new("backup MB/s", self.backup_total_mb_per_sec?, true),
            "soft_recovery" => Headline::new("seconds per log", self.seconds_per_log?, false),
            _ => Headline::new("transactional IOPS", self.transactional_iops, true),
        })
    }

    fn io_errors(&self) -> Option<IoErrors<'_>> {
        Some(IoErrors {
            failed: self.errors.total,
            completed: self.completed_ios(),
            outside: 0,
            by_kind: &self.errors.by_kind,
        })
    }

    fn check_failed(&self) -> bool {
        !self.pass
    }

    fn latencies(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![
            ("DB read avg", self.db_read_avg_ms),
            ("DB write avg", self.db_write_avg_ms),
            ("log write avg", self.log_write_avg_ms),
        ]
    }

    fn charts(&self) -> &'static [Spec] {
        CHARTS
    }
}
