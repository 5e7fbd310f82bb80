//! `storbench mailbox`: validate, create or reuse the databases, run the test into a bundle,
//! verify every page and log block, judge, show the result; `mailbox verify` checks on demand.

mod summary;
pub mod validate;

use super::Ending;
use crate::args::{MailboxArgs, MailboxCommand, MailboxSub, MailboxVerifyArgs};
use crate::bundle::{self, Bundle};
use crate::output;
use anyhow::{Context, Result, bail};
use std::path::Path;
use storbench_bench::monitor::{SystemSampler, resolve_device};
use storbench_bench::run::StopFlag;
use storbench_bench::target::free_space;
use storbench_bench::target::lock::lock_place;
use storbench_bench::workload::mailbox::{
    self as mbx, DbFiles, DbState, MailboxSpec, Manifest, TestType, VerifyReport, layout,
};
use storbench_report::columns::{backup as backup_col, mailbox as col};
use storbench_report::{MailboxResults, Phases, Summary, export};
use validate::MailboxPlan;

pub fn run(c: Box<MailboxCommand>, stop: &StopFlag) -> Result<Ending> {
    match c.sub {
        Some(MailboxSub::Verify(v)) => verify_command(&v, stop),
        Some(MailboxSub::Recover(r)) => recover_command(&r.target, stop),
        None => test(&c.run, stop),
    }
}

/// The options and the room they need, checked before anything is written (an evaluation
/// checks every run this way before the first one).
pub fn check(a: &MailboxArgs) -> Result<()> {
    check_space(&validate::validate(a)?)
}

fn test(a: &MailboxArgs, stop: &StopFlag) -> Result<Ending> {
    let plan = validate::validate(a)?;
    let _locks = [&plan.db_dir, &plan.log_dir].map(|d| lock_place(d, "target"));
    let _locks = _locks.into_iter().collect::<Result<Vec<_>, _>>()?;
    if plan.tune {
        return tune(a, plan, stop);
    }
    let (mut manifest, created) = match prepare(&plan, stop) {
        Ok((m, created)) if stop.is_stopped() => {
            // Stopped just as creation finished: what this run made goes, as it would after a run.
            if created && !plan.keep {
                remove_databases(&plan, &m);
            }
            return Ok(Ending::InterruptedBeforeRun);
        }
        Err(_) if stop.is_stopped() => return Ok(Ending::InterruptedBeforeRun),
        other => other?,
    };
    let result = run_and_verify(a, &plan, &mut manifest, stop);
    if created && !plan.keep {
        remove_databases(&plan, &manifest);
    } else {
        say!("databases kept in {} (reused by the next run of the same shape)", plan.db_dir.display());
    }
    let summary = result?;
    show(&summary, &a.out)?;
    let pass =
        summary.complete && matches!(&summary.results, storbench_report::Results::Mailbox(r) if r.pass);
    Ok(if stop.is_stopped() {
        Ending::Interrupted
    } else if pass {
        Ending::Ok
    } else {
        Ending::CheckFailed
    })
}

/// Reuses the databases in the target when they have the shape asked for, else creates them;
/// returns the manifest and whether this run created them. Everything is checked before the
/// first file is written.
fn prepare(plan: &MailboxPlan, stop: &StopFlag) -> Result<(Manifest, bool)> {
    let existing = Manifest::load(&plan.db_dir)?;
    if let Some(m) = existing {
        check_reusable(plan, &m)?;
        say!("reusing {} database(s) in {}", m.databases.len(), plan.db_dir.display());
        return Ok((m, false));
    }
    check_untouched(plan)?;
    check_space(plan)?;
    for dir in [&plan.db_dir, &plan.log_dir] {
        make_dirs(dir)?;
    }
    let manifest = Manifest {
        version: layout::MANIFEST_VERSION,
        preset: plan.preset.name().into(),
        page_size: plan.profile.page_size,
        log_file_size: plan.profile.log_file_size,
        log_dir: plan.log_dir.clone(),
        log_block: log_block(&plan.log_dir),
        seed: plan.seed,
        databases: (1..=plan.databases)
            .map(|id| DbState {
                id,
                initial_pages: plan.pages,
                pages: plan.pages,
                next_generation: 1,
                log_from: None,
            })
            .collect(),
        clean: true,
    };
    let total = plan.db_bytes() * u64::from(plan.databases);
    let bar = output::fill_bar(total, &format!("creating {} database(s)", plan.databases));
    let t0 = std::time::Instant::now();
    let made =
        layout::create_all(&plan.db_dir, &manifest, plan.engine, stop, &mut |done, _| bar.set_position(done));
    bar.finish_and_clear();
    if made.is_err() || stop.is_stopped() {
        remove_databases(plan, &manifest);
    }
    made.context("creating the databases")?;
    let secs = t0.elapsed().as_secs_f64();
    say!(
        "created {} database(s) of {} in {secs:.1} s ({:.0} MB/s), every page with its checksum",
        plan.databases,
        crate::units::human_bytes(plan.db_bytes()),
        total as f64 / secs.max(1e-9) / 1e6
    );
    Ok((manifest, true))
}

