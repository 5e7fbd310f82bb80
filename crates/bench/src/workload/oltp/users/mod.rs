//! DS3's simulated users (what DS3 calls its driver; storbench's run driver is
//! `crate::run::drive`): `run` is the one entry point.
//!
//! Threads are assigned to targets round-robin (thread i to target i mod n, as DS3 does), each
//! with one connection. When every thread is connected the clock starts; the warm-up runs
//! like the measured phase and is then dropped whole (every counter starts again from zero).
//! The run driver (`run::drive`, `Pace::Timer`), on the caller's thread, closes an interval
//! every second on its own timer, whatever the threads are doing: each thread's recorder is
//! swapped out and merged per target, and the databases' counters are sampled.
//!
//! A database that goes away (its server stopped, or every connection refused) is the run
//! driver's no-progress rule: while every thread of a target is failing the workload is stuck,
//! and after the run driver's limit ([`crate::run::NO_PROGRESS_LIMIT`], or twice the think time
//! plus a second when that is longer: a user thinks between orders) the run ends as failed;
//! its figures up to then are kept and marked incomplete, never reported as a whole run. A
//! shorter outage is ridden out: threads reconnect at least once a second.

pub mod fidelity;
mod recorder;
mod spec;
mod user;
mod worker;

pub use recorder::{LAST_N, OltpRecorder, TXN_KINDS, TxnCounters, TxnKind};
pub use spec::OltpSpec;

use crate::db::{CounterSampler, DbError, DbErrorKind};
use crate::metrics::LatencyHistogram;
use crate::run::{
    Beside, Closed, Interval, Length, Lifecycle, Outcome, Pace, Parts, RunShape, SeriesColumn, Started,
    StopFlag, Take, Warmup,
};
use crate::workload::oltp::ds3::Ds3Database;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};
use storbench_report::columns::{db as db_col, oltp as col};
use worker::{ENDING, Shared, Worker};

/// How long threads may take to finish the order they are in once the run has ended.
const DRAIN: Duration = Duration::from_secs(30);

/// One interval as the caller sees it: all targets merged (`data.total`) and per target
/// (`data.parts`); `phase_total` is everything since the phase began (the warm-up, or the
/// measured phase after the reset), what DS3's cumulative lines report.
pub type OltpInterval<'a> = Closed<'a, Parts<OltpRecorder>>;

/// What a run measured: `totals` is the measured phase, `all` includes the warm-up (DS3's
/// n_purchase_from_start and n_rollbacks_from_start); both per target in `parts`. The CPU
/// time is storbench's over the measured phase (with SQLite, the database's too).
pub type OltpOutcome = Outcome<Parts<OltpRecorder>, OltpDetail>;

/// What only the OLTP workload has in its outcome.
#[derive(Debug)]
pub struct OltpDetail {
    pub threads: usize,
}

/// Runs the workload against `targets` (at least one), `spec.n_threads` threads each.
/// Fails before the clock starts when a thread cannot connect.
pub fn run(
    spec: &OltpSpec,
    targets: &[Arc<dyn Ds3Database>],
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&OltpInterval),
) -> Result<OltpOutcome, DbError> {
    let n = spec.n_threads as usize * targets.len();
    let (done, done_rx) = std::sync::mpsc::channel();
    let shared = Arc::new(Shared::new(n));
    let users =
        Users { spec: Arc::new(spec.clone()), targets: targets.to_vec(), threads: n, shared, done, done_rx };
    users.run(sampler, stop, on_interval)
}

/// DS3's users: a thread each, all connected before the clock starts.
struct Users {
    spec: Arc<OltpSpec>,
    targets: Vec<Arc<dyn Ds3Database>>,
    /// `spec.n_threads` per target.
    threads: usize,
    shared: Arc<Shared>,
    /// Each thread says here that it has returned.
    done: std::sync::mpsc::Sender<()>,
    done_rx: std::sync::mpsc::Receiver<()>,
}

impl Lifecycle for Users {
    type Work = OltpWork;
    type Detail = OltpDetail;
    type Error = DbError;

