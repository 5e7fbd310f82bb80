//! The DVD Store workload (`storbench oltp run`) in the report: orders per minute as its
//! headline, the order response time, and its per-second charts. Its errors are failed
//! database calls, not I/Os, and it has no check of its own.

use super::ReportInput;
use super::charts::{Spec, spec};
use super::doc::{Block, Table, num};
use super::spectrum::LatencyTypes;
use super::workload::{Shown, p99_ms};
use crate::columns::oltp;
use crate::decision::figures::{Figure, Value, ms, n, names, read};
use crate::disclosure::Disclosure;
use crate::evaluation::Headline;
use crate::model::{IoErrors, OltpResults};
use crate::setup::PageSize;
use crate::summary::Summary;
use crate::workload::{Reported, WorkloadResults};

const CHARTS: &[Spec] = &[
    spec("Orders per minute", &[(oltp::OPM, "OPM")]),
    spec("Order response time", &[(oltp::ORDER_RT_P50_MS, "p50"), (oltp::ORDER_RT_P99_MS, "p99")]),
];

/// The figures a requirement may name (`oltp.order_p99_ms`), each over the measured phase.
pub(super) const FIGURES: &[Figure<OltpResults>] = &[
    Figure { name: "opm", unit: "OPM", get: |r| n(r.opm) },
    Figure {
        name: "order_mean_ms",
        unit: "ms order mean",
        get: |r| r.order_rt_mean_ns.and_then(|v| n(v / 1e6)),
    },
    Figure {
        name: "order_p50_ms",
        unit: "ms order p50",
        get: |r| r.order_rt_ns.as_ref().and_then(|l| ms(l.p50)),
    },
    Figure {
        name: "order_p90_ms",
        unit: "ms order p90",
        get: |r| r.order_rt_ns.as_ref().and_then(|l| ms(l.p90)),
    },
    Figure {
        name: "order_p99_ms",
        unit: "ms order p99",
        get: |r| r.order_rt_ns.as_ref().and_then(|l| ms(l.p99)),
    },
    Figure { name: "rollback_pct", unit: "% rolled back", get: |r| r.rollback_pct.and_then(n) },
    Figure { name: "failed_orders", unit: "failed orders", get: |r| n(r.failed_orders as f64) },
    Figure { name: "errors", unit: "failed calls", get: |r| n(r.errors.total as f64) },
];

/// What oltp reports (its registry entry's `reported`).
pub const REPORTED: Reported =
    Reported { figures: || names(FIGURES), latency_types: LatencyTypes::Tags(&[("order", "orders")]) };

impl WorkloadResults for OltpResults {
    fn reported(&self) -> Reported {
        REPORTED
    }

    fn figure(&self, name: &str) -> Option<Option<Value>> {
        read(FIGURES, self, name)
    }

    fn headline(&self) -> Option<Headline> {
        Some(Headline::new("OPM", self.opm, true))
    }

    fn io_errors(&self) -> Option<IoErrors<'_>> {
        None
    }
}

impl Shown for OltpResults {
    /// Its backend's page size: the stated setting where the disclosure has the backend's,
    /// else the backend's default.
    fn page_size(&self, s: &Summary, d: &Disclosure) -> Option<PageSize> {
        let backend = s.target.kind.as_str();
        let stated = d.database.kind.as_deref() == Some(backend);
        let none = Default::default();
        crate::setup::database_page_size(
            backend,
            if stated { &d.database.non_default_settings } else { &none },
        )
    }

    fn latencies(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![("order mean", self.order_rt_mean_ns.map(|v| v / 1e6)), ("order p99", p99_ms(&self.order_rt_ns))]
    }

    fn charts(&self) -> &'static [Spec] {
        CHARTS
    }

    fn section(&self, input: &ReportInput) -> Vec<Block> {
        per_target(input)
    }
}

/// A row per database (in the order the runs name them) and the total, a column per run.
fn opm_by_run(runs: &[(&crate::evaluation::RunRecord, &OltpResults)]) -> Table {
    let mut header = vec!["database".to_string()];
    header.extend(runs.iter().map(|(run, _)| format!("{} OPM", run.id)));
    let mut t = Table::new(&header.iter().map(String::as_str).collect::<Vec<_>>());
    let mut databases: Vec<&str> = Vec::new();
    for x in runs.iter().flat_map(|(_, r)| &r.targets) {
        if !databases.contains(&x.target.as_str()) {
            databases.push(&x.target);
        }
    }
    for db in databases {
        let opm =
            |r: &OltpResults| r.targets.iter().find(|x| x.target == db).map_or("—".into(), |x| num(x.opm));
        t.push(std::iter::once(db.to_string()).chain(runs.iter().map(|(_, r)| opm(r))).collect());
    }
    t.push(std::iter::once("total".to_string()).chain(runs.iter().map(|(_, r)| num(r.opm))).collect());
    t
}

/// OPM per database of every run that passed and drove more than one, a column per run, as
/// 001's Figure 7 shows each virtual machine's share; then the reported run's orders.
fn per_target(input: &ReportInput) -> Vec<Block> {
    let mut out = Vec::new();
    for (g, _) in super::workload::groups_of::<OltpResults>(input) {
        let passed = super::workload::passed_runs::<OltpResults>(input, &g);
        let passed: Vec<_> = passed.into_iter().filter(|(_, r)| r.targets.len() >= 2).collect();
        if passed.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push(Block::Heading(2, "OLTP per database".into()));
        }
        out.push(Block::Para(format!("{}{}, OPM in each run:", g.configuration, super::at(g.sweep))));
        out.push(Block::Table(opm_by_run(&passed)));
        out.extend(super::workload::left_out(&g).map(Block::Para));
        let Some(run) = g.reported() else { continue };
        let Some(r) = input.runs.get(&run.id).and_then(|d| d.summary.results.get::<OltpResults>()) else {
            continue;
        };
        if r.targets.len() < 2 {
            continue;
        }
        out.push(Block::Para(format!("The reported run, {}:", run.id)));
        let mut t = Table::new(&["database", "OPM", "orders", "rollbacks", "failed orders"]);
        for x in &r.targets {
            t.push(vec![
                x.target.clone(),
                num(x.opm),
                x.orders.to_string(),
                x.rollbacks.to_string(),
                x.failed_orders.to_string(),
            ]);
        }
        t.push(vec![
            "total".into(),
            num(r.opm),
            r.orders.to_string(),
            r.rollbacks.to_string(),
            r.failed_orders.to_string(),
        ]);
        out.push(Block::Table(t));
    }
    out
}
