//! Integrity runs in the report: IOPS as their headline, failed reads and writes as their
//! failed I/Os, the verdict as their status and why a run's check failed; findings that flag
//! every configuration whose storage lost or damaged what it acknowledged, or kept I/Os
//! outstanding past the delay threshold; the configuration table of the reference evaluation's
//! SQLIOSim results (total I/O time, throttled and delayed I/Os, errors, the audit), each
//! reported run's activities; and the per-second charts of every activity.

use super::charts::{Spec, spec};
use super::doc::{Block, Finding, Table, num, opt};
use super::spectrum::LatencyTypes;
use super::workload::{Shown, p50_ms, p99_ms};
use super::{ReportInput, plural};
use crate::columns::integrity;
use crate::decision::figures::{Figure, Value, WORD, ms, n, names, read};
use crate::evaluation::{Group, Headline, RunStatus};
use crate::model::{IntegrityErrors, IntegrityResults, IntegrityVerdict, IoErrors};
use crate::workload::{Reported, WorkloadResults};
use std::collections::BTreeMap;

const CHARTS: &[Spec] = &[
    spec(
        "Integrity I/O per second",
        &[
            (integrity::IOPS, "all"),
            (integrity::RANDOM_IOPS, "random"),
            (integrity::READ_AHEAD_IOPS, "read-ahead"),
            (integrity::BULK_IOPS, "bulk"),
            (integrity::LAZY_WRITER_IOPS, "lazy writer"),
            (integrity::LOG_IOPS, "log writer"),
        ],
    ),
    spec(
        "Integrity latency (mean)",
        &[
            (integrity::AVG_MS, "all"),
            (integrity::RANDOM_AVG_MS, "random"),
            (integrity::READ_AHEAD_AVG_MS, "read-ahead"),
            (integrity::BULK_AVG_MS, "bulk"),
            (integrity::LAZY_WRITER_AVG_MS, "lazy writer"),
            (integrity::LOG_AVG_MS, "log writer"),
        ],
    ),
    spec("Integrity data file", &[(integrity::DATA_FILE_BYTES, "size")]),
    spec(
        "Integrity errors, throttled and delayed I/Os",
        &[
            (integrity::ERRORS, "errors"),
            (integrity::THROTTLED, "throttled"),
            (integrity::DELAYED, "delayed"),
        ],
    ),
];

/// Failed reads and writes are counted by class, not by errno.
static NO_KINDS: BTreeMap<String, u64> = BTreeMap::new();

/// The figures a requirement may name (`integrity.errors = 0`): its verdict, the damage it
/// found, and its pace.
pub(super) const FIGURES: &[Figure<IntegrityResults>] = &[
    Figure { name: "result", unit: WORD, get: |r| Some(Value::Text(r.verdict().as_str().to_lowercase())) },
    Figure { name: "errors", unit: "errors found", get: |r| n(r.errors.total() as f64) },
    Figure { name: "iops", unit: "IOPS", get: |r| n(r.iops) },
    Figure { name: "p99_ms", unit: "ms p99", get: |r| r.lat_ns.as_ref().and_then(|l| ms(l.p99)) },
    Figure { name: "delayed_ios", unit: "delayed I/Os", get: |r| n(r.delayed_ios as f64) },
];

/// What integrity reports (its registry entry's `reported`).
pub const REPORTED: Reported = Reported {
    figures: || names(FIGURES),
    latency_types: LatencyTypes::Tags(&[("io", "reads"), ("io_write", "writes")]),
};

impl WorkloadResults for IntegrityResults {
    fn reported(&self) -> Reported {
        REPORTED
    }

    fn figure(&self, name: &str) -> Option<Option<Value>> {
        read(FIGURES, self, name)
    }

    fn headline(&self) -> Option<Headline> {
        Some(Headline::new("IOPS", self.iops, true))
    }

    fn io_errors(&self) -> Option<IoErrors<'_>> {
        Some(IoErrors {
            failed: self.errors.read_errors.saturating_add(self.errors.write_errors),
            completed: self.ios,
            outside: 0,
            by_kind: &NO_KINDS,
        })
    }

    /// From the verdict, whether or not the run completed: a run that failed is incomplete
    /// too, and found damage fails an interrupted one.
    fn status(&self, _complete: bool) -> RunStatus {
        match self.verdict() {
            IntegrityVerdict::Pass => RunStatus::Done,
            IntegrityVerdict::Interrupted => RunStatus::Interrupted,
            IntegrityVerdict::Fail => RunStatus::CheckFailed,
        }
    }

    fn failure(&self) -> Option<String> {
        failure(self)
    }
}

