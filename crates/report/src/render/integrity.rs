//! Integrity runs in the report: findings that flag every configuration whose storage lost
//! or damaged what it acknowledged, or kept I/Os outstanding past the delay threshold; the
//! configuration table of the reference evaluation's SQLIOSim results (total I/O time,
//! throttled and delayed I/Os, errors), and each reported run's activities.

use super::doc::{Block, Finding, Table, num};
use super::{ReportInput, plural};
use crate::evaluation::Group;
use crate::model::{IntegrityErrors, IntegrityResults, Results};

/// Each group's integrity runs: the group, and the results of its runs that have them.
fn groups<'a>(input: &'a ReportInput) -> Vec<(Group<'a>, Vec<&'a IntegrityResults>)> {
    input
        .evaluation
        .groups()
        .into_iter()
        .filter_map(|g| {
            let results: Vec<&IntegrityResults> = g
                .runs
                .iter()
                .filter_map(|r| input.runs.get(&r.id))
                .filter_map(|d| match &d.summary.results {
                    Results::Integrity(i) => Some(i),
                    _ => None,
                })
                .collect();
            (!results.is_empty()).then_some((g, results))
        })
        .collect()
}

/// The error classes with a count, as "3 lost_writes, 1 torn_pages".
pub(super) fn classes(e: &IntegrityErrors) -> String {
    let named = [
        ("lost_writes", e.lost_writes),
        ("stale_reads", e.stale_reads),
        ("torn_pages", e.torn_pages),
        ("misplaced_pages", e.misplaced_pages),
        ("checksum", e.checksum),
        ("read_errors", e.read_errors),
        ("write_errors", e.write_errors),
    ];
    named.iter().filter(|(_, n)| *n > 0).map(|(name, n)| format!("{n} {name}")).collect::<Vec<_>>().join(", ")
}

fn sum_errors(results: &[&IntegrityResults]) -> IntegrityErrors {
    let mut all = IntegrityErrors::default();
    for r in results {
        let e = &r.errors;
        all.lost_writes += e.lost_writes;
        all.stale_reads += e.stale_reads;
        all.torn_pages += e.torn_pages;
        all.misplaced_pages += e.misplaced_pages;
        all.checksum += e.checksum;
        all.read_errors += e.read_errors;
        all.write_errors += e.write_errors;
    }
    all
}

/// Findings first in the list: any error fails the storage, delayed I/O is named.
pub(super) fn findings(input: &ReportInput) -> Vec<Finding> {
    let mut out = Vec::new();
    for (g, results) in groups(input) {
        let place = format!("{} on {}", g.configuration, g.workload);
        let errors = sum_errors(&results);
        let failed = results.iter().filter(|r| r.errors.total() > 0).count();
        if failed > 0 {
            out.push(Finding {
                text: format!(
                    "FAILED: {place} lost or damaged data it acknowledged: {} in {failed} of {} run{} \
                     (each error with its file, offset and page in the run's errors.jsonl). Do not \
                     trust a database to this storage.",
                    classes(&errors),
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
                    "{place}: {delayed} I/O{} outstanding longer than {threshold:.0} s (SQL Server logs \
                     message 833 for each).",
                    plural(delayed as usize)
                ),
                claim: true,
            });
        }
    }
    out
}

/// The Integrity section; nothing when no run is an integrity run.
pub(super) fn blocks(input: &ReportInput) -> Vec<Block> {
    let groups = groups(input);
    if groups.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(2, "Integrity".into()),
        Block::Para(
            "Per configuration, its reported (median) run: the data file's sizes, the sum of every \
             I/O's duration (SQLIOSim's total I/O time), I/Os its activities throttled (slower than \
             the target duration) and delayed (outstanding past the threshold), and errors over all \
             its runs, the final audit included."
                .into(),
        ),
    ];
    let mut t = Table::new(&[
        "configuration",
        "runs",
        "data file MiB",
        "total I/O time s",
        "throttled",
        "delayed",
        "errors",
        "audit MB/s",
        "result",
    ]);
    for (g, results) in &groups {
        let reported = g.reported().and_then(|r| input.runs.get(&r.id));
        let Some(Results::Integrity(r)) = reported.map(|d| &d.summary.results) else { continue };
        let errors = sum_errors(results);
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        t.push(vec![
            g.configuration.to_string(),
            results.len().to_string(),
            format!("{:.0} → {:.0}", mib(r.data_initial_bytes), mib(r.data_max_bytes)),
            format!("{:.1}", r.total_io_time_s),
            r.throttled_ios.to_string(),
            format!("{} (over {:.0} s)", r.delayed_ios, r.delay_threshold_s),
            if errors.total() == 0 {
                "0".into()
            } else {
                format!("{} ({})", errors.total(), classes(&errors))
            },
            r.audit.as_ref().map_or("-".into(), |a| num(a.bytes_per_sec / 1e6)),
            if errors.total() == 0 && results.iter().all(|r| r.pass) { "pass".into() } else { "FAIL".into() },
        ]);
    }
    out.push(Block::Table(t));
    for (g, _) in &groups {
        let Some(run) = g.reported() else { continue };
        let Some(Results::Integrity(r)) = input.runs.get(&run.id).map(|d| &d.summary.results) else {
            continue;
        };
        if r.activities.is_empty() {
            continue;
        }
        out.push(Block::Para(format!("{}: activities of run {}", g.configuration, run.id)));
        out.push(Block::Table(activities(r)));
    }
    out
}

fn activities(r: &IntegrityResults) -> Table {
    let mut t = Table::new(&[
        "activity",
        "reads",
        "writes",
        "IOPS",
        "p50 ms",
        "p99 ms",
        "I/O time s",
        "throttled",
        "delayed",
    ]);
    let ms = |v: Option<u64>| v.map_or("-".into(), |ns| format!("{:.2}", ns as f64 / 1e6));
    for a in &r.activities {
        t.push(vec![
            a.name.clone(),
            a.reads.to_string(),
            a.writes.to_string(),
            num(a.iops),
            ms(a.lat_ns.as_ref().map(|l| l.p50)),
            ms(a.lat_ns.as_ref().map(|l| l.p99)),
            format!("{:.1}", a.io_time_s),
            a.throttled_ios.to_string(),
            a.delayed_ios.to_string(),
        ]);
    }
    t
}
