//! The replay's run as a `run::Lifecycle`: a reader thread (the logs' timeline into each
//! source's scheduler, then the stop request's watch), `in_flight` worker threads per source,
//! and the driver's view of them (`ReplayWork`: each second the sources' counts, the requests
//! running, whether the workers get anything done). See the module doc of `replay` for why it
//! is built so.

use super::ReplayError;
use super::conn::{Connect, send};
use super::data::{Answer, ReplayData, SourceRecorder};
use super::log::What;
use super::sched::{Finished, Item, Job, Request, Sched};
use super::spec::{Mode, ReplaySpec, Source};
use super::timeline::{Kinds, Timeline, Unread};
use crate::metrics::LatencyHistogram;
use crate::run::pace::{self, Behind};
use crate::run::{
    Interval, Length, Lifecycle, Outcome, Pace, Progress, RunShape, SeriesColumn, Started, StopFlag, Take,
    Warmup, Workload,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storbench_report::UnreadLine;
use storbench_report::columns::replay as col;

/// An interval a second, no warm-up, until every request is answered (or, in steady-state
/// rounds, the rule holds).
fn plan(spec: &ReplaySpec) -> RunShape {
    RunShape {
        warmup: Warmup::For(Duration::ZERO),
        length: Length::UntilDone,
        interval: Duration::from_secs(1),
        rounds: spec.steady_state,
    }
}
/// How long the workers may take to finish the requests they run once the run has ended.
const DRAIN: Duration = Duration::from_secs(30);
/// How often the reader, done reading, and the end look at what they wait for.
const POLL: Duration = Duration::from_millis(20);
/// Time-sync's lateness at p99 over which the replay fell behind the log: every paced run's.
pub use crate::run::pace::FELL_BEHIND_P99;
/// Requests read ahead per source: room for every worker many times over.
fn window(in_flight: u32) -> usize {
    4096 + 64 * in_flight as usize
}

/// What only a replay's outcome holds, as the record keeps it (its end's `detail`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayDetail {
    /// `fire-hose` or `time-sync`.
    pub mode: String,
    pub speed: Option<f64>,
    pub in_flight: u32,
    /// The sources' names, in the order of the intervals' `by_source`.
    pub sources: Vec<String>,
    /// Requests read from the logs that apply (after the filters, window and limit), before
    /// the run ended.
    pub recorded_calls: u64,
    pub unread_lines: u64,
    pub first_unread: Vec<UnreadLine>,
    /// A web log's requests that no route of the mapping takes, per path.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unmatched_paths: BTreeMap<String, u64>,
    /// Requests not sent because they reach beyond the database, by kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_sent: BTreeMap<String, u64>,
    /// Requests whose log time went back behind the one before them in their log.
    #[serde(default)]
    pub backwards: u64,
    /// The share of failed requests, in percent, over which the replay fails its check.
    #[serde(default)]
    pub max_errors_pct: Option<f64>,
    /// The kinds beyond the database the user allowed (`all` for every kind).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_statements: Vec<String>,
    /// Time-sync: lateness at p99 was over `FELL_BEHIND_P99` (a warning says so).
    pub fell_behind: bool,
    /// Seconds from the start until latency settled, where the first seconds' was well over
    /// the rest's (see `cold_start_s`).
    pub cold_start_s: Option<f64>,
}

/// What the threads share.
struct Shared {
    scheds: Vec<Sched>,
    /// Request types by index, as the reader found them.
    kinds: Mutex<Vec<String>>,
    /// Every request answered, or the run ended: the driver's end.
    done: StopFlag,
    workers_left: AtomicUsize,
    start: OnceLock<Instant>,
    /// When the last worker finished (or the run ended), ns since the start.
    last_done_ns: AtomicU64,
    reading: Mutex<Reading>,
    read: Condvar,
    failures: Mutex<Vec<String>>,
}