impl Shown for IntegrityResults {
    fn latencies(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![("p50", p50_ms(&self.lat_ns)), ("p99", p99_ms(&self.lat_ns))]
    }

    fn charts(&self) -> &'static [Spec] {
        CHARTS
    }

    fn findings(&self, input: &ReportInput) -> Vec<Finding> {
        findings(input)
    }

    fn section(&self, input: &ReportInput) -> Vec<Block> {
        blocks(input)
    }
}

/// A run's integrity results, if it is an integrity run with a bundle.
fn results_of<'a>(input: &'a ReportInput, run_id: &str) -> Option<&'a IntegrityResults> {
    input.runs.get(run_id)?.summary.results.get::<IntegrityResults>()
}

/// Each group's integrity runs: the group, and the results of its runs that have them.
fn groups<'a>(input: &'a ReportInput) -> Vec<(Group<'a>, Vec<&'a IntegrityResults>)> {
    super::workload::groups_of(input)
}

/// The error classes with a count, as "3 lost_writes, 1 torn_pages".
pub(super) fn classes(e: &IntegrityErrors) -> String {
    e.named()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{n} {name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "3 damaged pages (2 lost_writes, 1 torn_pages)": each page once, by its class.
fn damaged(e: &IntegrityErrors) -> String {
    format!("{} damaged page{} ({})", e.total(), plural(e.total() as usize), classes(e))
}

fn sum_errors(results: &[&IntegrityResults]) -> IntegrityErrors {
    let mut all = IntegrityErrors::default();
    results.iter().for_each(|r| all.add(&r.errors));
    all
}

/// Why an integrity run did not pass, in a few words; None for a pass or an interrupted run
/// that found nothing.
fn failure(r: &IntegrityResults) -> Option<String> {
    if r.errors.total() > 0 {
        return Some(damaged(&r.errors));
    }
    match &r.audit {
        _ if r.verdict() != IntegrityVerdict::Fail => None,
        Some(a) if !a.complete => Some("the final audit was cut short".into()),
        None => Some("no final audit (see the run's warnings)".into()),
        Some(_) => Some("see the run's warnings".into()),
    }
}

/// The verdict of a configuration's runs: FAIL when any run failed (damage found in any
/// run fails the storage), interrupted when none failed and one was interrupted, else pass.
fn verdict_of(results: &[&IntegrityResults]) -> IntegrityVerdict {
    let verdicts = results.iter().map(|r| r.verdict());
    verdicts.fold(IntegrityVerdict::Pass, |worst, v| match (worst, v) {
        (IntegrityVerdict::Fail, _) | (_, IntegrityVerdict::Fail) => IntegrityVerdict::Fail,
        (IntegrityVerdict::Interrupted, _) | (_, IntegrityVerdict::Interrupted) => {
            IntegrityVerdict::Interrupted
        }
        _ => IntegrityVerdict::Pass,
    })
}

/// Findings first in the list: any error fails the storage, delayed I/O is named.
fn findings(input: &ReportInput) -> Vec<Finding> {
    let mut out = Vec::new();
    // Passes after every failure: what went wrong is said first.
    let mut passed = Vec::new();
    for (g, results) in groups(input) {
        let place = format!("{} on {}", g.configuration, g.workload);
        let errors = sum_errors(&results);
        let failed = results.iter().filter(|r| r.errors.total() > 0).count();
        if failed > 0 {
            out.push(Finding {
                text: format!(
                    "FAILED: {place} lost or damaged data it acknowledged: {} in {failed} of {} run{} \
                     (each page once in the run's suspect_pages.csv, every finding in its \
                     errors.jsonl). Do not trust a database to this storage.",
                    damaged(&errors),
                    results.len(),
                    plural(results.len())
                ),
                claim: true,
            });
        }
        let interrupted = results.iter().any(|r| r.verdict() == IntegrityVerdict::Interrupted);
        if failed == 0 && !interrupted {
            passed.push(Finding {
                text: format!(
                    "{place} passed its checks: no lost, stale, torn or misplaced page and no read or \
                     write error in {} run{}.",
                    results.len(),
                    plural(results.len())
                ),
                claim: true,
            });
        }
        let delayed: u64 = results.iter().map(|r| r.delayed_ios).sum();
        if delayed > 0 {
            let threshold = results[0].delay_threshold_s;
            out.push(Finding {
                text: format!(
                    "{place}: {delayed} I/O{} outstanding longer than {threshold} s, which SQL Server \
                     reports as \"I/O requests taking longer than 15 seconds to complete\" (message \
                     833).",
                    plural(delayed as usize),
                ),
                claim: true,
            });
        }
    }
    out.extend(passed);
    out
}

/// The Integrity section; nothing when no run is an integrity run.
fn blocks(input: &ReportInput) -> Vec<Block> {
    let groups = groups(input);
    if groups.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(2, "Integrity".into()),
        Block::Para(
            "Per configuration, its reported (median) run: the data file's sizes, IOPS, the sum of \
             every I/O's duration (SQLIOSim's total I/O time), I/Os its activities throttled (slower \
             than the target duration) and delayed (outstanding past the threshold), the final \
             audit's pages and rate; and errors over all its runs, the audit's included."
                .into(),
        ),
        Block::Table(configurations(input, &groups)),
    ];
    for (g, _) in &groups {
        let Some(run) = g.reported() else { continue };
        let Some(r) = results_of(input, &run.id) else { continue };
        if let Some(c) = &r.crash {
            out.push(Block::Para(format!(
                "{}: {} crash cycle{}, {} of {} acknowledged page writes found after them (run {}).",
                g.configuration,
                c.cycles,
                plural(c.cycles as usize),
                c.writes_found,
                c.writes_acknowledged,
                run.id
            )));
        }
        if !r.activities.is_empty() {
            out.push(Block::Para(format!("{}: activities of run {}", g.configuration, run.id)));
            out.push(Block::Table(activities(r)));
        }
    }
    out
}

/// A row per configuration and workload, as the reference's SQLIOSim table has one per device
/// and RAID (and an evaluation may stress each with more than one integrity workload).
fn configurations(input: &ReportInput, groups: &[(Group<'_>, Vec<&IntegrityResults>)]) -> Table {
    let mut t = Table::new(&[
        "configuration",
        "workload",
        "runs",
        "data file MiB",
        "IOPS",
        "total I/O time s",
        "throttled",
        "delayed",
        "errors",
        "audit pages",
        "audit MB/s",
        "result",
    ]);
    for (g, results) in groups {
        let Some(r) = g.shown().and_then(|r| results_of(input, &r.id)) else { continue };
        let errors = sum_errors(results);
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        t.push(vec![
            g.configuration.to_string(),
            g.workload.to_string(),
            results.len().to_string(),
            format!("{:.0} → {:.0}", mib(r.data_initial_bytes), mib(r.data_max_bytes)),
            num(r.iops),
            num(r.total_io_time_s),
            r.throttled_ios.to_string(),
            format!("{} (over {} s)", r.delayed_ios, r.delay_threshold_s),
            match errors.total() {
                0 => "0".into(),
                n => format!("{n} ({})", classes(&errors)),
            },
            r.audit.as_ref().map_or("—".into(), |a| a.pages_checked.to_string()),
            opt(r.audit.as_ref().map(|a| a.bytes_per_sec / 1e6), ""),
            verdict_of(results).as_str().into(),
        ]);
    }
    t
}

fn activities(r: &IntegrityResults) -> Table {
    let mut t = Table::new(&[
        "activity",
        "reads",
        "writes",
        "IOPS",
        "mean ms",
        "p99 ms",
        "I/O time s",
        "throttled",
        "delayed",
    ]);
    for a in &r.activities {
        let lat = a.lat_ns.as_ref();
        t.push(vec![
            a.name.clone(),
            a.reads.to_string(),
            a.writes.to_string(),
            num(a.iops),
            opt(lat.map(|l| l.mean / 1e6), ""),
            opt(lat.map(|l| l.p99 as f64 / 1e6), ""),
            num(a.io_time_s),
            a.throttled_ios.to_string(),
            a.delayed_ios.to_string(),
        ]);
    }
    t
}
