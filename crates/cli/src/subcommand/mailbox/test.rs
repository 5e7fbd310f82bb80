//! One mailbox test into its bundle: the bundle opened when the test starts, the test run
//! (performance and stress here, backup and soft recovery in their modules), the summary
//! written when it ends.

use super::validate::MailboxSetup;
use super::{backup::backup, recovery::soft_recovery, summary, verify::verify_with_bar};
use crate::args::mailbox::MailboxJob;
use crate::measure::{self, BundleDir, Finished, Measured, Start};
use crate::output;
use anyhow::{Context, Result};
use std::path::Path;
use storbench_bench::monitor::{SystemSampler, resolve_device};
use storbench_bench::run::WithStreams;
use storbench_bench::run::bundle::Bundle;
use storbench_bench::run::record::{End, Recordable};
use storbench_bench::run::{Outcome, Parts, StopFlag};
use storbench_bench::workload::mailbox::MailboxRecorder;
use storbench_bench::workload::mailbox::summary::{MailboxFacts, Verified};
use storbench_bench::workload::mailbox::{self as mbx, MailboxSpec, Manifest, TestType};
use storbench_report::DatabaseInfo;
use storbench_report::columns::mailbox as col;
use storbench_report::series::SeriesRow;

/// The library's description of the test `plan` holds.
pub(super) fn spec(plan: &MailboxSetup) -> MailboxSpec {
    MailboxSpec {
        preset: plan.preset,
        test: plan.test,
        profile: plan.profile,
        thresholds: plan.thresholds,
        threads: plan.threads,
        target_iops: plan.target_iops,
        duration: plan.duration,
        max_warmup: plan.max_warmup,
        steady_latency: false,
        sample_window: plan.sample_window,
        seed: plan.seed,
        engine: plan.engine,
        keep_logs: false,
        log_files_limit: None,
        steady_state: plan.steady_state,
    }
}

/// A test's bundle and the host's sampler while it runs, and its last row of the series.
pub(super) struct TestRows<'a> {
    pub(super) bundle: &'a mut Bundle,
    pub(super) sampler: &'a mut WithStreams<SystemSampler>,
    /// The transactional run's last row and where its interval ended (ns since its start):
    /// the columns and the place on the record's timeline of what follows it (soft recovery's
    /// replay).
    pub(super) last: Option<(SeriesRow, u64)>,
}

/// The test `plan` holds into its bundle: the directory `given`, or a new one named after the
/// test under --output-dir.
pub(super) fn run_and_verify(
    a: &MailboxJob,
    plan: &MailboxSetup,
    manifest: &mut Manifest,
    given: Option<&Path>,
    stop: &StopFlag,
) -> Result<Measured> {
    measure_test(a, plan, spec(plan), manifest, given, "", stop)
}

/// One test into its bundle (`given`, or a new one named after the test and `suffix`);
/// `spec` is its transactional workload's (a tuning trial's warms until latency is steady).
pub(super) fn measure_test(
    a: &MailboxJob,
    plan: &MailboxSetup,
    spec: MailboxSpec,
    manifest: &mut Manifest,
    given: Option<&Path>,
    suffix: &str,
    stop: &StopFlag,
) -> Result<Measured> {
    let test = summary::base_results(plan).test;
    let name = a.out.name.clone().unwrap_or_else(|| format!("mailbox-{}-{test}{suffix}", plan.preset.name()));
    let dir = BundleDir::choose(given, &a.out, &name)?;
    let device = resolve_device(&plan.db_dir).ok().flatten();
    let at = jiff::Timestamp::now();
    let start = Start {
        run: storbench_bench::run::measure::Start {
            at,
            summary: summary::started(plan, &name, device.clone(), &at.to_string()),
            targets: vec![plan.db_dir.as_path(), plan.log_dir.as_path()],
            database: DatabaseInfo::default(),
            device: device.as_ref().map(|d| d.name.as_str()),
        },
        table: crate::subcommand::mailbox::table::mailbox_table,
        background: &a.out.streams(),
        background_dir: Some(plan.db_dir.as_path()),
        background_wait: a.out.background_wait,
    };
    measure::measure(&dir, start, stop, |rec, first| {
        let mut run = TestRows { bundle: &mut rec.bundle, sampler: &mut rec.sampler, last: None };
        match plan.test {
            TestType::Backup => backup(&mut run, plan, manifest, stop, first),
            TestType::SoftRecovery => soft_recovery(&mut run, plan, manifest, stop, first),
            _ => {
                let t = transactional(&mut run, plan, spec, manifest, stop)?;
                let ended_at = jiff::Timestamp::now().to_string();
                let end = End::of(&ended_at, &t, &t.detail);
                let summary = storbench_bench::workload::mailbox::summary::summary(first, &t, &ended_at);
                Ok(Finished { end: Some(end), ..Finished::new(summary) })
            }
        }
    })
}

