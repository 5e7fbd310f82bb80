//! Pass or fail: the thresholds applied per database as Jetstress applies them. Averages are
//! over the measured phase; a maximum is the highest average over any sample window (Jetstress
//! judges its 15-second counter samples, not single I/Os), with the single slowest I/O
//! reported beside it.

use super::preset::Thresholds;
use super::recorder::MailboxRecorder;
use serde::Serialize;

/// One check of the verdict: the report model's, so that summary.json holds it as judged.
pub use storbench_report::ThresholdCheck;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub pass: bool,
    pub checks: Vec<ThresholdCheck>,
}

impl Verdict {
    /// The checks that failed, one line each.
    pub fn failures(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| {
                let db = c.database.map(|d| format!(" (database {d})")).unwrap_or_default();
                let Some(v) = c.value else {
                    return format!(
                        "{}{db}: not judged, no sample reached storage (limit {})",
                        c.name, c.limit
                    );
                };
                let how = if LOWER_BOUNDS.contains(&c.name.as_str()) { "is not above" } else { "exceeds" };
                format!("{}{db}: {v:.1} {how} {}", c.name, c.limit)
            })
            .collect()
    }
}

/// Checks whose value must reach (or pass) the limit rather than stay under it.
const LOWER_BOUNDS: [&str; 2] = ["target_iops", "operations_per_sec"];

/// Latency sums of one sample window of one database.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WindowSums {
    pub read_ns: f64,
    pub reads: u64,
    pub log_ns: f64,
    pub log_writes: u64,
}

impl WindowSums {
    pub fn of(r: &MailboxRecorder) -> Self {
        WindowSums {
            read_ns: r.db_reads.latency.mean_ns() * r.db_reads.ios as f64,
            reads: r.db_reads.ios,
            log_ns: r.log_writes.latency.mean_ns() * r.log_writes.ios as f64,
            log_writes: r.log_writes.ios,
        }
    }

    /// Mean database read latency, ms; None without reads.
    pub fn read_ms(&self) -> Option<f64> {
        ms(self.read_ns, self.reads)
    }

    pub fn add(&mut self, o: &WindowSums) {
        self.read_ns += o.read_ns;
        self.reads += o.reads;
        self.log_ns += o.log_ns;
        self.log_writes += o.log_writes;
    }
}

fn ms(ns: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| ns / n as f64 / 1e6)
}

/// What the judge looks at.
pub struct Evidence<'a> {
    /// Per database: its measured totals and its per-second sums, in order.
    pub databases: &'a [(MailboxRecorder, Vec<WindowSums>)],
    pub measured_s: f64,
    /// Seconds per sample window for the maxima.
    pub window_s: usize,
    /// Transactional IOPS asked for (all databases), and the tolerance below it.
    pub target_iops: Option<f64>,
}

