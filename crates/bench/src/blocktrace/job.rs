//! A replay-trace run's job: its trace read (header and fingerprint, once per file), checked
//! against its options and its target before anything is written (a replay never writes the
//! device it was captured from unless told, never runs past a year), and the io job that
//! replays it, with what the summary says of the trace.

use super::capture;
use super::fingerprint::Fingerprint;
use super::format::Header;
use super::options::ReplayTraceOptions;
use super::replay::{Pace, TraceSource};
use crate::Result;
use crate::engine::EngineKind;
use crate::target::{self, CheckedTarget, Target, TargetRequest};
use crate::workload::io::{BlockSizeMix, End, IoSpec, Pattern, Region, Share};
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_report::fingerprint::TraceReplay;

/// The most requests a replay keeps in flight as recorded (a trace's bursts beyond it wait).
const MOST_IN_FLIGHT: u32 = 1024;

/// The replay's options checked against its trace and target, nothing written.
pub struct Checked {
    pub header: Header,
    pub original: Fingerprint,
    pub plan: CheckedTarget,
    pub speed: f64,
}

impl Checked {
    /// What the replay will write, for an evaluation's line before it starts.
    pub fn will_write(&self) -> String {
        use crate::target::Action;
        let (path, size) = (self.plan.path.display(), crate::units::human_bytes(self.plan.size));
        let what = if self.original.writes > 0 { "writes the trace's writes into" } else { "reads" };
        match self.plan.action {
            Action::CreateFile => format!("creates and fills {path}, {size}, then {what} it"),
            Action::RefillPartial => format!("fills {path} again, {size}, then {what} it"),
            Action::UseDevice => format!("{what} the device {path}, {size}"),
            Action::ReuseFile | Action::UseForeignFile => format!("{what} {path}, {size}"),
        }
    }
}

/// Every check of the replay's own before anything is written: the trace, the speed, the
/// target (a line to `say` notes a replay that takes hours).
pub fn check(o: &ReplayTraceOptions, say: &dyn Fn(&str)) -> Result<Checked> {
    o.check()?;
    let (header, original) = read_trace(&o.trace)?;
    if original.reads + original.writes == 0 {
        refuse!("{} has no reads or writes to replay", o.trace.display());
    }
    let speed = crate::workload::replay::options::speed_factor(o.speed.unwrap_or(1.0))?;
    bounded(o, &original, speed, say)?;
    let req = TargetRequest {
        path: o.target.clone().unwrap_or_else(|| PathBuf::from(".")),
        size: None,
        default_size: o.footprint.map(|f| f.0).unwrap_or(header.size_bytes).max(1 << 20),
        direct: !o.buffered,
        allow_device: o.allow_device,
        force: o.force,
        writes: original.writes > 0,
    };
    let plan = target::plan(&req)?;
    refuse_captured_device(&plan.path, &header, o.force)?;
    if o.check && capture::device_number(&plan.path).is_err() {
        refuse!(
            "--check captures the replay's requests, which needs a block device as --target ({} is not one)",
            plan.path.display()
        );
    }
    Ok(Checked { header, original, plan, speed })
}

/// The longest a replay as recorded may take: a year, as every duration storbench takes.
const LONGEST_S: f64 = 365.0 * 24.0 * 3600.0;

