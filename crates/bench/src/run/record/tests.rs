//! The record read back: histograms pair with their intervals, and merging the records of two
//! runs gives the percentiles of one run over the union of their I/Os.

use super::*;
use crate::metrics::{HlogWriter, Recorder};

const MS: u64 = 1_000_000;

/// The record and histogram log of a run of measured intervals, each with its reads'
/// latencies, as a bundle holds them.
fn bundle_of(intervals: &[Vec<u64>]) -> (String, String) {
    let started = test_summary("io");
    let start = Start {
        streams: Vec::new(),
        version: RECORD_VERSION,
        workload: "io".into(),
        epoch_ns: 1_795_000_000_000_000_000,
        summary: started,
    };
    let mut lines = vec![serde_json::to_string(&Line::Start(Box::new(start))).unwrap()];
    let mut hlog = HlogWriter::new(Vec::new(), 0.0).unwrap();
    for (index, latencies) in intervals.iter().enumerate() {
        let mut r = Recorder::default();
        latencies.iter().for_each(|&ns| r.read.record(4096, ns));
        let tally = r.tally();
        let (start_ns, end_ns) = (index as u64 * 1_000 * MS, (index as u64 + 1) * 1_000 * MS);
        for (tag, h) in &tally.hists {
            hlog.write(tag, start_ns as f64 / 1e9, 1.0, h).unwrap();
        }
        let line = IntervalLine {
            stream: "io".into(),
            index: index as u64,
            phase: Phase::Measure,
            start_ns,
            end_ns,
            counts: tally.counts.iter().map(|(k, n)| (k.as_str().into(), *n)).collect(),
            hists: tally.hists.iter().map(|(t, _)| t.as_str().into()).collect(),
            tail: false,
            cpu_user_ns: 0,
            cpu_sys_ns: 0,
            power_watts: None,
            rebuild: Vec::new(),
        };
        lines.push(serde_json::to_string(&Line::Interval(line)).unwrap());
    }
    let hlog = String::from_utf8(hlog.into_inner()).unwrap();
    (lines.join("\n") + "\n", hlog)
}

fn merged(bundle: (String, String)) -> Recorder {
    StoredRecord::from_text(&bundle.0, &bundle.1).unwrap().merged("io", |_| true).unwrap()
}

/// A stalling device: `n` I/Os at `fast` ms, one in `every` stalled for `stall` ms.
fn stalls(n: u64, fast: u64, every: u64, stall: u64) -> Vec<u64> {
    (0..n).map(|i| if i % every == every - 1 { stall * MS } else { fast * MS + i % 1000 }).collect()
}

#[test]
fn two_runs_merged_give_the_percentiles_of_one_run_over_the_union() {
    let a = [stalls(5_000, 1, 100, 50), stalls(5_000, 1, 100, 50)];
    let b = [stalls(2_000, 3, 20, 400)];
    let mut one = merged(bundle_of(&a));
    one.merge(&merged(bundle_of(&b)));
    let union: Vec<Vec<u64>> = a.iter().chain(&b).cloned().collect();
    let whole = merged(bundle_of(&union));
    assert_eq!(one.read.ios, 12_000);
    assert_eq!((one.read.ios, one.read.bytes), (whole.read.ios, whole.read.bytes));
    assert_eq!(one.read.latency.summary(), whole.read.latency.summary());
    // The known latencies: 9,900 fast at 1 ms and 1,900 at 3 ms, 100 stalls of 50 ms, 100 of
    // 400 ms: p99 is a 50 ms stall, the maximum a 400 ms one (each within HDR's 0.1 %).
    let s = whole.read.latency.summary().unwrap();
    let near = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 1e-3;
    assert!(near(s.p50, MS + 999) || s.p50 < 2 * MS, "{s:?}");
    assert!(near(s.p99, 50 * MS), "{s:?}");
    assert!(near(s.max, 400 * MS), "{s:?}");
}

#[test]
fn a_log_that_does_not_match_the_record_is_refused_naming_the_interval() {
    let (record, hlog) = bundle_of(&[stalls(10, 1, 5, 9), stalls(10, 1, 5, 9)]);
    // The log's first two histograms swapped.
    let mut lines: Vec<&str> = hlog.lines().collect();
    let first = lines.iter().position(|l| l.starts_with("Tag=")).unwrap();
    lines.swap(first, first + 1);
    let err = StoredRecord::from_text(&record, &lines.join("\n"))
        .unwrap()
        .merged::<Recorder>("io", |_| true)
        .unwrap_err();
    assert!(err.to_string().contains("interval 0 of the record names the histogram read"), "{err}");
}

