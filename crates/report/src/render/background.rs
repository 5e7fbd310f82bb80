//! Background streams in the report: for every run that had any (`--background`), what each
//! stream did over the measured phase beside the workload, so a reader sees the load the
//! workload's figures were measured under; and for a run that captured its block requests
//! (`--capture`), the captured trace's fingerprint as a table and charts.

use super::ReportInput;
use super::doc::{Block, Table, num, opt};
use super::svg::{Chart, Line};
use crate::fingerprint::{CaptureResult, Fingerprint};
use crate::{BackgroundResult, CommandRun};

/// A table with a row per stream of every run that had one; nothing when no run had any.
pub fn blocks(input: &ReportInput) -> Vec<Block> {
    let mut t = Table::new(&[
        "run",
        "stream",
        "as asked",
        "seconds",
        "read MB/s",
        "write MB/s",
        "p99",
        "errors",
        "ended",
    ]);
    for r in &input.evaluation.runs {
        let Some(data) = input.runs.get(&r.id) else { continue };
        for b in &data.summary.background {
            let mut row =
                vec![format!("{} · {}", r.configuration, r.workload), b.name.clone(), b.spec.clone()];
            row.extend(match (&b.command, &b.capture) {
                (Some(c), _) => command_cells(c),
                (_, Some(c)) => capture_cells(c),
                _ => io_cells(b),
            });
            t.push(row);
        }
    }
    if t.rows.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![
        Block::Heading(2, "Background streams".into()),
        Block::Para(
            "Each stream ran beside its run's workload from the start to the end; its figures cover the \
             measured phase, and its columns are in the run's time series under its name. A command \
             ran from the measured phase's start; its seconds are its own."
                .into(),
        ),
        Block::Table(t),
    ];
    blocks.extend(captured(input));
    blocks
}

/// A stream of storbench's own I/O: its rates, p99 and errors over the measured phase.
fn io_cells(b: &BackgroundResult) -> Vec<String> {
    let p99 = b.read_lat_p99_us.into_iter().chain(b.write_lat_p99_us).reduce(f64::max);
    vec![
        num(b.measured_s),
        num(b.read_bytes_per_sec / 1e6),
        num(b.write_bytes_per_sec / 1e6),
        opt(p99.map(|us| us / 1e3), "ms"),
        b.errors.to_string(),
        String::new(),
    ]
}

/// A command: how long it ran and how it ended (its exit status, or stopped by storbench).
fn command_cells(c: &CommandRun) -> Vec<String> {
    let ended = match (c.stopped, c.exit_code) {
        (true, _) => "stopped at the run's end".to_string(),
        (false, Some(code)) => format!("exit {code}"),
        (false, None) => "ended by a signal".to_string(),
    };
    let none = || "—".to_string();
    vec![num(c.seconds), none(), none(), none(), none(), ended]
}

/// A capture: how long it recorded and how many requests it wrote.
fn capture_cells(c: &CaptureResult) -> Vec<String> {
    let none = || "—".to_string();
    let ended = format!("{} requests in {}", c.records, c.trace);
    vec![num(c.fingerprint.duration_s), none(), none(), none(), none(), ended]
}

/// Every capture's fingerprint: a table of its figures, a chart of its sizes and one of its
/// rate each second.
fn captured(input: &ReportInput) -> Vec<Block> {
    let mut blocks = Vec::new();
    for r in &input.evaluation.runs {
        let Some(data) = input.runs.get(&r.id) else { continue };
        for (b, c) in data.summary.background.iter().filter_map(|b| Some((b, b.capture.as_deref()?))) {
            let what = format!("{} · {} · {}", r.configuration, r.workload, b.name);
            blocks.push(Block::Heading(3, format!("Captured I/O: {what}")));
            let cost = c.cpu_us_per_request.map_or("no request was recorded to cost".into(), |us| {
                format!("the capture cost {us:.2} CPU-µs per request in storbench")
            });
            blocks.push(Block::Para(format!(
                "{} requests of {} from the block tracepoints over the measured phase, in the bundle's {}; \
                 {cost}; {} completion(s) without an issue, \
                 {} request(s) without a completion, {} event(s) the kernel dropped. Replay it elsewhere \
                 with `storbench replay-trace`.",
                c.records, c.device, c.trace, c.unmatched_completions, c.never_completed, c.kernel_dropped
            )));
            blocks.push(Block::Table(fingerprint_table(&c.fingerprint)));
            blocks.extend(fingerprint_charts(&c.fingerprint, &what).into_iter().map(Block::Chart));
        }
    }
    blocks
}