    /// Starts every thread (staggered at the ramp rate) and waits until all are connected.
    fn start(&mut self, stop: &StopFlag) -> Result<Started<OltpWork>, DbError> {
        let (spec, targets, shared, n) = (&self.spec, &self.targets, &self.shared, self.threads);
        let stagger = Duration::from_secs_f64(n as f64 / spec.ramp_rate.max(1e-3));
        for id in 0..n {
            let w = Worker {
                id,
                db: targets[id % targets.len()].clone(),
                spec: spec.clone(),
                shared: shared.clone(),
                stop: stop.clone(),
                stagger,
            };
            let done = self.done.clone();
            std::thread::Builder::new()
                .name(format!("oltp-{}", id + 1))
                .spawn(move || {
                    w.run();
                    let _ = done.send(());
                })
                .map_err(|e| {
                    DbError::new(DbErrorKind::Query, format!("starting user thread {}: {e}", id + 1))
                })?;
        }
        let counters = targets.iter().map(|t| t.counters()).collect::<Result<Vec<_>, _>>()?;
        wait_connected(shared, n, spec.connect_timeout + stagger, stop)?;
        let at = Instant::now();
        shared.release(Some(at));
        let work = OltpWork {
            shared: shared.clone(),
            targets: targets.iter().map(|t| t.describe()).collect(),
            counters,
            db: [None; 7],
            dead_after: crate::run::NO_PROGRESS_LIMIT.max(spec.think_time * 2 + Duration::from_secs(1)),
        };
        Ok(Started { plan: run_plan(spec), work, at })
    }

    /// Lets the threads finish the order they are in, for at most `DRAIN`.
    fn finish(self, _work: OltpWork, driven: Outcome<Parts<OltpRecorder>>) -> Result<OltpOutcome, DbError> {
        let n = self.threads;
        self.shared.state.store(ENDING, Relaxed);
        let mut failures =
            std::mem::take(&mut *self.shared.failures.lock().unwrap_or_else(|p| p.into_inner()));
        drop(self.done);
        let finished = (0..n).take_while(|_| self.done_rx.recv_timeout(DRAIN).is_ok()).count();
        if finished < n {
            failures.push(format!(
                "{} thread(s) were still inside a database call {DRAIN:?} after the end",
                n - finished
            ));
        }
        let mut out = driven.with(OltpDetail { threads: n });
        out.failed(failures);
        Ok(out)
    }
}

fn run_plan(spec: &OltpSpec) -> RunShape {
    RunShape {
        warmup: Warmup::For(spec.warmup_time),
        length: Length::For(spec.run_time),
        interval: spec.interval,
        rounds: spec.steady_state,
    }
}

