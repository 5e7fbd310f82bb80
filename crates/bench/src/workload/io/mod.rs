//! The synthetic I/O workload (fio-like): `run` is its one entry point.
//!
//! Workers (one thread each, own engine and RNG stream) report per-interval counters to a
//! coordinator on this thread, which merges them, samples the host at each boundary, hands each
//! row to the caller as it completes, and adds measured intervals into the totals. Under
//! steady state it also groups them into rounds, ends the job once the SNIA rule holds, and
//! the totals are then those of the last window of rounds only.

pub mod blocksize;
pub mod offsets;
mod profile;
mod spec;
pub mod verify;
mod worker;

#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod steady_tests;

pub use blocksize::BlockSizeMix;
pub use offsets::{Distribution, Pattern, Region};
pub use profile::{SQLIO_PROFILES, SqlioProfile};
pub use spec::{End, IoSpec};

use crate::engine::{self, IoEngine};
use crate::metrics::Recorder;
use crate::run::{Collector, HostSampler, OwnCpuTime, Rounds, Rule, Schedule, StopFlag, process_cpu};
use std::fs::File;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use storbench_report::series::{Phase, SeriesRow};
use storbench_report::{Mismatch, SteadyState, VerifyResult};
use worker::{Msg, VerifyReport, Worker};

/// One finished interval as the caller sees it: the row for `timeseries.csv` and the merged
/// counters (with histograms) it was computed from.
pub struct IntervalReport<'a> {
    pub row: SeriesRow,
    /// Seconds since the run's start at which the interval began.
    pub start_s: f64,
    pub data: &'a Recorder,
}

/// What a run measured, before it is put into a report.
#[derive(Debug)]
pub struct IoOutcome {
    /// Counters over the measured phase (under steady state: over its window), all workers
    /// merged.
    pub totals: Recorder,
    pub ramp_s: f64,
    pub measured_s: f64,
    /// storbench's CPU time over the measured phase.
    pub cpu: OwnCpuTime,
    pub verify: VerifyResult,
    /// False when a stop request cut the run short.
    pub complete: bool,
    /// Things to tell the user about how the figures came about.
    pub warnings: Vec<String>,
    /// Effective engine after any fallback.
    pub engine: engine::EngineKind,
    /// Failed I/Os outside the window `totals` covers (warm-up, the verify pass, steady-state
    /// rounds before the window, a failed final flush of buffered writes). `totals.errors`
    /// has those inside it.
    pub errors_outside_window: u64,
    /// Workers whose engine failed (not single I/Os, which are counted as errors): the run's
    /// figures then cover only what the others did, and the run is not to be trusted.
    pub failures: Vec<String>,
    /// Under steady state: the rounds, the verdict and the window the figures cover.
    pub steady: Option<SteadyState>,
}

/// Runs `spec` against `file` (None only for the null engine). Calls `on_interval` once per
/// interval, in order, as soon as every worker has finished it.
pub fn run(
    spec: &IoSpec,
    file: Option<&File>,
    sampler: &mut dyn HostSampler,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&IntervalReport),
) -> crate::Result<IoOutcome> {
    let engines = open_engines(spec, file)?;
    let mut out = run_on(spec, engines, sampler, stop, on_interval)?;
    if let Some(f) = file
        && spec.read_pct < 100
        && let Err(e) = flush_buffered(f)
    {
        out.errors_outside_window += 1;
        out.warnings.push(format!(
            "flushing the page cache to the target at the end failed ({e}): writes counted as done \
             did not all reach the storage"
        ));
    }
    Ok(out)
}

/// Writes the page cache's share of a buffered run to the storage, so that a write the kernel
/// accepted but could not store (a full or failing device) shows as the error it is. Nothing
/// for O_DIRECT, whose writes completed on the device.
fn flush_buffered(f: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: F_GETFL reads the descriptor's flags; f keeps it open.
    let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
    if flags >= 0 && flags & libc::O_DIRECT != 0 {
        return Ok(());
    }
    f.sync_data()
}

