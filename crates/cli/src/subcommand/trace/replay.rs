//! `storbench replay-trace`, the replay-trace workload: a trace's reads, writes and flushes
//! issued again on a target as an io job whose one worker takes its requests from the trace
//! (`IoSpec::trace`), so the run is any io run's: its bundle, per-second series, histograms,
//! summary and report. Checked first (the trace readable, the target not the captured device
//! unless told), then the target prepared, then run; `--check` adds a capture of the target
//! beside the run and compares its fingerprint with the trace's once the run ended.

use crate::args::trace::ReplayTraceJob;
use crate::measure::{self, BundleDir, Measured, Ran, Start};
use crate::output;
use anyhow::Result;
use std::path::Path;
use storbench_bench::blocktrace::fidelity;
use storbench_bench::blocktrace::fingerprint::Fingerprint;
use storbench_bench::blocktrace::job::{self, Checked};
use storbench_bench::monitor::resolve_device;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::io::bundle::{IoPlace, started};
use storbench_report::fingerprint::TraceReplay;
use storbench_report::{DatabaseInfo, Results, Summary, export};

/// Every check before anything is written: the replay's own (`blocktrace::job::check`), the
/// results folder, the streams beside it.
pub fn check(a: &ReplayTraceJob) -> Result<Checked> {
    let c = job::check(&a.options, &crate::console::say_line)?;
    crate::preflight::results_root(a.out.output_dir.as_deref())?;
    let place = storbench_bench::background::Place {
        dir: c.plan.path.parent(),
        target: Some(c.plan.path.as_path()),
        bundle: None,
        null: false,
        wait: a.out.background_wait,
        say: &crate::console::say_line,
    };
    storbench_bench::background::check(&streams(a, &c.plan.path), place)?;
    Ok(c)
}

pub fn run(a: &ReplayTraceJob, stop: &StopFlag) -> Result<Ending> {
    let ran = measure(a, None, stop)?;
    if let Some(m) = &ran.measured {
        show(a, &m.summary)?;
    }
    Ok(ran.ending)
}

/// The run's streams: the user's, and under `--check` a capture of the target.
fn streams(a: &ReplayTraceJob, target: &Path) -> Vec<storbench_bench::background::Background> {
    let mut streams = a.out.streams();
    if a.options.check {
        streams.push(storbench_bench::background::Background::capture(target));
    }
    streams
}

/// Creates and fills the target file where it is missing: an evaluation does this before
/// its idle window.
pub fn prepare_target(a: &ReplayTraceJob, stop: &StopFlag) -> Result<()> {
    let c = check(a)?;
    let _lock = c.plan.lock()?;
    crate::subcommand::io::prepare(&c.plan, 1, stop).map(drop)
}

/// The replay into the bundle directory `given`, or a new one under --output-dir.
pub fn measure(a: &ReplayTraceJob, given: Option<&Path>, stop: &StopFlag) -> Result<Ran> {
    let c = check(a)?;
    let _lock = c.plan.lock()?;
    let target = match crate::subcommand::io::prepare(&c.plan, 1, stop) {
        Err(_) | Ok(_) if stop.is_stopped() => {
            return Ok(Ran { ending: Ending::InterruptedBeforeRun, measured: None });
        }
        other => other?,
    };
    let spec = job::io_spec(&a.options, &c, &target, a.out.name.clone(), &crate::shard::device_slice);
    let device = resolve_device(&target.path).ok().flatten();
    let place = IoPlace {
        path: target.path.display().to_string(),
        kind: if target.is_device { "device" } else { "file" },
        size: spec.region.len,
        direct: target.direct,
        device: device.clone(),
    };
    let at = jiff::Timestamp::now();
    let summary = Summary {
        workload: super::entry::KIND.name.into(),
        parameters: job::parameters(&a.options, &c, &spec),
        ..started(&spec, &place, false, &at.to_string())
    };
    let streams = streams(a, &target.path);
    let start = Start {
        run: storbench_bench::run::measure::Start {
            at,
            summary,
            targets: vec![target.path.as_path()],
            database: DatabaseInfo::default(),
            device: device.as_ref().map(|d| d.name.as_str()),
        },
        table,
        background: &streams,
        background_dir: target.path.parent(),
        background_wait: a.out.background_wait,
    };
    let dir = BundleDir::choose(given, &a.out, &spec.name)?;
    let label = format!("replaying {}", a.options.trace.display());
    let replayed = job::facts(&a.options, &c);
    let m = measure::measure(&dir, start, stop, |rec, first| {
        crate::subcommand::io::record_job(
            rec,
            first,
            &spec,
            Some(&target.file),
            &label,
            stop,
            |rec, outcome, facts| {
                let check =
                    a.options.check.then(|| checked(rec, outcome.all.flush.ios, &c.original)).flatten();
                facts.trace = Some(TraceReplay { check, ..replayed });
            },
        )
    })?;
    Ok(Ran { ending: ending(&m, stop), measured: Some(m) })
}

/// The replay's own capture (the last stream) against the trace, with the flushes the
/// replay issued.
fn checked(rec: &measure::Recording, flushes_issued: u64, original: &Fingerprint) -> Option<fidelity::Check> {
    let streams = rec.sampler.streams.results();
    let capture = streams.iter().rev().find_map(|s| s.capture.as_ref())?;
    Some(fidelity::compare(original, &capture.fingerprint, flushes_issued))
}

/// Exit 1 when a request failed or the check failed, 130 when interrupted.
fn ending(m: &Measured, stop: &StopFlag) -> Ending {
    let failed = m.summary.failed_ios().map(|e| e.to_string());
    if let Some(e) = &failed {
        say!("error: {}: {e}; the target is failing or full", m.summary.name);
    }
    Ending::of(&m.summary, stop)
}

fn replay_of(s: &Summary) -> Option<&TraceReplay> {
    match &s.results {
        Results::Io(r) => r.trace.as_deref(),
        _ => None,
    }
}

/// The io job's table, then what only a replay has: the recorded rate, lateness, what was
/// not replayed, the check.
pub fn table(s: &Summary) -> String {
    let mut out = crate::subcommand::io::table::job_table(s);
    let Some(r) = replay_of(s) else { return out };
    out.push_str(&format!(
        "\nthe trace: {} requests over {:.2} s ({:.0} IOPS{})\n",
        r.recorded_requests,
        r.recorded_s,
        r.recorded_iops,
        r.speed.map(|x| format!(" at speed {x}")).unwrap_or_default()
    ));
    if let Results::Io(io) = &s.results
        && let Some(lag) = &io.schedule_lag_ms
    {
        out.push_str(&format!(
            "issued late by p99 {:.3} ms (at most {:.3} ms) after the recorded times\n",
            lag.p99, lag.max
        ));
    }
    for (kind, n) in &r.not_replayed {
        out.push_str(&format!("not replayed: {n} {kind}(s)\n"));
    }
    if let Some(c) = &r.check {
        out.push_str(&fidelity::table(c));
    }
    out
}

fn show(a: &ReplayTraceJob, s: &Summary) -> Result<()> {
    output::print_result(|| if a.out.json { export::summary_json(s) } else { table(s) + "\n" })
}
