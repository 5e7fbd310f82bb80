//! The OLTP workload's summary from its outcome: orders per minute (DS3's OPM), rollbacks,
//! each transaction type's calls and latency, errors, per target figures.

use crate::run::Outcome;
use crate::run::Parts;
use crate::run::record::{RecordError, StoredRecord};
use crate::run::record::{Recordable, Tally};
use crate::workload::oltp::users::{OltpOutcome, OltpRecorder, TXN_KINDS, TxnKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use storbench_report::{OltpResults, OltpTargetResult, Phases, Results, Summary, TxnResult};

/// What only an OLTP run's outcome holds, as the record keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OltpFacts {
    pub threads: u64,
    /// Every target, described without passwords, in the order of the outcome's parts.
    pub targets: Vec<String>,
}

impl OltpFacts {
    pub fn of(out: &OltpOutcome, targets: &[String]) -> OltpFacts {
        OltpFacts { threads: out.detail.threads as u64, targets: targets.to_vec() }
    }
}

impl Recordable for OltpRecorder {
    fn tally(&self) -> Tally<'_> {
        let mut t = Tally::default();
        t.count("orders", self.orders);
        t.count("purchases", self.purchases);
        t.count("rollbacks", self.rollbacks);
        t.count("failed_orders", self.failed_orders);
        t.count("order_rt_sum_ns", self.order_rt_sum_ns);
        t.count("reconnects", self.reconnects);
        t.errors("errors", &self.errors);
        t.hist("order", &self.order_rt);
        for k in TXN_KINDS {
            let c = self.txn(k);
            t.count(format!("{}.calls", k.as_str()), c.calls);
            t.count(format!("{}.sum_ns", k.as_str()), c.sum_ns);
            t.hist(k.as_str(), &c.latency);
        }
        t
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        let mut r = OltpRecorder {
            orders: t.get("orders"),
            purchases: t.get("purchases"),
            rollbacks: t.get("rollbacks"),
            failed_orders: t.get("failed_orders"),
            order_rt: t.histogram("order"),
            order_rt_sum_ns: t.get("order_rt_sum_ns"),
            errors: t.error_tally("errors"),
            reconnects: t.get("reconnects"),
            ..Default::default()
        };
        for (c, k) in r.txns.iter_mut().zip(TXN_KINDS) {
            c.calls = t.get(&format!("{}.calls", k.as_str()));
            c.sum_ns = t.get(&format!("{}.sum_ns", k.as_str()));
            c.latency = t.histogram(k.as_str());
        }
        Ok(r)
    }
}

/// The summary of a finished (or interrupted) run: `started` with the outcome's figures.
pub fn summary(started: Summary, out: &Outcome<Parts<OltpRecorder>, OltpFacts>, ended_at: &str) -> Summary {
    let mut s = crate::run::record::summary::ended(started, ended_at);
    s.complete = out.complete;
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: out.measured_s };
    s.results = Results::Oltp(results(out));
    s.cpu = crate::run::record::summary::cpu_usage(out, out.totals.total.orders);
    s.warnings.extend(out.warnings.iter().cloned());
    s.warnings.extend(out.failures.iter().cloned());
    s.steady_state = out.steady.clone();
    s
}

/// An oltp run's summary built again from its record (a [`crate::run::record::summary::Rebuild`]).
pub fn rebuilt(
    record: &StoredRecord,
    started: Summary,
    window: Option<(f64, f64)>,
    at: &str,
) -> Result<Summary, RecordError> {
    Ok(summary(started, &crate::run::record::summary::outcome(record, window)?, at))
}

fn per_min(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 * 60.0 / secs } else { 0.0 }
}

fn results(out: &Outcome<Parts<OltpRecorder>, OltpFacts>) -> OltpResults {
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
        errors: crate::run::record::summary::error_counts(&t.errors),
        reconnects: t.reconnects,
        threads: out.detail.threads,
        targets: out
            .totals
            .parts
            .iter()
            .zip(&out.detail.targets)
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

fn transactions(t: &OltpRecorder, secs: f64) -> BTreeMap<String, TxnResult> {
    TXN_KINDS
        .iter()
        .map(|&k: &TxnKind| {
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
