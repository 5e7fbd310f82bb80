//! `storbench replay-trace`, the replay-trace workload: a trace's reads, writes and flushes
//! issued again on a target as an io job whose one worker takes its requests from the trace
//! (`IoSpec::trace`), so the run is any io run's: its bundle, per-second series, histograms,
//! summary and report. Checked first (the trace readable, the target not the captured device
//! unless told), then the target prepared, then run; `--check` adds a capture of the target
//! beside the run and compares its fingerprint with the trace's once the run ended.

use super::read_trace;
use crate::args::trace::ReplayTraceJob;
use crate::ending::Ending;
use crate::measure::{self, BundleDir, Measured, Ran, Start};
use crate::output;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_bench::blocktrace::capture;
use storbench_bench::blocktrace::fidelity;
use storbench_bench::blocktrace::fingerprint::Fingerprint;
use storbench_bench::blocktrace::format::Header;
use storbench_bench::blocktrace::replay::{Pace, TraceSource};
use storbench_bench::engine::EngineKind;
use storbench_bench::monitor::resolve_device;
use storbench_bench::run::StopFlag;
use storbench_bench::target::{self, CheckedTarget, Target, TargetRequest};
use storbench_bench::workload::io::bundle::{IoPlace, started};
use storbench_bench::workload::io::{BlockSizeMix, End, IoSpec, Pattern, Region, Share};
use storbench_report::fingerprint::TraceReplay;
use storbench_report::{DatabaseInfo, Results, Summary, export};

/// The most requests a replay keeps in flight as recorded (a trace's bursts beyond it wait).
const MOST_IN_FLIGHT: u32 = 1024;

/// The replay's options checked against its trace and target, nothing written.
pub struct Checked {
    header: Header,
    original: Fingerprint,
    plan: CheckedTarget,
    speed: f64,
}

impl Checked {
    /// What the replay will write, for an evaluation's line before it starts.
    pub fn will_write(&self) -> String {
        use storbench_bench::target::Action;
        let (path, size) = (self.plan.path.display(), storbench_bench::units::human_bytes(self.plan.size));
        let what = if self.original.writes > 0 { "writes the trace's writes into" } else { "reads" };
        match self.plan.action {
            Action::CreateFile => format!("creates and fills {path}, {size}, then {what} it"),
            Action::RefillPartial => format!("fills {path} again, {size}, then {what} it"),
            Action::UseDevice => format!("{what} the device {path}, {size}"),
            Action::ReuseFile | Action::UseForeignFile => format!("{what} {path}, {size}"),
        }
    }
}

pub fn run(a: &ReplayTraceJob, stop: &StopFlag) -> Result<Ending> {
    let ran = measure(a, None, stop)?;
    if let Some(m) = &ran.measured {
        show(a, &m.summary)?;
    }
    Ok(ran.ending)
}

/// Every check before anything is written: the trace, the speed, the target.
pub fn check(a: &ReplayTraceJob) -> Result<Checked> {
    a.options.check().map_err(anyhow::Error::msg)?;
    let (header, original) = read_trace(&a.options.trace)?;
    if original.reads + original.writes == 0 {
        bail!("{} has no reads or writes to replay", a.options.trace.display());
    }
    let speed = storbench_bench::workload::replay::options::speed_factor(a.options.speed.unwrap_or(1.0))
        .map_err(anyhow::Error::msg)?;
    bounded(a, &original, speed)?;
    crate::preflight::results_root(a.out.output_dir.as_deref())?;
    let req = TargetRequest {
        path: a.options.target.clone().unwrap_or_else(|| PathBuf::from(".")),
        size: None,
        default_size: a.options.footprint.map(|f| f.0).unwrap_or(header.size_bytes).max(1 << 20),
        direct: !a.options.buffered,
        allow_device: a.options.allow_device,
        force: a.options.force,
        writes: original.writes > 0,
    };
    let plan = target::plan(&req)?;
    refuse_captured_device(&plan.path, &header, a.options.force)?;
    if a.options.check && capture::device_number(&plan.path).is_err() {
        bail!(
            "--check captures the replay's requests, which needs a block device as --target ({} is not one)",
            plan.path.display()
        );
    }
    let place = storbench_bench::background::Place {
        dir: plan.path.parent(),
        target: Some(plan.path.as_path()),
        bundle: None,
        null: false,
        wait: a.out.background_wait,
        say: &crate::console::say_line,
    };
    storbench_bench::background::check(&streams(a, &plan.path), place)?;
    Ok(Checked { header, original, plan, speed })
}

/// The longest a replay as recorded may take: a year, as every duration storbench takes.
const LONGEST_S: f64 = 365.0 * 24.0 * 3600.0;

