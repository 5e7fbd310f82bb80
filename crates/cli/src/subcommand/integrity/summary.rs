//! The summary of an integrity run as it starts (what was asked: parameters); the figures of a
//! run and of crash cycles are built in the library
//! (`storbench_bench::run::record::summary::integrity`).

pub use storbench_bench::run::record::summary::integrity::errors_of_audit;
use storbench_bench::workload::integrity::{IntegritySpec, PAGE};
use storbench_report::{CrashResult, DeviceInfo, IntegrityResults, Results, Summary, TargetInfo};

/// The summary of a run of `spec` as it starts; crash cycles' (`crash`) have a `crash` result
/// from the start (what tells their record from a run's).
pub fn started(
    spec: &IntegritySpec,
    name: &str,
    device: Option<DeviceInfo>,
    started_at: &str,
    crash: bool,
) -> Summary {
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
            super::entry::KIND.name,
            started_at,
            Results::Integrity(IntegrityResults {
                delay_threshold_s: spec.delay_threshold.as_secs_f64(),
                target_io_ms: spec.target_io.as_secs_f64() * 1e3,
                data_initial_bytes: spec.sizes.data_pages * PAGE as u64,
                data_max_bytes: spec.sizes.data_max_pages * PAGE as u64,
                log_bytes: spec.sizes.log_pages * PAGE as u64,
                crash: crash.then(CrashResult::default),
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