/// Refuses what would never end or could not be replayed: a speed that stretches the trace
/// past a year, a footprint smaller than its largest request.
fn bounded(o: &ReplayTraceOptions, original: &Fingerprint, speed: f64, say: &dyn Fn(&str)) -> Result<()> {
    let lasts_s = original.duration_s / speed;
    if !o.fast && lasts_s > LONGEST_S {
        refuse!(
            "--speed {speed}: the trace's {:.1} s would take {:.0} days to replay, more than the year a \
             run may last; give a speed nearer 1 (or --fast)",
            original.duration_s,
            lasts_s / 86_400.0
        );
    }
    if !o.fast && lasts_s > 3600.0 {
        say(&format!(
            "replaying the trace as recorded at speed {speed} takes about {:.1} hours",
            lasts_s / 3600.0
        ));
    }
    let largest = original.size_histogram.keys().next_back().copied().unwrap_or(0);
    if let Some(f) = o.footprint.filter(|f| f.0 < u64::from(largest)) {
        refuse!(
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
        refuse!(
            "{} is the device the trace was captured from ({}): a replay writes over it; replay on another \
             device, or give --force",
            target.display(),
            header.device
        );
    }
    Ok(())
}

/// The io job named `name` (None: after the trace) that replays the trace on `target`: one
/// worker, as deep as the trace was (or --iodepth when fast), buffers for its largest
/// request; on a device, in the slice `slice` gives of its span for requests of the largest
/// size (a shard's own).
pub fn io_spec(
    o: &ReplayTraceOptions,
    c: &Checked,
    target: &Target,
    name: Option<String>,
    slice: &dyn Fn(u64, u64) -> (u64, u64),
) -> IoSpec {
    let largest = c.original.size_histogram.keys().next_back().copied().unwrap_or(4096);
    let recorded_depth = c.original.max_queue_depth.clamp(1, 4096) as u32;
    let (pace, iodepth) = match o.fast {
        true => (Pace::Fast, o.iodepth.unwrap_or(recorded_depth)),
        false => (Pace::AsRecorded { speed: c.speed }, (recorded_depth * 2).clamp(64, MOST_IN_FLIGHT)),
    };
    let span = o.footprint.map_or(target.size, |f| f.0.min(target.size));
    let region = if target.is_device {
        // The shards of one run on one device each replay into a slice of their own.
        let (start, len) = slice(span, u64::from(largest));
        Region { start, len }
    } else {
        Region { start: 0, len: span }
    };
    IoSpec {
        name: name.unwrap_or_else(|| format!("{}-{}", super::entry::WORKLOAD.name, o.stem())),
        pattern: Pattern::Sequential,
        reads: Share::of_fraction(c.original.read_fraction),
        random: Share::ALL,
        writes_per_flush: None,
        fsync: false,
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
            path: o.trace.clone(),
            pace,
            align: if target.direct { c.plan.direct_align } else { 1 },
        }),
        steady_state: None,
    }
}

/// What the trace is, for the summary: the same for every run of it.
pub fn facts(o: &ReplayTraceOptions, c: &Checked) -> TraceReplay {
    let f = &c.original;
    let speed = (!o.fast).then_some(c.speed);
    let not_replayed = [("discard", f.discards)].into_iter().filter(|(_, n)| *n > 0);
    TraceReplay {
        trace: o.trace.display().to_string(),
        mode: if o.fast { "fast" } else { "as_recorded" }.into(),
        speed,
        recorded_requests: f.reads + f.writes + f.flushes,
        recorded_s: f.duration_s / speed.unwrap_or(1.0),
        recorded_iops: f.mean_iops * speed.unwrap_or(1.0),
        not_replayed: not_replayed.map(|(k, n)| (k.to_string(), n)).collect(),
        check: None,
    }
}

/// The run's parameters: the replay's own options (the trace, the pace, where).
pub fn parameters(o: &ReplayTraceOptions, c: &Checked, spec: &IoSpec) -> serde_json::Value {
    serde_json::json!({
        "trace": o.trace.display().to_string(),
        "captured_device": c.header.device,
        "mode": if o.fast { "fast" } else { "as_recorded" },
        "speed": (!o.fast).then_some(c.speed),
        "iodepth": spec.iodepth,
        "footprint": o.footprint.map(|f| f.0),
        "size": spec.region.len,
        "offset": spec.region.start,
        "direct": !o.buffered,
        "check": o.check,
        "engine": spec.engine.name(),
    })
}

/// The trace's header and fingerprint, read as it streams from disk once per process for a
/// file of the same size and time: an evaluation's checks, its ETA and the run each ask for
/// them, and a trace may be a gigabyte.
pub fn read_trace(path: &Path) -> std::result::Result<(Header, Fingerprint), String> {
    type Key = (PathBuf, u64, Option<std::time::SystemTime>);
    static READ: std::sync::Mutex<Vec<(Key, (Header, Fingerprint))>> = std::sync::Mutex::new(Vec::new());
    let key = std::fs::metadata(path).ok().map(|m| (path.to_path_buf(), m.len(), m.modified().ok()));
    let read = || READ.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, known)) = key.as_ref().and_then(|k| read().iter().find(|(at, _)| at == k).cloned()) {
        return Ok(known);
    }
    let got = super::fingerprint::of_file(path)?;
    if let Some(k) = key {
        let mut known = read();
        if known.len() >= 16 {
            known.remove(0);
        }
        known.push((k, got.clone()));
    }
    Ok(got)
}
