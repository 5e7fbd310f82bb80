//! oltp's table on the terminal.

use crate::output::{latency, new_table};
use storbench_report::{Results, Summary};

/// An OLTP run: OPM and orders, then a row per transaction type with calls and latency.
pub fn oltp_table(s: &Summary) -> String {
    let Results::Oltp(r) = &s.results else { return String::new() };
    let mut head = new_table(&["OPM", "orders", "rollbacks", "failed", "order mean", "order p99", "errors"]);
    head.add_row(vec![
        format!("{:.0}", r.opm),
        r.orders.to_string(),
        r.rollback_pct.map_or_else(|| "n/a".into(), |p| format!("{} ({p:.1} %)", r.rollbacks)),
        r.failed_orders.to_string(),
        r.order_rt_mean_ns.map_or_else(|| "n/a".into(), latency),
        r.order_rt_ns.as_ref().map_or_else(|| "n/a".into(), |l| latency(l.p99 as f64)),
        r.errors.total.to_string(),
    ]);
    let mut t = new_table(&["transaction", "calls", "per s", "mean", "p50", "p99", "max"]);
    for (name, x) in &r.transactions {
        let pct = |f: fn(&storbench_report::LatencyNs) -> u64| {
            x.lat_ns.as_ref().map_or_else(|| "n/a".into(), |l| latency(f(l) as f64))
        };
        t.add_row(vec![
            name.clone(),
            x.calls.to_string(),
            format!("{:.1}", x.per_sec),
            x.mean_ns.map_or_else(|| "n/a".into(), latency),
            pct(|l| l.p50),
            pct(|l| l.p99),
            pct(|l| l.max),
        ]);
    }
    let steady = crate::subcommand::io::table::steady_line(s).map(|l| format!("\n{l}")).unwrap_or_default();
    format!("{head}\n{t}{steady}")
}
