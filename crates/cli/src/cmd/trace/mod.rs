//! `storbench capture` (a block device's requests from the kernel's tracepoints into a trace
//! file, then its fingerprint) and `storbench fingerprint TRACE`.

use crate::args::{CaptureArgs, FingerprintArgs, ReplayTraceArgs};
use crate::cmd::Ending;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use storbench_bench::blocktrace::capture::{self, Capture};
use storbench_bench::blocktrace::fidelity;
use storbench_bench::blocktrace::fingerprint::{self, Fingerprint};
use storbench_bench::blocktrace::format::{Header, TraceReader};
use storbench_bench::blocktrace::replay::{self, Pace, Replayed};
use storbench_bench::engine::{self, EngineKind};
use storbench_bench::files;
use storbench_bench::run::StopFlag;
use storbench_bench::target::{self, TargetRequest};

pub fn capture(a: &CaptureArgs, stop: &StopFlag) -> Result<Ending> {
    let device = files::resolve(&a.device)?;
    capture::device_number(&device).map_err(|e| {
        anyhow::anyhow!("--device {}: {e}; give a block device such as /dev/sdb", a.device.display())
    })?;
    if let Some(why) = files::tracefs::unavailable(Path::new(files::tracefs::ROOT)) {
        bail!("capture cannot record here: {why}");
    }
    let kernel_name = device.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let out = a.out.clone().unwrap_or_else(|| default_out(&kernel_name, jiff::Timestamp::now()));
    let (running, header) = begin(&device, &out).context("capture")?;
    match a.duration {
        Some(d) => {
            say!("capturing the requests of {} for {:?} into {}", device.display(), d.0, out.display())
        }
        None => say!("capturing the requests of {} into {} until Ctrl-C", device.display(), out.display()),
    }
    let began = Instant::now();
    while !stop.is_stopped() && a.duration.is_none_or(|d| began.elapsed() < d.0) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let seconds = began.elapsed().as_secs_f64();
    let stats = running.stop().with_context(|| format!("writing the trace {}", out.display()))?;
    let fp = read_fingerprint(&out)?;
    let cpu_per_request_us = stats.cpu_ns as f64 / 1e3 / stats.records.max(1) as f64;
    if a.json {
        let out_json = serde_json::json!({
            "trace": out.display().to_string(),
            "device": header.device,
            "seconds": seconds,
            "records": stats.records,
            "unmatched_completions": stats.unmatched_completions,
            "never_completed": stats.never_completed,
            "kernel_dropped": stats.kernel_dropped,
            "capture_cpu_us_per_request": cpu_per_request_us,
            "fingerprint": fp,
        });
        tell_raw!("{}", serde_json::to_string_pretty(&out_json)?);
    } else {
        tell_raw!("{}", table(&fp));
        say!(
            "trace: {} ({} requests in {seconds:.1} s; the capture's own CPU: {cpu_per_request_us:.2} µs per request; {} completion(s) without an issue, {} request(s) without a completion, {} event(s) the kernel dropped)",
            out.display(),
            stats.records,
            stats.unmatched_completions,
            stats.never_completed,
            stats.kernel_dropped
        );
    }
    // Ctrl-C is how a capture without --duration ends.
    Ok(if stop.is_stopped() && a.duration.is_some() { Ending::Interrupted } else { Ending::Ok })
}

fn default_out(kernel_name: &str, at: jiff::Timestamp) -> PathBuf {
    let stamp = at.strftime("%Y%m%d-%H%M%S");
    PathBuf::from(format!("storbench-{kernel_name}-{stamp}.sbtrace"))
}

pub fn fingerprint(a: &FingerprintArgs) -> Result<Ending> {
    let fp = read_fingerprint(&a.trace)?;
    if a.json {
        tell_raw!("{}", serde_json::to_string_pretty(&fp)?);
    } else {
        tell_raw!("{}", table(&fp));
    }
    Ok(Ending::Ok)
}

/// The fingerprint of the trace at `path`, read as it streams from disk.
pub fn read_fingerprint(path: &Path) -> Result<Fingerprint> {
    read_trace(path).map(|(_, f)| f)
}

