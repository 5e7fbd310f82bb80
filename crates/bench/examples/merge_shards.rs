//! Shard bundles for timing `storbench merge` (bench/merge-speed.sh): `COUNT` shards of a run
//! of `SECONDS` one-second intervals, made from a real bundle `TEMPLATE` (its start, end and
//! series row), each interval with read latencies over a few hundred distinct HDR buckets.
//!
//! `cargo run --release -p storbench-bench --example merge_shards -- TEMPLATE OUT COUNT SECONDS`

use std::path::Path;
use storbench_bench::files::{self, input};
use storbench_bench::metrics::{HlogWriter, LatencyHistogram};
use storbench_bench::run::record::summary::{Rebuild, rebuild_record};
use storbench_bench::run::record::{HLOG_FILE, IntervalLine, Line, RECORD_FILE, StoredRecord};
use storbench_report::series::Phase;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [template, out, count, seconds] = &args[..] else {
        return Err("give TEMPLATE OUT COUNT SECONDS".into());
    };
    let number = |s: &str| s.parse::<u32>().map_err(|e| format!("{s}: {e}"));
    let (count, seconds) = (number(count)?, number(seconds)?);
    let read =
        |name: &str| input::read_text(&Path::new(template).join(name), 1 << 30).map_err(|e| e.to_string());
    let (record, series) = (read(RECORD_FILE)?, read("timeseries.csv")?);
    let lines: Vec<Line> = record
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let (Some(Line::Start(start)), Some(Line::End(end))) = (lines.first(), lines.last()) else {
        return Err("the template's record lacks its start or end".into());
    };
    for index in 1..=count {
        let dir = Path::new(out).join(format!("shard{index}"));
        files::create_dirs(&dir).map_err(|e| e.to_string())?;
        let bundle = shard(start, end, &series, index, count, seconds);
        for (name, text) in bundle {
            files::write_atomic(&dir.join(name), text.as_bytes()).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Shard `index` of `count`: its record, log and series.
fn shard(
    start: &storbench_bench::run::record::Start,
    end: &storbench_bench::run::record::End,
    series: &str,
    index: u32,
    count: u32,
    seconds: u32,
) -> Vec<(&'static str, String)> {
    let mut start = start.clone();
    // The shards started together, a few milliseconds apart.
    start.epoch_ns += i128::from(index) * 3_000_000;
    let host = format!("node{}", (index - 1) / 4);
    start.summary.host.hostname.clone_from(&host);
    start.summary.shard = Some(storbench_report::ShardInfo {
        index,
        count,
        host,
        from: "--shard".into(),
        ..Default::default()
    });
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(index));
    let mut record = vec![serde_json::to_string(&Line::Start(Box::new(start.clone()))).expect("json")];
    let mut hlog = HlogWriter::new(Vec::new(), start.epoch_ns as f64 / 1e9).expect("memory");
    for n in 0..seconds {
        let (read, service, lag) =
            (rng.latencies(2000, 60_000), rng.latencies(2000, 40_000), rng.latencies(50, 1_000));
        let hists =
            [("read", &read), ("read.service", &service), ("write", &LatencyHistogram::new()), ("lag", &lag)];
        for (tag, h) in hists {
            hlog.write(tag, f64::from(n), 1.0, h).expect("memory");
        }
        let line = IntervalLine {
            stream: "io".into(),
            index: n.into(),
            phase: Phase::Measure,
            start_ns: u64::from(n) * 1_000_000_000,
            end_ns: u64::from(n + 1) * 1_000_000_000,
            counts: [("read.ios".into(), read.count()), ("read.bytes".into(), read.count() * 4096)].into(),
            hists: hists.iter().map(|(t, _)| (*t).into()).collect(),
            tail: false,
            cpu_user_ns: u64::from(n) * 50_000_000,
            cpu_sys_ns: u64::from(n) * 30_000_000,
            power_watts: Some(100.0 + f64::from(index % 7)),
            rebuild: Vec::new(),
        };
        record.push(serde_json::to_string(&Line::Interval(line)).expect("json"));
    }
    let mut end = end.clone();
    end.facts.measured_s = f64::from(seconds);
    record.push(serde_json::to_string(&Line::End(end)).expect("json"));
    let hlog = String::from_utf8(hlog.into_inner()).expect("text");
    let record = record.join("\n") + "\n";
    // The summary its record rebuilds, as a run writes it: merge checks each shard by it.
    let stored = StoredRecord::from_text(&record, &hlog).expect("the shard's record");
    let io: Rebuild = storbench_bench::workload::io::summary::rebuilt;
    let summary = rebuild_record(&stored, None, |w| (w == "io").then_some(io)).expect("an io record");
    vec![
        (RECORD_FILE, record),
        (HLOG_FILE, hlog),
        ("timeseries.csv", rows(series, seconds)),
        ("summary.json", storbench_report::export::summary_json(&summary)),
    ]
}

/// The template's series: its header, and its first row for every second.
fn rows(series: &str, seconds: u32) -> String {
    let mut lines = series.lines();
    let (header, row) = (lines.next().unwrap_or_default(), lines.next().unwrap_or_default());
    let rest = row.split_once(',').map_or("", |(_, r)| r);
    let mut out = format!("{header}\n");
    for n in 1..=seconds {
        out.push_str(&format!("{n}.000,{rest}\n"));
    }
    out
}

/// xorshift64: reproducible shards without a generator crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `n` latencies around `typical_ns` with a long tail: a few hundred distinct buckets.
    fn latencies(&mut self, n: u32, typical_ns: u64) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for _ in 0..n {
            let spread = (self.next() % 1000) as f64 / 1000.0;
            let tail = if self.next().is_multiple_of(50) { 40.0 } else { 1.0 };
            h.record((typical_ns as f64 * (0.5 + 2.0 * spread * spread) * tail) as u64);
        }
        h
    }
}
