//! Soft recovery: the test (log files generated, a crash, the logs replayed and timed) and
//! `mailbox recover`, which replays the logs of databases a run left after a dirty shutdown.
//!
//! The test's seconds go into the bundle and its record as they end: the generation's
//! (stream `mailbox`), then the replay's (stream `recovery`), which follow them on the record's
//! timeline. The replay's rows in `timeseries.csv` keep the generation's columns with their
//! cells empty (the replay's counts are in the record) beside the host's sample, so that the
//! file keeps one header. Its summary is built from the record's values.

use super::test::{TestRows, Transacted, spec, transactional};
use super::validate::MailboxSetup;
use super::verify::{kept_databases, verify_with_bar};
use crate::measure::Finished;
use crate::output;
use anyhow::{Context, Result, bail};
use std::path::Path;
use storbench_bench::run::Ending;
use storbench_bench::run::record::{End, Facts, Recordable};
use storbench_bench::run::{Beside, Closed, Interval, Outcome, Parts, StopFlag};
use storbench_bench::target::lock::lock_place;
use storbench_bench::workload::mailbox::summary::{
    RECOVERY_STREAM, RecoveryFacts, ReplayFacts, Verified, replay_seconds, seconds_per_log,
    soft_recovery_summary,
};
use storbench_bench::workload::mailbox::{self as mbx, MailboxSpec, Manifest, RecoveryTally, layout};
use storbench_report::series::SeriesRow;
use storbench_report::{StreamValues, Summary};

/// A replay's outcome with what the record keeps of it.
type Replayed = Outcome<Parts<RecoveryTally>, ReplayFacts>;

/// Fills --log-files log files per database, stops without writing the cache (a crash), then
/// replays the logs and verifies the databases. `first` is the test's started summary.
pub(super) fn soft_recovery(
    run: &mut TestRows<'_>,
    plan: &MailboxSetup,
    manifest: &mut Manifest,
    stop: &StopFlag,
    first: Summary,
) -> Result<Finished> {
    let from: Vec<u32> = manifest.databases.iter().map(|d| d.next_generation).collect();
    let gen_spec = MailboxSpec {
        duration: std::time::Duration::from_secs(365 * 86_400),
        max_warmup: std::time::Duration::ZERO,
        keep_logs: true,
        log_files_limit: Some(plan.log_files),
        steady_state: None,
        ..spec(plan)
    };
    say!(
        "soft recovery: generating {} log files per database, then stopping without a clean shutdown",
        plan.log_files
    );
    let generated = transactional(run, plan, gen_spec, manifest, stop)?;
    let replayed = match generated.complete {
        true => Some(replay(run, plan, manifest, &from, stop)?),
        false => None,
    };
    let ended_at = jiff::Timestamp::now().to_string();
    Ok(finished(first, &generated, replayed.as_ref(), &ended_at))
}

/// The test's summary and its record's end (whose facts are the replay's, or none).
fn finished(first: Summary, generated: &Transacted, replayed: Option<&Replayed>, ended_at: &str) -> Finished {
    let facts = RecoveryFacts::of(generated, replayed.map(|r| &r.detail));
    let end = match replayed {
        Some(r) => End::of(ended_at, r, &facts),
        None => End::of(ended_at, &Facts::default().outcome((), (), ()), &facts),
    };
    let summary = soft_recovery_summary(first, generated, replayed, ended_at);
    Finished { end: Some(end), ..Finished::new(summary) }
}

/// Replays the logs from `from` on, each second into the bundle as it ends, then verifies the
/// databases when the replay completed.
fn replay(
    run: &mut TestRows<'_>,
    plan: &MailboxSetup,
    manifest: &mut Manifest,
    from: &[u32],
    stop: &StopFlag,
) -> Result<Replayed> {
    say!("replaying the logs");
    let line = output::run_line("recovery");
    let TestRows { bundle, sampler, last } = run;
    let (columns, after_ns) = last.as_ref().map_or((None, 0), |(row, end_ns)| (Some(row), *end_ns));
    let (mut logs, mut written) = (0, 0);
    let cache = plan.profile.cache_max;
    let out = mbx::replay(&plan.db_dir, manifest, from, cache, plan.engine, &mut **sampler, stop, &mut |c| {
        let t = &c.interval.data.total;
        (logs, written) = (logs + t.logs, written + t.pages_written);
        line.set_message(format!("replaying the logs: {logs} log files, {written} pages written"));
        // Each second is written when it ends, so a replay killed midway keeps its seconds.
        bundle.recorded(&after_generation(c, after_ns, columns), RECOVERY_STREAM, &c.interval.data.tally());
    });
    line.finish_and_clear();
    let out = out.context("replaying the logs")?;
    let mut facts = ReplayFacts::of(&out.detail);
    let (t, seconds) = (&out.totals.total, &out.detail.seconds);
    say!(
        "replayed {} log files ({} records; {} pages read, {} written) in {:.1} s: {:.3} s per log file",
        t.logs,
        t.records,
        t.pages_read,
        t.pages_written,
        replay_seconds(seconds),
        seconds_per_log(t.logs, seconds).unwrap_or(0.0)
    );
    if plan.verify && out.complete {
        facts.verified = Some(Verified::of(&verify_with_bar(&plan.db_dir, manifest, stop)?));
    }
    Ok(out.with(facts))
}