/// Log writes go in whole sectors of the log volume.
fn log_block(log_dir: &Path) -> u32 {
    resolve_device(log_dir).ok().flatten().and_then(|d| d.logical_sector_size).unwrap_or(512).max(512)
}

fn check_reusable(plan: &MailboxPlan, m: &Manifest) -> Result<()> {
    let want = (plan.preset.name(), plan.profile.page_size, plan.databases as usize, plan.pages);
    let have = (
        m.preset.as_str(),
        m.page_size,
        m.databases.len(),
        m.databases.first().map_or(0, |d| d.initial_pages),
    );
    if want != have {
        bail!(
            "{} holds {} database(s) of {} pages ({} KiB, preset {}) but this test asks for {} of {} pages \
             ({} KiB, preset {}); give the options they were created with, another --target, or remove the directory's \
             mailbox*.edb, log directories and {}",
            plan.db_dir.display(),
            have.2,
            have.3,
            have.1 / 1024,
            have.0,
            want.2,
            want.3,
            want.1 / 1024,
            want.0,
            layout::MANIFEST
        );
    }
    let same_logs = |a: &Path, b: &Path| {
        a == b || a.canonicalize().ok().zip(b.canonicalize().ok()).is_some_and(|(x, y)| x == y)
    };
    if !same_logs(&m.log_dir, &plan.log_dir) {
        bail!(
            "the databases in {} keep their logs in {}, not {}; give --log-target {} (or leave it out if \
             that is the target), or remove the databases to create them with logs elsewhere",
            plan.db_dir.display(),
            m.log_dir.display(),
            plan.log_dir.display(),
            m.log_dir.display()
        );
    }
    if !m.clean {
        bail!(
            "the databases in {} were not shut down cleanly (an interrupted or failed run); check them with \
             `storbench mailbox verify --target {}` and remove them to start afresh",
            plan.db_dir.display(),
            plan.db_dir.display()
        );
    }
    Ok(())
}

/// Without a manifest, none of the files the test would create may exist: they are not ours.
fn check_untouched(plan: &MailboxPlan) -> Result<()> {
    for id in 1..=plan.databases {
        let f = DbFiles::new(&plan.db_dir, &plan.log_dir, id);
        for p in [&f.db, &f.log_dir] {
            // symlink_metadata: a dangling link is something too, and not ours.
            if p.symlink_metadata().is_ok() {
                bail!(
                    "{} exists but {} has no {}: storbench did not create it and will not overwrite it; \
                     choose another --target or --log-target",
                    p.display(),
                    plan.db_dir.display(),
                    layout::MANIFEST
                );
            }
        }
    }
    Ok(())
}

fn check_space(plan: &MailboxPlan) -> Result<()> {
    let (data, logs) = plan.space_needed();
    let db_at = validate::existing_ancestor(&plan.db_dir);
    let log_at = validate::existing_ancestor(&plan.log_dir);
    let same_fs = fs_id(db_at) == fs_id(log_at);
    let free_db = free_space(db_at).unwrap_or(u64::MAX);
    let need_db = if same_fs { data.saturating_add(logs) } else { data };
    let h = crate::units::human_bytes;
    if need_db > free_db {
        bail!(
            "{} mailboxes of {} in {} database(s) need {} with room to grow{}, but {} has {} free; \
             give fewer --mailboxes, a smaller --mailbox-size, or another --target",
            plan.mailboxes,
            h(plan.mailbox_bytes),
            plan.databases,
            h(need_db),
            if same_fs { " and logs" } else { "" },
            db_at.display(),
            h(free_db)
        );
    }
    let free_log = free_space(log_at).unwrap_or(u64::MAX);
    if !same_fs && logs > free_log {
        bail!(
            "the logs need {} but {} has {} free; choose another --log-target",
            h(logs),
            log_at.display(),
            h(free_log)
        );
    }
    Ok(())
}

