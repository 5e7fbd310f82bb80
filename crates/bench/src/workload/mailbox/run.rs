//! The transactional run (performance and stress tests): `run` starts one instance per
//! database and hands them to the run driver (`run::drive`, `Pace::Timer`), which closes an
//! interval every second, ends the warm-up when every cache is 90 % full ("attaining
//! prerequisites", Jetstress's PreloadJetCache 0.9) or the warm-up limit passed, and measures
//! for the duration; then the instances shut down and the databases' new state goes into the
//! manifest.

use super::instance::{Instance, InstanceConfig, InstanceEnd, InstanceShared};
use super::judge::{Evidence, Verdict, WindowSums, judge};
use super::layout::Manifest;
use super::preset::{Preset, Profile, TestType, Thresholds};
use super::recorder::MailboxRecorder;
use crate::engine::EngineKind;
use crate::metrics::DirectionCounters;
use crate::run::pace::{self, Behind};
use crate::run::{
    Beside, Closed, Interval, Length, Lifecycle, Outcome, Pace, Parts, Progress, RunShape, SeriesColumn,
    Started, StopFlag, Take, Warmup,
};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};
use storbench_report::columns::mailbox as col;
use storbench_report::series::Phase;

/// The judge works on one-second windows (Jetstress's sample window is in seconds), so the
/// mailbox run's intervals are one second.
const INTERVAL: Duration = Duration::from_secs(1);

/// A validated transactional run.
#[derive(Debug, Clone)]
pub struct MailboxSpec {
    pub preset: Preset,
    pub test: TestType,
    pub profile: Profile,
    pub thresholds: Thresholds,
    /// Sessions in all (Jetstress 2013's global thread count), spread over the databases.
    pub threads: u32,
    /// Transactional I/Os per second wanted from all databases; None = as fast as possible.
    pub target_iops: Option<f64>,
    pub duration: Duration,
    /// The warm-up ends when the caches are 90 % full, or after this long.
    pub max_warmup: Duration,
    /// Also wait, before measuring, until database read latency is steady: the last five
    /// seconds' averages all within 20 % of their mean (tuning trials).
    pub steady_latency: bool,
    /// Sample window over which the maxima are judged (Jetstress: 15 s).
    pub sample_window: Duration,
    pub seed: u64,
    pub engine: EngineKind,
    pub keep_logs: bool,
    /// Soft recovery's generation phase: stop once this many log files were filled (per
    /// database) and leave the dirty pages unwritten.
    pub log_files_limit: Option<u32>,
    /// Steady-state rounds of this length (SNIA PTS rule on transactional IOPS per round):
    /// the run ends once the rule holds, `duration` at the latest, and its figures and the
    /// thresholds' verdict cover the last window.
    pub steady_state: Option<Duration>,
}

/// One interval as the caller sees it: per database in `data.parts`, merged in `data.total`.
pub type MailboxInterval<'a> = Closed<'a, Parts<MailboxRecorder>>;

/// What a run measured: measured-phase totals per database (`totals.parts`) and merged; the
/// errors and corruption found in the warm-up are in them too.
pub type MailboxOutcome = Outcome<Parts<MailboxRecorder>, MailboxDetail>;

/// What only the mailbox workload has in its outcome.
#[derive(Debug)]
pub struct MailboxDetail {
    /// Whether the caches reached 90 % before the warm-up limit.
    pub warmed: bool,
    pub verdict: Verdict,
    pub ends: Vec<InstanceEnd>,
    pub shutdown_s: f64,
}

/// Runs the transactional workload on the databases of `manifest` in `db_dir`.
pub fn run(
    spec: &MailboxSpec,
    db_dir: &Path,
    manifest: &mut Manifest,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&MailboxInterval),
) -> crate::Result<MailboxOutcome> {
    let test = Test { spec, db_dir, manifest, shared: Vec::new(), threads: Vec::new() };
    test.run(sampler, stop, on_interval)
}

/// A mailbox test: a database instance per database, each on a thread of its own.
struct Test<'a> {
    spec: &'a MailboxSpec,
    db_dir: &'a Path,
    manifest: &'a mut Manifest,
    shared: Vec<Arc<InstanceShared>>,
    threads: Vec<std::thread::JoinHandle<InstanceEnd>>,
}