/// What the reader says.
#[derive(Debug, Clone, Default)]
struct Reading {
    /// The first request is in its scheduler.
    first_sent: bool,
    /// Reading got as far as it will before the run starts: the first request is in its
    /// scheduler, or there is none, or reading failed before it.
    primed: bool,
    /// Requests read that apply, and lines not read, once reading ended.
    applied: u64,
    unread: Unread,
    not_sent: BTreeMap<String, u64>,
    backwards: u64,
    failure: Option<ReplayError>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    fn new(sources: usize, mode: Mode) -> Shared {
        let in_flight = mode.in_flight();
        let workers = sources * in_flight as usize;
        let done = StopFlag::new();
        if workers == 0 {
            done.stop();
        }
        let paced = matches!(mode, Mode::TimeSync { .. });
        Shared {
            scheds: (0..sources).map(|_| Sched::new(window(in_flight), paced)).collect(),
            kinds: Mutex::default(),
            done,
            workers_left: AtomicUsize::new(workers),
            start: OnceLock::new(),
            last_done_ns: AtomicU64::new(0),
            reading: Mutex::default(),
            read: Condvar::new(),
            failures: Mutex::default(),
        }
    }

    fn since_start_ns(&self) -> u64 {
        self.start.get().map_or(0, |at| at.elapsed().as_nanos() as u64)
    }

    /// The run ends now (a stop request, a failure, the driver's end): no request starts
    /// after this one.
    fn end_now(&self) {
        self.last_done_ns.fetch_max(self.since_start_ns(), Relaxed);
        self.scheds.iter().for_each(Sched::halt);
        self.done.stop();
    }

    /// A worker is done; the last one ends the run.
    fn worker_done(&self) {
        self.last_done_ns.fetch_max(self.since_start_ns(), Relaxed);
        if self.workers_left.fetch_sub(1, Relaxed) == 1 {
            self.done.stop();
        }
    }

    /// The reader says `say`, and that the run may start.
    fn primed(&self, say: impl FnOnce(&mut Reading)) {
        let mut r = lock(&self.reading);
        say(&mut r);
        r.primed = true;
        self.read.notify_all();
    }