fn fs_id(p: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| m.dev())
}

/// Removes what a test created: database files, log directories' log files, the manifest.
/// Directories this process made for databases and logs: only these are removed with the
/// databases (a directory the user made stays, even when empty).
static MADE_DIRS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// `create_dir_all`, remembering each directory it had to make.
fn make_dirs(dir: &Path) -> Result<()> {
    let missing: Vec<&Path> =
        dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut made = MADE_DIRS.lock().unwrap_or_else(|p| p.into_inner());
    made.extend(missing.into_iter().map(Path::to_path_buf));
    Ok(())
}

/// Removes the directories `make_dirs` made, deepest first, where they are empty.
fn remove_made_dirs() {
    let mut made = MADE_DIRS.lock().unwrap_or_else(|p| p.into_inner());
    made.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    made.retain(|d| std::fs::remove_dir(d).is_err() && d.exists());
}

fn remove_databases(plan: &MailboxPlan, m: &Manifest) {
    for f in m.files(&plan.db_dir) {
        let _ = std::fs::remove_file(&f.db);
        for g in f.log_generations() {
            let _ = std::fs::remove_file(f.log_path(g));
        }
        let _ = std::fs::remove_file(f.tmp_log_path());
        let _ = std::fs::remove_dir(&f.log_dir);
    }
    let _ = std::fs::remove_file(Manifest::path(&plan.db_dir));
    remove_made_dirs();
}

fn spec(plan: &MailboxPlan) -> MailboxSpec {
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
    }
}

/// `--tune`: trials (short, no verification, each warmed until latency is steady) move the
/// thread count (and, when one thread fails, the mailboxes); then three full runs of the best
/// setting, of which the median by transactional IOPS is reported.
fn tune(a: &MailboxArgs, plan: MailboxPlan, stop: &StopFlag) -> Result<Ending> {
    if !matches!(plan.test, TestType::Performance | TestType::Stress) {
        bail!("--tune finds the thread count of a performance or stress test, not of --test {:?}", plan.test);
    }
    let mut tuner = mbx::Tuner::new(plan.threads, plan.mailboxes, 4096);
    let mut current: Option<(MailboxPlan, Manifest, bool)> = None;
    let mut finals: Vec<Summary> = Vec::new();
    let mut trials = Vec::new();
    loop {
        let (threads, mailboxes, full, suffix) = match tuner.step() {
            mbx::TuneStep::Trial { threads, mailboxes } => {
                (threads, mailboxes, false, format!("-trial-{threads}t-{mailboxes}mbx"))
            }
            mbx::TuneStep::Repeat { threads, mailboxes, n } => {
                (threads, mailboxes, true, format!("-tuned-{threads}t-run{n}"))
            }
            mbx::TuneStep::Done { .. } => break,
            mbx::TuneStep::Impossible => {
                cleanup(current);
                bail!(
                    "even one thread fails the thresholds with {} mailboxes: this storage cannot hold the profile",
                    tuner.history.last().map_or(0, |h| h.1)
                );
            }
        };
        if current.as_ref().is_none_or(|(p, _, _)| p.mailboxes != mailboxes) {
            cleanup(current.take());
            let p = resized(&plan, mailboxes);
            let (m, created) = prepare(&p, stop)?;
            current = Some((p, m, created));
        }
        let (base, manifest, _) = current.as_mut().expect("prepared above");
        let mut p = base.clone();
        p.threads = threads;
        p.duration = if full { plan.duration } else { plan.trial_duration };
        p.verify = full && plan.verify;
        let mut s = spec(&p);
        s.steady_latency = !full;
        let mut run = Run::open(a, &p, &suffix)?;
        let (r, phases, cpu, complete, warnings) = transactional(&mut run, &p, s, manifest, stop)?;
        let summary = run.finish(r, phases, cpu, complete, warnings)?;
        let storbench_report::Results::Mailbox(r) = &summary.results else {
            unreachable!("a mailbox summary")
        };
        say!(
            "{}: {threads} threads, {mailboxes} mailboxes: {} ({:.0} transactional IOPS)",
            if full { "run" } else { "trial" },
            if r.pass { "pass" } else { "fail" },
            r.transactional_iops
        );
        if stop.is_stopped() {
            cleanup(current);
            return Ok(Ending::Interrupted);
        }
        trials.push((threads, mailboxes, r.pass, r.transactional_iops, full));
        tuner.record(r.pass);
        if full {
            finals.push(summary);
        }
    }
    let keep = plan.keep;
    if !keep {
        cleanup(current);
    }
    let iops: Vec<f64> = finals
        .iter()
        .map(|s| match &s.results {
            storbench_report::Results::Mailbox(r) => r.transactional_iops,
            _ => 0.0,
        })
        .collect();
    let median = mbx::median_index(&iops).map(|i| finals.swap_remove(i)).context("no final run")?;
    say!("{}", output::tune_table(&trials));
    say!("reported: the median of the three runs at the best setting ({})", median.name);
    show(&median, &a.out)?;
    let pass = matches!(&median.results, storbench_report::Results::Mailbox(r) if r.pass);
    Ok(if pass { Ending::Ok } else { Ending::CheckFailed })
}

