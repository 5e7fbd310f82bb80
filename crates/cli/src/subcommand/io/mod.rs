//! `storbench io`: validate, prepare the target, run each job into its bundle, show results.
//! A profile set shows a line per job with its headline; each job's own output is in its
//! bundle's output.log (and on the terminal too with --verbose).

pub mod args;
pub mod entry;
mod search;
pub mod table;
pub mod validate;

use crate::measure::{self, BundleDir, Finished, Measured, Ran, Recording, SetJob, Start};
use crate::output;
use crate::subcommand::io::args::IoJob;
use anyhow::{Context, Result, bail};
use std::path::Path;
use storbench_bench::monitor::resolve_device;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::target::{self, CheckedTarget, Target, lock::Lock};
use storbench_bench::workload::io::bundle::{self as io_bundle, IoPlace};
use storbench_bench::workload::io::summary::IoFacts;
use storbench_bench::workload::io::{IoInterval, IoOutcome, IoSpec};
use storbench_report::columns::io as col;
use storbench_report::{DatabaseInfo, DeviceInfo, Results, Summary, export};
use validate::{Job, Validated};

pub fn run(args: &IoJob, stop: &StopFlag) -> Result<Ending> {
    let Some(ready) = ready(args, stop)? else { return Ok(Ending::InterruptedBeforeRun) };
    let summaries = match &ready.v.profile {
        Some(set) => run_set(set, args, &ready, stop)?,
        None => vec![measure_one(args, &ready, None, stop)?.summary],
    };
    show(args, &ready.v, &summaries)?;
    Ok(ending(&summaries, stop))
}

/// One job (the options name one, not a profile set) into the bundle directory `given`, or a
/// new one under --output-dir: its ending, summary and bundle. `storbench run` calls this.
pub fn measure(args: &IoJob, given: Option<&Path>, stop: &StopFlag) -> Result<Ran> {
    let Some(ready) = ready(args, stop)? else {
        return Ok(Ran { ending: Ending::InterruptedBeforeRun, measured: None });
    };
    let m = measure_one(args, &ready, given, stop)?;
    Ok(Ran { ending: ending(std::slice::from_ref(&m.summary), stop), measured: Some(m) })
}

/// The jobs ready to run: checked, their target locked, created and filled where needed.
struct Ready {
    v: Validated,
    _lock: Option<Lock>,
    target: Option<Target>,
    device: Option<DeviceInfo>,
}

/// None when interrupted while preparing the target: nothing was measured.
fn ready(args: &IoJob, stop: &StopFlag) -> Result<Option<Ready>> {
    let (v, plan) = check(args)?;
    let lock = plan.as_ref().map(CheckedTarget::lock).transpose()?;
    let target = match plan.as_ref().map(|p| prepare(p, v.jobs[0].spec.seed, stop)).transpose() {
        // A fill cut short by Ctrl-C removed its partial file; nothing was measured yet.
        Err(_) | Ok(_) if stop.is_stopped() => return Ok(None),
        other => other?,
    };
    let device = target.as_ref().and_then(|t| resolve_device(&t.path).ok().flatten());
    Ok(Some(Ready { v, _lock: lock, target, device }))
}

fn measure_one(args: &IoJob, r: &Ready, given: Option<&Path>, stop: &StopFlag) -> Result<Measured> {
    let [job] = r.v.jobs.as_slice() else {
        bail!("a profile set runs with `storbench io --profile`; a plan gives each of its jobs a workload")
    };
    let dir = BundleDir::choose(given, &args.out, &job.spec.name)?;
    let label = format!("[1/1] {}", job.title.unwrap_or(&job.spec.name));
    measure_job(job, r, &dir, &label, args, stop)
}

