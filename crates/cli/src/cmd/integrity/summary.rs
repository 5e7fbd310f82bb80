//! The summary of an integrity run: what was asked (parameters), and from the outcome the
//! figures of `IntegrityResults` (damaged pages by class, each once, and every occurrence,
//! over the run and the audit together; per activity I/O, total I/O time, throttling, delayed
//! I/Os), and whether it passed, failed or was interrupted.

use storbench_bench::workload::integrity::{
    Activity, AuditFinding, AuditReport, ErrorClass, IntegrityOutcome, IntegrityRecorder, IntegritySpec, PAGE,
};
use storbench_report::{
    AuditResult, CpuUsage, DeviceInfo, IntegrityActivity, IntegrityErrors, IntegrityResults, Phases, Results,
    Summary, TargetInfo,
};

pub fn started(spec: &IntegritySpec, name: &str, device: Option<DeviceInfo>, started_at: &str) -> Summary {
    Summary {
        name: name.into(),
        seed: spec.seed,
        parameters: parameters(spec),
        target: TargetInfo {
            path: spec.dir.display().to_string(),
            kind: "files".into(),
            size_bytes: spec.sizes.max_bytes(),
            direct: spec.direct,
            device,
        },
        engine: spec.engine.name().into(),
        ..crate::measure::started_summary(
            "integrity",
            started_at,
            Results::Integrity(IntegrityResults {
                delay_threshold_s: spec.delay_threshold.as_secs_f64(),
                target_io_ms: spec.target_io.as_secs_f64() * 1e3,
                data_initial_bytes: spec.sizes.data_pages * PAGE as u64,
                data_max_bytes: spec.sizes.data_max_pages * PAGE as u64,
                log_bytes: spec.sizes.log_pages * PAGE as u64,
                ..Default::default()
            }),
        )
    }
}

fn parameters(spec: &IntegritySpec) -> serde_json::Value {
    let page = PAGE as u64;
    serde_json::json!({
        "target": spec.dir.display().to_string(),
        "data_size": spec.sizes.data_pages * page,
        "data_max": spec.sizes.data_max_pages * page,
        "data_growth": spec.sizes.growth_pages * page,
        "log_size": spec.sizes.log_pages * page,
        "duration": spec.duration.as_secs_f64(),
        "users": spec.users,
        "target_io_ms": spec.target_io.as_secs_f64() * 1e3,
        "delay_threshold": spec.delay_threshold.as_secs_f64(),
        "buffered": !spec.direct,
        "write_through": spec.write_through,
        "seed": spec.seed,
        "engine": spec.engine.name(),
        "page_size": page,
    })
}

