//! Work that ends on its own: a worker per database doing one finite job (a backup's reader, a
//! replay) on the run driver (`run::drive`, `Pace::Timer`), an interval every second, no
//! warm-up, the measured phase ending where the last worker finished (or at a stop request).
//! Each kind of worker brings its counts (`Counter`); the driver takes them every second.

use super::recorder::{Corruption, MAX_CORRUPTIONS_KEPT};
use crate::run::{
    Beside, Closed, IntervalData, Length, Lifecycle, Outcome, Pace, Parts, Progress, RunShape, SeriesColumn,
    Started, StopFlag, Take, Warmup,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// One worker's counts, added to as it works and taken by the driver every interval.
pub(super) trait Counter: Default + Send + Sync + 'static {
    /// What the counts are over an interval.
    type Tally: IntervalData + PartialEq;

    /// The workers' columns of `timeseries.csv`, in groups, in the file's order.
    const COLUMNS: &'static [&'static [SeriesColumn<Work<Self>>]];

    /// What was counted since the last call.
    fn take(&self) -> Self::Tally;

    /// Requests asked and not yet completed.
    fn in_flight(&self) -> u64;

    /// How the workers fared over an interval in which they counted `t`, with `outstanding`
    /// requests waiting at its end (the driver's no-progress rule).
    fn progress(t: &Self::Tally, outstanding: u64) -> Progress;
}

/// What the finite workers found besides their counts, per database in order: its time, and
/// the first corruptions of all of them (the count is in the intervals).
#[derive(Debug, Clone, Default)]
pub struct PerDatabase {
    /// Each database's time, seconds, from its worker's first request to its last.
    pub seconds: Vec<f64>,
    /// The first corruptions found, at most `MAX_CORRUPTIONS_KEPT`.
    pub first: Vec<Corruption>,
}

impl PerDatabase {
    /// Adds the next database's time and its corruptions, as many as there is room for.
    pub(super) fn add(&mut self, seconds: f64, first: Vec<Corruption>) {
        self.seconds.push(seconds);
        let room = MAX_CORRUPTIONS_KEPT.saturating_sub(self.first.len());
        self.first.extend(first.into_iter().take(room));
    }
}

/// One closed interval of the workers, as the caller is handed it.
pub(super) type Second<'a, C> = Closed<'a, Parts<<C as Counter>::Tally>>;

/// The run of finite workers: one-second intervals (as the mailbox test's) until the last
/// worker is done.
const PLAN: RunShape = RunShape {
    warmup: Warmup::For(Duration::ZERO),
    length: Length::UntilDone,
    interval: Duration::from_secs(1),
    rounds: None,
};

/// Runs `job(i, counts, halted)` for workers `0..workers`, each on a thread of its own, under
/// the driver on this thread, which hands each interval to `on_interval` as it ends; once the
/// run is over the workers are stopped and waited for. `halted` tells a worker to stop (the
/// user's `stop`, or the run is over before it). Returns the outcome, complete unless `stop`
/// or a failure cut it short, and each worker's result in order (`what` names a worker whose
/// thread panicked).
pub(super) fn drive<C: Counter, R: Send + 'static>(
    what: &str,
    workers: usize,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    job: impl Fn(usize, &C, &dyn Fn() -> bool) -> crate::Result<R> + Send + Sync + 'static,
    on_interval: &mut dyn FnMut(&Second<'_, C>),
) -> (Outcome<Parts<C::Tally>>, Vec<crate::Result<R>>) {
    let run =
        Jobs { what, shared: Arc::new(Finite::<C>::new(workers)), job: Arc::new(job), threads: Vec::new() };
    let Ok(mut driven) = run.run(sampler, stop, on_interval);
    // Every worker being done ends the run through the driver's stop; only the user's stop (or
    // a failure) makes it incomplete.
    driven.complete = !stop.is_stopped() && driven.failures.is_empty();
    let results = std::mem::take(&mut driven.detail);
    (driven.with(()), results)
}

/// A worker's job: `job(i, counts, halted)`.
type Job<C, R> = dyn Fn(usize, &C, &dyn Fn() -> bool) -> crate::Result<R> + Send + Sync;

/// Finite workers, a thread each.
struct Jobs<'a, C, R> {
    what: &'a str,
    shared: Arc<Finite<C>>,
    job: Arc<Job<C, R>>,
    /// Each worker's thread, or why it could not be started.
    threads: Vec<Result<std::thread::JoinHandle<crate::Result<R>>, String>>,
}