    /// Waits until the first request is read; the failure that came before it, or a stop.
    /// A failure after it ends the run, which has started (whenever this looks).
    fn wait_primed(&self, stop: &StopFlag) -> Result<(), ReplayError> {
        let mut r = lock(&self.reading);
        loop {
            if r.first_sent {
                return Ok(());
            }
            if let Some(e) = &r.failure {
                return Err(e.clone());
            }
            if r.primed {
                return Ok(());
            }
            if stop.is_stopped() {
                return Err(ReplayError::Interrupted);
            }
            r = self.read.wait_timeout(r, POLL).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

/// A replay's threads around the driver.
pub(super) struct Replay {
    spec: ReplaySpec,
    mode: Mode,
    names: Vec<String>,
    /// The logs, until the reader takes them.
    sources: Option<Vec<Source>>,
    connect: Connect,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Replay {
    pub(super) fn new(spec: &ReplaySpec, sources: Vec<Source>, connect: Connect) -> Replay {
        let names = sources.iter().map(|s| s.name.clone()).collect();
        let shared = Arc::new(Shared::new(sources.len(), spec.mode));
        let (spec, mode, sources) = (spec.clone(), spec.mode, Some(sources));
        Replay { spec, mode, names, sources, connect, shared, threads: Vec::new() }
    }

    fn spawn(&mut self, name: String, f: impl FnOnce() + Send + 'static) -> Result<(), ReplayError> {
        let thread = std::thread::Builder::new().name(name).spawn(f);
        self.threads.push(thread.map_err(|e| ReplayError::Thread(e.to_string()))?);
        Ok(())
    }

    /// Starts the workers and the reader, and waits until the first request is read.
    fn launch(&mut self, stop: &StopFlag) -> Result<(), ReplayError> {
        for source in 0..self.names.len() {
            for w in 0..self.mode.in_flight() {
                let (shared, connect) = (self.shared.clone(), self.connect.clone());
                self.spawn(format!("replay-{}-{}", source + 1, w + 1), move || {
                    serve(&shared, source, &connect)
                })?;
            }
        }
        let sources = self.sources.take().expect("launched once");
        let timeline = Timeline::new(&self.spec, sources, vec![stop.clone(), self.shared.done.clone()]);
        let (shared, mode, asked) = (self.shared.clone(), self.mode, stop.clone());
        self.spawn("replay-reader".into(), move || read(&shared, timeline, mode, &asked))?;
        self.shared.wait_primed(stop)
    }

    /// Ends every thread (no longer than `DRAIN`); why any did not end.
    fn end(&mut self) -> Vec<String> {
        self.shared.end_now();
        let deadline = Instant::now() + DRAIN;
        while self.threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        let (ended, running): (Vec<_>, Vec<_>) = self.threads.drain(..).partition(|t| t.is_finished());
        // A thread that panicked said so through its guard.
        ended.into_iter().for_each(|t| drop(t.join()));
        let mut failures = std::mem::take(&mut *lock(&self.shared.failures));
        if !running.is_empty() {
            failures.push(format!(
                "{} replay thread(s) were still in a database call or reading a log {DRAIN:?} after the end",
                running.len()
            ));
        }
        failures
    }
}

impl Lifecycle for Replay {
    type Work = ReplayWork;
    type Detail = ReplayDetail;
    type Error = ReplayError;

    /// Starts the threads and waits, stoppable, until the first request that applies is read
    /// (a window far into a log is read up to first); the run's clock starts then.
    fn start(&mut self, stop: &StopFlag) -> Result<Started<ReplayWork>, ReplayError> {
        if let Err(e) = self.launch(stop) {
            self.end();
            return Err(e);
        }
        let at = Instant::now();
        let _ = self.shared.start.set(at);
        self.shared.scheds.iter().for_each(|s| s.release(at));
        let n = self.names.len();
        let work = ReplayWork {
            shared: self.shared.clone(),
            last_end_ns: 0,
            spares: (0..n).map(|_| SourceRecorder::default()).collect(),
            p99s: Vec::new(),
        };
        Ok(Started { plan: plan(&self.spec), work, at })
    }

    /// The last request answered ends the driver's measured phase, as a stop request would.
    fn done(&self) -> Option<StopFlag> {
        Some(self.shared.done.clone())
    }

    fn finish(
        mut self,
        work: ReplayWork,
        driven: Outcome<ReplayData>,
    ) -> Result<Outcome<ReplayData, ReplayDetail>, ReplayError> {
        let mut failures = self.end();
        let reading = lock(&self.shared.reading).clone();
        failures.extend(reading.failure.map(|e| e.to_string()));
        let last = self.shared.scheds.iter().find_map(Sched::last_error);
        // Said here; the run's status comes from the report's checks of the same counts.
        let checked = verdict(&driven.all, self.spec.max_errors_pct(), last.as_deref());
        let warning = pace::fell_behind(&driven.totals.lateness, BEHIND);
        let detail = ReplayDetail {
            mode: self.mode.name().into(),
            speed: self.mode.speed(),
            in_flight: self.mode.in_flight(),
            sources: self.names,
            recorded_calls: reading.applied,
            unread_lines: reading.unread.count,
            first_unread: reading.unread.first,
            unmatched_paths: reading.unread.unmatched,
            not_sent: reading.not_sent,
            backwards: reading.backwards,
            max_errors_pct: Some(self.spec.max_errors_pct()),
            allowed_statements: self.spec.statements.allowed_said(),
            fell_behind: warning.is_some(),
            cold_start_s: cold_start_s(&work.p99s),
        };
        let mut out = driven.with(detail);
        out.warnings.extend(warning);
        out.warnings.extend(checked);
        out.failed(failures);
        Ok(out)
    }
}

/// Why a replay that ran did not reproduce its log, from what it counted (`all`), in words:
/// requests never sent because the database would not open their session's connection
/// (refused, or lost and not regained), or a share of failed requests over `max_errors_pct`.
/// The run's status is judged from the same counts (the report's replay checks): such a run
/// completed and failed its check.
fn verdict(all: &ReplayData, max_errors_pct: f64, last_error: Option<&str>) -> Vec<String> {
    let mut why = Vec::new();
    let last = last_error.map(|e| format!(" (the last error: {e})")).unwrap_or_default();
    if all.refused > 0 {
        why.push(format!(
            "{} request(s) were not sent: the database did not give their session a connection{last}",
            all.refused
        ));
    }
    let (calls, errors) = (all.calls(), all.errors());
    let pct = if calls > 0 { errors as f64 * 100.0 / calls as f64 } else { 0.0 };
    if pct > max_errors_pct {
        why.push(format!(
            "{errors} of {calls} requests failed ({pct:.2} %), more than the {max_errors_pct} % a replay \
             allows (--max-errors){last}"
        ));
    }
    why
}

/// How time-sync says it fell behind the log.
const BEHIND: Behind = Behind {
    schedule: "time-sync fell behind the log",
    starts: "requests",
    remedy: "latency counts from the log's time, so it includes the wait (more requests in flight, or \
             a lower speed, may keep up)",
};

/// A type's latency at p99 over this factor of the run's usual (the median interval's) is
/// not settled yet.
const COLD_FACTOR: f64 = 2.0;
/// Intervals with answers a run needs before its start is judged.
const COLD_MIN_INTERVALS: usize = 4;

/// Where the first seconds' latency was well over the run's usual, the end of the last of
/// them: the leading intervals whose p99 is over `COLD_FACTOR` × the median interval's p99
/// (`p99s`: each interval's end and p99, where it had answers). None when the first interval
/// is not, or the run is too short to say.
fn cold_start_s(p99s: &[(f64, f64)]) -> Option<f64> {
    if p99s.len() < COLD_MIN_INTERVALS {
        return None;
    }
    let mut sorted: Vec<f64> = p99s.iter().map(|p| p.1).collect();
    sorted.sort_by(f64::total_cmp);
    let usual = sorted[sorted.len() / 2];
    p99s.iter().take_while(|p| p.1 > COLD_FACTOR * usual).last().map(|p| p.0)
}

/// The reader: the timeline into the schedulers; then, until the run is done, the watch on
/// the stop request (which ends the run at once, the requests running left to finish).
fn read(shared: &Shared, mut timeline: Timeline, mode: Mode, stop: &StopFlag) {
    let fed = feed(shared, &mut timeline, mode, stop);
    shared.scheds.iter().for_each(Sched::reading_done);
    let failed = fed.is_err();
    shared.primed(|r| {
        (r.applied, r.unread, r.failure) =
            (timeline.applied, std::mem::take(&mut timeline.unread), fed.err());
        r.not_sent = std::mem::take(&mut timeline.not_sent);
        r.backwards = timeline.backwards;
    });
    if failed {
        shared.end_now();
    }
    while !shared.done.is_stopped() {
        if stop.is_stopped() {
            shared.end_now();
        }
        std::thread::sleep(POLL);
    }
}

/// Requests a fire-hose's reader hands a scheduler at once (time-sync hands each as read, so
/// that none waits in a batch past its time): fewer wake-ups when the workers keep up.
const BATCH: usize = 64;

/// Hands every request of the timeline to its source's scheduler, until the last, a failure,
/// a stop request or the run's end.
fn feed(shared: &Shared, timeline: &mut Timeline, mode: Mode, stop: &StopFlag) -> Result<(), ReplayError> {
    let batch = if matches!(mode, Mode::FireHose { .. }) { BATCH } else { 1 };
    let mut batches: Vec<Vec<(String, Item)>> =
        shared.scheds.iter().map(|_| Vec::with_capacity(batch)).collect();
    // Request types, and how many of them the driver can name.
    let (mut kinds, mut published) = (Kinds::default(), 0);
    let mut first_at = None;
    while let Some((source, e)) = timeline.next()? {
        let body = match e.what {
            What::Request(body) => body,
            What::End(close) => {
                batches[source].push((e.session, Item::End(close)));
                continue;
            }
        };
        let first = *first_at.get_or_insert(e.at_ns);
        let kind = kinds.index(&e.kind);
        if kinds.names.len() > published {
            lock(&shared.kinds).push(kinds.names[kind as usize].clone());
            published += 1;
        }
        let request = Request { kind, due_ns: mode.due_ns(e.at_ns - first), at_ns: e.at_ns, body };
        batches[source].push((e.session, Item::Request(request)));
        let first_read = timeline.applied == 1;
        if (batches[source].len() >= batch || first_read)
            && !shared.scheds[source].push(&mut batches[source], stop)
        {
            return Ok(());
        }
        if first_read {
            shared.primed(|r| r.first_sent = true);
        }
    }
    for (sched, batch) in shared.scheds.iter().zip(&mut batches) {
        sched.push(batch, stop);
    }
    Ok(())
}

/// Marks a worker done however it ends; a panic ends the run as failed.
struct Leaving<'a>(&'a Shared);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            lock(&self.0.failures).push("a replay worker panicked".into());
            self.0.end_now();
        }
        self.0.worker_done();
    }
}

