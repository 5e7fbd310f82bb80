//! The integrity workload's summary from its outcome: damaged pages by class (each once) and
//! every occurrence over the run and the audit, per activity I/O, total I/O time, throttling,
//! delayed I/Os, the audit, and whether the run passed; crash cycles' summary in `crash`.

pub mod crash;

use crate::run::Outcome;
use crate::run::record::{RecordError, StoredRecord};
use crate::run::record::{Recordable, Tally};
use crate::workload::integrity::recorder::ActivityCounters;
use crate::workload::integrity::{
    Activity, AuditFinding, AuditReport, ErrorClass, IntegrityOutcome, IntegrityRecorder, PAGE,
};
use serde::{Deserialize, Serialize};
use storbench_report::{
    AuditResult, IntegrityActivity, IntegrityErrors, IntegrityResults, LatencyNs, Phases, Results, Summary,
};

/// What an integrity run knows besides its intervals, as the record keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntegrityFacts {
    /// A stop request ended the run.
    pub interrupted: bool,
    /// Damaged pages by class, each page once (the run's reads and the audit).
    pub damaged: IntegrityErrors,
    /// Damaged pages the audit found again.
    pub found_again: u64,
    pub audit: Option<AuditFacts>,
    pub audit_s: f64,
    pub audit_failure: Option<String>,
    pub shrinks_held: u64,
    pub data_initial_bytes: u64,
    pub data_final_bytes: u64,
    pub grows: u64,
    pub shrinks: u64,
}

/// What the final audit found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AuditFacts {
    pub pages_checked: u64,
    pub complete: bool,
    pub errors: IntegrityErrors,
}

impl IntegrityFacts {
    pub fn of(out: &IntegrityOutcome, interrupted: bool) -> IntegrityFacts {
        let d = &out.detail;
        IntegrityFacts {
            interrupted,
            damaged: by_class(|c| d.suspects.iter().filter(|p| p.class == c).count() as u64),
            found_again: d.suspects.iter().filter(|p| p.audit == AuditFinding::Found).count() as u64,
            audit: d.audit.as_ref().map(|a| AuditFacts {
                pages_checked: a.pages_checked,
                complete: a.complete,
                errors: errors_of_audit(a),
            }),
            audit_s: d.audit_s,
            audit_failure: d.audit_failure.clone(),
            shrinks_held: d.shrinks_held,
            data_initial_bytes: d.data_initial_bytes,
            data_final_bytes: d.data_final_bytes,
            grows: d.grows,
            shrinks: d.shrinks,
        }
    }
}

/// The classes' names in the order of `CLASSES`, as the record counts them.
const CLASS_NAMES: [&str; 7] = [
    "lost_writes",
    "stale_reads",
    "torn_pages",
    "misplaced_pages",
    "checksum",
    "read_errors",
    "write_errors",
];

impl Recordable for IntegrityRecorder {
    fn tally(&self) -> Tally<'_> {
        let mut t = Tally::default();
        let total = self.total();
        t.hist_owned("io", total.reads.latency);
        t.hist_owned("io_write", total.writes.latency);
        for a in Activity::ALL {
            let c = &self.activities[a.index()];
            let n = a.name();
            t.direction_if_any(&format!("{n}.reads"), &format!("{n}.read"), &c.reads);
            t.direction_if_any(&format!("{n}.writes"), &format!("{n}.write"), &c.writes);
            t.count(format!("{n}.io_time_ns"), c.io_time_ns);
            t.count(format!("{n}.throttled"), c.throttled);
            t.count(format!("{n}.delayed"), c.delayed);
            t.count(format!("{n}.pages_checked"), c.pages_checked);
        }
        for (name, n) in CLASS_NAMES.iter().zip(self.errors) {
            t.count(format!("errors.{name}"), n);
        }
        t.count("data_file_bytes", self.data_file_bytes);
        t.count("outstanding", self.outstanding);
        t
    }

    /// The run-wide `io` and `io_write` histograms are the activities' merged, so they are
    /// read from the activities.
    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        let mut r = IntegrityRecorder {
            data_file_bytes: t.get("data_file_bytes"),
            outstanding: t.get("outstanding"),
            ..Default::default()
        };
        for a in Activity::ALL {
            let n = a.name();
            r.activities[a.index()] = ActivityCounters {
                reads: t.direction_counters(&format!("{n}.reads"), &format!("{n}.read")),
                writes: t.direction_counters(&format!("{n}.writes"), &format!("{n}.write")),
                io_time_ns: t.get(&format!("{n}.io_time_ns")),
                throttled: t.get(&format!("{n}.throttled")),
                delayed: t.get(&format!("{n}.delayed")),
                pages_checked: t.get(&format!("{n}.pages_checked")),
            };
        }
        for (n, name) in r.errors.iter_mut().zip(CLASS_NAMES) {
            *n = t.get(&format!("errors.{name}"));
        }
        Ok(r)
    }
}