/// One engine per worker, opened for a job, with what the user should know about them.
pub struct Engines {
    pub engines: Vec<Box<dyn IoEngine>>,
    pub warnings: Vec<String>,
    /// The engine actually used, after any fallback.
    pub kind: engine::EngineKind,
}

/// Runs `spec` on engines the caller opened (one per worker): the seam for fault injection.
pub fn run_on(
    spec: &IoSpec,
    engines: Engines,
    sampler: &mut dyn HostSampler,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&IntervalReport),
) -> crate::Result<IoOutcome> {
    let Engines { engines, warnings, kind } = engines;
    let schedule = schedule_of(spec);
    let start = Instant::now();
    let (tx, rx) = mpsc::channel();
    let mut coordinator = Coordinator::new(spec, schedule, start);
    sampler.sample();
    let outcome = std::thread::scope(|scope| {
        let handles: Vec<_> = engines
            .into_iter()
            .enumerate()
            .map(|(id, engine)| {
                let done = coordinator.done.clone();
                let w = Worker::new(id, spec, engine, schedule, start, tx.clone(), done);
                let stop = stop.clone();
                scope.spawn(move || w.run(&stop))
            })
            .collect();
        drop(tx);
        coordinator.collect(&rx, sampler, on_interval);
        let failures: Vec<String> = handles
            .into_iter()
            .filter_map(|h| h.join().ok().and_then(|r| r.err()))
            .map(|e| e.to_string())
            .collect();
        failures
    });
    let mut result = coordinator.finish(spec, stop, warnings, kind);
    result.failures = outcome;
    Ok(result)
}

pub fn open_engines(spec: &IoSpec, file: Option<&File>) -> crate::Result<Engines> {
    let (mut engines, mut warnings) = (Vec::new(), Vec::new());
    let mut kind = spec.engine;
    for _ in 0..spec.workers {
        let opened = engine::open(spec.engine, file, spec.iodepth, spec.block_sizes.max())
            .map_err(|source| crate::Error::Setup { what: "setting up the I/O engine", source })?;
        if let Some(why) = opened.fallback
            && !warnings.contains(&why)
        {
            warnings.push(why);
        }
        kind = opened.engine.capabilities().kind;
        engines.push(opened.engine);
    }
    if kind == engine::EngineKind::Psync && spec.iodepth > 1 {
        warnings.push(format!(
            "psync is synchronous: an I/O depth of {} acts as 1 per worker; use more workers for more I/Os in flight",
            spec.iodepth
        ));
    }
    Ok(Engines { engines, warnings, kind })
}

fn schedule_of(spec: &IoSpec) -> Schedule {
    let ramp_ns = spec.ramp.as_nanos() as u64;
    let end_ns = match spec.end {
        End::Time(d) => Some(ramp_ns + d.as_nanos() as u64),
        End::Bytes(_) => None,
    };
    Schedule { ramp_ns, end_ns, interval_ns: spec.interval.as_nanos().max(1) as u64 }
}

/// Merges worker reports into rows and totals.
struct Coordinator {
    schedule: Schedule,
    start: Instant,
    collector: Collector<Recorder>,
    totals: Recorder,
    measured: usize,
    measured_end_ns: u64,
    cpu_at_measure: Option<OwnCpuTime>,
    cpu_at_end: Option<OwnCpuTime>,
    verify: Vec<VerifyReport>,
    /// Failed I/Os in every interval and the verify pass, whatever the phase.
    errors_seen: u64,
    rounds: Option<Rounds<Recorder>>,
    /// Tells the workers to end early: set when steady state is reached.
    done: StopFlag,
}

