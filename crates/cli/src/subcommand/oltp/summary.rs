//! An OLTP run's summary as it starts: what was asked and where (the finished figures are
//! built in the library, `storbench_bench::run::record::summary::oltp`).

use storbench_bench::workload::oltp::users::OltpSpec;
use storbench_report::{DeviceInfo, OltpResults, Results, Summary, TargetInfo};

/// Where the run went, as the summary records it.
pub struct OltpPlace {
    pub backend: &'static str,
    /// Every target, described without passwords.
    pub targets: Vec<String>,
    pub db_size: String,
    pub device: Option<DeviceInfo>,
    pub size_bytes: u64,
}

pub fn started(spec: &OltpSpec, place: &OltpPlace, name: &str, started_at: &str) -> Summary {
    Summary {
        name: name.into(),
        seed: spec.seed,
        parameters: parameters(spec, place),
        target: TargetInfo {
            path: place.targets.join(";"),
            kind: place.backend.into(),
            size_bytes: place.size_bytes,
            direct: false,
            device: place.device.clone(),
        },
        engine: place.backend.into(),
        ..crate::measure::started_summary(
            super::entry::KIND.name,
            started_at,
            Results::Oltp(OltpResults::default()),
        )
    }
}

/// The run's parameters, with the plan-file keys (DS3's names).
fn parameters(spec: &OltpSpec, place: &OltpPlace) -> serde_json::Value {
    serde_json::json!({
        "backend": place.backend,
        "db_size": place.db_size,
        "n_threads": spec.n_threads,
        "targets": place.targets.len(),
        "run_time_s": spec.run_time.as_secs_f64(),
        "steady_state_s": spec.steady_state.map(|r| r.as_secs_f64()),
        "warmup_time_s": spec.warmup_time.as_secs_f64(),
        "think_time_s": spec.think_time.as_secs_f64(),
        "ramp_rate": spec.ramp_rate,
        "pct_newcustomers": spec.pct_newcustomers,
        "pct_newmember": spec.pct_newmember,
        "n_searches": spec.n_searches,
        "search_batch_size": spec.search_batch_size,
        "search_depth": spec.search_depth,
        "n_reviews": spec.n_reviews,
        "pct_newreviews": spec.pct_newreviews,
        "pct_newhelpfulness": spec.pct_newhelpfulness,
        "n_line_items": spec.n_line_items,
        "ds2_mode": spec.ds2_mode,
        "restock": spec.restock,
        "max_customer": spec.max_customer,
        "max_product": spec.max_product,
        "seed": spec.seed,
    })
}
