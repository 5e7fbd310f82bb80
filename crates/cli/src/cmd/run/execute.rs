//! One run of an evaluation: checks before anything runs, preconditioning, then settle, idle
//! power, the workload's own command into `runs/<id>/`, and its figures read back.

use crate::args::{EngineArg, IoArgs, MailboxCommand, OltpCommand};
use crate::cmd::{self, Ending};
use crate::plan::expand::{self, PlannedRun};
use crate::plan::{Configuration, Plan, WorkloadArgs};
use crate::power;
use crate::units::{ByteSize, Seconds};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use storbench_bench::input::{DATA_LIMIT, read_text};
use storbench_bench::monitor::resolve_device;
use storbench_bench::run::StopFlag;
use storbench_report::Summary;
use storbench_report::evaluation::{self as ev, RunRecord, RunStatus};
use storbench_report::render::Series;

/// Every run's options as its command would check them, so that a mistake in the last
/// workload stops the evaluation before the first run, not hours into it.
pub fn check_all(plan: &Plan) -> Result<()> {
    for run in expand::runs(plan).iter().filter(|r| r.repetition == 1) {
        check_place(plan, run)?;
        let checked = match &run.args {
            WorkloadArgs::Io(a) => cmd::io::check(a).map(drop),
            WorkloadArgs::Oltp(a) => cmd::oltp::check_run_args(a).and_then(|()| cmd::oltp::check_loadable(a)),
            WorkloadArgs::Mailbox(a) => cmd::mailbox::check(a),
        };
        let point = run.sweep.as_ref().map(|(k, v)| format!(" at {k} = {v}")).unwrap_or_default();
        checked.with_context(|| {
            format!("in the plan, workload {}{point} on {}", run.workload, config_name(plan, run))
        })?;
    }
    for i in 0..plan.configurations.len() {
        if let Some(args) = precondition_args(plan, i) {
            cmd::io::check(&args)
                .with_context(|| format!("in the plan, preconditioning {}", plan.configurations[i].name))?;
        }
    }
    Ok(())
}

/// What a run needs of its configuration's target that the workload's own checks cannot see.
fn check_place(plan: &Plan, run: &PlannedRun) -> Result<()> {
    let c = &plan.configurations[run.configuration];
    let needs_files = match &run.args {
        WorkloadArgs::Io(_) => false,
        WorkloadArgs::Oltp(_) => c.url.is_empty(),
        WorkloadArgs::Mailbox(_) => true,
    };
    if needs_files && !c.target.is_dir() {
        bail!(
            "in the plan, workload {} needs a filesystem, but configuration {}'s target {} is a \
             device; give it a configuration whose target is a directory on that storage{}",
            run.workload,
            c.name,
            c.target.display(),
            if run.args.kind() == "oltp" { ", or database servers in `url`" } else { "" }
        );
    }
    if let (Some((key, n)), WorkloadArgs::Oltp(_)) = (&run.sweep, &run.args)
        && key == crate::plan::parse::TARGETS
        && n.as_u64().unwrap_or(0) as usize > c.url.len()
    {
        bail!(
            "in the plan, workload {} sweeps targets = {n}, but configuration {} has {} url(s); \
             give it at least {n} database servers in `url`",
            run.workload,
            c.name,
            c.url.len()
        );
    }
    Ok(())
}

fn config_name<'a>(plan: &'a Plan, run: &PlannedRun) -> &'a str {
    &plan.configurations[run.configuration].name
}

/// The record of a run not yet made.
pub fn pending(plan: &Plan, run: &PlannedRun) -> RunRecord {
    RunRecord {
        id: run.id.clone(),
        workload: run.workload.clone(),
        kind: run.args.kind().to_string(),
        configuration: config_name(plan, run).to_string(),
        sweep: run.sweep.clone().map(|(param, value)| ev::SweepPoint { param, value }),
        repetition: run.repetition,
        ..RunRecord::default()
    }
}