/// `plan` with `mailboxes` mailboxes (database pages follow).
fn resized(plan: &MailboxPlan, mailboxes: u64) -> MailboxPlan {
    let mut p = plan.clone();
    p.mailboxes = mailboxes;
    p.pages = (mailboxes * p.mailbox_bytes / u64::from(p.databases) / u64::from(p.profile.page_size)).max(64);
    p.target_iops = plan.target_iops.map(|t| t / plan.mailboxes as f64 * mailboxes as f64);
    p
}

/// Removes databases a tuning step created.
fn cleanup(current: Option<(MailboxPlan, Manifest, bool)>) {
    if let Some((p, m, true)) = current {
        remove_databases(&p, &m);
    }
}

/// A test's bundle, open from the start of the test.
struct Run {
    dir: std::path::PathBuf,
    bundle: Bundle,
    first: Summary,
    sampler: SystemSampler,
    last_t: f64,
}

impl Run {
    fn open(a: &MailboxArgs, plan: &MailboxPlan, suffix: &str) -> Result<Run> {
        let test = summary::base_results(plan).test;
        let name =
            a.out.name.clone().unwrap_or_else(|| format!("mailbox-{}-{test}{suffix}", plan.preset.name()));
        let root = crate::cmd::results_root(a.out.output_dir.as_deref())?;
        let dir = bundle::new_dir(&root, &jiff::Zoned::now().strftime("%Y%m%d-%H%M%S").to_string(), &name)?;
        let device = resolve_device(&plan.db_dir).ok().flatten();
        let now = jiff::Timestamp::now();
        let first = summary::started(plan, &name, device.clone(), &now.to_string());
        let targets = [plan.db_dir.as_path(), plan.log_dir.as_path()];
        let mut bundle = Bundle::create(dir.clone(), now.as_millisecond() as f64 / 1e3, &targets)?;
        bundle.write_summary(&first)?;
        let sampler = crate::power::system_sampler(device.as_ref().map(|d| d.name.as_str()));
        Ok(Run { dir, bundle, first, sampler, last_t: 0.0 })
    }

    fn row(
        &mut self,
        row: &storbench_report::SeriesRow,
        hists: &[(&str, &storbench_bench::metrics::LatencyHistogram)],
    ) {
        self.bundle.interval(row, self.last_t, hists);
        self.last_t = row.t_s;
    }

    fn finish(
        mut self,
        r: MailboxResults,
        phases: Phases,
        cpu: storbench_report::CpuUsage,
        complete: bool,
        warnings: Vec<String>,
    ) -> Result<Summary> {
        let mut s = summary::finish(
            self.first.clone(),
            r,
            phases,
            cpu,
            complete,
            &jiff::Timestamp::now().to_string(),
        );
        s.warnings.extend(warnings);
        s.warnings.extend(crate::power::warning());
        self.bundle.write_summary(&s)?;
        output::say_warnings(&s.warnings);
        say!("bundle: {}", self.dir.display());
        Ok(s)
    }
}

fn run_and_verify(
    a: &MailboxArgs,
    plan: &MailboxPlan,
    manifest: &mut Manifest,
    stop: &StopFlag,
) -> Result<Summary> {
    run_named(a, plan, manifest, stop, "")
}

fn run_named(
    a: &MailboxArgs,
    plan: &MailboxPlan,
    manifest: &mut Manifest,
    stop: &StopFlag,
    suffix: &str,
) -> Result<Summary> {
    let mut run = Run::open(a, plan, suffix)?;
    match plan.test {
        TestType::Backup => backup(run, plan, manifest, stop),
        TestType::SoftRecovery => soft_recovery(run, plan, manifest, stop),
        _ => {
            let (r, phases, cpu, complete, warnings) =
                transactional(&mut run, plan, spec(plan), manifest, stop)?;
            run.finish(r, phases, cpu, complete, warnings)
        }
    }
}

