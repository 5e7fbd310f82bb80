//! The DS3 driver: `run` is its one entry point.
//!
//! Threads are assigned to targets round-robin (thread i to target i mod n, as DS3 does), each
//! with one connection. When every thread is connected the clock starts; the warm-up runs
//! like the measured phase and is then dropped whole (every counter starts again from zero).
//! The coordinator, on the caller's thread, closes an interval every second on its own timer,
//! whatever the threads are doing: it swaps each thread's recorder out, merges them per target
//! and overall, samples the host and the databases, and hands the row to the caller.

mod recorder;
mod spec;
mod user;
mod worker;

pub use recorder::{LAST_N, OltpRecorder, TXN_KINDS, TxnCounters, TxnKind};
pub use spec::OltpSpec;

use crate::db::{CounterSampler, DB_COLUMNS, Database, DbError, DbErrorKind};
use crate::run::{HostSampler, OwnCpuTime, Schedule, StopFlag, process_cpu, sleep_until};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};
use storbench_report::series::{Phase, SeriesRow};
use worker::{ENDING, Shared, Worker};

/// How long threads may take to finish the order they are in once the run has ended.
const DRAIN: Duration = Duration::from_secs(30);

/// One interval as the caller sees it.
pub struct OltpInterval<'a> {
    pub row: SeriesRow,
    /// Seconds since the start at which the interval began.
    pub start_s: f64,
    /// This interval, all targets merged, and per target.
    pub data: &'a OltpRecorder,
    pub per_target: &'a [OltpRecorder],
    /// Everything since the current phase began (the warm-up, or the measured phase after
    /// the reset), all targets and per target: what DS3's cumulative lines report.
    pub phase_total: &'a OltpRecorder,
    pub phase_per_target: &'a [OltpRecorder],
    pub phase_elapsed_s: f64,
    /// True on the first interval of the measured phase (DS3 prints "Stats reset").
    pub first_measured: bool,
}

/// What a run measured.
#[derive(Debug)]
pub struct OltpOutcome {
    /// The measured phase, all targets merged, and per target.
    pub totals: OltpRecorder,
    pub per_target: Vec<OltpRecorder>,
    /// Warm-up included: DS3's n_purchase_from_start and n_rollbacks_from_start.
    pub from_start: OltpRecorder,
    pub warmup_s: f64,
    pub measured_s: f64,
    /// storbench's CPU time over the measured phase (with SQLite, the database's too).
    pub cpu: OwnCpuTime,
    pub complete: bool,
    /// Threads that gave up or did not finish in time.
    pub failures: Vec<String>,
    pub threads: usize,
}