/// The preconditioning job of configuration `ci`: sequential 128 KiB writes over the whole of
/// its io target (file or device), `precondition` times; None without passes or an io workload.
pub fn precondition_args(plan: &Plan, ci: usize) -> Option<IoArgs> {
    let passes = plan.method.precondition.filter(|&p| p > 0)?;
    let io = expand::runs(plan).into_iter().find_map(|r| match r.args {
        WorkloadArgs::Io(a) if r.configuration == ci && a.engine != Some(EngineArg::Null) => Some(a),
        _ => None,
    })?;
    let whole = cmd::io::check(&io).ok().and_then(|(_, target)| target.map(|t| t.size));
    let size = whole.unwrap_or_else(|| io.size.map_or(cmd::io::validate::DEFAULT_SIZE, |s| s.0));
    Some(IoArgs {
        rw: Some("write".into()),
        bs: Some("128k".into()),
        iodepth: Some(16),
        workers: Some(1),
        runtime: None,
        ramp: Some(Seconds(Duration::ZERO)),
        io_size: Some(ByteSize(size * u64::from(passes))),
        steady_state: None,
        rate_iops: None,
        rate_bw: None,
        verify: false,
        ..(*io).clone()
    })
}

/// Runs configuration `ci`'s preconditioning job, if the plan asks for one.
pub fn precondition(plan: &Plan, ci: usize, dir: &Path, stop: &StopFlag) -> Result<()> {
    let Some(mut args) = precondition_args(plan, ci) else { return Ok(()) };
    let c = &plan.configurations[ci];
    say!(
        "preconditioning {}: {} pass(es) of sequential 128 KiB writes",
        c.name,
        plan.method.precondition.unwrap_or(0)
    );
    args.out.output_dir = Some(dir.join("precondition").join(&c.name));
    args.out.name = Some(format!("precondition-{}", c.name));
    args.out.quiet = true;
    let ended = cmd::io::run(&args, stop).with_context(|| format!("preconditioning {}", c.name))?;
    if matches!(ended, Ending::CheckFailed) {
        // Its writes failed (said above): the runs after it would measure storage that is
        // neither preconditioned nor sound.
        bail!("preconditioning {} failed: its writes did not all complete", c.name);
    }
    Ok(())
}

/// Settles, measures idle power, runs, and reads the run's figures back.
pub fn one(plan: &Plan, run: &PlannedRun, c: &Configuration, dir: &Path, stop: &StopFlag) -> RunRecord {
    let mut record = pending(plan, run);
    record.started_at = Some(jiff::Timestamp::now().to_string());
    if let Err(e) = prepare(run, stop) {
        record.error = Some(crate::output::reason_worded(&e, &crate::plan::key_for));
        record.status = if stop.is_stopped() { RunStatus::Interrupted } else { RunStatus::Failed };
        return record;
    }
    let device = resolve_device(&c.target).ok().flatten().map(|d| d.name);
    if !matches!(run.args, WorkloadArgs::Oltp(_)) {
        // oltp settles itself, after its reset to the loaded state.
        let max = plan.method.idle_settle_or_default();
        storbench_bench::run::settle(device.as_deref(), max, stop);
    }
    let idle_for = plan.method.idle_power_or_default();
    record.idle_watts = idle_power(idle_for, stop);
    if stop.is_stopped() {
        record.status = RunStatus::Interrupted;
        return record;
    }
    let run_dir = dir.join("runs").join(&run.id);
    // An earlier attempt's bundle (before a resume) is not this run's.
    let launched = std::time::SystemTime::now() - Duration::from_secs(1);
    let ended = std::fs::create_dir_all(&run_dir)
        .with_context(|| format!("creating {}", run_dir.display()))
        .and_then(|()| launch(run, &run_dir, stop));
    record.status = match ended {
        Ok(Ending::Ok) => RunStatus::Done,
        Ok(Ending::CheckFailed) => RunStatus::CheckFailed,
        Ok(Ending::Interrupted | Ending::InterruptedBeforeRun) => RunStatus::Interrupted,
        Err(e) => {
            say!("error: run {} failed: {}", run.id, crate::output::reason_worded(&e, &crate::plan::key_for));
            record.error = Some(crate::output::reason_worded(&e, &crate::plan::key_for));
            RunStatus::Failed
        }
    };
    if let Some(bundle) = newest_bundle(&run_dir, launched) {
        read_back(&mut record, &bundle, dir);
    }
    record
}