impl Lifecycle for Test<'_> {
    type Work = MailboxWork;
    type Detail = MailboxDetail;
    type Error = crate::Error;

    /// Opens every database (a dirty shutdown's old logs kept, a clean one's removed), marks
    /// them in use, starts their instances and waits until each is ready.
    fn start(&mut self, stop: &StopFlag) -> crate::Result<Started<MailboxWork>> {
        let (spec, manifest) = (self.spec, &mut *self.manifest);
        let n = manifest.databases.len();
        let files = manifest.files(self.db_dir);
        if manifest.clean {
            // A clean shutdown needs none of the earlier runs' logs.
            for (f, d) in files.iter().zip(&manifest.databases) {
                for g in f.log_generations().into_iter().filter(|&g| g < d.next_generation) {
                    let _ = super::layout::DbFiles::remove_log_file(
                        &f.log_path(g),
                        g,
                        manifest.log_block as usize,
                    );
                }
            }
        }
        let mut instances = Vec::with_capacity(n);
        for (i, (f, d)) in files.into_iter().zip(&manifest.databases).enumerate() {
            let sessions = spec.threads / n as u32 + u32::from((i as u32) < spec.threads % n as u32);
            let cfg = InstanceConfig {
                db: d.id,
                profile: spec.profile,
                sessions: sessions.max(1),
                target_iops: spec.target_iops.map(|t| t / n as f64),
                seed: spec.seed,
                engine: spec.engine,
                files: f,
                pages: d.pages,
                log_block: manifest.log_block as usize,
                first_generation: d.next_generation,
                keep_logs: spec.keep_logs,
                log_files_limit: spec.log_files_limit,
                crash_at_end: spec.log_files_limit.is_some(),
            };
            let s = Arc::new(InstanceShared::default());
            instances.push(Instance::open(cfg, s.clone(), stop.clone())?);
            self.shared.push(s);
        }
        // The stream this run writes starts at the log file each instance has just made: recorded
        // so that a replay after a dirty end knows where to start.
        manifest.note_logs(self.db_dir);
        manifest.clean = false;
        save(manifest, self.db_dir)?;
        for (i, inst) in instances.into_iter().enumerate() {
            let thread = std::thread::Builder::new()
                .name(format!("mailbox-db{}", i + 1))
                .spawn(move || inst.run())
                .map_err(|source| crate::Error::Setup { what: "starting a database thread", source })?;
            self.threads.push(thread);
        }
        wait_ready(&self.shared, &self.threads, stop);
        let work = MailboxWork::new(spec, self.shared.clone());
        Ok(Started { plan: run_plan(spec), work, at: Instant::now() })
    }

    /// Shuts every instance down (its own I/O outside the measured phase), notes where each
    /// database's log is, and judges the measured phase.
    fn finish(
        self,
        work: MailboxWork,
        driven: Outcome<Parts<MailboxRecorder>>,
    ) -> crate::Result<MailboxOutcome> {
        for s in &self.shared {
            s.end.store(true, Relaxed);
        }
        let shutdown = Instant::now();
        let ends: Vec<InstanceEnd> = self
            .threads
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| InstanceEnd {
                    failure: Some("a database thread panicked".into()),
                    ..Default::default()
                })
            })
            .collect();
        let shutdown_s = shutdown.elapsed().as_secs_f64();
        let manifest = self.manifest;
        for (d, e) in manifest.databases.iter_mut().zip(&ends) {
            d.pages = e.pages.max(d.pages);
            d.next_generation = e.next_generation;
        }
        manifest.clean = ends.iter().all(|e| e.failure.is_none()) && self.spec.log_files_limit.is_none();
        if manifest.clean {
            manifest.note_logs(self.db_dir);
        }
        save(manifest, self.db_dir)?;
        Ok(outcome(self.spec, driven, work, ends, shutdown_s))
    }
}

fn run_plan(spec: &MailboxSpec) -> RunShape {
    RunShape {
        warmup: match spec.max_warmup {
            d if d.is_zero() => Warmup::For(d),
            max => Warmup::Until { max },
        },
        length: Length::For(spec.duration),
        interval: INTERVAL,
        rounds: spec.steady_state,
    }
}

/// Judges the measured phase and adds what only the mailbox run has.
fn outcome(
    spec: &MailboxSpec,
    driven: Outcome<Parts<MailboxRecorder>>,
    work: MailboxWork,
    ends: Vec<InstanceEnd>,
    shutdown_s: f64,
) -> MailboxOutcome {
    let mut out = driven;
    // Errors and corruption count whenever they happened, warm-up included.
    for (t, all) in out.totals.parts.iter_mut().zip(&out.all.parts) {
        t.take_faults_of(all);
    }
    out.totals.total.take_faults_of(&out.all.total);
    let seconds = judged_seconds(work.seconds, &work.seconds_at, out.steady.as_ref());
    let evidence: Vec<(MailboxRecorder, Vec<WindowSums>)> =
        out.totals.parts.iter().cloned().zip(seconds).collect();
    let verdict = judge(
        &spec.thresholds,
        &Evidence {
            databases: &evidence,
            measured_s: out.measured_s,
            window_s: spec.sample_window.as_secs().max(1) as usize,
            target_iops: spec.target_iops,
        },
    );
    let failures: Vec<String> = ends.iter().filter_map(|e| e.failure.clone()).collect();
    let mut out = out.with(MailboxDetail { warmed: work.cache_full, verdict, ends, shutdown_s });
    out.warnings.extend(pace::fell_behind(&out.totals.total.lag, BEHIND));
    out.failed(failures);
    out
}

