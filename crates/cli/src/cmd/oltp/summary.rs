//! Puts a finished OLTP run into the report model.

use storbench_bench::workload::oltp::users::{OltpOutcome, OltpRecorder, OltpSpec, TXN_KINDS};
use storbench_report::{
    CpuUsage, DeviceInfo, ErrorCounts, OltpResults, OltpTargetResult, Phases, Results, Summary, TargetInfo,
    TxnResult,
};

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
        ..crate::measure::started_summary("oltp", started_at, Results::Oltp(OltpResults::default()))
    }
}

pub fn finished(mut s: Summary, out: &OltpOutcome, targets: &[String], ended_at: &str) -> Summary {
    let secs = out.measured_s;
    s.complete = out.complete;
    s.ended_at = Some(ended_at.into());
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: secs };
    s.results = Results::Oltp(results(out, targets));
    let ops = out.totals.total.orders;
    s.cpu = CpuUsage {
        user_s: out.cpu.user.as_secs_f64(),
        sys_s: out.cpu.sys.as_secs_f64(),
        ns_per_io: (ops > 0).then(|| out.cpu.total().as_secs_f64() * 1e9 / ops as f64),
    };
    s.warnings.extend(out.failures.iter().cloned());
    s
}

fn per_min(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 * 60.0 / secs } else { 0.0 }
}

fn results(out: &OltpOutcome, targets: &[String]) -> OltpResults {
    let t = &out.totals.total;
    let secs = out.measured_s;
    OltpResults {
        opm: per_min(t.orders, secs),
        orders: t.orders,
        purchases: t.purchases,
        rollbacks: t.rollbacks,
        rollback_pct: (t.orders > 0).then(|| 100.0 * t.rollbacks as f64 / t.orders as f64),
        failed_orders: t.failed_orders,
        order_rt_mean_ns: (t.orders > 0).then(|| t.order_rt_sum_ns as f64 / t.orders as f64),
        order_rt_ns: t.order_rt.summary(),
        transactions: transactions(t, secs),
        errors: ErrorCounts {
            total: t.errors.total(),
            by_kind: t.errors.by_kind.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        },
        reconnects: t.reconnects,
        threads: out.detail.threads as u64,
        targets: out
            .totals
            .parts
            .iter()
            .zip(targets)
            .map(|(r, name)| OltpTargetResult {
                target: name.clone(),
                opm: per_min(r.orders, secs),
                orders: r.orders,
                rollbacks: r.rollbacks,
                failed_orders: r.failed_orders,
            })
            .collect(),
        purchases_from_start: out.all.total.purchases,
        rollbacks_from_start: out.all.total.rollbacks,
    }
}

fn transactions(t: &OltpRecorder, secs: f64) -> std::collections::BTreeMap<String, TxnResult> {
    TXN_KINDS
        .iter()
        .map(|&k| {
            let c = t.txn(k);
            let r = TxnResult {
                calls: c.calls,
                per_sec: if secs > 0.0 { c.calls as f64 / secs } else { 0.0 },
                mean_ns: (c.calls > 0).then(|| c.sum_ns as f64 / c.calls as f64),
                lat_ns: c.latency.summary(),
            };
            (k.as_str().to_string(), r)
        })
        .collect()
}

/// The run's parameters, with the plan-file keys (DS3's names).
fn parameters(spec: &OltpSpec, place: &OltpPlace) -> serde_json::Value {
    serde_json::json!({
        "backend": place.backend,
        "db_size": place.db_size,
        "n_threads": spec.n_threads,
        "targets": place.targets.len(),
        "run_time_s": spec.run_time.as_secs_f64(),
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