/// What a run needs in place before the settle and idle window: the io file created and
/// filled, the oltp database loaded (mailbox databases are created by each run itself).
fn prepare(run: &PlannedRun, stop: &StopFlag) -> Result<()> {
    match &run.args {
        WorkloadArgs::Io(a) => cmd::io::prepare_target(a, stop),
        WorkloadArgs::Oltp(a) => cmd::oltp::ensure_loaded(a, stop),
        WorkloadArgs::Mailbox(_) => Ok(()),
    }
}

/// The workload's own command, writing its bundle under `run_dir`.
fn launch(run: &PlannedRun, run_dir: &Path, stop: &StopFlag) -> Result<Ending> {
    let place = |out: &mut crate::args::OutputArgs| {
        out.output_dir = Some(run_dir.to_path_buf());
        out.name = Some(run.id.clone());
        out.quiet = true;
    };
    match run.args.clone() {
        WorkloadArgs::Io(mut a) => {
            place(&mut a.out);
            cmd::io::run(&a, stop)
        }
        WorkloadArgs::Oltp(mut a) => {
            place(&mut a.out);
            cmd::oltp::run(OltpCommand::Run(a), stop)
        }
        WorkloadArgs::Mailbox(mut a) => {
            place(&mut a.out);
            cmd::mailbox::run(Box::new(MailboxCommand { sub: None, run: *a }), stop)
        }
    }
}

/// Average of the power readings over `window`, one a second; None without a power source.
fn idle_power(window: Duration, stop: &StopFlag) -> Option<f64> {
    power::describe()?;
    let end = Instant::now() + window;
    let mut readings = Vec::new();
    while Instant::now() < end && !stop.is_stopped() {
        std::thread::sleep(Duration::from_secs(1).min(end.saturating_duration_since(Instant::now())));
        readings.extend(power::latest());
    }
    (!readings.is_empty()).then(|| readings.iter().sum::<f64>() / readings.len() as f64)
}

/// The most recent bundle directory the command made in `run_dir` since `since`.
fn newest_bundle(run_dir: &Path, since: std::time::SystemTime) -> Option<PathBuf> {
    let made = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.created().or_else(|_| m.modified())).ok();
    let mut dirs: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(run_dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("summary.json").is_file())
        .filter_map(|p| made(&p).filter(|t| *t >= since).map(|t| (t, p)))
        .collect();
    dirs.sort();
    dirs.pop().map(|(_, p)| p)
}

/// Headline, active power and per-watt figure from the run's bundle.
fn read_back(record: &mut RunRecord, bundle: &Path, root: &Path) {
    record.bundle = Some(bundle.strip_prefix(root).unwrap_or(bundle).display().to_string());
    let summary: Option<Summary> =
        read_text(&bundle.join("summary.json"), DATA_LIMIT).ok().and_then(|t| serde_json::from_str(&t).ok());
    let Some(summary) = summary else { return };
    if let Some(e) = summary.failed_ios()
        && matches!(record.status, RunStatus::Done | RunStatus::CheckFailed)
    {
        // Its figures stand for storage that failed: never a median candidate.
        record.status = RunStatus::Failed;
        record.error = Some(e.to_string());
    }
    if !summary.complete && record.status == RunStatus::Done {
        record.status = RunStatus::Interrupted;
    }
    record.headline = ev::headline(&summary);
    record.warnings =
        summary.warnings.iter().filter(|w| !crate::power::is_no_source_warning(w)).cloned().collect();
    let csv = read_text(&bundle.join("timeseries.csv"), DATA_LIMIT).unwrap_or_default();
    let series = Series::parse(&csv).ok();
    record.active_watts = series.and_then(|t| t.active_watts(&summary));
    record.per_watt = match (&record.headline, record.active_watts) {
        (Some(h), Some(w)) => ev::perf_per_watt(h.value, w),
        _ => None,
    };
}
