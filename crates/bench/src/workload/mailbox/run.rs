//! The transactional run (performance and stress tests): `run` starts one instance per
//! database, closes an interval every second on its own timer, ends the warm-up when every
//! cache is 90 % full ("attaining prerequisites", Jetstress's PreloadJetCache 0.9) or the
//! warm-up limit passed, measures for the duration, then shuts the instances down and records
//! the databases' new state in the manifest.

use super::instance::{Instance, InstanceConfig, InstanceEnd, InstanceShared};
use super::judge::{Evidence, Verdict, WindowSums, judge};
use super::layout::Manifest;
use super::preset::{Preset, Profile, TestType, Thresholds};
use super::recorder::MailboxRecorder;
use crate::engine::EngineKind;
use crate::run::{HostSampler, OwnCpuTime, StopFlag, process_cpu, sleep_until};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};
use storbench_report::series::{Phase, SeriesRow};

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
}

/// One interval as the caller sees it.
pub struct MailboxInterval<'a> {
    pub row: SeriesRow,
    pub per_db: &'a [MailboxRecorder],
    /// Cache fill, percent of its target, lowest of all databases (during the warm-up).
    pub cache_fill_pct: f64,
}

/// What a run measured.
#[derive(Debug)]
pub struct MailboxOutcome {
    /// Measured-phase totals per database and merged.
    pub per_db: Vec<MailboxRecorder>,
    pub totals: MailboxRecorder,
    pub warmup_s: f64,
    pub measured_s: f64,
    /// Whether the caches reached 90 % before the warm-up limit.
    pub warmed: bool,
    pub verdict: Verdict,
    pub cpu: OwnCpuTime,
    pub complete: bool,
    pub failures: Vec<String>,
    pub ends: Vec<InstanceEnd>,
    pub shutdown_s: f64,
}

/// Runs the transactional workload on the databases of `manifest` in `db_dir`.
pub fn run(
    spec: &MailboxSpec,
    db_dir: &Path,
    manifest: &mut Manifest,
    sampler: &mut dyn HostSampler,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&MailboxInterval),
) -> crate::Result<MailboxOutcome> {
    let n = manifest.databases.len();
    let files = manifest.files(db_dir);
    if manifest.clean {
        // A clean shutdown needs none of the earlier runs' logs.
        for (f, d) in files.iter().zip(&manifest.databases) {
            for g in f.log_generations().into_iter().filter(|&g| g < d.next_generation) {
                let _ = std::fs::remove_file(f.log_path(g));
            }
        }
    }
    let mut shared = Vec::with_capacity(n);
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
        shared.push(s);
    }
    // The stream this run writes starts at the log file each instance has just made: recorded
    // so that a replay after a dirty end knows where to start.
    manifest.note_logs(db_dir);
    manifest.clean = false;
    save(manifest, db_dir)?;
    let handles: Vec<_> = instances
        .into_iter()
        .enumerate()
        .map(|(i, inst)| {
            std::thread::Builder::new().name(format!("mailbox-db{}", i + 1)).spawn(move || inst.run())
        })
        .collect::<Result<_, _>>()
        .map_err(|source| crate::Error::Setup { what: "starting a database thread", source })?;
    while !shared.iter().all(|s| s.ready.load(Relaxed)) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut c = Coordinator::new(spec, n);
    sampler.sample();
    c.intervals(spec, &shared, sampler, stop, on_interval);
    for s in &shared {
        s.end.store(true, Relaxed);
    }
    let shutdown = Instant::now();
    let ends: Vec<InstanceEnd> = handles
        .into_iter()
        .map(|h| {
            h.join().unwrap_or_else(|_| InstanceEnd {
                failure: Some("a database thread panicked".into()),
                ..Default::default()
            })
        })
        .collect();
    let shutdown_s = shutdown.elapsed().as_secs_f64();
    // The shutdown's own I/O is not part of the measured phase; drop what it recorded.
    for (d, e) in manifest.databases.iter_mut().zip(&ends) {
        d.pages = e.pages.max(d.pages);
        d.next_generation = e.next_generation;
    }
    manifest.clean = ends.iter().all(|e| e.failure.is_none()) && spec.log_files_limit.is_none();
    if manifest.clean {
        manifest.note_logs(db_dir);
    }
    save(manifest, db_dir)?;
    Ok(c.outcome(spec, stop, ends, shutdown_s))
}