/// A transactional run's outcome with what the record keeps of it.
pub(super) type Transacted = Outcome<Parts<MailboxRecorder>, MailboxFacts>;

/// The transactional workload (performance, stress, or soft recovery's log generation),
/// then the verification.
pub(super) fn transactional(
    run: &mut TestRows<'_>,
    plan: &MailboxSetup,
    spec: MailboxSpec,
    manifest: &mut Manifest,
    stop: &StopFlag,
) -> Result<Transacted> {
    let line = output::run_line(super::entry::KIND.name);
    let TestRows { bundle, sampler, last } = run;
    let outcome = mbx::run(&spec, &plan.db_dir, manifest, &mut **sampler, stop, &mut |iv| {
        line.set_message(output::with_streams(progress(iv, plan), &iv.row));
        // Each row is written when its second ends, so that a killed run keeps its rows.
        bundle.recorded(iv, super::entry::KIND.name, &iv.interval.data.tally());
        *last = Some((iv.row.clone(), iv.interval.end_ns));
    });
    line.finish_and_clear();
    let outcome = outcome.context("running the mailbox test")?;
    let t = &outcome.totals.total;
    run.bundle.totals(
        outcome.counted_from_s(),
        outcome.measured_s,
        &[
            ("db_read", &t.db_reads.latency),
            ("db_write", &t.db_writes.latency),
            ("log_write", &t.log_writes.latency),
        ],
    );
    let mut facts = MailboxFacts::of(&outcome, manifest, plan.profile.page_size);
    // An interrupted run is not verified: a verification cut short would report corruption
    // (checksum_ok false) where nothing was checked.
    if plan.verify && outcome.failures.is_empty() && spec.log_files_limit.is_none() && !stop.is_stopped() {
        let v = verify_with_bar(&plan.db_dir, manifest, stop)?;
        facts.verified = Some(Verified::of(&v));
    }
    if !outcome.detail.warmed && !spec.max_warmup.is_zero() {
        facts.warnings.push(format!(
            "the caches did not reach 90 % within the warm-up limit ({:.0} s); the measured phase may include cache warm-up",
            plan.max_warmup.as_secs_f64()
        ));
    }
    Ok(outcome.with(facts))
}

/// The status line: phase, rates, latencies.
fn progress(iv: &mbx::MailboxInterval, plan: &MailboxSetup) -> String {
    let value = |c| iv.row.value(c).unwrap_or(0.0);
    let phase = match iv.row.phase {
        storbench_report::series::Phase::Ramp => {
            format!("warming the cache ({:.0} %)", value(col::CACHE_FILL_PCT))
        }
        _ => format!("measuring ({:.0} s of {:.0} s)", 0.0f64.max(iv.row.t_s), plan.duration.as_secs_f64()),
    };
    format!(
        "{phase}: {:.0} transactional IOPS, read {:.1} ms, log write {:.1} ms",
        value(col::TRANSACTIONAL_IOPS),
        value(col::DB_READ_AVG_MS),
        value(col::LOG_WRITE_AVG_MS)
    )
}