#[test]
fn a_record_of_another_version_is_refused() {
    let (record, hists) = bundle_of(&[]);
    let other = record.replace("\"version\":1", "\"version\":2");
    let err = StoredRecord::from_text(&other, &hists).unwrap_err();
    assert!(err.to_string().contains("record version 2"), "{err}");
}

#[test]
fn a_window_takes_the_whole_measured_intervals_inside_it_and_their_seconds() {
    let intervals: Vec<Vec<u64>> = (1..=6).map(|n| vec![MS; n * 10]).collect();
    let (mut record, hists) = bundle_of(&intervals);
    let facts = Facts { warmup_s: 0.0, measured_s: 6.0, complete: true, ..Facts::default() };
    record += &(serde_json::to_string(&Line::End(test_end(facts))).unwrap() + "\n");
    let stored = StoredRecord::from_text(&record, &hists).unwrap();
    let out: Outcome<Recorder, serde_json::Value> = stored.outcome_in((2.0, 4.5)).unwrap();
    assert_eq!(out.totals.read.ios, 30 + 40, "seconds 2-3 and 3-4; 4-5 is not whole inside");
    assert_eq!((out.warmup_s, out.measured_s), (2.0, 2.0));
    assert!(out.warnings.iter().any(|w| w.contains("seconds 2-4")), "{:?}", out.warnings);
    let whole: Outcome<Recorder, serde_json::Value> = stored.outcome().unwrap();
    assert_eq!(whole.totals.read.ios, 210);
    assert!(stored.outcome_in::<Recorder, serde_json::Value>((6.0, 9.0)).is_err());
}

#[test]
fn a_handed_interval_reads_back_as_the_interval_it_was_with_its_histograms() {
    let mut r = Recorder::default();
    stalls(500, 1, 50, 20).iter().for_each(|&ns| r.read.record(4096, ns));
    r.write.record(8192, 3 * MS);
    let tally = r.tally();
    let mut line = IntervalLine {
        stream: "integrity".into(),
        index: 4,
        phase: Phase::Measure,
        start_ns: 4_000 * MS,
        end_ns: 5_000 * MS,
        counts: tally.counts.iter().map(|(k, n)| (k.as_str().into(), *n)).collect(),
        hists: tally.hists.iter().map(|(t, _)| t.as_str().into()).collect(),
        tail: false,
        cpu_user_ns: 7,
        cpu_sys_ns: 8,
        power_watts: None,
        rebuild: Vec::new(),
    };
    let text = serde_json::to_string(&HandedInterval::of(line.clone(), &tally)).unwrap();
    let handed: HandedInterval = serde_json::from_str(&text).unwrap();
    let (back, back_tally) = handed.into_parts().unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&line).unwrap());
    let again = Recorder::from_tally(&back_tally).unwrap();
    assert_eq!((again.read.ios, again.write.bytes), (500, 8192));
    assert_eq!(again.read.latency.summary(), r.read.latency.summary());
    // A line naming more histograms than it holds is refused.
    line.hists.push("another".into());
    let short = HandedInterval { line, hists: HandedInterval::of(back, &tally).hists };
    assert!(short.into_parts().unwrap_err().contains("holds"));
}

#[test]
fn schedule_lag_is_recorded_only_when_paced_and_its_summary_reads_back_from_the_record() {
    use crate::workload::io::summary::{IoFacts, summary};
    let mut paced = Recorder::default();
    paced.read.record(4096, 2 * MS);
    [MS / 10, MS / 10, 3 * MS].iter().for_each(|&ns| paced.lag.record(ns));
    let tally = paced.tally();
    assert!(tally.hists.iter().any(|(tag, _)| tag == "lag"));
    let back = Recorder::from_tally(&tally).unwrap();
    assert_eq!(back.lag.summary(), paced.lag.summary());
    let unpaced = Recorder::default();
    assert!(unpaced.tally().hists.iter().all(|(tag, _)| tag != "lag"), "an unpaced interval keeps no lag");
    let results = |r: &Recorder| {
        let out = Facts::default().outcome(r.clone(), r.clone(), IoFacts::default());
        serde_json::to_value(summary(test_summary("io"), &out, "now").results).unwrap()
    };
    let lag = &results(&back)["schedule_lag_ms"];
    let p99 = lag["p99"].as_f64().unwrap();
    assert!((p99 - 3.0).abs() < 0.003 && lag["max"] == lag["p99"], "{lag}");
    assert!(lag["p50"].as_f64().unwrap() < 0.1001, "{lag}");
    assert!(results(&unpaced).get("schedule_lag_ms").is_none(), "no lag field at all, not zeros");
}