/// Applies `t` to the evidence.
pub fn judge(t: &Thresholds, e: &Evidence) -> Verdict {
    let mut checks = Vec::new();
    let mut all = MailboxRecorder::default();
    let check = |name: &str, database, value: Option<f64>, limit: f64| ThresholdCheck {
        name: name.to_string(),
        database,
        value,
        limit,
        // A threshold nothing measured (no database read reached storage) is not judged,
        // which is never a pass.
        pass: value.is_some_and(|v| v <= limit),
    };
    for (i, (rec, seconds)) in e.databases.iter().enumerate() {
        let db = Some(i as u32 + 1);
        all.merge(rec);
        let total = WindowSums::of(rec);
        let mut windows: Vec<WindowSums> = seconds
            .chunks(e.window_s.max(1))
            .map(|c| {
                c.iter().fold(WindowSums::default(), |mut a, s| {
                    a.add(s);
                    a
                })
            })
            .collect();
        // A short last window would be judged on fewer samples than the others: it joins the
        // window before it.
        if windows.len() > 1 && !seconds.len().is_multiple_of(e.window_s.max(1)) {
            let last = windows.pop().expect("more than one");
            windows.last_mut().expect("one left").add(&last);
        }
        let max = |f: fn(&WindowSums) -> Option<f64>| {
            windows.iter().filter_map(f).fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
        };
        checks.push(check("db_read_avg_ms", db, ms(total.read_ns, total.reads), t.db_read_avg_ms));
        checks.push(check("db_read_max_ms", db, max(|w| ms(w.read_ns, w.reads)), t.db_read_max_ms));
        checks.push(check("log_write_avg_ms", db, ms(total.log_ns, total.log_writes), t.log_write_avg_ms));
        checks.push(check("log_write_max_ms", db, max(|w| ms(w.log_ns, w.log_writes)), t.log_write_max_ms));
        // A database that did nothing has no latency to judge: it fails rather than passes.
        let ops = rec.operations() as f64 / e.measured_s.max(1e-9);
        checks.push(ThresholdCheck {
            name: "operations_per_sec".into(),
            database: db,
            value: Some(ops),
            limit: 0.0,
            pass: ops > 0.0,
        });
    }
    let secs = e.measured_s.max(1e-9);
    checks.push(check(
        "page_fault_stalls_per_sec",
        None,
        Some(all.page_fault_stalls as f64 / secs),
        t.page_fault_stalls_per_sec,
    ));
    checks.push(check("io_errors", None, Some(all.errors.total() as f64), 0.0));
    checks.push(check("checksum_errors", None, Some(all.checksum_errors as f64), 0.0));
    if let Some(target) = e.target_iops {
        let achieved = all.transactional_ios() as f64 / secs;
        // Here the value must reach the limit, not stay under it: report the shortfall.
        checks.push(ThresholdCheck {
            name: "target_iops".into(),
            database: None,
            value: Some(achieved),
            limit: target * 0.95,
            pass: achieved >= target * 0.95,
        });
    }
    Verdict { pass: checks.iter().all(|c| c.pass), checks }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(read_ms: &[(u64, u64)], log_ms: &[(u64, u64)]) -> (MailboxRecorder, Vec<WindowSums>) {
        let mut total = MailboxRecorder::default();
        let mut secs = Vec::new();
        for (&(r_ms, r_n), &(l_ms, l_n)) in read_ms.iter().zip(log_ms) {
            let mut s = MailboxRecorder::default();
            (0..r_n).for_each(|_| s.db_reads.record(8192, r_ms * 1_000_000));
            (0..l_n).for_each(|_| s.log_writes.record(4096, l_ms * 1_000_000));
            s.ops[3] = r_n;
            secs.push(WindowSums::of(&s));
            total.merge(&s);
        }
        (total, secs)
    }

    fn thresholds() -> Thresholds {
        super::super::Preset::V2007.thresholds(super::super::TestType::Performance)
    }

    #[test]
    fn a_run_within_every_limit_passes() {
        let dbs = [db(&[(5, 100), (8, 100)], &[(2, 50), (3, 50)])];
        let v = judge(
            &thresholds(),
            &Evidence { databases: &dbs, measured_s: 2.0, window_s: 1, target_iops: None },
        );
        assert!(v.pass, "{:?}", v.failures());
    }

    #[test]
    fn one_slow_window_fails_the_maximum_though_the_average_passes() {
        // 14 quiet seconds then one of 60 ms reads: average 7.3 ms, window maximum 60 ms.
        let mut reads = vec![(4, 100); 14];
        reads.push((60, 100));
        let dbs = [db(&reads, &vec![(1, 10); 15])];
        let ev = |w| Evidence { databases: &dbs, measured_s: 15.0, window_s: w, target_iops: None };
        let v = judge(&thresholds(), &ev(1));
        assert!(!v.pass);
        assert_eq!(v.failures(), vec!["db_read_max_ms (database 1): 60.0 exceeds 50".to_string()]);
        // Judged over one 15 s window, as Jetstress samples: the spike is averaged in.
        assert!(judge(&thresholds(), &ev(15)).pass);
        // A short last window (here 2 s after 15) joins the one before it, so two slow
        // seconds at the end do not make a window of their own.
        let mut reads = vec![(4, 100); 15];
        reads.extend([(60, 100), (60, 100)]);
        let dbs = [db(&reads, &vec![(1, 10); 17])];
        let v = judge(
            &thresholds(),
            &Evidence { databases: &dbs, measured_s: 17.0, window_s: 15, target_iops: None },
        );
        assert!(v.pass, "{:?}", v.failures());
    }

    #[test]
    fn a_database_that_did_nothing_fails() {
        let dbs = [db(&[(1, 0)], &[(1, 0)])];
        let v = judge(
            &thresholds(),
            &Evidence { databases: &dbs, measured_s: 5.0, window_s: 15, target_iops: None },
        );
        // Its latencies have no sample: not judged, which fails too, saying so.
        assert_eq!(
            v.failures(),
            [
                "db_read_avg_ms (database 1): not judged, no sample reached storage (limit 20)",
                "db_read_max_ms (database 1): not judged, no sample reached storage (limit 50)",
                "log_write_avg_ms (database 1): not judged, no sample reached storage (limit 10)",
                "log_write_max_ms (database 1): not judged, no sample reached storage (limit 50)",
                "operations_per_sec (database 1): 0.0 is not above 0",
            ]
        );
    }

    #[test]
    fn a_threshold_on_reads_that_never_reached_storage_is_not_judged_and_never_passes() {
        // Log writes within every limit, but no database read: the databases sat in the cache.
        let (mut rec, secs) = db(&[(1, 0), (1, 0)], &[(1, 50), (1, 50)]);
        rec.ops[3] = 100;
        let dbs = [(rec, secs)];
        let v = judge(
            &thresholds(),
            &Evidence { databases: &dbs, measured_s: 2.0, window_s: 1, target_iops: None },
        );
        assert!(!v.pass);
        let failed: Vec<&str> = v.checks.iter().filter(|c| !c.pass).map(|c| c.name.as_str()).collect();
        assert_eq!(failed, ["db_read_avg_ms", "db_read_max_ms"]);
    }

    #[test]
    fn stalls_errors_and_a_missed_target_each_fail_the_run() {
        let (mut rec, secs) = db(&[(1, 10)], &[(1, 10)]);
        rec.page_fault_stalls = 5;
        let dbs = [(rec, secs)];
        let v = judge(
            &thresholds(),
            &Evidence { databases: &dbs, measured_s: 2.0, window_s: 1, target_iops: Some(100.0) },
        );
        let failed: Vec<&str> = v.checks.iter().filter(|c| !c.pass).map(|c| c.name.as_str()).collect();
        assert_eq!(failed, vec!["page_fault_stalls_per_sec", "target_iops"]);
    }
}
