//! integrity's table on the terminal: the verdict with SQLIOSim's figures, the activities, and
//! for crash cycles what the audits found.

use crate::output::{latency, new_table};
use storbench_report::{IntegrityVerdict, Results, Summary};

/// An integrity run: the verdict with SQLIOSim's figures (total I/O time, throttled and
/// delayed I/Os), the errors by class, then each activity.
pub fn integrity_table(s: &Summary) -> String {
    let Results::Integrity(r) = &s.results else { return String::new() };
    let e = &r.errors;
    let verdict = match r.verdict() {
        IntegrityVerdict::Pass => "Pass",
        IntegrityVerdict::Fail => "FAIL",
        IntegrityVerdict::Interrupted => "interrupted",
    };
    let audit = r.audit.as_ref().map_or_else(
        || "not audited".to_string(),
        |a| format!("{} pages, {:.0} MB/s", a.pages_checked, a.bytes_per_sec / 1e6),
    );
    let mut head =
        new_table(&["result", "IOPS", "total I/O time", "throttled", "delayed", "errors", "audit"]);
    head.add_row(vec![
        verdict.into(),
        format!("{:.0}", r.iops),
        format!("{:.1} s", r.total_io_time_s),
        r.throttled_ios.to_string(),
        format!("{} (> {:.0} s)", r.delayed_ios, r.delay_threshold_s),
        e.total().to_string(),
        audit,
    ]);
    let mut t = new_table(&["activity", "reads", "writes", "IOPS", "p50", "p99", "I/O time", "throttled"]);
    for a in &r.activities {
        let lat = |f: fn(&storbench_report::LatencyNs) -> u64| {
            a.lat_ns.as_ref().map_or_else(|| "n/a".into(), |l| latency(f(l) as f64))
        };
        t.add_row(vec![
            a.name.clone(),
            a.reads.to_string(),
            a.writes.to_string(),
            format!("{:.0}", a.iops),
            lat(|l| l.p50),
            lat(|l| l.p99),
            format!("{:.1} s", a.io_time_s),
            a.throttled_ios.to_string(),
        ]);
    }
    let mut out = match &r.crash {
        Some(c) => {
            let mut k =
                new_table(&["result", "crash cycles", "writes acknowledged", "found", "lost", "errors"]);
            k.add_row(vec![
                verdict.into(),
                c.cycles.to_string(),
                c.writes_acknowledged.to_string(),
                c.writes_found.to_string(),
                c.lost.to_string(),
                e.total().to_string(),
            ]);
            // The writers' I/O up to each crash, when they recorded any (bundles before 0.1
            // kept none).
            if r.ios > 0 { format!("{k}\n{t}") } else { k.to_string() }
        }
        None => format!("{head}\n{t}"),
    };
    if e.total() > 0 {
        let mut c = new_table(&["error class", "damaged pages", "found"]);
        for ((name, n), (_, times)) in e.named().into_iter().zip(r.occurrences.named()) {
            if n > 0 {
                c.add_row(vec![name.into(), n.to_string(), format!("{times} times")]);
            }
        }
        out = format!(
            "{out}\n{c}\nsuspect_pages.csv in the bundle lists each damaged page once; errors.jsonl each finding with its file, offset, page, expected and found"
        );
    }
    out
}