impl<C: Counter, R: Send + 'static> Lifecycle for Jobs<'_, C, R> {
    type Work = Work<C>;
    type Detail = Vec<crate::Result<R>>;
    type Error = std::convert::Infallible;

    fn start(&mut self, stop: &StopFlag) -> Result<Started<Work<C>>, Self::Error> {
        let at = Instant::now();
        for i in 0..self.shared.counts.len() {
            let (shared, job, stop) = (self.shared.clone(), self.job.clone(), stop.clone());
            let thread =
                std::thread::Builder::new().name(format!("{}-{}", self.what, i + 1)).spawn(move || {
                    let halted = || stop.is_stopped() || shared.halt.is_stopped();
                    let result = job(i, &shared.counts[i], &halted);
                    shared.worker_done(at);
                    result
                });
            if thread.is_err() {
                // Counted as done, so that the run still ends when the others are.
                self.shared.worker_done(at);
            }
            self.threads.push(thread.map_err(|e| format!("starting a {} thread: {e}", self.what)));
        }
        Ok(Started { plan: PLAN, work: Work { shared: self.shared.clone(), last_end_ns: 0 }, at })
    }

    /// The last worker to finish ends the driver's measured phase, as a stop request would.
    fn done(&self) -> Option<StopFlag> {
        Some(self.shared.all_done.clone())
    }

    fn finish(
        self,
        _work: Work<C>,
        driven: Outcome<Parts<C::Tally>>,
    ) -> Result<Outcome<Parts<C::Tally>, Self::Detail>, Self::Error> {
        self.shared.halt.stop();
        let what = self.what;
        let results = self
            .threads
            .into_iter()
            .map(|thread| match thread {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(crate::Error::InvalidJob(format!("a {what} thread panicked")))),
                Err(why) => Err(crate::Error::InvalidJob(why)),
            })
            .collect();
        Ok(driven.with(results))
    }
}

/// What the workers and the driver share.
struct Finite<C> {
    /// Each worker's counts since the driver last took them.
    counts: Vec<C>,
    /// Workers still working.
    running: AtomicUsize,
    /// When the last worker finished, ns since the start.
    last_done_ns: AtomicU64,
    /// Set when every worker is done: the driver's stop.
    all_done: StopFlag,
    /// Set when the run is over before the workers are (no progress): they stop.
    halt: StopFlag,
}

impl<C: Default> Finite<C> {
    fn new(workers: usize) -> Self {
        let all_done = StopFlag::new();
        if workers == 0 {
            all_done.stop();
        }
        Finite {
            counts: (0..workers).map(|_| C::default()).collect(),
            running: AtomicUsize::new(workers),
            last_done_ns: AtomicU64::new(0),
            all_done,
            halt: StopFlag::new(),
        }
    }

    /// A worker is done (finished, stopped or failed).
    fn worker_done(&self, start: Instant) {
        let now = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last_done_ns.fetch_max(now, Relaxed);
        if self.running.fetch_sub(1, Relaxed) == 1 {
            self.all_done.stop();
        }
    }
}

/// The workers as the driver sees them.
pub(super) struct Work<C> {
    shared: Arc<Finite<C>>,
    /// Where the last interval ended, ns since the start.
    last_end_ns: u64,
}

impl<C: Counter> crate::run::Workload for Work<C> {
    type Data = Parts<C::Tally>;
    const COLUMNS: &'static [&'static [SeriesColumn<Self>]] = C::COLUMNS;

    fn pace(&self) -> Pace {
        Pace::Timer
    }

    /// The interval ends at `now_ns`, or, once every worker is done, where the last one
    /// finished; nothing left after that ends the run.
    fn take(&mut self, _index: u64, now_ns: u64) -> Take<Self::Data> {
        // Read before the counts: once every worker is done, these are their last.
        let done = self.shared.all_done.is_stopped();
        let data = Parts::new(self.shared.counts.iter().map(C::take).collect());
        let end_ns = match done {
            true => self.shared.last_done_ns.load(Relaxed).min(now_ns).max(self.last_end_ns),
            false => now_ns,
        };
        if done && end_ns == self.last_end_ns && data.total == C::Tally::default() {
            return Take::Finished;
        }
        self.last_end_ns = end_ns;
        Take::Closed { end_ns, data }
    }

    fn wind_down(&mut self) {
        self.shared.halt.stop();
    }

    fn progress(&self, data: &Self::Data) -> Progress {
        C::progress(&data.total, self.shared.counts.iter().map(C::in_flight).sum())
    }
}