impl Coordinator {
    fn new(spec: &IoSpec, schedule: Schedule, start: Instant) -> Self {
        Coordinator {
            schedule,
            start,
            collector: Collector::new(spec.workers as usize),
            totals: Recorder::default(),
            measured: 0,
            measured_end_ns: 0,
            cpu_at_measure: (schedule.ramp_ns == 0).then(process_cpu),
            cpu_at_end: None,
            verify: Vec::new(),
            errors_seen: 0,
            rounds: spec.steady_state.map(|round| {
                let per_round = (round.as_nanos() as u64 / schedule.interval_ns).max(1);
                Rounds::new(Rule::SNIA_PTS, per_round, schedule.interval_ns)
            }),
            done: StopFlag::new(),
        }
    }

    fn collect(
        &mut self,
        rx: &mpsc::Receiver<Msg>,
        sampler: &mut dyn HostSampler,
        on_interval: &mut dyn FnMut(&IntervalReport),
    ) {
        loop {
            let msg = match self.time_to_ramp_end() {
                Some(wait) => match rx.recv_timeout(wait) {
                    Ok(m) => m,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        self.cpu_at_measure = Some(process_cpu());
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                },
                None => match rx.recv() {
                    Ok(m) => m,
                    Err(_) => break,
                },
            };
            self.handle(msg, sampler, on_interval);
        }
    }

    fn time_to_ramp_end(&self) -> Option<Duration> {
        if self.cpu_at_measure.is_some() {
            return None;
        }
        let ramp_end = self.start + Duration::from_nanos(self.schedule.ramp_ns);
        Some(ramp_end.saturating_duration_since(Instant::now()))
    }

    fn handle(
        &mut self,
        msg: Msg,
        sampler: &mut dyn HostSampler,
        on_interval: &mut dyn FnMut(&IntervalReport),
    ) {
        match msg {
            Msg::Interval { worker, index, end_ns, data } => {
                self.collector.report(worker, index, end_ns, &data);
                for (index, end_ns, data) in self.collector.take_complete() {
                    self.emit(index, end_ns, data, sampler, on_interval);
                }
            }
            Msg::Measured { worker, end_ns } => {
                self.collector.finish(worker);
                self.measured += 1;
                self.measured_end_ns = self.measured_end_ns.max(end_ns);
                for (index, end_ns, data) in self.collector.take_complete() {
                    self.emit(index, end_ns, data, sampler, on_interval);
                }
                if self.collector.all_finished() {
                    self.cpu_at_end = Some(process_cpu());
                }
            }
            Msg::Verified { report } => {
                self.errors_seen += report.failed_reads;
                self.verify.push(report);
            }
        }
    }

    fn emit(
        &mut self,
        index: u64,
        end_ns: u64,
        data: Recorder,
        sampler: &mut dyn HostSampler,
        on_interval: &mut dyn FnMut(&IntervalReport),
    ) {
        let phase = self.schedule.phase(index);
        let start_ns = self.schedule.interval_start(index);
        let span_ns = end_ns.saturating_sub(start_ns);
        self.errors_seen += data.errors.total();
        if phase == Phase::Measure {
            self.totals.merge(&data);
            if let Some(r) = &mut self.rounds
                && r.add(&data, data.ios(), start_ns, end_ns, process_cpu)
            {
                self.done.stop();
            }
        }
        let row = SeriesRow {
            t_s: end_ns as f64 / 1e9,
            phase,
            workload: interval_columns(&data, span_ns),
            system: sampler.sample(),
        };
        on_interval(&IntervalReport { row, start_s: start_ns as f64 / 1e9, data: &data });
    }