/// The finished summary of a run that a stop request ended when `interrupted`.
pub fn finish(
    mut s: Summary,
    spec: &IntegritySpec,
    out: &IntegrityOutcome,
    interrupted: bool,
    ended_at: &str,
) -> Summary {
    let t = &out.totals;
    let all = t.total();
    let secs = out.measured_s.max(1e-9);
    let suspects = &out.detail.suspects;
    let errors = by_class(|c| suspects.iter().filter(|p| p.class == c).count() as u64);
    let mut occurrences = errors_of_run(t);
    if let Some(a) = &out.detail.audit {
        occurrences.add(&errors_of_audit(a));
    }
    let audited = out.detail.audit.as_ref().is_some_and(|a| a.complete);
    let found_again = suspects.iter().filter(|p| p.audit == AuditFinding::Found).count();
    let r = IntegrityResults {
        pass: errors.total() == 0 && audited && out.failures.is_empty(),
        interrupted,
        occurrences,
        audit_found: audited.then_some(found_again as u64),
        shrinks_held: out.detail.shrinks_held,
        ios: all.ios(),
        iops: all.ios() as f64 / secs,
        bytes: all.reads.bytes + all.writes.bytes,
        total_io_time_s: all.io_time_ns as f64 / 1e9,
        throttled_ios: all.throttled,
        delayed_ios: all.delayed,
        delay_threshold_s: spec.delay_threshold.as_secs_f64(),
        target_io_ms: spec.target_io.as_secs_f64() * 1e3,
        lat_ns: merged_latency(&all),
        errors,
        pages_checked: all.pages_checked,
        activities: Activity::ALL.iter().map(|&a| activity(a, t, secs)).collect(),
        audit: out.detail.audit.as_ref().map(|a| AuditResult {
            pages_checked: a.pages_checked,
            seconds: out.detail.audit_s,
            bytes_per_sec: a.pages_checked as f64 * PAGE as f64 / out.detail.audit_s.max(1e-9),
            complete: a.complete,
        }),
        data_initial_bytes: out.detail.data_initial_bytes,
        data_final_bytes: out.detail.data_final_bytes,
        data_max_bytes: spec.sizes.data_max_pages * PAGE as u64,
        log_bytes: spec.sizes.log_pages * PAGE as u64,
        grows: out.detail.grows,
        shrinks: out.detail.shrinks,
        crash: None,
    };
    s.complete = out.complete && audited;
    s.ended_at = Some(ended_at.into());
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: out.measured_s };
    s.cpu = CpuUsage {
        user_s: out.cpu.user.as_secs_f64(),
        sys_s: out.cpu.sys.as_secs_f64(),
        ns_per_io: (r.ios > 0).then(|| out.cpu.total().as_secs_f64() * 1e9 / r.ios as f64),
    };
    s.warnings.extend(out.warnings.iter().cloned());
    s.warnings.extend(out.failures.iter().cloned());
    match (&out.detail.audit, &out.detail.audit_failure) {
        (Some(_), _) => {}
        (None, Some(why)) => {
            s.warnings.push(format!("the final audit was {why}; not every page was checked"))
        }
        (None, None) => {
            s.warnings.push("the run was stopped before the final audit; not every page was checked".into())
        }
    }
    if out.detail.shrinks_held > 0 {
        s.warnings.push(format!(
            "{} shrink(s) of the data file stopped above a damaged page, which stays for the audit",
            out.detail.shrinks_held
        ));
    }
    s.results = Results::Integrity(r);
    s
}

fn merged_latency(
    all: &storbench_bench::workload::integrity::recorder::ActivityCounters,
) -> Option<storbench_report::LatencyNs> {
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

fn errors_of_run(t: &IntegrityRecorder) -> IntegrityErrors {
    by_class(|c| t.count_of(c))
}

/// The audit's errors by class.
pub fn errors_of_audit(a: &AuditReport) -> IntegrityErrors {
    by_class(|c| a.errors_by_class.get(&c).copied().unwrap_or(0))
}

fn by_class(count: impl Fn(ErrorClass) -> u64) -> IntegrityErrors {
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

/// The summary of crash cycles: their figures, errors and the audits' reading rate.
pub fn crashed(mut s: Summary, c: &super::crash::Cycles, ended_at: &str) -> Summary {
    let Results::Integrity(mut r) = s.results.clone() else { return s };
    r.errors = c.errors.clone();
    r.pass = c.complete && c.errors.total() == 0 && c.crash.lost == 0;
    r.audit = Some(AuditResult {
        pages_checked: c.pages_checked,
        seconds: c.audit_s,
        bytes_per_sec: c.pages_checked as f64 * PAGE as f64 / c.audit_s.max(1e-9),
        complete: c.complete,
    });
    r.crash = Some(c.crash.clone());
    s.complete = c.complete;
    s.ended_at = Some(ended_at.into());
    s.phases = Phases { ramp_s: 0.0, measured_s: c.run_s };
    s.warnings.push(
        "crash cycles: the I/O figures of a killed writer are not kept; the summary holds what the audits found".into(),
    );
    s.results = Results::Integrity(r);
    s
}