type Figures = (MailboxResults, Phases, storbench_report::CpuUsage, bool, Vec<String>);

/// The transactional workload (performance, stress, or soft recovery's log generation),
/// then the verification.
fn transactional(
    run: &mut Run,
    plan: &MailboxPlan,
    spec: MailboxSpec,
    manifest: &mut Manifest,
    stop: &StopFlag,
) -> Result<Figures> {
    let line = output::run_line("mailbox");
    let Run { bundle, sampler, last_t, .. } = run;
    let outcome = mbx::run(&spec, &plan.db_dir, manifest, sampler, stop, &mut |iv| {
        line.set_message(progress(iv, plan));
        // Each row is written when its second ends, so that a killed run keeps its rows.
        let m = &iv.interval.data.total;
        let hists = [
            ("db_read", &m.db_reads.latency),
            ("db_write", &m.db_writes.latency),
            ("log_write", &m.log_writes.latency),
        ];
        bundle.interval(&iv.row, *last_t, &hists);
        *last_t = iv.row.t_s;
    });
    line.finish_and_clear();
    let outcome = outcome.context("running the mailbox test")?;
    let t = &outcome.totals.total;
    run.bundle.totals(
        outcome.warmup_s,
        outcome.measured_s,
        &[
            ("db_read", &t.db_reads.latency),
            ("db_write", &t.db_writes.latency),
            ("log_write", &t.log_writes.latency),
        ],
    );
    let mut r = summary::base_results(plan);
    summary::transactional(&mut r, &outcome, manifest, plan.profile.page_size);
    // An interrupted run is not verified: a verification cut short would report corruption
    // (checksum_ok false) where nothing was checked.
    if plan.verify && outcome.failures.is_empty() && spec.log_files_limit.is_none() && !stop.is_stopped() {
        let v = verify_with_bar(&plan.db_dir, manifest, stop)?;
        summary::verified(&mut r, &v);
    }
    let phases = Phases { ramp_s: outcome.warmup_s, measured_s: outcome.measured_s };
    let mut warnings = Vec::new();
    if !outcome.detail.warmed && !spec.max_warmup.is_zero() {
        warnings.push(format!(
            "the caches did not reach 90 % within the warm-up limit ({:.0} s); the measured phase may include cache warm-up",
            plan.max_warmup.as_secs_f64()
        ));
    }
    warnings.extend(outcome.failures.iter().cloned());
    Ok((r, phases, summary::cpu(&outcome), outcome.complete, warnings))
}

/// Reads every database sequentially, all at once; MB/s per database.
fn backup(mut run: Run, plan: &MailboxPlan, manifest: &Manifest, stop: &StopFlag) -> Result<Summary> {
    let total = plan.db_bytes() * manifest.databases.len() as u64;
    let bar = output::fill_bar(total, "backup: reading the databases");
    let t0 = std::time::Instant::now();
    let mut prev = vec![0u64; manifest.databases.len()];
    let mut rows = Vec::new();
    let sampler = &mut run.sampler;
    let out = mbx::backup(&plan.db_dir, manifest, plan.engine, stop, &mut |done| {
        bar.set_position(done.iter().sum());
        let mut cols = vec![(
            backup_col::MB_PER_SEC,
            Some((done.iter().sum::<u64>() - prev.iter().sum::<u64>()) as f64 / 1e6),
        )];
        cols.extend(
            done.iter()
                .zip(&prev)
                .take(8)
                .enumerate()
                .map(|(i, (d, p))| (backup_col::DB_MB_PER_SEC[i], Some((d - p) as f64 / 1e6))),
        );
        prev = done.to_vec();
        rows.push(storbench_report::SeriesRow {
            t_s: t0.elapsed().as_secs_f64().round(),
            phase: storbench_report::series::Phase::Measure,
            workload: cols,
            system: sampler.sample(),
        });
    });
    bar.finish_and_clear();
    for row in &rows {
        run.row(row, &[]);
    }
    let out = out.context("reading the databases")?;
    let mut r = summary::base_results(plan);
    r.backup_mb_per_sec = out.mb_per_sec();
    r.backup_total_mb_per_sec = Some(out.total_mb_per_sec());
    r.checksum_ok = Some(out.corruptions == 0 && out.complete);
    r.pages_verified = out.pages_checked;
    r.pass = out.corruptions == 0 && out.complete;
    summary::corrupt(&mut r, &out.first);
    say!(
        "backup read {} pages in {:.1} s: {:.1} MB/s in all",
        out.pages_checked,
        out.elapsed_s,
        out.total_mb_per_sec()
    );
    let phases = Phases { ramp_s: 0.0, measured_s: out.elapsed_s };
    run.finish(r, phases, Default::default(), out.complete, Vec::new())
}

