//! The summary of an integrity run as it starts (what was asked: parameters), and of crash
//! cycles; a run's figures are built in the library
//! (`storbench_bench::run::record::summary::integrity`).

pub use storbench_bench::run::record::summary::integrity::errors_of_audit;
use storbench_bench::workload::integrity::{IntegritySpec, PAGE};
use storbench_report::{AuditResult, DeviceInfo, IntegrityResults, Phases, Results, Summary, TargetInfo};

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
