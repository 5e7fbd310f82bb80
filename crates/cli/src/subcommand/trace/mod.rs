//! `storbench capture` (a block device's requests from the kernel's tracepoints into a trace
//! file, then its fingerprint) and `storbench fingerprint TRACE`; `replay` is the
//! replay-trace workload, `entry` its registry entry.

pub mod entry;
mod replay;

use crate::args::trace::{CaptureArgs, FingerprintArgs};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use storbench_bench::background::capture::tracing_ready;
use storbench_bench::blocktrace::capture::{self, Capture};
use storbench_bench::blocktrace::fingerprint::Fingerprint;
use storbench_bench::blocktrace::format::Header;
use storbench_bench::files;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;

pub fn capture(a: &CaptureArgs, stop: &StopFlag) -> Result<Ending> {
    let device = files::resolve(&a.device)?;
    capture::device_number(&device).map_err(|e| {
        anyhow::anyhow!("--device {}: {e}; give a block device such as /dev/sdb", a.device.display())
    })?;
    if let Err(why) = tracing_ready(&crate::console::say_line) {
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
    let cpu_per_request_us = stats.cpu_us_per_request();
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
        let cost = cpu_per_request_us.map_or("no request to cost".into(), |us| {
            format!("the capture's own CPU: {us:.2} µs per request")
        });
        say!(
            "trace: {} ({} requests in {seconds:.1} s; {cost}; {} completion(s) without an issue, {} request(s) without a completion, {} event(s) the kernel dropped)",
            out.display(),
            stats.records,
            stats.unmatched_completions,
            stats.never_completed,
            stats.kernel_dropped
        );
    }
    // Ctrl-C is how a capture without --duration ends.
    Ok(if stop.is_stopped() && a.duration.is_some() {
        Ending::InterruptedKeeping(format!("the trace {} holds the requests until then", out.display()))
    } else {
        Ending::Ok
    })
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

/// The fingerprint of the trace at `path`, read as it streams from disk; a trace cut short
/// (its capture killed, its disk full) is read to its last whole record, and said so.
pub fn read_fingerprint(path: &Path) -> Result<Fingerprint> {
    let f = storbench_bench::blocktrace::job::read_trace(path).map(|(_, f)| f).map_err(anyhow::Error::msg)?;
    if f.cut_short {
        say!(
            "{}: the trace was cut short (its capture was killed or its disk filled): its {} requests \
             are what it holds",
            path.display(),
            f.requests
        );
    }
    Ok(f)
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

/// A capture of `device` into the new trace file `out`, started, and the header it wrote.
fn begin(device: &Path, out: &Path) -> Result<(Capture, Header)> {
    capture::begin(device, out).map_err(|e| anyhow::anyhow!("{e}"))
}