/// Fills --log-files log files per database, stops without writing the cache (a crash), then
/// replays the logs and verifies the databases.
fn soft_recovery(
    mut run: Run,
    plan: &MailboxPlan,
    manifest: &mut Manifest,
    stop: &StopFlag,
) -> Result<Summary> {
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
    let (mut r, _, cpu, complete, mut warnings) = transactional(&mut run, plan, gen_spec, manifest, stop)?;
    if !complete {
        r.pass = false;
        return run.finish(r, Phases::default(), cpu, false, warnings);
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
        summary::verified(&mut r, &v);
    }
    if out.logs_replayed == 0 {
        warnings.push("no log file was replayed".into());
        r.pass = false;
    }
    let phases = Phases { ramp_s: 0.0, measured_s: out.seconds };
    run.finish(r, phases, cpu, out.complete, warnings)
}

/// The status line: phase, rates, latencies.
fn progress(iv: &mbx::MailboxInterval, plan: &MailboxPlan) -> String {
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

fn verify_with_bar(db_dir: &Path, manifest: &Manifest, stop: &StopFlag) -> Result<VerifyReport> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
    let bar = output::fill_bar(0, "verifying checksums");
    let v = mbx::verify(db_dir, manifest, threads, stop, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let v = v.context("verifying the databases")?;
    // After a dirty shutdown, pages that only the logs hold are expected not to match: they
    // say nothing about the storage until soft recovery has replayed the logs.
    let (bad, label) =
        if manifest.clean { ("corrupt", "corrupt") } else { ("not matching yet", "not matching") };
    say!(
        "verified {} pages and {} log blocks in {:.1} s: {}",
        v.pages_checked,
        v.log_blocks_checked,
        v.seconds,
        if v.ok() { "all checksums match".to_string() } else { format!("{} {bad}", v.corruptions) }
    );
    for c in &v.first {
        say!("  {label}: {} at offset {}: {}", c.file, c.offset, c.what);
    }
    Ok(v)
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
fn say_dirty_shutdown(db_dir: &Path, m: &Manifest) {
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

/// The manifest of the databases kept in `db_dir`; an error when there is none.
fn kept_databases(db_dir: &Path) -> Result<Manifest> {
    Manifest::load(db_dir)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{} holds no storbench mailbox databases (no {}); give the --target of a run made with --keep",
            db_dir.display(),
            layout::MANIFEST
        )
    })
}

/// `mailbox recover`: replays each database's logs from the oldest one kept.
fn recover_command(db_dir: &Path, stop: &StopFlag) -> Result<Ending> {
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

fn verify_command(a: &MailboxVerifyArgs, stop: &StopFlag) -> Result<Ending> {
    // A verify beside a running test would read pages mid-write and call them corrupt.
    let _lock = lock_place(&a.target, "target")?;
    let m = kept_databases(&a.target)?;
    if !m.clean {
        say_dirty_shutdown(&a.target, &m);
    }
    let v = match a.threads {
        Some(0) => bail!("--threads 0: at least one thread reads"),
        Some(t) => mbx::verify(&a.target, &m, t, stop, &mut |_, _| {}).context("verifying the databases")?,
        None => verify_with_bar(&a.target, &m, stop)?,
    };
    if a.json {
        let json = serde_json::json!({
            "ok": v.ok() && m.clean, "clean_shutdown": m.clean, "complete": v.complete, "pages_checked": v.pages_checked,
            "log_blocks_checked": v.log_blocks_checked, "log_files": v.log_files, "bytes": v.bytes,
            "corruptions": v.corruptions, "seconds": v.seconds,
            "first": v.first.iter().map(|c| serde_json::json!({"file": c.file, "offset": c.offset, "what": c.what})).collect::<Vec<_>>(),
        });
        tell!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(if stop.is_stopped() {
        Ending::Interrupted
    } else if v.ok() && m.clean {
        Ending::Ok
    } else {
        Ending::CheckFailed
    })
}

fn show(summary: &Summary, out: &crate::args::OutputArgs) -> Result<()> {
    output::print_result(out, || {
        if out.json { export::summary_json(summary) } else { output::mailbox_table(summary) + "\n" }
    })
}