/// The fingerprint as a person reads it.
fn table(f: &Fingerprint) -> String {
    let pct = |x: f64| format!("{:.1} %", x * 100.0);
    let mut lines = vec![
        format!(
            "requests        {} ({} reads, {} writes, {} flushes, {} discards) in {:.1} s",
            f.requests, f.reads, f.writes, f.flushes, f.discards, f.duration_s
        ),
        format!(
            "reads           {} of requests, {} of bytes",
            pct(f.read_fraction),
            pct(f.read_bytes_fraction)
        ),
        format!("sizes           {}", top_sizes(f)),
        format!("sequential      {} of reads and writes follow the one before", pct(f.sequential_fraction)),
        format!(
            "hot set         {} MiB take 50 %, {} MiB 90 %, {} MiB 99 % of accesses (footprint {} MiB)",
            mib(f.hot_set_bytes.get("p50")),
            mib(f.hot_set_bytes.get("p90")),
            mib(f.hot_set_bytes.get("p99")),
            mib(Some(&f.footprint_bytes))
        ),
        format!(
            "rate            {:.0} IOPS mean, {} in the busiest second, burstiness {:.2}",
            f.mean_iops, f.peak_iops, f.burstiness
        ),
        format!("queue depth     {:.2} mean, {} most", f.mean_queue_depth, f.max_queue_depth),
        format!(
            "flush / FUA     {} of requests flush, {} of writes FUA",
            pct(f.flush_fraction),
            pct(f.fua_fraction)
        ),
    ];
    for (kind, l) in &f.latency {
        lines.push(format!(
            "latency {kind:<7} p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs ({} requests)",
            l.p50_us, l.p99_us, l.max_us, l.count
        ));
    }
    lines.join("\n") + "\n"
}

fn top_sizes(f: &Fingerprint) -> String {
    let mut sizes: Vec<(&u32, &u64)> = f.size_histogram.iter().collect();
    sizes.sort_by(|a, b| b.1.cmp(a.1));
    let data = (f.reads + f.writes).max(1) as f64;
    let shown: Vec<String> = sizes
        .iter()
        .take(4)
        .map(|(bytes, n)| format!("{} KiB {:.0} %", **bytes / 1024, **n as f64 * 100.0 / data))
        .collect();
    if shown.is_empty() { "-".into() } else { shown.join(", ") }
}

fn mib(bytes: Option<&u64>) -> String {
    format!("{:.1}", bytes.copied().unwrap_or(0) as f64 / (1u64 << 20) as f64)
}

/// The most requests a replay keeps in flight as recorded (a trace's bursts beyond it wait).
const MOST_IN_FLIGHT: u32 = 1024;

pub fn replay_trace(a: &ReplayTraceArgs, stop: &StopFlag) -> Result<Ending> {
    let (header, original) = read_trace(&a.trace)?;
    if original.reads + original.writes == 0 {
        bail!("{} has no reads or writes to replay", a.trace.display());
    }
    let speed = crate::cmd::replay::speed_factor(a.speed.unwrap_or(1.0))?;
    let span = a.footprint.map(|f| f.0).unwrap_or(header.size_bytes).max(1 << 20);
    let req = TargetRequest {
        path: a.target.clone(),
        size: None,
        default_size: span,
        direct: !a.buffered,
        allow_device: a.allow_device,
        force: a.force,
        writes: original.writes > 0,
    };
    let plan = target::plan(&req)?;
    refuse_captured_device(&plan.path, &header, a.force)?;
    let _lock = plan.lock()?;
    let target = target::prepare(&plan, 1, &mut |_, _| {}, stop)
        .with_context(|| format!("preparing {}", plan.path.display()))?;
    let largest = original.size_histogram.keys().next_back().copied().unwrap_or(4096);
    let depth = a.iodepth.unwrap_or(original.max_queue_depth.clamp(1, 4096) as u32);
    let (pace, slots) = match a.fast {
        true => (Pace::Fast { depth }, depth),
        false => {
            (Pace::AsRecorded { speed }, (original.max_queue_depth as u32 * 2).clamp(64, MOST_IN_FLIGHT))
        }
    };
    let spec = replay::Spec {
        pace,
        span: span.min(target.size),
        align: if target.direct { plan.direct_align } else { 1 },
        slots,
        max_len: largest.max(4096).div_ceil(4096) * 4096,
    };
    let opened = engine::open(EngineKind::IoUring, Some(&target.file), spec.slots, spec.max_len)?;
    if let Some(why) = &opened.fallback {
        alert!("warning: {why}");
    }
    let mut engine = opened.engine;
    let checking = a.check.as_ref().map(|out| start_check(out, &target.path)).transpose()?;
    say!(
        "replaying {} ({} reads and writes) on {}",
        a.trace.display(),
        original.reads + original.writes,
        target.path.display()
    );
    let file = storbench_bench::input::open_input(&a.trace)?;
    let mut reader = TraceReader::new(std::io::BufReader::with_capacity(1 << 20, file))?;
    let records = std::iter::from_fn(|| reader.next_record().transpose());
    let done = replay::replay(records, engine.as_mut(), &spec, stop)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.trace.display()))?;
    let check = checking.map(|(capture, out)| finish_check(capture, &out, &original)).transpose()?;
    show_replay(a, &done, &original, check.as_ref())?;
    Ok(if stop.is_stopped() {
        Ending::Interrupted
    } else if !done.errors.is_empty() || check.as_ref().is_some_and(|c| !c.pass) {
        Ending::CheckFailed
    } else {
        Ending::Ok
    })
}