fn save(m: &Manifest, db_dir: &Path) -> crate::Result<()> {
    m.save(db_dir).map_err(|source| crate::Error::Io { op: "writing", path: Manifest::path(db_dir), source })
}

struct Coordinator {
    start: Instant,
    per_db: Vec<MailboxRecorder>,
    seconds: Vec<Vec<WindowSums>>,
    measure_from_ns: Option<u64>,
    end_ns: u64,
    warmed: bool,
    cpu_at_measure: Option<OwnCpuTime>,
    cpu_at_end: Option<OwnCpuTime>,
}

impl Coordinator {
    fn new(spec: &MailboxSpec, n: usize) -> Self {
        let zero_warmup = spec.max_warmup.is_zero();
        Coordinator {
            start: Instant::now(),
            per_db: vec![MailboxRecorder::default(); n],
            seconds: vec![Vec::new(); n],
            measure_from_ns: zero_warmup.then_some(0),
            end_ns: 0,
            warmed: false,
            cpu_at_measure: zero_warmup.then(process_cpu),
            cpu_at_end: None,
        }
    }

    fn intervals(
        &mut self,
        spec: &MailboxSpec,
        shared: &[Arc<InstanceShared>],
        sampler: &mut dyn HostSampler,
        stop: &StopFlag,
        on_interval: &mut dyn FnMut(&MailboxInterval),
    ) {
        let second = 1_000_000_000u64;
        let max_warmup = spec.max_warmup.as_nanos() as u64;
        let mut recent: Vec<Option<f64>> = Vec::new();
        for index in 1u64.. {
            let boundary = index * second;
            let reached = sleep_until(self.start + Duration::from_nanos(boundary), stop);
            let now = if reached { boundary } else { self.start.elapsed().as_nanos() as u64 };
            let span = now - (index - 1) * second;
            let data: Vec<MailboxRecorder> = shared
                .iter()
                .map(|s| std::mem::take(&mut *s.recorder.lock().unwrap_or_else(|p| p.into_inner())))
                .collect();
            let phase = if self.measure_from_ns.is_some() { Phase::Measure } else { Phase::Ramp };
            if phase == Phase::Measure {
                for ((t, secs), d) in self.per_db.iter_mut().zip(&mut self.seconds).zip(&data) {
                    t.merge(d);
                    secs.push(WindowSums::of(d));
                }
            } else {
                // Errors and corruption count whenever they happen, warm-up included.
                for (t, d) in self.per_db.iter_mut().zip(&data) {
                    t.merge_faults(d);
                }
            }
            let fill = cache_fill_pct(shared);
            let read_ms = WindowSums::of(&MailboxRecorder::merged(&data)).read_ms();
            recent.push(read_ms);
            self.end_ns = now;
            let merged = MailboxRecorder::merged(&data);
            let row = SeriesRow {
                t_s: now as f64 / 1e9,
                phase,
                workload: columns(&merged, span, fill),
                system: sampler.sample(),
            };
            on_interval(&MailboxInterval { row, per_db: &data, cache_fill_pct: fill });
            let limit_reached = spec
                .log_files_limit
                .is_some_and(|l| shared.iter().all(|s| s.log_files_done.load(Relaxed) >= u64::from(l)));
            let steady = !spec.steady_latency || is_steady(&recent);
            match self.measure_from_ns {
                None if (fill >= 100.0 && steady) || now >= max_warmup => {
                    self.warmed = fill >= 100.0;
                    self.measure_from_ns = Some(now);
                    self.cpu_at_measure = Some(process_cpu());
                }
                Some(from) if now >= from + spec.duration.as_nanos() as u64 => break,
                _ => {}
            }
            // A database that stopped on its own (it failed) ends the run: measuring the
            // others on would judge a test that is no longer the one asked for.
            let one_stopped = shared.iter().any(|s| s.finished.load(Relaxed));
            if !reached || limit_reached || one_stopped {
                break;
            }
        }
        self.cpu_at_end = Some(process_cpu());
    }