/// A fingerprint's figures, one a row.
pub fn fingerprint_table(f: &Fingerprint) -> Table {
    let pct = |x: f64| format!("{:.1} %", x * 100.0);
    let mib = |key: &str| num(f.hot_set_bytes.get(key).copied().unwrap_or(0) as f64 / 1048576.0);
    let mut t = Table::new(&["figure", "value"]);
    let rows = [
        (
            "requests",
            format!(
                "{} ({} reads, {} writes, {} flushes, {} discards)",
                f.requests, f.reads, f.writes, f.flushes, f.discards
            ),
        ),
        (
            "reads (of requests / of bytes)",
            format!("{} / {}", pct(f.read_fraction), pct(f.read_bytes_fraction)),
        ),
        ("sequential", pct(f.sequential_fraction)),
        ("hot set 50 / 90 / 99 % (MiB)", format!("{} / {} / {}", mib("p50"), mib("p90"), mib("p99"))),
        ("footprint (MiB)", num(f.footprint_bytes as f64 / 1048576.0)),
        ("IOPS mean / busiest second", format!("{} / {}", num(f.mean_iops), f.peak_iops)),
        ("burstiness (sd / mean of IOPS)", format!("{:.2}", f.burstiness)),
        ("queue depth mean / most", format!("{:.2} / {}", f.mean_queue_depth, f.max_queue_depth)),
        ("flush / FUA", format!("{} of requests / {} of writes", pct(f.flush_fraction), pct(f.fua_fraction))),
    ];
    for (figure, value) in rows {
        t.push(vec![figure.to_string(), value]);
    }
    for (kind, l) in &f.latency {
        let ms = |us: f64| format!("{:.3}", us / 1e3);
        let value = format!(
            "p50 {} ms, p99 {} ms, max {} ms ({} requests)",
            ms(l.p50_us),
            ms(l.p99_us),
            ms(l.max_us),
            l.count
        );
        t.push(vec![format!("{kind} latency"), value]);
    }
    t
}

/// Sizes a chart shows at most.
const CHART_SIZES: usize = 16;

/// The share of reads and writes at each of the most frequent sizes, and the requests issued each second.
fn fingerprint_charts(f: &Fingerprint, what: &str) -> Vec<Chart> {
    let data = (f.reads + f.writes).max(1) as f64;
    // The most frequent sizes, in size order: a trace of many odd sizes stays readable.
    let mut by_count: Vec<(u32, u64)> = f.size_histogram.iter().map(|(&b, &n)| (b, n)).collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by_count.truncate(CHART_SIZES);
    by_count.sort_unstable();
    let sizes = Line {
        name: "share of reads and writes".into(),
        points: by_count.iter().enumerate().map(|(i, &(_, n))| (i as f64, Some(n as f64 / data))).collect(),
    };
    let size_chart = Chart {
        title: format!("Request sizes: {what}"),
        x_label: "size".into(),
        y_label: "share of requests".into(),
        lines: vec![sizes],
        x_names: by_count.iter().map(|&(b, _)| size_name(b)).collect(),
        dots: true,
        ..Chart::default()
    };
    let rate = Line {
        name: "requests".into(),
        points: f.iops_per_second.iter().enumerate().map(|(s, &n)| (s as f64, Some(n as f64))).collect(),
    };
    let rate_chart = Chart {
        title: format!("Requests each second: {what}"),
        x_label: "seconds from the capture's first request".into(),
        y_label: "requests per second".into(),
        lines: vec![rate],
        ..Chart::default()
    };
    vec![size_chart, rate_chart]
}

/// A request size as people say it: 512 B, 4 KiB, 1 MiB.
fn size_name(bytes: u32) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}
