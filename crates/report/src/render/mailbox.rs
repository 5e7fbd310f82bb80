//! The mailbox workload (`storbench mailbox`) in the report: its test's headline (transactional
//! IOPS, backup MB/s or seconds per log), its failed I/Os, its thresholds and checksums as its
//! check, the database and log latencies, and its per-second charts.

use super::ReportInput;
use super::charts::{SCHEDULE_LAG, Spec, spec};
use super::doc::{Finding, num};
use super::spectrum::LatencyTypes;
use super::workload::{Recommendation, Shown};
use crate::columns::mailbox;
use crate::decision::figures::{Figure, Value, WORD, n, names, pass_fail, read};
use crate::disclosure::Disclosure;
use crate::evaluation::Headline;
use crate::model::{IoErrors, MailboxResults};
use crate::setup::PageSize;
use crate::summary::Summary;
use crate::workload::{OwnCheck, Reported, WorkloadResults};

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

/// The figures a requirement may name (`mailbox.result = "pass"`), each over the measured
/// phase. `mailboxes` and `iops_per_mailbox` also state a demand as the Exchange calculators
/// put it (see `decision::requirement`).
pub(super) const FIGURES: &[Figure<MailboxResults>] = &[
    Figure { name: "result", unit: WORD, get: |r| pass_fail(r.pass) },
    Figure { name: "transactional_iops", unit: "transactional IOPS", get: |r| n(r.transactional_iops) },
    Figure {
        name: "db_and_log_iops",
        unit: "DB + log IOPS",
        get: |r| n(r.db_reads_per_sec + r.db_writes_per_sec + r.log_writes_per_sec),
    },
    Figure { name: "mailboxes", unit: "mailboxes", get: |r| n(r.mailboxes as f64) },
    Figure {
        name: "iops_per_mailbox",
        unit: "IOPS per mailbox",
        get: |r| (r.mailboxes > 0).then(|| n(r.transactional_iops / r.mailboxes as f64)).flatten(),
    },
    Figure { name: "db_read_avg_ms", unit: "ms DB read mean", get: |r| r.db_read_avg_ms.and_then(n) },
    Figure { name: "db_write_avg_ms", unit: "ms DB write mean", get: |r| r.db_write_avg_ms.and_then(n) },
    Figure { name: "log_write_avg_ms", unit: "ms log write mean", get: |r| r.log_write_avg_ms.and_then(n) },
    Figure { name: "db_read_max_ms", unit: "ms DB read max", get: |r| r.db_read_max_ms.and_then(n) },
    Figure { name: "log_write_max_ms", unit: "ms log write max", get: |r| r.log_write_max_ms.and_then(n) },
    Figure { name: "backup_mb_per_s", unit: "backup MB/s", get: |r| r.backup_total_mb_per_sec.and_then(n) },
    Figure { name: "seconds_per_log", unit: "s per log", get: |r| r.seconds_per_log.and_then(n) },
    Figure { name: "errors", unit: "failed I/Os", get: |r| n(r.errors.total as f64) },
];

/// What mailbox reports (its registry entry's `reported`).
pub const REPORTED: Reported = Reported {
    figures: || names(FIGURES),
    latency_types: LatencyTypes::Tags(&[
        ("db_read", "database reads"),
        ("db_write", "database writes"),
        ("log_write", "log writes"),
    ]),
};

impl WorkloadResults for MailboxResults {
    fn reported(&self) -> Reported {
        REPORTED
    }

    fn figure(&self, name: &str) -> Option<Option<Value>> {
        read(FIGURES, self, name)
    }

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

    /// Each threshold of its preset, by database where it is one database's. A latency
    /// threshold on a database that read nothing from storage is not judged.
    fn checks(&self) -> Vec<OwnCheck> {
        self.checks
            .iter()
            .map(|c| {
                let rule = match c.name.as_str() {
                    "operations_per_sec" => "above ",
                    "target_iops" => "at least ",
                    _ => "at most ",
                };
                OwnCheck {
                    name: match c.database {
                        Some(db) => format!("{} (database {db})", c.name),
                        None => c.name.clone(),
                    },
                    measured: c.value.map(num),
                    limit: format!("{rule}{}", num(c.limit)),
                    held: c.value.map(|_| c.pass),
                }
            })
            .collect()
    }

    /// Its verdict: every threshold held, no I/O error, every checksum verified.
    fn check_failed(&self) -> bool {
        !self.pass
    }
}