/// Refuses what would never end or could not be replayed: a speed that stretches the trace
/// past a year, a footprint smaller than its largest request.
fn bounded(a: &ReplayTraceJob, original: &Fingerprint, speed: f64) -> Result<()> {
    let lasts_s = original.duration_s / speed;
    if !a.options.fast && lasts_s > LONGEST_S {
        bail!(
            "--speed {speed}: the trace's {:.1} s would take {:.0} days to replay, more than the year a \
             run may last; give a speed nearer 1 (or --fast)",
            original.duration_s,
            lasts_s / 86_400.0
        );
    }
    if !a.options.fast && lasts_s > 3600.0 {
        say!("replaying the trace as recorded at speed {speed} takes about {:.1} hours", lasts_s / 3600.0);
    }
    let largest = original.size_histogram.keys().next_back().copied().unwrap_or(0);
    if let Some(f) = a.options.footprint.filter(|f| f.0 < u64::from(largest)) {
        bail!(
            "--footprint {}: smaller than the trace's largest request ({largest} bytes), which could not be \
             placed in it; give at least that, or leave it out for the trace's own",
            f.0
        );
    }
    Ok(())
}

/// A replay never writes the device it was captured from unless told to.
fn refuse_captured_device(target: &Path, header: &Header, force: bool) -> Result<()> {
    let same = capture::device_number(target).is_ok_and(|(_, mm)| mm == header.major_minor);
    if same && !force {
        bail!(
            "{} is the device the trace was captured from ({}): a replay writes over it; replay on another \
             device, or give --force",
            target.display(),
            header.device
        );
    }
    Ok(())
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
    let spec = io_spec(a, &c, &target);
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
        parameters: parameters(a, &c, &spec),
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
    let replayed = facts(a, &c);
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

/// The io job that replays the trace on `target`: one worker, as deep as the trace was (or
/// --iodepth when fast), buffers for its largest request.
fn io_spec(a: &ReplayTraceJob, c: &Checked, target: &Target) -> IoSpec {
    let largest = c.original.size_histogram.keys().next_back().copied().unwrap_or(4096);
    let recorded_depth = c.original.max_queue_depth.clamp(1, 4096) as u32;
    let (pace, iodepth) = match a.options.fast {
        true => (Pace::Fast, a.options.iodepth.unwrap_or(recorded_depth)),
        false => (Pace::AsRecorded { speed: c.speed }, (recorded_depth * 2).clamp(64, MOST_IN_FLIGHT)),
    };
    let span = a.options.footprint.map_or(target.size, |f| f.0.min(target.size));
    let region = if target.is_device {
        // The shards of one run on one device each replay into a slice of their own.
        let (start, len) = crate::shard::device_slice(span, u64::from(largest));
        Region { start, len }
    } else {
        Region { start: 0, len: span }
    };
    IoSpec {
        name: a
            .out
            .name
            .clone()
            .unwrap_or_else(|| format!("{}-{}", super::entry::KIND.name, a.options.stem())),
        pattern: Pattern::Sequential,
        reads: Share::of_fraction(c.original.read_fraction),
        random: Share::ALL,
        writes_per_flush: None,
        block_sizes: BlockSizeMix::single(largest.max(4096).div_ceil(4096) * 4096),
        iodepth,
        workers: 1,
        ramp: Duration::ZERO,
        end: End::Trace,
        rate_iops: None,
        rate_profile: None,
        seed: 1,
        verify: false,
        engine: EngineKind::IoUring,
        region,
        interval: Duration::from_secs(1),
        trace: Some(TraceSource {
            path: a.options.trace.clone(),
            pace,
            align: if target.direct { c.plan.direct_align } else { 1 },
        }),
        steady_state: None,
    }
}

/// What the trace is, for the summary: the same for every run of it.
fn facts(a: &ReplayTraceJob, c: &Checked) -> TraceReplay {
    let o = &c.original;
    let speed = (!a.options.fast).then_some(c.speed);
    let not_replayed = [("discard", o.discards)].into_iter().filter(|(_, n)| *n > 0);
    TraceReplay {
        trace: a.options.trace.display().to_string(),
        mode: if a.options.fast { "fast" } else { "as_recorded" }.into(),
        speed,
        recorded_requests: o.reads + o.writes + o.flushes,
        recorded_s: o.duration_s / speed.unwrap_or(1.0),
        recorded_iops: o.mean_iops * speed.unwrap_or(1.0),
        not_replayed: not_replayed.map(|(k, n)| (k.to_string(), n)).collect(),
        check: None,
    }
}

/// The run's parameters: the replay's own options (the trace, the pace, where).
fn parameters(a: &ReplayTraceJob, c: &Checked, spec: &IoSpec) -> serde_json::Value {
    serde_json::json!({
        "trace": a.options.trace.display().to_string(),
        "captured_device": c.header.device,
        "mode": if a.options.fast { "fast" } else { "as_recorded" },
        "speed": (!a.options.fast).then_some(c.speed),
        "iodepth": spec.iodepth,
        "footprint": a.options.footprint.map(|f| f.0),
        "size": spec.region.len,
        "offset": spec.region.start,
        "direct": !a.options.buffered,
        "check": a.options.check,
        "engine": spec.engine.name(),
    })
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