    fn finish(
        self,
        spec: &IoSpec,
        stop: &StopFlag,
        warnings: Vec<String>,
        engine: engine::EngineKind,
    ) -> IoOutcome {
        let end = self.cpu_at_end.unwrap_or_else(process_cpu);
        let cpu = self.cpu_at_measure.map(|m| end.since(&m)).unwrap_or_default();
        let ramp_ns = self.schedule.ramp_ns.min(self.measured_end_ns);
        let out = IoOutcome {
            totals: self.totals,
            ramp_s: ramp_ns as f64 / 1e9,
            measured_s: self.measured_end_ns.saturating_sub(self.schedule.ramp_ns) as f64 / 1e9,
            cpu,
            verify: verify_result(spec.verify, &self.verify),
            complete: !stop.is_stopped(),
            warnings,
            engine,
            errors_outside_window: 0,
            failures: Vec::new(),
            steady: None,
        };
        let mut out = match self.rounds {
            Some(rounds) => steady_window(out, rounds, self.cpu_at_measure),
            None => out,
        };
        out.errors_outside_window = self.errors_seen.saturating_sub(out.totals.errors.total());
        out
    }
}

/// Narrows a finished run's figures to the steady-state window. A run that ended before its
/// first whole round keeps every measured interval, and says so.
fn steady_window(
    mut out: IoOutcome,
    rounds: Rounds<Recorder>,
    cpu_at_measure: Option<OwnCpuTime>,
) -> IoOutcome {
    let Some((totals, cpu, steady)) = rounds.finish(cpu_at_measure) else {
        out.warnings.push("steady state: the run ended before its first whole round; the figures cover the whole measured phase".into());
        return out;
    };
    if !steady.reached {
        out.warnings.push(format!(
            "steady state not reached in {} rounds; the figures cover the last {} rounds",
            steady.rounds_run,
            steady.rounds_run.min(Rule::SNIA_PTS.window as u64)
        ));
    }
    out.totals = totals;
    out.cpu = cpu.unwrap_or_default();
    out.measured_s = steady.window_end_s - steady.window_start_s;
    out.steady = Some(steady);
    out
}

/// The workload's columns of `timeseries.csv` for one interval of `span_ns`.
fn interval_columns(data: &Recorder, span_ns: u64) -> Vec<(&'static str, Option<f64>)> {
    let secs = (span_ns as f64 / 1e9).max(1e-9);
    let lat =
        |h: &crate::metrics::LatencyHistogram, q: f64| (!h.is_empty()).then(|| h.quantile_ns(q) as f64 / 1e3);
    let mean = |h: &crate::metrics::LatencyHistogram| (!h.is_empty()).then(|| h.mean_ns() / 1e3);
    vec![
        ("read_iops", Some(data.read.ios as f64 / secs)),
        ("write_iops", Some(data.write.ios as f64 / secs)),
        ("read_bytes_per_sec", Some(data.read.bytes as f64 / secs)),
        ("write_bytes_per_sec", Some(data.write.bytes as f64 / secs)),
        ("read_lat_mean_us", mean(&data.read.latency)),
        ("read_lat_p50_us", lat(&data.read.latency, 0.5)),
        ("read_lat_p99_us", lat(&data.read.latency, 0.99)),
        ("read_lat_max_us", lat(&data.read.latency, 1.0)),
        ("write_lat_mean_us", mean(&data.write.latency)),
        ("write_lat_p50_us", lat(&data.write.latency, 0.5)),
        ("write_lat_p99_us", lat(&data.write.latency, 0.99)),
        ("write_lat_max_us", lat(&data.write.latency, 1.0)),
        ("errors", Some(data.errors.total() as f64)),
    ]
}

fn verify_result(enabled: bool, reports: &[VerifyReport]) -> VerifyResult {
    let mut v = VerifyResult { enabled, ..VerifyResult::default() };
    for r in reports {
        v.blocks_checked += r.checked;
        v.mismatches += r.mismatches;
        for (offset, bad) in &r.first {
            if v.first_mismatches.len() < 100 {
                v.first_mismatches.push(Mismatch {
                    offset: *offset,
                    field: bad.field.to_string(),
                    expected: bad.expected.clone(),
                    found: bad.found.clone(),
                });
            }
        }
    }
    v
}