/// A worker of source `source`: its scheduler's requests, one at a time, until there are none.
fn serve(shared: &Shared, source: usize, connect: &Connect) {
    let _leaving = Leaving(shared);
    let sched = &shared.scheds[source];
    let mut finished = None;
    while let Some(job) = sched.next(finished.take()) {
        finished = Some(execute(job, connect));
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Runs one request and times it: from its intended start in time-sync (how late it started
/// is its lateness), from its actual start in fire-hose. Opening the session's connection, on
/// its first request or after a lost one, is part of the request, as it was the application's.
fn execute(mut job: Job, connect: &Connect) -> Finished {
    let started = Instant::now();
    let sent = send(&mut job.conn, &job.request.body, connect);
    let from = job.intended.unwrap_or(started);
    let latency_ns = nanos(Instant::now().saturating_duration_since(from));
    let lateness_ns = job.intended.map(|at| nanos(started.saturating_duration_since(at)));
    let (answer, message) = match sent {
        Ok(()) => (Answer::Done { latency_ns }, None),
        Err((answer, message)) => (answer, Some(message)),
    };
    let conn = job.conn.take();
    job.finished(conn, answer, lateness_ns, message)
}

/// The replay as the driver sees it.
pub(super) struct ReplayWork {
    shared: Arc<Shared>,
    /// Where the last interval ended, ns since the start.
    last_end_ns: u64,
    /// Each source's empty recorder for the next interval, its histograms' room kept.
    spares: Vec<SourceRecorder>,
    /// Each interval's end (s) and latency p99 (ms), where it had answers: the cold start's.
    p99s: Vec<(f64, f64)>,
}

impl Workload for ReplayWork {
    type Data = ReplayData;
    const COLUMNS: &'static [&'static [SeriesColumn<Self>]] = &[COLUMNS];

    fn pace(&self) -> Pace {
        Pace::Timer
    }

    /// The sources' counts since the last interval; the interval ends at `now_ns`, or, once
    /// every request is answered, where the last one was.
    fn take(&mut self, _index: u64, now_ns: u64) -> Take<ReplayData> {
        // Read before the counts: once the run is done, these are its last.
        let done = self.shared.done.is_stopped();
        let (mut recorders, mut running) = (Vec::with_capacity(self.spares.len()), 0);
        for (sched, spare) in self.shared.scheds.iter().zip(&mut self.spares) {
            let (taken, r) = sched.swap_counts(std::mem::take(spare));
            recorders.push(taken);
            running += r as u64;
        }
        let data = ReplayData::of(&recorders, &lock(&self.shared.kinds), running);
        for (spare, mut r) in self.spares.iter_mut().zip(recorders) {
            r.reset();
            *spare = r;
        }
        let end_ns = match done {
            true => self.shared.last_done_ns.load(Relaxed).min(now_ns).max(self.last_end_ns),
            false => now_ns,
        };
        if done && end_ns == self.last_end_ns && data.calls() == 0 {
            return Take::Finished;
        }
        self.last_end_ns = end_ns;
        Take::Closed { end_ns, data }
    }

    fn observe(&mut self, i: &Interval<'_, ReplayData>) {
        if !i.data.latency.is_empty() {
            self.p99s.push((i.end_s, ms(i.data.latency.quantile_ns(0.99) as f64)));
        }
    }

    fn wind_down(&mut self) {
        self.shared.end_now();
    }

    /// Working while any request is answered without error; stuck while every one fails (a
    /// database gone away); idle otherwise, since a replay may wait long for its log's next
    /// request or one long statement.
    fn progress(&self, d: &ReplayData) -> Progress {
        if d.calls() > d.errors() {
            return Progress::Working;
        }
        if d.errors() == 0 && d.refused == 0 {
            return Progress::Idle;
        }
        let mut kinds: Vec<String> = d.errors.by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        kinds.extend((d.refused > 0).then(|| format!("no connection {}", d.refused)));
        let last = self.shared.scheds.iter().find_map(Sched::last_error).unwrap_or_default();
        Progress::Stuck(format!("every request failed ({}); the last error: {last}", kinds.join(", ")))
    }
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn quantile_ms(h: &LatencyHistogram, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| ms(h.quantile_ns(q) as f64))
}

/// `storbench_report::columns::replay`, every source together.
const COLUMNS: &[SeriesColumn<ReplayWork>] = &[
    SeriesColumn { column: col::CALLS, value: |_, i| Some(i.data.calls() as f64) },
    SeriesColumn { column: col::CALLS_PER_SEC, value: |_, i| Some(i.data.calls() as f64 / i.span_s()) },
    SeriesColumn { column: col::ERRORS, value: |_, i| Some(i.data.errors() as f64) },
    SeriesColumn { column: col::LAT_MEAN_MS, value: |_, i| i.data.mean_ns().map(ms) },
    SeriesColumn { column: col::LAT_P50_MS, value: |_, i| quantile_ms(&i.data.latency, 0.5) },
    SeriesColumn { column: col::LAT_P99_MS, value: |_, i| quantile_ms(&i.data.latency, 0.99) },
    SeriesColumn { column: col::LAT_MAX_MS, value: |_, i| quantile_ms(&i.data.latency, 1.0) },
    SeriesColumn { column: col::IN_FLIGHT, value: |_, i| Some(i.data.in_flight as f64) },
    SeriesColumn { column: col::LATENESS_P99_MS, value: |_, i| quantile_ms(&i.data.lateness, 0.99) },
    SeriesColumn { column: col::LATENESS_MAX_MS, value: |_, i| quantile_ms(&i.data.lateness, 1.0) },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cold_start_is_the_leading_seconds_well_over_the_usual_latency() {
        let run = |p99s: &[f64]| {
            let p: Vec<(f64, f64)> = p99s.iter().enumerate().map(|(i, &v)| (i as f64 + 1.0, v)).collect();
            cold_start_s(&p)
        };
        assert_eq!(run(&[50.0, 9.0, 1.0, 1.1, 0.9, 1.0, 3.0]), Some(2.0));
        assert_eq!(run(&[1.0, 9.0, 1.0, 1.1, 0.9]), None, "the first second had settled");
        assert_eq!(run(&[50.0, 1.0, 1.0]), None, "too short to say");
    }

    #[test]
    fn the_columns_are_the_reports_replay_columns_in_order() {
        let names: Vec<&str> = COLUMNS.iter().map(|c| c.column.name).collect();
        let want = [
            col::CALLS,
            col::CALLS_PER_SEC,
            col::ERRORS,
            col::LAT_MEAN_MS,
            col::LAT_P50_MS,
            col::LAT_P99_MS,
            col::LAT_MAX_MS,
            col::IN_FLIGHT,
            col::LATENESS_P99_MS,
            col::LATENESS_MAX_MS,
        ];
        assert_eq!(names, want.map(|c| c.name));
    }
}