impl Shown for MailboxResults {
    /// The mailbox databases' page size, from the profile the run recorded.
    fn page_size(&self, s: &Summary, _d: &Disclosure) -> Option<PageSize> {
        let bytes = s.parameters.get("profile")?.get("page_size")?.as_u64()?;
        Some(PageSize { owner: "the mailbox databases".into(), bytes })
    }

    fn findings(&self, input: &ReportInput) -> Vec<Finding> {
        verdicts(input)
    }

    /// 003 counts a mailbox run's IOPS as database reads and writes plus log writes; its MB/s
    /// are every stream's bytes (maintenance reads too).
    fn beside(&self) -> Vec<(&'static str, Option<f64>, bool)> {
        let all = self.db_reads_per_sec + self.db_writes_per_sec + self.log_writes_per_sec;
        let streams =
            self.databases.iter().flat_map(|d| [&d.db_reads, &d.db_writes, &d.log_writes, &d.bdm_reads]);
        let bytes: f64 = streams.map(|s| s.per_sec * s.bytes_per_io.unwrap_or(0.0)).sum();
        match self.test.as_str() {
            "performance" | "stress" => {
                vec![
                    ("DB + log IOPS", Some(all), true),
                    ("MB/s", (!self.databases.is_empty()).then_some(bytes / 1e6), false),
                ]
            }
            _ => Vec::new(),
        }
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

    /// Logs on a volume of their own where a run's log writes failed their limit with the logs
    /// in the databases' own directory (Jetstress's advice; Exchange keeps them apart).
    fn recommendations(&self, input: &ReportInput) -> Vec<Recommendation> {
        let mut out: Vec<Recommendation> = Vec::new();
        for r in &input.evaluation.runs {
            let Some(data) = input.runs.get(&r.id) else { continue };
            let Some(results) = data.summary.results.get::<MailboxResults>() else { continue };
            let p = &data.summary.parameters;
            let shared = p.get("log_target").is_some_and(|l| Some(l) == p.get("target"));
            let slow = results.checks.iter().find(|c| c.name == "log_write_avg_ms" && !c.pass);
            let (true, Some(slow)) = (shared, slow) else { continue };
            if out.iter().any(|o| o.configuration == r.configuration) {
                continue;
            }
            let value = slow.value.map_or_else(|| "not measured".into(), |v| format!("{} ms", num(v)));
            out.push(Recommendation {
                configuration: r.configuration.clone(),
                change:
                    "the logs on a volume of their own (log_target), apart from the databases' random I/O"
                        .into(),
                because: format!(
                    "run {}: log writes averaged {value} (at most {} ms) with the logs in the databases' \
                     directory",
                    r.id,
                    num(slow.limit)
                ),
            });
        }
        out
    }
}

/// Jetstress's own verdict per configuration, before any comparison: passed in every run, or
/// failed in how many and why (a failed run is not a result to compare).
fn verdicts(input: &ReportInput) -> Vec<Finding> {
    let mut out = Vec::new();
    for (g, results) in super::workload::groups_of::<MailboxResults>(input) {
        let place = format!("{} on {}{}", g.configuration, g.workload, super::at(g.sweep));
        let n = results.len();
        let failed: Vec<&&MailboxResults> = results.iter().filter(|r| !r.pass).collect();
        let text = match failed.first() {
            None => format!(
                "{place} passed Jetstress's checks (latency thresholds held, checksums verified, no I/O \
                 error) in {} run{}.",
                n,
                super::plural(n)
            ),
            Some(first) => format!(
                "FAILED: {place} failed Jetstress's checks in {} of {n} run{}: {}.",
                failed.len(),
                super::plural(n),
                why_failed(first)
            ),
        };
        out.push(Finding { text, claim: true });
    }
    // Failures first, as the report says what went wrong before what went well.
    out.sort_by_key(|f| !f.text.starts_with("FAILED"));
    out
}

/// What failed in a run that did not pass: its thresholds by name, the checksums, I/O errors.
fn why_failed(r: &MailboxResults) -> String {
    let mut why: Vec<String> = r
        .checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| match (c.value, c.database) {
            (Some(v), Some(db)) => format!("{} {} over {} on database {db}", c.name, num(v), num(c.limit)),
            (Some(v), None) => format!("{} {} over {}", c.name, num(v), num(c.limit)),
            _ => c.name.clone(),
        })
        .collect();
    if r.checksum_ok == Some(false) {
        why.push("checksums failed".into());
    }
    if r.errors.total > 0 {
        why.push(format!("{} I/O errors", r.errors.total));
    }
    if why.is_empty() { "its check failed".into() } else { why.join(", ") }
}