/// The measured seconds the thresholds judge: under steady state only those of the window
/// the figures cover (`at`: each second's start and end, ns since the start).
fn judged_seconds(
    seconds: Vec<Vec<WindowSums>>,
    at: &[(u64, u64)],
    steady: Option<&storbench_report::SteadyState>,
) -> Vec<Vec<WindowSums>> {
    let Some(st) = steady else { return seconds };
    let ns = |s: f64| (s * 1e9).round() as u64;
    let (from, to) = (ns(st.window_start_s), ns(st.window_end_s));
    let counted: Vec<bool> = at.iter().map(|&(start, end)| start >= from && end <= to).collect();
    let keep =
        |db: Vec<WindowSums>| db.into_iter().zip(&counted).filter(|(_, c)| **c).map(|(w, _)| w).collect();
    seconds.into_iter().map(keep).collect()
}

/// How a run under a target says it fell behind.
const BEHIND: Behind = Behind {
    schedule: "the target rate fell behind",
    starts: "transactions",
    remedy: "every session was busy when one was due (more --threads, or a lower target, may keep up; \
             starts more than 1 s behind are dropped)",
};

fn save(m: &Manifest, db_dir: &Path) -> crate::Result<()> {
    m.save(db_dir).map_err(|source| crate::Error::Io { op: "writing", path: Manifest::path(db_dir), source })
}

/// The mailbox workload as the driver sees it: the instances' recorders taken every second,
/// the warm-up test (caches full, read latency steady where asked) and the per-second sums
/// the judge needs.
struct MailboxWork {
    shared: Vec<Arc<InstanceShared>>,
    steady_latency: bool,
    log_files_limit: Option<u32>,
    /// The least-filled cache at the last boundary, percent of its warm-up target.
    fill: f64,
    /// Whether the caches were full at the last warm-up interval.
    cache_full: bool,
    /// Read latency of each second so far (the steady-latency test).
    recent: Vec<Option<f64>>,
    /// Each measured second's sums, per database.
    seconds: Vec<Vec<WindowSums>>,
    /// Each measured second's start and end, ns since the start.
    seconds_at: Vec<(u64, u64)>,
}

impl MailboxWork {
    fn new(spec: &MailboxSpec, shared: Vec<Arc<InstanceShared>>) -> Self {
        MailboxWork {
            seconds: vec![Vec::new(); shared.len()],
            seconds_at: Vec::new(),
            shared,
            steady_latency: spec.steady_latency,
            log_files_limit: spec.log_files_limit,
            fill: 0.0,
            cache_full: spec.max_warmup.is_zero(),
            recent: Vec::new(),
        }
    }
}

impl crate::run::Workload for MailboxWork {
    type Data = Parts<MailboxRecorder>;
    const COLUMNS: &'static [&'static [SeriesColumn<Self>]] = &[COLUMNS, &LAG_COLUMNS];

    fn pace(&self) -> Pace {
        Pace::Timer
    }

    fn take(&mut self, _index: u64, now_ns: u64) -> Take<Self::Data> {
        let data = self
            .shared
            .iter()
            .map(|s| std::mem::take(&mut *s.recorder.lock().unwrap_or_else(|p| p.into_inner())))
            .collect();
        self.fill = cache_fill_pct(&self.shared);
        Take::Closed { end_ns: now_ns, data: Parts::new(data) }
    }

    fn observe(&mut self, interval: &Interval<'_, Self::Data>) {
        self.recent.push(WindowSums::of(&interval.data.total).read_ms());
        if interval.phase == Phase::Measure {
            self.seconds_at.push((interval.start_ns, interval.end_ns));
            for (secs, d) in self.seconds.iter_mut().zip(&interval.data.parts) {
                secs.push(WindowSums::of(d));
            }
        }
    }

    fn warmed(&mut self, _interval: &Interval<'_, Self::Data>) -> bool {
        self.cache_full = self.fill >= 100.0;
        self.cache_full && (!self.steady_latency || is_steady(&self.recent))
    }

    /// A database that stopped on its own (it failed) ends the run: measuring the others on
    /// would judge a test that is no longer the one asked for.
    fn ended(&self) -> bool {
        let limit_reached = self
            .log_files_limit
            .is_some_and(|l| self.shared.iter().all(|s| s.log_files_done.load(Relaxed) >= u64::from(l)));
        limit_reached || self.shared.iter().any(|s| s.finished.load(Relaxed))
    }

    /// Stuck when no I/O of any stream completed: every one failed, or none came back.
    fn progress(&self, data: &Self::Data) -> Progress {
        let t = &data.total;
        let completed = [&t.db_reads, &t.db_writes, &t.log_writes, &t.bdm_reads, &t.log_creates];
        let completed = completed.iter().map(|c| c.ios).sum();
        let outstanding = self.shared.iter().map(|s| s.in_flight.load(Relaxed)).sum();
        Progress::of_requests(
            completed,
            t.errors.by_kind.iter().map(|(kind, n)| (kind.as_ref(), *n)),
            outstanding,
        )
    }
}