/// The summary of a finished (or interrupted) run: `started` (whose results hold what was
/// asked) with the outcome's figures.
pub fn summary(
    started: Summary,
    out: &Outcome<IntegrityRecorder, IntegrityFacts>,
    ended_at: &str,
) -> Summary {
    let mut s = crate::run::record::summary::ended(started, ended_at);
    let base = match &s.results {
        Results::Integrity(r) => r.clone(),
        _ => IntegrityResults::default(),
    };
    let f = &out.detail;
    let t = &out.totals;
    let mut occurrences = by_class(|c| t.count_of(c));
    if let Some(a) = &f.audit {
        occurrences.add(&a.errors);
    }
    let audited = f.audit.as_ref().is_some_and(|a| a.complete);
    let r = IntegrityResults {
        pass: f.damaged.total() == 0 && audited && out.failures.is_empty(),
        interrupted: f.interrupted,
        occurrences,
        audit_found: audited.then_some(f.found_again),
        shrinks_held: f.shrinks_held,
        errors: f.damaged.clone(),
        audit: f.audit.as_ref().map(|a| audit_result(a.pages_checked, f.audit_s, a.complete)),
        data_initial_bytes: f.data_initial_bytes,
        data_final_bytes: f.data_final_bytes,
        grows: f.grows,
        shrinks: f.shrinks,
        crash: None,
        ..measured(base, t, out.measured_s)
    };
    s.complete = out.complete && audited;
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: out.measured_s };
    s.cpu = crate::run::record::summary::cpu_usage(out, r.ios);
    s.warnings.extend(out.warnings.iter().cloned());
    s.warnings.extend(out.failures.iter().cloned());
    match (&f.audit, &f.audit_failure) {
        (Some(_), _) => {}
        (None, Some(why)) => {
            s.warnings.push(format!("the final audit was {why}; not every page was checked"))
        }
        (None, None) => {
            s.warnings.push("the run was stopped before the final audit; not every page was checked".into())
        }
    }
    if f.shrinks_held > 0 {
        s.warnings.push(format!(
            "{} shrink(s) of the data file stopped above a damaged page, which stays for the audit",
            f.shrinks_held
        ));
    }
    s.results = Results::Integrity(r);
    s
}

/// An integrity run's summary built again from its record (a [`crate::run::record::summary::Rebuild`]).
pub fn rebuilt(
    record: &StoredRecord,
    started: Summary,
    window: Option<(f64, f64)>,
    at: &str,
) -> Result<Summary, RecordError> {
    if crash::is_crash(&started) {
        return crash::rebuilt(record, started, window, at);
    }
    let mut out = crate::run::record::summary::outcome(record, window)?;
    errors_whenever(&mut out);
    Ok(summary(started, &out, at))
}

/// `base` with the I/O figures of `t`, measured over `measured_s` seconds: in all and per
/// activity.
fn measured(base: IntegrityResults, t: &IntegrityRecorder, measured_s: f64) -> IntegrityResults {
    let all = t.total();
    let secs = measured_s.max(1e-9);
    IntegrityResults {
        ios: all.ios(),
        iops: all.ios() as f64 / secs,
        bytes: all.reads.bytes + all.writes.bytes,
        total_io_time_s: all.io_time_ns as f64 / 1e9,
        throttled_ios: all.throttled,
        delayed_ios: all.delayed,
        lat_ns: merged_latency(&all),
        pages_checked: all.pages_checked,
        activities: Activity::ALL.iter().map(|&a| activity(a, t, secs)).collect(),
        ..base
    }
}

/// An audit of `pages_checked` pages in `seconds`, and its reading rate.
fn audit_result(pages_checked: u64, seconds: f64, complete: bool) -> AuditResult {
    AuditResult {
        pages_checked,
        seconds,
        bytes_per_sec: pages_checked as f64 * PAGE as f64 / seconds.max(1e-9),
        complete,
    }
}

/// A rebuilt outcome's totals with the errors of every interval and the tail, as the run
/// counts them (whenever they happened, warm-up included).
pub(super) fn errors_whenever(out: &mut Outcome<IntegrityRecorder, IntegrityFacts>) {
    out.totals.errors = out.all.errors;
}

fn merged_latency(all: &ActivityCounters) -> Option<LatencyNs> {
    let mut h = all.reads.latency.clone();
    h.merge(&all.writes.latency);
    h.summary()
}

fn activity(a: Activity, t: &IntegrityRecorder, secs: f64) -> IntegrityActivity {
    let c = &t.activities[a.index()];
    IntegrityActivity {
        name: a.name().into(),
        reads: c.reads.ios,
        writes: c.writes.ios,
        bytes: c.reads.bytes + c.writes.bytes,
        iops: c.ios() as f64 / secs,
        io_time_s: c.io_time_ns as f64 / 1e9,
        lat_ns: merged_latency(c),
        throttled_ios: c.throttled,
        delayed_ios: c.delayed,
    }
}

/// The audit's errors by class.
pub fn errors_of_audit(a: &AuditReport) -> IntegrityErrors {
    by_class(|c| a.errors_by_class.get(&c).copied().unwrap_or(0))
}

pub fn by_class(count: impl Fn(ErrorClass) -> u64) -> IntegrityErrors {
    IntegrityErrors {
        lost_writes: count(ErrorClass::LostWrites),
        stale_reads: count(ErrorClass::StaleReads),
        torn_pages: count(ErrorClass::TornPages),
        misplaced_pages: count(ErrorClass::MisplacedPages),
        checksum: count(ErrorClass::Checksum),
        read_errors: count(ErrorClass::ReadErrors),
        write_errors: count(ErrorClass::WriteErrors),
    }
}

#[cfg(test)]
#[test]
fn the_class_names_follow_the_classes_order() {
    use crate::workload::integrity::recorder::CLASSES;
    let e = by_class(|c| CLASSES.iter().position(|&k| k == c).unwrap() as u64);
    let v = serde_json::to_value(&e).unwrap();
    for (i, name) in CLASS_NAMES.iter().enumerate() {
        assert_eq!(v[name], i as u64, "{name}");
    }
}
