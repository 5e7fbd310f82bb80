//! Soft recovery: the test (log files generated, a crash, the logs replayed and timed) and
//! `mailbox recover`, which replays the logs of databases a run left after a dirty shutdown.

use super::Ending;
use super::summary;
use super::test::{Figures, TestRows, figures, spec, transactional};
use super::validate::MailboxPlan;
use super::verify::{kept_databases, verify_with_bar};
use anyhow::{Context, Result, bail};
use std::path::Path;
use storbench_bench::run::StopFlag;
use storbench_bench::target::lock::lock_place;
use storbench_bench::workload::mailbox::{self as mbx, MailboxSpec, Manifest, layout};
use storbench_report::Phases;

/// Fills --log-files log files per database, stops without writing the cache (a crash), then
/// replays the logs and verifies the databases.
pub(super) fn soft_recovery(
    run: &mut TestRows<'_>,
    plan: &MailboxPlan,
    manifest: &mut Manifest,
    stop: &StopFlag,
) -> Result<Figures> {
    let from: Vec<u32> = manifest.databases.iter().map(|d| d.next_generation).collect();
    let gen_spec = MailboxSpec {
        duration: std::time::Duration::from_secs(365 * 86_400),
        max_warmup: std::time::Duration::ZERO,
        keep_logs: true,
        log_files_limit: Some(plan.log_files),
        ..spec(plan)
    };
    say!(
        "soft recovery: generating {} log files per database, then stopping without a clean shutdown",
        plan.log_files
    );
    let generated = transactional(run, plan, gen_spec, manifest, stop)?;
    let (mut r, _, cpu, complete, mut warnings) = figures(plan, &generated);
    if !complete {
        r.pass = false;
        return Ok((r, Phases::default(), cpu, false, warnings));
    }
    say!("replaying the logs");
    let out = mbx::replay(&plan.db_dir, manifest, &from, plan.profile.cache_max, plan.engine, stop)
        .context("replaying the logs")?;
    // The generation phase is not judged: only the replay and the databases after it count.
    r.checks.clear();
    r.logs_replayed = Some(out.logs_replayed);
    r.seconds_per_log = out.seconds_per_log(manifest.databases.len());
    summary::corrupt(&mut r, &out.first);
    say!(
        "replayed {} log files ({} records; {} pages read, {} written) in {:.1} s: {:.3} s per log file",
        out.logs_replayed,
        out.records,
        out.pages_read,
        out.pages_written,
        out.seconds,
        r.seconds_per_log.unwrap_or(0.0)
    );
    r.pass = out.corruptions == 0 && out.complete;
    if plan.verify && out.complete {
        let v = verify_with_bar(&plan.db_dir, manifest, stop)?;
        storbench_bench::run::record::summary::mailbox::verified(
            &mut r,
            &storbench_bench::run::record::summary::mailbox::Verified::of(&v),
        );
    }
    if out.logs_replayed == 0 {
        warnings.push("no log file was replayed".into());
        r.pass = false;
    }
    let phases = Phases { ramp_s: 0.0, measured_s: out.seconds };
    Ok((r, phases, cpu, out.complete, warnings))
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
    let out = mbx::replay(db_dir, &mut m, &from, cache, engine, stop).context("replaying the logs")?;
    say!(
        "replayed {} log files ({} records; {} pages written) in {:.1} s",
        out.logs_replayed,
        out.records,
        out.pages_written,
        out.seconds
    );
    for c in &out.first {
        say!("  damaged log: {} at offset {}: {}", c.file, c.offset, c.what);
    }
    if stop.is_stopped() {
        return Ok(Ending::Interrupted);
    }
    say!(
        "the databases are shut down cleanly now; check them with `storbench mailbox verify --target {}`",
        db_dir.display()
    );
    Ok(if out.corruptions == 0 { Ending::Ok } else { Ending::CheckFailed })
}