/// The last five seconds' read latencies all lie within 20 % of their mean (seconds without
/// reads count as steady: a cache that holds everything).
fn is_steady(recent: &[Option<f64>]) -> bool {
    let Some(last) = recent.len().checked_sub(5).map(|from| &recent[from..]) else { return false };
    let vals: Vec<f64> = last.iter().flatten().copied().collect();
    if vals.len() < last.len() {
        return vals.is_empty();
    }
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    vals.iter().all(|v| (v - mean).abs() <= 0.2 * mean)
}

/// The least-filled cache as a percentage of its warm-up target.
fn cache_fill_pct(shared: &[Arc<InstanceShared>]) -> f64 {
    shared
        .iter()
        .map(|s| {
            let target = s.cache_target.load(Relaxed).max(1);
            (s.cache_used.load(Relaxed) as f64 * 100.0 / target as f64).min(100.0)
        })
        .fold(100.0, f64::min)
}

type Of<'a> = Interval<'a, Parts<MailboxRecorder>>;

fn per_s(n: u64, i: &Of) -> Option<f64> {
    Some(n as f64 / i.span_s())
}

fn avg_ms(c: &DirectionCounters) -> Option<f64> {
    (c.ios > 0).then(|| c.latency.mean_ns() / 1e6)
}

fn max_ms(c: &DirectionCounters) -> Option<f64> {
    (c.ios > 0).then(|| c.latency.quantile_ns(1.0) as f64 / 1e6)
}

fn bytes_per_io(c: &DirectionCounters) -> Option<f64> {
    (c.ios > 0).then(|| c.bytes as f64 / c.ios as f64)
}

/// How long the database threads may take to be ready before the run starts anyway (and the
/// no-progress rule judges what they do).
const READY_LIMIT: Duration = Duration::from_secs(60);