/// A replay's second as the bundle keeps it: on the record's timeline after the generation's
/// seconds, which ended at `after_ns`; in the series with the generation's `columns` (where
/// it had a row), their cells empty, beside the host's sample over the second.
fn after_generation<'a, T>(c: &Closed<'a, T>, after_ns: u64, columns: Option<&SeriesRow>) -> Closed<'a, T> {
    let i = &c.interval;
    let (start_ns, end_ns) = (i.start_ns + after_ns, i.end_ns + after_ns);
    let (start_s, end_s) = (start_ns as f64 / 1e9, end_ns as f64 / 1e9);
    let interval = Interval { start_ns, end_ns, start_s, end_s, ..*i };
    let mut row = SeriesRow { t_s: end_s, ..c.row.clone() };
    if let Some(columns) = columns {
        row.workload = columns.workload.iter().map(|(column, _)| (*column, None)).collect();
        row.streams = columns
            .streams
            .iter()
            .map(|s| StreamValues {
                stream: s.stream.clone(),
                values: s.values.iter().map(|(column, _)| (*column, None)).collect(),
            })
            .collect();
    }
    Closed { row, interval, streams: c.streams }
}

/// Where each database's replay starts: the first log file of the run that ended dirty.
/// Records are framed from a stream's start, so a stream whose start circular logging has
/// removed cannot be replayed; the error says what to do instead.
fn replay_start(db_dir: &Path, m: &Manifest) -> Result<Vec<u32>> {
    let from: Vec<u32> = m.databases.iter().map(|d| d.log_from.unwrap_or(d.next_generation)).collect();
    for (f, &first) in m.files(db_dir).iter().zip(&from) {
        if f.log_generations().first() != Some(&first) {
            bail!(
                "soft recovery cannot replay these logs: {} no longer holds {}, the first log file of the \
                 run that ended dirty (circular logging removed it); remove the databases (the \
                 directory's mailbox*.edb, log directories and {}) and let the next run create them afresh",
                f.log_dir.display(),
                f.log_path(first).display(),
                layout::MANIFEST
            );
        }
    }
    Ok(from)
}

/// Said before any page count when the last run did not end with a clean shutdown.
pub(super) fn say_dirty_shutdown(db_dir: &Path, m: &Manifest) {
    let next = match replay_start(db_dir, m) {
        Ok(_) => format!(
            "run soft recovery, which replays the logs: `storbench mailbox recover --target {}`; then verify again",
            db_dir.display()
        ),
        Err(e) => e.to_string(),
    };
    say!(
        "the databases in {} were not shut down cleanly (a dirty shutdown: the last run was killed or \
         failed before it wrote its cache and closed its logs). Changes since the last checkpoint are \
         only in the logs, so pages that do not match now are not evidence of storage corruption. \
         To go on: {next}",
        db_dir.display(),
    );
}

/// `mailbox recover`: replays each database's logs from the oldest one kept.
pub(super) fn recover_command(db_dir: &Path, stop: &StopFlag) -> Result<Ending> {
    let _lock = lock_place(db_dir, "target")?;
    let mut m = kept_databases(db_dir)?;
    if m.clean {
        say!("the databases in {} were shut down cleanly: there is nothing to recover", db_dir.display());
        return Ok(Ending::Ok);
    }
    let from = replay_start(db_dir, &m)?;
    let cache = mbx::Preset::parse(&m.preset).map_or(256 << 20, |p| p.profile().cache_max);
    say!("soft recovery: replaying the logs of {} database(s) in {}", m.databases.len(), db_dir.display());
    let engine = storbench_bench::engine::EngineKind::IoUring;
    let out = mbx::replay(db_dir, &mut m, &from, cache, engine, &mut Unsampled, stop, &mut |_| {})
        .context("replaying the logs")?;
    let t = &out.totals.total;
    say!(
        "replayed {} log files ({} records; {} pages written) in {:.1} s",
        t.logs,
        t.records,
        t.pages_written,
        replay_seconds(&out.detail.seconds)
    );
    for c in &out.detail.first {
        say!("  damaged log: {} at offset {}: {}", c.file, c.offset, c.what);
    }
    if stop.is_stopped() {
        return Ok(Ending::Interrupted);
    }
    say!(
        "the databases are shut down cleanly now; check them with `storbench mailbox verify --target {}`",
        db_dir.display()
    );
    Ok(if t.corruptions == 0 { Ending::Ok } else { Ending::CheckFailed })
}

/// The host as `mailbox recover` samples it: not at all (it writes no bundle).
struct Unsampled;

impl Beside for Unsampled {
    fn sample(&mut self) -> storbench_report::SystemSample {
        storbench_report::SystemSample::default()
    }
}