/// The trace's header and fingerprint, read as it streams from disk.
fn read_trace(path: &Path) -> Result<(Header, Fingerprint)> {
    fingerprint::of_file(path).map_err(anyhow::Error::msg)
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

fn start_check(out: &Path, target: &Path) -> Result<(Capture, PathBuf)> {
    capture::device_number(target).map_err(|_| {
        anyhow::anyhow!("--check captures the replay's requests, which needs a block device as --target")
    })?;
    let (capture, _) = begin(target, out).context("--check")?;
    Ok((capture, out.to_path_buf()))
}

/// A capture of `device` into the new trace file `out`, started, and the header it wrote.
fn begin(device: &Path, out: &Path) -> Result<(Capture, Header)> {
    capture::begin(device, out).map_err(|e| anyhow::anyhow!("{e}"))
}

fn finish_check(capture: Capture, out: &Path, original: &Fingerprint) -> Result<fidelity::Check> {
    capture.stop().with_context(|| format!("writing {}", out.display()))?;
    let (_, replayed) = read_trace(out)?;
    Ok(fidelity::compare(original, &replayed))
}

fn show_replay(
    a: &ReplayTraceArgs,
    r: &Replayed,
    original: &Fingerprint,
    check: Option<&fidelity::Check>,
) -> Result<()> {
    let secs = r.elapsed.as_secs_f64();
    let ios = r.reads + r.writes;
    let q = |h: &storbench_bench::metrics::LatencyHistogram, p: f64| h.quantile_ns(p) as f64 / 1e3;
    let json = serde_json::json!({
        "trace": a.trace.display().to_string(),
        "target": a.target.display().to_string(),
        "mode": if a.fast { "fast" } else { "as_recorded" },
        "reads": r.reads,
        "writes": r.writes,
        "bytes_read": r.bytes_read,
        "bytes_written": r.bytes_written,
        "flushes": r.flushes,
        "skipped": r.skipped,
        "errors": r.errors,
        "seconds": secs,
        "recorded_seconds": r.recorded.as_secs_f64(),
        "iops": if secs > 0.0 { ios as f64 / secs } else { 0.0 },
        "recorded_iops": original.mean_iops,
        "read_p50_us": q(&r.read_latency, 0.5),
        "read_p99_us": q(&r.read_latency, 0.99),
        "write_p50_us": q(&r.write_latency, 0.5),
        "write_p99_us": q(&r.write_latency, 0.99),
        "flush_p99_us": (r.flushes > 0).then(|| q(&r.flush_latency, 0.99)),
        "lateness_p99_us": (!a.fast).then(|| q(&r.lateness, 0.99)),
        "check": check,
    });
    if a.json {
        tell_raw!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    tell_raw!(
        "replayed {ios} reads and writes in {secs:.2} s ({:.0} IOPS; recorded {:.0} over {:.2} s)\n\
         read latency p50 {:.0} µs, p99 {:.0} µs; write latency p50 {:.0} µs, p99 {:.0} µs\n",
        json["iops"].as_f64().unwrap_or(0.0),
        original.mean_iops,
        r.recorded.as_secs_f64(),
        q(&r.read_latency, 0.5),
        q(&r.read_latency, 0.99),
        q(&r.write_latency, 0.5),
        q(&r.write_latency, 0.99)
    );
    if r.flushes > 0 {
        tell_raw!(
            "{} flushes: latency p50 {:.0} µs, p99 {:.0} µs\n",
            r.flushes,
            q(&r.flush_latency, 0.5),
            q(&r.flush_latency, 0.99)
        );
    }
    if !a.fast {
        tell_raw!("issued late by p99 {:.0} µs after the recorded time\n", q(&r.lateness, 0.99));
    }
    for (kind, n) in &r.skipped {
        tell_raw!("not replayed: {n} {kind}(es)\n");
    }
    for (kind, n) in &r.errors {
        alert!("error: {n} request(s) failed with {kind}");
    }
    if let Some(c) = check {
        tell_raw!("{}", fidelity::table(c));
    }
    Ok(())
}