/// Waits until every thread holds a connection; an error names the first that failed.
fn wait_connected(shared: &Shared, n: usize, timeout: Duration, stop: &StopFlag) -> Result<(), DbError> {
    let deadline = Instant::now() + timeout;
    loop {
        let failed = shared.failures.lock().unwrap_or_else(|p| p.into_inner()).first().cloned();
        let outcome = if let Some(why) = failed {
            Some(DbError::new(DbErrorKind::Connection, why))
        } else if shared.connected.load(Relaxed) == n {
            return Ok(());
        } else if stop.is_stopped() {
            Some(DbError::new(DbErrorKind::Connection, "interrupted while connecting"))
        } else if Instant::now() >= deadline {
            let k = shared.connected.load(Relaxed);
            Some(DbError::new(
                DbErrorKind::Connection,
                format!("only {k} of {n} threads connected within {timeout:?}"),
            ))
        } else {
            None
        };
        if let Some(e) = outcome {
            shared.release(None);
            return Err(e);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The OLTP workload as the run driver sees it: the threads' recorders and the databases'
/// counters, taken at each boundary.
struct OltpWork {
    shared: Arc<Shared>,
    /// Each target, described.
    targets: Vec<String>,
    counters: Vec<Box<dyn CounterSampler>>,
    /// The databases' counters over the interval just taken.
    db: [Option<f64>; 7],
    /// How long every thread of a target may fail before the run ends (the run driver's
    /// no-progress limit for this workload).
    dead_after: Duration,
}

impl OltpWork {
    /// The first target all of whose threads are failing now, with the last error one of
    /// them saw.
    fn failing_target(&self) -> Option<String> {
        let n = self.targets.len();
        (0..n).find_map(|t| {
            let threads = (t..self.shared.slots.len()).step_by(n);
            let since =
                threads.clone().map(|id| self.shared.failing_from(id)).collect::<Option<Vec<u64>>>()?;
            let latest = since.into_iter().max()?;
            let last = threads
                .filter_map(|id| self.shared.last_error[id].lock().unwrap_or_else(|p| p.into_inner()).clone())
                .next()
                .unwrap_or_default();
            Some(format!(
                "every connection to {} is failing, since {:.1} s into the run (the server stopped or refuses \
                 work; the last error: {last})",
                self.targets[t],
                latest as f64 / 1e9
            ))
        })
    }
}

impl crate::run::Workload for OltpWork {
    type Data = Parts<OltpRecorder>;
    const COLUMNS: &'static [&'static [SeriesColumn<Self>]] = &[ORDER_COLUMNS, &TXN_COLUMNS, &DB_COLUMNS];

    fn pace(&self) -> Pace {
        Pace::Timer
    }

    /// Takes every thread's recorder, leaving fresh ones, merged per target; and sees whether
    /// a target has stopped answering.
    fn take(&mut self, _index: u64, now_ns: u64) -> Take<Self::Data> {
        let n = self.targets.len();
        let mut per_target = vec![OltpRecorder::default(); n];
        for (id, slot) in self.shared.slots.iter().enumerate() {
            let rec = std::mem::take(&mut *slot.lock().unwrap_or_else(|p| p.into_inner()));
            per_target[id % n].merge(&rec);
        }
        self.db = sample_databases(&mut self.counters);
        Take::Closed { end_ns: now_ns, data: Parts::new(per_target) }
    }

    /// Stuck while every thread of a target fails; working when an order or a call completed.
    fn progress(&self, data: &Self::Data) -> crate::run::Progress {
        use crate::run::Progress;
        if let Some(why) = self.failing_target() {
            return Progress::Stuck(why);
        }
        let t = &data.total;
        if t.orders + t.txns.iter().map(|c| c.calls).sum::<u64>() > 0 {
            Progress::Working
        } else {
            Progress::Idle
        }
    }

    fn no_progress_limit(&self) -> Duration {
        self.dead_after
    }
}

/// The databases' counters: rates summed over targets, the hit ratio averaged.
fn sample_databases(counters: &mut [Box<dyn CounterSampler>]) -> [Option<f64>; 7] {
    let samples: Vec<[Option<f64>; 7]> = counters.iter_mut().map(|c| c.sample()).collect();
    std::array::from_fn(|i| {
        let vals: Vec<f64> = samples.iter().filter_map(|s| s[i]).collect();
        let sum: f64 = vals.iter().sum();
        match (vals.is_empty(), i) {
            (true, _) => None,
            (false, 0) => Some(sum / vals.len() as f64),
            (false, _) => Some(sum),
        }
    })
}

type Of<'a> = Interval<'a, Parts<OltpRecorder>>;

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn quantile_ms(h: &LatencyHistogram, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| ms(h.quantile_ns(q) as f64))
}

fn count(n: u64) -> Option<f64> {
    Some(n as f64)
}

/// Orders per minute over `secs` seconds.
fn opm(orders: u64, secs: f64) -> Option<f64> {
    (secs > 0.0).then(|| orders as f64 * 60.0 / secs)
}

/// Orders and OPM (this interval, and cumulative over the phase as DS3's lines have it),
/// rollbacks, failures and the order response time, all targets merged.
const ORDER_COLUMNS: &[SeriesColumn<OltpWork>] = &[
    SeriesColumn { column: col::ORDERS, value: |_, i| count(i.data.total.orders) },
    SeriesColumn { column: col::OPM, value: |_, i| opm(i.data.total.orders, i.span_s()) },
    SeriesColumn {
        column: col::OPM_CUMULATIVE,
        value: |_, i| opm(i.phase_total.total.orders, i.phase_elapsed_s),
    },
    SeriesColumn { column: col::ROLLBACKS, value: |_, i| count(i.data.total.rollbacks) },
    SeriesColumn { column: col::FAILED_ORDERS, value: |_, i| count(i.data.total.failed_orders) },
    SeriesColumn { column: col::ERRORS, value: |_, i| count(i.data.total.errors.total()) },
    SeriesColumn { column: col::RECONNECTS, value: |_, i| count(i.data.total.reconnects) },
    SeriesColumn { column: col::ORDER_RT_MEAN_MS, value: |_, i| order_rt_mean_ms(&i.data.total) },
    SeriesColumn { column: col::ORDER_RT_P50_MS, value: |_, i| quantile_ms(&i.data.total.order_rt, 0.5) },
    SeriesColumn { column: col::ORDER_RT_P99_MS, value: |_, i| quantile_ms(&i.data.total.order_rt, 0.99) },
    SeriesColumn { column: col::ORDER_RT_MAX_MS, value: |_, i| quantile_ms(&i.data.total.order_rt, 1.0) },
];

fn order_rt_mean_ms(d: &OltpRecorder) -> Option<f64> {
    (d.orders > 0).then(|| ms(d.order_rt_sum_ns as f64 / d.orders as f64))
}

fn txn_mean_ms(i: &Of, kind: TxnKind) -> Option<f64> {
    let t = i.data.total.txn(kind);
    (t.calls > 0).then(|| ms(t.sum_ns as f64 / t.calls as f64))
}

/// Calls, mean and p99 response time in ms of each transaction type (`col::TXN`'s order).
macro_rules! txn_columns {
    ($($kind:ident $n:literal),*) => {
        [$(
            SeriesColumn { column: col::TXN[$n][0], value: |_, i| count(i.data.total.txn(TxnKind::$kind).calls) },
            SeriesColumn { column: col::TXN[$n][1], value: |_, i| txn_mean_ms(i, TxnKind::$kind) },
            SeriesColumn {
                column: col::TXN[$n][2],
                value: |_, i| quantile_ms(&i.data.total.txn(TxnKind::$kind).latency, 0.99),
            },
        )*]
    };
}

const TXN_COLUMNS: [SeriesColumn<OltpWork>; 30] = txn_columns!(Login 0, NewCustomer 1, NewMember 2, Browse 3,
    ReviewBrowse 4, GetReviews 5, NewReview 6, NewHelpfulness 7, Purchase 8, PriceQuery 9);

/// The databases' counters (rates summed over targets, the hit ratio averaged), in
/// `db_col::ALL`'s order as every backend's sampler gives them.
const DB_COLUMNS: [SeriesColumn<OltpWork>; 7] = [
    SeriesColumn { column: db_col::CACHE_HIT_PCT, value: |w, _| w.db[0] },
    SeriesColumn { column: db_col::BLOCKS_READ_PER_SEC, value: |w, _| w.db[1] },
    SeriesColumn { column: db_col::BLOCKS_WRITTEN_PER_SEC, value: |w, _| w.db[2] },
    SeriesColumn { column: db_col::CHECKPOINTS, value: |w, _| w.db[3] },
    SeriesColumn { column: db_col::COMMITS_PER_SEC, value: |w, _| w.db[4] },
    SeriesColumn { column: db_col::ROLLBACKS_PER_SEC, value: |w, _| w.db[5] },
    SeriesColumn { column: db_col::DEADLOCKS, value: |w, _| w.db[6] },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_stuck_while_every_one_of_its_threads_fails() {
        use crate::run::{Progress, Workload};
        let shared = Arc::new(Shared::new(4));
        let work = OltpWork {
            shared: shared.clone(),
            targets: vec!["a".into(), "b".into()],
            counters: Vec::new(),
            db: [None; 7],
            dead_after: crate::run::NO_PROGRESS_LIMIT,
        };
        let at = |s: f64| (s * 1e9) as u64;
        let refused = DbError::new(DbErrorKind::Connection, "connection refused");
        let idle = Parts::new(vec![OltpRecorder::default(); 2]);
        let mut busy = idle.clone();
        busy.total.orders = 3;
        // Target a has threads 0 and 2.
        shared.failing(0, at(1.0), &refused);
        assert_eq!(work.progress(&busy), Progress::Working, "thread 2 of a still works");
        assert_eq!(work.progress(&idle), Progress::Idle);
        shared.failing(2, at(2.0), &refused);
        let Progress::Stuck(why) = work.progress(&busy) else { panic!("a is down whatever b does") };
        assert!(why.starts_with("every connection to a is failing, since 2.0 s"), "{why}");
        assert!(why.contains("connection refused"), "{why}");
        shared.working(0);
        assert_eq!(work.progress(&busy), Progress::Working, "thread 0 connected again");
        assert_eq!(work.no_progress_limit(), crate::run::NO_PROGRESS_LIMIT);
    }

    #[test]
    fn each_transaction_types_columns_carry_its_name() {
        let names = [
            "login",
            "new_customer",
            "new_member",
            "browse",
            "review_browse",
            "get_reviews",
            "new_review",
            "new_helpfulness",
            "purchase",
            "price_query",
        ];
        for ((kind, columns), name) in TXN_KINDS.into_iter().zip(col::TXN).zip(names) {
            assert!(columns.iter().all(|c| c.name.starts_with(name)), "{kind:?} {columns:?}");
            assert_eq!(format!("{kind:?}").to_lowercase(), name.replace('_', ""));
        }
    }
}