/// Waits until every database thread is ready to run, or one of them has already ended (it
/// failed before it was; its end says why once the run is over), or a stop request came, or
/// `READY_LIMIT` passed.
fn wait_ready(
    shared: &[Arc<InstanceShared>],
    threads: &[std::thread::JoinHandle<InstanceEnd>],
    stop: &StopFlag,
) {
    let limit = Instant::now() + READY_LIMIT;
    let waiting = || {
        !shared.iter().all(|s| s.ready.load(Relaxed))
            && !threads.iter().any(|t| t.is_finished())
            && !stop.is_stopped()
            && Instant::now() < limit
    };
    while waiting() {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The workload's columns of `timeseries.csv`, all databases merged.
const COLUMNS: &[SeriesColumn<MailboxWork>] = &[
    SeriesColumn {
        column: col::TRANSACTIONAL_IOPS,
        value: |_, i| per_s(i.data.total.transactional_ios(), i),
    },
    SeriesColumn { column: col::DB_READS_PER_SEC, value: |_, i| per_s(i.data.total.db_reads.ios, i) },
    SeriesColumn { column: col::DB_WRITES_PER_SEC, value: |_, i| per_s(i.data.total.db_writes.ios, i) },
    SeriesColumn { column: col::LOG_WRITES_PER_SEC, value: |_, i| per_s(i.data.total.log_writes.ios, i) },
    SeriesColumn { column: col::BDM_READS_PER_SEC, value: |_, i| per_s(i.data.total.bdm_reads.ios, i) },
    SeriesColumn { column: col::DB_READ_AVG_MS, value: |_, i| avg_ms(&i.data.total.db_reads) },
    SeriesColumn { column: col::DB_READ_MAX_MS, value: |_, i| max_ms(&i.data.total.db_reads) },
    SeriesColumn { column: col::DB_WRITE_AVG_MS, value: |_, i| avg_ms(&i.data.total.db_writes) },
    SeriesColumn { column: col::LOG_WRITE_AVG_MS, value: |_, i| avg_ms(&i.data.total.log_writes) },
    SeriesColumn { column: col::LOG_WRITE_MAX_MS, value: |_, i| max_ms(&i.data.total.log_writes) },
    SeriesColumn { column: col::DB_WRITE_BYTES_AVG, value: |_, i| bytes_per_io(&i.data.total.db_writes) },
    SeriesColumn { column: col::LOG_BYTES_PER_WRITE, value: |_, i| bytes_per_io(&i.data.total.log_writes) },
    SeriesColumn { column: col::OPERATIONS_PER_SEC, value: |_, i| per_s(i.data.total.operations(), i) },
    SeriesColumn {
        column: col::PAGE_FAULT_STALLS,
        value: |_, i| Some(i.data.total.page_fault_stalls as f64),
    },
    SeriesColumn { column: col::LOG_STALLS, value: |_, i| Some(i.data.total.log_stalls as f64) },
    SeriesColumn { column: col::ERRORS, value: |_, i| Some(i.data.total.errors.total() as f64) },
    SeriesColumn { column: col::CHECKSUM_ERRORS, value: |_, i| Some(i.data.total.checksum_errors as f64) },
    SeriesColumn { column: col::CACHE_FILL_PCT, value: |w, _| Some(w.fill) },
];

/// Schedule lag under a target, empty otherwise.
const LAG_COLUMNS: [SeriesColumn<MailboxWork>; 2] = pace::lag_columns();

#[cfg(test)]
mod steady_tests {
    use super::is_steady;

    #[test]
    fn latency_is_steady_when_five_seconds_lie_within_20_percent_of_their_mean() {
        let s = |v: &[f64]| is_steady(&v.iter().map(|&x| Some(x)).collect::<Vec<_>>());
        assert!(!s(&[5.0, 5.0, 5.0, 5.0]), "fewer than five seconds");
        assert!(s(&[9.0, 5.0, 5.2, 4.8, 5.1, 5.0]));
        assert!(!s(&[5.0, 5.0, 8.0, 5.0, 5.0]));
        assert!(is_steady(&[None; 5]));
    }

    #[test]
    fn under_steady_state_the_thresholds_judge_only_the_seconds_of_the_window() {
        use super::{WindowSums, judged_seconds};
        let second = |reads| WindowSums { reads, ..WindowSums::default() };
        let seconds = vec![(1..=8).map(second).collect::<Vec<_>>(); 2];
        let at: Vec<(u64, u64)> = (0..8u64).map(|i| (i * 1_000_000_000, (i + 1) * 1_000_000_000)).collect();
        assert_eq!(judged_seconds(seconds.clone(), &at, None), seconds, "a fixed run judges every second");
        let window =
            storbench_report::SteadyState { window_start_s: 2.0, window_end_s: 7.0, ..Default::default() };
        let judged = judged_seconds(seconds, &at, Some(&window));
        let reads: Vec<u64> = judged[1].iter().map(|w| w.reads).collect();
        assert_eq!((judged.len(), reads), (2, vec![3, 4, 5, 6, 7]));
    }
}

#[cfg(test)]
mod progress_tests {
    use super::*;
    use crate::run::Workload;

    #[test]
    fn a_second_with_no_completed_io_is_stuck_when_ios_failed_or_waited_and_idle_otherwise() {
        let shared: Vec<Arc<InstanceShared>> = (0..2).map(|_| Arc::default()).collect();
        let work = MailboxWork::new(&super::super::tests::spec(Preset::V2007, 2, 1), shared.clone());
        let second = |f: &dyn Fn(&mut MailboxRecorder)| {
            let mut parts = vec![MailboxRecorder::default(), MailboxRecorder::default()];
            f(&mut parts[1]);
            Parts::new(parts)
        };
        assert_eq!(work.progress(&second(&|_| {})), Progress::Idle);
        let log_only = second(&|r| r.log_writes.record(4096, 1000));
        assert_eq!(work.progress(&log_only), Progress::Working, "a log write is progress too");
        let failed = second(&|r| {
            r.errors.count("EIO");
            r.errors.count("EIO");
        });
        assert_eq!(work.progress(&failed), Progress::Stuck("every I/O failed (EIO 2)".into()));
        shared[0].in_flight.store(3, Relaxed);
        let waited = work.progress(&second(&|_| {}));
        assert_eq!(waited, Progress::Stuck("3 I/Os outstanding, none completed".into()));
    }
}
