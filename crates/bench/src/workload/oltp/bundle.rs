//! An OLTP run into its bundle: where it went and its summary as it starts (what was asked),
//! then the driver run with each second recorded and its finished summary, for
//! [`crate::run::measure`].

use super::ds3::Ds3Database;
use super::entry;
use super::users::{self, OltpInterval, OltpOutcome, OltpSpec, TXN_KINDS};
use crate::run::StopFlag;
use crate::run::measure::{Finished, Recording, started_summary};
use crate::run::record::{End, Recordable};
use crate::workload::oltp::summary::OltpFacts;
use std::sync::Arc;
use storbench_report::{DeviceInfo, OltpResults, Results, Summary, TargetInfo};

/// What the caller shows of the run as it goes: each second, and the whole once it ended.
pub trait Watch {
    fn interval(&mut self, closed: &OltpInterval);
    fn ended(&mut self, outcome: &OltpOutcome, targets: &[String]);
}

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
        ..started_summary(entry::WORKLOAD.name, started_at, Results::Oltp(OltpResults::default()))
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

/// Runs the driver on `dbs`, each second into the bundle and to `watch`; its finished summary.
pub fn record(
    rec: &mut Recording,
    first: Summary,
    spec: &OltpSpec,
    (dbs, place): (&[Arc<dyn Ds3Database>], &OltpPlace),
    stop: &StopFlag,
    watch: &mut dyn Watch,
) -> Result<Finished, crate::db::DbError> {
    let outcome = users::run(spec, dbs, &mut rec.sampler, stop, &mut |iv| {
        watch.interval(iv);
        rec.bundle.recorded(iv, entry::WORKLOAD.name, &iv.interval.data.tally());
    })?;
    let totals = &outcome.totals.total;
    let mut hists = vec![("order", &totals.order_rt)];
    hists.extend(TXN_KINDS.iter().map(|&k| (k.as_str(), &totals.txn(k).latency)));
    rec.bundle.totals(outcome.counted_from_s(), outcome.measured_s, &hists);
    watch.ended(&outcome, &place.targets);
    let ended_at = jiff::Timestamp::now().to_string();
    let facts = OltpFacts::of(&outcome, &place.targets);
    let end = End::of(&ended_at, &outcome, &facts);
    let outcome = outcome.with(facts);
    let summary = crate::workload::oltp::summary::summary(first, &outcome, &ended_at);
    // A database that went away, or threads that gave up: the run failed, whatever it measured
    // before (the summary keeps that, marked incomplete).
    let failure =
        (!outcome.failures.is_empty()).then(|| format!("the run failed: {}", outcome.failures.join("; ")));
    Ok(Finished { summary, end: Some(end), unsaid: Vec::new(), failure })
}