    fn outcome(
        self,
        spec: &MailboxSpec,
        stop: &StopFlag,
        ends: Vec<InstanceEnd>,
        shutdown_s: f64,
    ) -> MailboxOutcome {
        let from = self.measure_from_ns.unwrap_or(self.end_ns);
        let measured_s = self.end_ns.saturating_sub(from) as f64 / 1e9;
        let evidence: Vec<(MailboxRecorder, Vec<WindowSums>)> =
            self.per_db.iter().cloned().zip(self.seconds).collect();
        let verdict = judge(
            &spec.thresholds,
            &Evidence {
                databases: &evidence,
                measured_s,
                window_s: spec.sample_window.as_secs().max(1) as usize,
                target_iops: spec.target_iops,
            },
        );
        let totals = MailboxRecorder::merged(&self.per_db);
        let failures: Vec<String> = ends.iter().filter_map(|e| e.failure.clone()).collect();
        let cpu = match (self.cpu_at_measure, self.cpu_at_end) {
            (Some(a), Some(b)) => b.since(&a),
            _ => OwnCpuTime::default(),
        };
        MailboxOutcome {
            per_db: self.per_db,
            totals,
            warmup_s: from as f64 / 1e9,
            measured_s,
            warmed: self.warmed,
            verdict,
            cpu,
            complete: !stop.is_stopped() && failures.is_empty(),
            failures,
            ends,
            shutdown_s,
        }
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

/// The workload's columns of `timeseries.csv`.
fn columns(d: &MailboxRecorder, span_ns: u64, cache_fill_pct: f64) -> Vec<(&'static str, Option<f64>)> {
    let secs = (span_ns as f64 / 1e9).max(1e-9);
    let rate = |n: u64| Some(n as f64 / secs);
    let avg_ms = |c: &crate::metrics::DirectionCounters| (c.ios > 0).then(|| c.latency.mean_ns() / 1e6);
    vec![
        ("transactional_iops", rate(d.transactional_ios())),
        ("db_reads_per_sec", rate(d.db_reads.ios)),
        ("db_writes_per_sec", rate(d.db_writes.ios)),
        ("log_writes_per_sec", rate(d.log_writes.ios)),
        ("bdm_reads_per_sec", rate(d.bdm_reads.ios)),
        ("db_read_avg_ms", avg_ms(&d.db_reads)),
        ("db_read_max_ms", (d.db_reads.ios > 0).then(|| d.db_reads.latency.quantile_ns(1.0) as f64 / 1e6)),
        ("db_write_avg_ms", avg_ms(&d.db_writes)),
        ("log_write_avg_ms", avg_ms(&d.log_writes)),
        (
            "log_write_max_ms",
            (d.log_writes.ios > 0).then(|| d.log_writes.latency.quantile_ns(1.0) as f64 / 1e6),
        ),
        (
            "db_write_bytes_avg",
            (d.db_writes.ios > 0).then(|| d.db_writes.bytes as f64 / d.db_writes.ios as f64),
        ),
        (
            "log_bytes_per_write",
            (d.log_writes.ios > 0).then(|| d.log_writes.bytes as f64 / d.log_writes.ios as f64),
        ),
        ("operations_per_sec", rate(d.operations())),
        ("page_fault_stalls", Some(d.page_fault_stalls as f64)),
        ("log_stalls", Some(d.log_stalls as f64)),
        ("errors", Some(d.errors.total() as f64)),
        ("checksum_errors", Some(d.checksum_errors as f64)),
        ("cache_fill_pct", Some(cache_fill_pct)),
    ]
}

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
}