/// Runs the workload against `targets` (at least one), `spec.n_threads` threads each.
/// Fails before the clock starts when a thread cannot connect.
pub fn run(
    spec: &OltpSpec,
    targets: &[Arc<dyn Database>],
    sampler: &mut dyn HostSampler,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&OltpInterval),
) -> Result<OltpOutcome, DbError> {
    let n = spec.n_threads as usize * targets.len();
    let shared = Arc::new(Shared::new(n));
    let spec_arc = Arc::new(spec.clone());
    let stagger = Duration::from_secs_f64(n as f64 / spec.ramp_rate.max(1e-3));
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    for id in 0..n {
        let w = Worker {
            id,
            db: targets[id % targets.len()].clone(),
            spec: spec_arc.clone(),
            shared: shared.clone(),
            stop: stop.clone(),
            stagger,
        };
        let done = done_tx.clone();
        std::thread::Builder::new()
            .name(format!("oltp-{}", id + 1))
            .spawn(move || {
                w.run();
                let _ = done.send(());
            })
            .map_err(|e| {
                DbError::new(DbErrorKind::Query, format!("starting driver thread {}: {e}", id + 1))
            })?;
    }
    drop(done_tx);
    let mut counters = targets.iter().map(|t| t.counters()).collect::<Result<Vec<_>, _>>()?;
    wait_connected(&shared, n, spec.connect_timeout + stagger, stop)?;
    let start = Instant::now();
    shared.release(Some(start));
    sampler.sample();
    let mut c = Coordinator::new(spec, targets.len(), start);
    c.intervals(&shared, sampler, &mut counters, stop, on_interval);
    shared.state.store(ENDING, Relaxed);
    let mut failures = std::mem::take(&mut *shared.failures.lock().unwrap_or_else(|p| p.into_inner()));
    let finished = (0..n).take_while(|_| done_rx.recv_timeout(DRAIN).is_ok()).count();
    if finished < n {
        failures.push(format!(
            "{} thread(s) were still inside a database call {DRAIN:?} after the end",
            n - finished
        ));
    }
    Ok(c.outcome(stop, failures, n))
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

struct Coordinator {
    schedule: Schedule,
    start: Instant,
    targets: usize,
    totals: OltpRecorder,
    per_target: Vec<OltpRecorder>,
    phase_total: OltpRecorder,
    phase_per_target: Vec<OltpRecorder>,
    from_start: OltpRecorder,
    end_ns: u64,
    cpu_at_measure: Option<OwnCpuTime>,
    cpu_at_end: Option<OwnCpuTime>,
}

impl Coordinator {
    fn new(spec: &OltpSpec, targets: usize, start: Instant) -> Self {
        let ramp_ns = spec.warmup_time.as_nanos() as u64;
        let schedule = Schedule {
            ramp_ns,
            end_ns: Some(ramp_ns + spec.run_time.as_nanos() as u64),
            interval_ns: spec.interval.as_nanos().max(1) as u64,
        };
        Coordinator {
            schedule,
            start,
            targets,
            totals: OltpRecorder::default(),
            per_target: vec![OltpRecorder::default(); targets],
            phase_total: OltpRecorder::default(),
            phase_per_target: vec![OltpRecorder::default(); targets],
            from_start: OltpRecorder::default(),
            end_ns: 0,
            cpu_at_measure: (ramp_ns == 0).then(process_cpu),
            cpu_at_end: None,
        }
    }

    fn intervals(
        &mut self,
        shared: &Shared,
        sampler: &mut dyn HostSampler,
        counters: &mut [Box<dyn CounterSampler>],
        stop: &StopFlag,
        on_interval: &mut dyn FnMut(&OltpInterval),
    ) {
        let end = self.schedule.end_ns.unwrap_or(u64::MAX);
        for index in 0.. {
            let boundary = self.schedule.boundary(index).min(end);
            let reached = sleep_until(self.start + Duration::from_nanos(boundary), stop);
            let now_ns = if reached { boundary } else { self.start.elapsed().as_nanos() as u64 };
            let (merged, per_target) = self.swap(shared);
            self.end_ns = now_ns;
            if self.schedule.phase(index) == Phase::Measure && self.cpu_at_measure.is_none() {
                self.cpu_at_measure = Some(process_cpu());
            }
            let db = sample_databases(counters);
            self.emit(index, now_ns, &merged, &per_target, db, sampler, on_interval);
            if !reached || now_ns >= end {
                self.cpu_at_end = Some(process_cpu());
                return;
            }
        }
    }

    /// Takes every thread's recorder, leaving fresh ones: merged overall and per target.
    fn swap(&self, shared: &Shared) -> (OltpRecorder, Vec<OltpRecorder>) {
        let mut per_target = vec![OltpRecorder::default(); self.targets];
        for (id, slot) in shared.slots.iter().enumerate() {
            let rec = std::mem::take(&mut *slot.lock().unwrap_or_else(|p| p.into_inner()));
            per_target[id % self.targets].merge(&rec);
        }
        let mut merged = OltpRecorder::default();
        for t in &per_target {
            merged.merge(t);
        }
        (merged, per_target)
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        index: u64,
        now_ns: u64,
        data: &OltpRecorder,
        per_target: &[OltpRecorder],
        db: [Option<f64>; 7],
        sampler: &mut dyn HostSampler,
        on_interval: &mut dyn FnMut(&OltpInterval),
    ) {
        let phase = self.schedule.phase(index);
        let first_measured = phase == Phase::Measure && index == self.schedule.ramp_intervals();
        if first_measured {
            self.phase_total = OltpRecorder::default();
            self.phase_per_target = vec![OltpRecorder::default(); self.targets];
        }
        self.from_start.merge(data);
        self.phase_total.merge(data);
        for (p, d) in self.phase_per_target.iter_mut().zip(per_target) {
            p.merge(d);
        }
        if phase == Phase::Measure {
            self.totals.merge(data);
            for (t, d) in self.per_target.iter_mut().zip(per_target) {
                t.merge(d);
            }
        }
        let start_ns = self.schedule.interval_start(index);
        let phase_start = if phase == Phase::Measure { self.schedule.ramp_ns } else { 0 };
        let phase_elapsed_s = now_ns.saturating_sub(phase_start) as f64 / 1e9;
        let row = SeriesRow {
            t_s: now_ns as f64 / 1e9,
            phase,
            workload: columns(data, now_ns.saturating_sub(start_ns), &self.phase_total, phase_elapsed_s, db),
            system: sampler.sample(),
        };
        on_interval(&OltpInterval {
            row,
            start_s: start_ns as f64 / 1e9,
            data,
            per_target,
            phase_total: &self.phase_total,
            phase_per_target: &self.phase_per_target,
            phase_elapsed_s,
            first_measured,
        });
    }

    fn outcome(self, stop: &StopFlag, failures: Vec<String>, threads: usize) -> OltpOutcome {
        let end = self.cpu_at_end.unwrap_or_else(process_cpu);
        let cpu = self.cpu_at_measure.map(|m| end.since(&m)).unwrap_or_default();
        let ramp = self.schedule.ramp_ns;
        OltpOutcome {
            totals: self.totals,
            per_target: self.per_target,
            from_start: self.from_start,
            warmup_s: ramp.min(self.end_ns) as f64 / 1e9,
            measured_s: self.end_ns.saturating_sub(ramp) as f64 / 1e9,
            cpu,
            complete: !stop.is_stopped() && failures.is_empty(),
            failures,
            threads,
        }
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

/// The workload's columns of `timeseries.csv`: orders and OPM (this interval and cumulative
/// over the phase), rollbacks, failures, the order response time, each transaction type's
/// calls, mean and p99 in ms, then the databases' counters.
fn columns(
    d: &OltpRecorder,
    span_ns: u64,
    phase: &OltpRecorder,
    phase_s: f64,
    db: [Option<f64>; 7],
) -> Vec<(&'static str, Option<f64>)> {
    let secs = (span_ns as f64 / 1e9).max(1e-9);
    let ms = |ns: f64| ns / 1e6;
    let q =
        |h: &crate::metrics::LatencyHistogram, p: f64| (!h.is_empty()).then(|| ms(h.quantile_ns(p) as f64));
    let mut cols = vec![
        ("orders", Some(d.orders as f64)),
        ("opm", Some(d.orders as f64 * 60.0 / secs)),
        ("opm_cumulative", (phase_s > 0.0).then(|| phase.orders as f64 * 60.0 / phase_s)),
        ("rollbacks", Some(d.rollbacks as f64)),
        ("failed_orders", Some(d.failed_orders as f64)),
        ("errors", Some(d.errors.total() as f64)),
        ("reconnects", Some(d.reconnects as f64)),
        ("order_rt_mean_ms", (d.orders > 0).then(|| ms(d.order_rt_sum_ns as f64 / d.orders as f64))),
        ("order_rt_p50_ms", q(&d.order_rt, 0.5)),
        ("order_rt_p99_ms", q(&d.order_rt, 0.99)),
        ("order_rt_max_ms", q(&d.order_rt, 1.0)),
    ];
    for kind in TXN_KINDS {
        let t = d.txn(kind);
        let [calls, mean, p99] = txn_column_names(kind);
        cols.push((calls, Some(t.calls as f64)));
        cols.push((mean, (t.calls > 0).then(|| ms(t.sum_ns as f64 / t.calls as f64))));
        cols.push((p99, q(&t.latency, 0.99)));
    }
    cols.extend(DB_COLUMNS.into_iter().zip(db));
    cols
}

/// `<type>_calls`, `<type>_mean_ms`, `<type>_p99_ms`.
fn txn_column_names(kind: TxnKind) -> [&'static str; 3] {
    macro_rules! names {
        ($($k:ident => $s:literal),*) => {
            match kind { $(TxnKind::$k => [concat!($s, "_calls"), concat!($s, "_mean_ms"), concat!($s, "_p99_ms")]),* }
        };
    }
    names!(Login => "login", NewCustomer => "new_customer", NewMember => "new_member", Browse => "browse",
        ReviewBrowse => "review_browse", GetReviews => "get_reviews", NewReview => "new_review",
        NewHelpfulness => "new_helpfulness", Purchase => "purchase", PriceQuery => "price_query")
}