/// The options, checked against the target as it is (nothing is written).
pub fn check(args: &IoJob) -> Result<(Validated, Option<CheckedTarget>)> {
    let v = validate::validate(args)?;
    crate::preflight::results_root(args.out.output_dir.as_deref())?;
    let plan = v.target.as_ref().map(target::plan).transpose()?;
    for job in &v.jobs {
        let (size, direct, align) =
            plan.as_ref().map_or((job.spec.region.end(), false, 1), |p| (p.size, p.direct, p.direct_align));
        storbench_bench::workload::io::validate::check_against_target(
            &job.spec,
            size,
            args.options.size.is_some(),
            direct,
            align,
        )
        .map_err(anyhow::Error::msg)?;
    }
    // The streams' files and programs too, before the target is made.
    let place = storbench_bench::background::Place {
        dir: plan.as_ref().and_then(|p| p.path.parent()),
        target: plan.as_ref().map(|p| p.path.as_path()),
        bundle: None,
        null: plan.is_none(),
        wait: args.out.background_wait,
        say: &crate::console::say_line,
    };
    storbench_bench::background::check(&args.out.streams(), place)?;
    Ok((v, plan))
}

/// Creates and fills the target file if it is missing, without running a job: an evaluation
/// does this before its idle window, so the fill's writes are not in the run's idle power.
pub fn prepare_target(args: &IoJob, stop: &StopFlag) -> Result<()> {
    let (v, plan) = check(args)?;
    let _lock = plan.as_ref().map(CheckedTarget::lock).transpose()?;
    plan.map(|p| prepare(&p, v.jobs[0].spec.seed, stop)).transpose().map(drop)
}

/// The target as `plan` says, created and filled (with data from `seed`) where needed, with
/// a bar while it fills and a line once it was made: io's and replay-trace's.
pub fn prepare(plan: &CheckedTarget, seed: u64, stop: &StopFlag) -> Result<Target> {
    if plan.action == target::Action::RefillPartial {
        say!(
            "{} was left partly filled by a storbench run that did not finish; filling it again before measuring",
            plan.path.display()
        );
    }
    let bar = output::fill_bar(plan.size, &format!("filling {}", plan.path.display()));
    let target = target::prepare(plan, seed, &mut |done, _| bar.set_position(done), stop);
    bar.finish_and_clear();
    let target = target.with_context(|| format!("preparing {}", plan.path.display()))?;
    if target.created {
        say!(
            "created {} ({}) with incompressible data",
            target.path.display(),
            storbench_bench::units::human_bytes(target.size)
        );
    }
    Ok(target)
}

/// A profile set: a directory `<time>-<set>` with a numbered bundle per job, and a line per
/// job on the terminal.
fn run_set(set: &str, args: &IoJob, r: &Ready, stop: &StopFlag) -> Result<Vec<Summary>> {
    let jobs: Vec<(SetJob, &Job)> =
        r.v.jobs
            .iter()
            .map(|j| {
                (SetJob { name: j.spec.name.clone(), title: j.title.unwrap_or(&j.spec.name).to_string() }, j)
            })
            .collect();
    measure::run_set(&args.out, set, &jobs, args.cli.verbose, stop, |job, dir, label| {
        measure_job(job, r, &dir, label, args, stop)
    })
}

/// One job into its bundle at `dir`: where it runs and its started summary, then `record_job`.
fn measure_job(
    job: &Job,
    r: &Ready,
    dir: &BundleDir,
    label: &str,
    args: &IoJob,
    stop: &StopFlag,
) -> Result<Measured> {
    let target = r.target.as_ref();
    let mut spec = job.spec.clone();
    if let Some(t) = target {
        // From --offset to the target's end (the target holds the part before it too).
        let offset = spec.region.start;
        spec.region.len = t.size - offset;
        if t.is_device {
            // The shards of one run on one device each have a slice of their own.
            let (start, len) = crate::shard::device_slice(t.size - offset, u64::from(spec.block_sizes.max()));
            spec.region = storbench_bench::workload::io::Region { start: offset + start, len };
        }
    }
    let place = IoPlace {
        path: target.map_or_else(|| "(null engine)".into(), |t| t.path.display().to_string()),
        kind: match target {
            None => "none",
            Some(t) if t.is_device => "device",
            Some(_) => "file",
        },
        size: spec.region.len,
        direct: target.is_some_and(|t| t.direct),
        device: r.device.clone(),
    };
    let at = jiff::Timestamp::now();
    let start = Start {
        run: storbench_bench::run::measure::Start {
            at,
            summary: io_bundle::started(&spec, &place, args.options.continue_on_error, &at.to_string()),
            targets: target.map(|t| t.path.as_path()).into_iter().collect(),
            database: DatabaseInfo::default(),
            device: r.device.as_ref().map(|d| d.name.as_str()),
        },
        table: crate::subcommand::io::table::job_table,
        background: &args.out.streams(),
        background_dir: target.and_then(|t| t.path.parent()),
        background_wait: args.out.background_wait,
    };
    measure::measure(dir, start, stop, |rec, first| {
        record_job(rec, first, &spec, target.map(|t| &t.file), label, stop, |_, _, _| {})
    })
}

/// Runs the job (the library's `io::bundle::record`) with its progress on the run's line.
pub fn record_job(
    rec: &mut Recording,
    first: Summary,
    spec: &IoSpec,
    file: Option<&std::fs::File>,
    label: &str,
    stop: &StopFlag,
    more: impl FnOnce(&Recording, &IoOutcome, &mut IoFacts),
) -> Result<Finished> {
    let bar = output::run_line(label);
    let progress =
        &mut |rep: &IoInterval| bar.set_message(output::with_streams(progress_text(rep), &rep.row));
    let finished = io_bundle::record(rec, first, spec, file, stop, progress, more);
    bar.finish_and_clear();
    finished.context("running the job")
}

fn progress_text(rep: &IoInterval) -> String {
    let value = |c| rep.row.value(c);
    let iops = value(col::READ_IOPS).unwrap_or(0.0) + value(col::WRITE_IOPS).unwrap_or(0.0);
    let mbs = (value(col::READ_BYTES_PER_SEC).unwrap_or(0.0)
        + value(col::WRITE_BYTES_PER_SEC).unwrap_or(0.0))
        / 1e6;
    let p99 = value(col::READ_LAT_P99_US).into_iter().chain(value(col::WRITE_LAT_P99_US)).fold(0.0, f64::max);
    let failed =
        value(col::ERRORS).filter(|n| *n > 0.0).map(|n| format!("  {n:.0} I/Os FAILED")).unwrap_or_default();
    format!(
        "{:>6.0}s {:<7} {} IOPS  {:.1} MB/s  p99 {}{failed}",
        rep.row.t_s,
        rep.row.phase.as_str(),
        output::si(iops),
        mbs,
        output::latency(p99 * 1e3)
    )
}

fn show(args: &IoJob, v: &Validated, summaries: &[Summary]) -> Result<()> {
    output::print_result(|| match (args.out.json, &v.profile) {
        (true, Some(_)) => export::profiles_json(summaries),
        (true, None) => summaries.first().map(export::summary_json).unwrap_or_default(),
        (false, Some(_)) => {
            let rows: Vec<(&str, &Summary)> =
                v.jobs.iter().zip(summaries).map(|(j, s)| (j.title.unwrap_or(&j.spec.name), s)).collect();
            crate::subcommand::io::table::profile_table(&rows) + "\n"
        }
        (false, None) => {
            summaries.first().map(|s| crate::subcommand::io::table::job_table(s) + "\n").unwrap_or_default()
        }
    })
}

/// Exit 1 when a job's status is not done (a block did not verify, an I/O failed without
/// --continue-on-error, a worker failed), 130 when interrupted.
fn ending(summaries: &[Summary], stop: &StopFlag) -> Ending {
    let failed: Vec<String> =
        summaries.iter().filter_map(|s| s.failed_ios().map(|e| format!("{}: {e}", s.name))).collect();
    for f in &failed {
        say!(
            "error: {f}. The storage is failing or full; to keep such a run as a measurement \
             with its error rate, give --continue-on-error"
        );
    }
    let mismatches: u64 = summaries
        .iter()
        .map(|s| match &s.results {
            Results::Io(r) => r.verify.mismatches,
            _ => 0,
        })
        .sum();
    if mismatches > 0 {
        say!(
            "verify: {mismatches} block(s) did not read back as written; see results.verify in summary.json"
        );
    }
    if summaries.iter().any(|s| matches!(Ending::of(s, stop), Ending::CheckFailed)) {
        Ending::CheckFailed
    } else if stop.is_stopped() {
        Ending::Interrupted
    } else {
        Ending::Ok
    }
}
