//! The synthetic I/O workload (fio-like): `run` is its one entry point; `options` are its
//! keys as a user gives them.
//!
//! Workers (one thread each, own engine and RNG stream) time their own I/Os and close their
//! own intervals; the run driver (`run::drive`, `Pace::Workers`) waits for every worker's
//! report of an interval, merges them, and keeps the schedule, the totals and steady state.
//! Under steady state the job ends once the SNIA rule holds, and the totals are those of the
//! last window of rounds only. Under a rate cap each worker paces its share (`run::pace`), the
//! run's schedule lag is in its series and summary, and a p99 lag over the limit is a warning.

mod background;
pub mod blocksize;
pub mod bundle;
mod copy;
pub mod entry;
pub mod fio_job;
pub mod like;
pub mod offsets;
pub mod options;
mod profile;
mod spec;
pub mod verify;
mod worker;

#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod pacing_tests;
#[cfg(test)]
mod search_tests;
#[cfg(test)]
mod steady_tests;
pub mod summary;
pub mod validate;

pub use background::IoStream;
pub use blocksize::BlockSizeMix;
pub use copy::CopySpec;
pub use offsets::{Distribution, Pattern, Region, Zones};
pub use profile::{SQLIO_PROFILES, SqlioProfile};
pub use spec::{End, IoSpec, Share};

use crate::engine::{self, IoEngine};
use crate::metrics::LatencyHistogram;
use crate::metrics::Recorder;
use crate::run::pace::{self, Behind};
use crate::run::{
    Beside, Closed, Collector, Interval, Length, Lifecycle, Outcome, Pace, Progress, RunShape, SeriesColumn,
    Started, StopFlag, Take, Warmup,
};
use std::collections::VecDeque;
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, mpsc};
use std::time::Instant;
use storbench_report::columns::io as col;
use storbench_report::{Mismatch, VerifyResult};
use worker::{Link, Msg, VerifyReport, Worker};

/// One finished interval as the caller sees it: its row for `timeseries.csv` and the merged
/// counters (with histograms) it was computed from.
pub type IoInterval<'a> = Closed<'a, Recorder>;

/// What a run measured, before it is put into a report.
pub type IoOutcome = Outcome<Recorder, IoDetail>;

/// What only the I/O workload has in its outcome.
#[derive(Debug)]
pub struct IoDetail {
    pub verify: VerifyResult,
    /// Effective engine after any fallback.
    pub engine: engine::EngineKind,
    /// Failed I/Os outside the window `totals` covers (warm-up, the verify pass, steady-state
    /// rounds before the window, a failed final flush of buffered writes). `totals.errors`
    /// has those inside it.
    pub errors_outside_window: u64,
}

/// Runs `spec` against `file` (None only for the null engine). Calls `on_interval` once per
/// interval, in order, as soon as every worker has finished it.
pub fn run(
    spec: &IoSpec,
    file: Option<&File>,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&IoInterval),
) -> crate::Result<IoOutcome> {
    let engines = open_engines(spec, file)?;
    let mut out = run_on(spec, engines, sampler, stop, on_interval)?;
    if let Some(f) = file
        && spec.reads.writes()
        && let Err(e) = flush_buffered(f)
    {
        out.detail.errors_outside_window += 1;
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
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&IoInterval),
) -> crate::Result<IoOutcome> {
    let run = IoRun { spec: Arc::new(spec.clone()), engines, workers: Vec::new() };
    run.run(sampler, stop, on_interval)
}

/// An io run: a thread per engine, each a `Worker` that closes its own intervals.
struct IoRun {
    spec: Arc<IoSpec>,
    /// Their engines go to the workers at the start.
    engines: Engines,
    workers: Vec<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Lifecycle for IoRun {
    type Work = IoWork;
    type Detail = IoDetail;
    type Error = crate::Error;

    fn start(&mut self, stop: &StopFlag) -> crate::Result<Started<IoWork>> {
        let plan = run_plan(&self.spec);
        let schedule = plan.schedule();
        let at = Instant::now();
        let (tx, rx) = mpsc::channel();
        let work = IoWork::new(self.spec.workers as usize, rx);
        for (id, engine) in std::mem::take(&mut self.engines.engines).into_iter().enumerate() {
            let link = Link { done: work.done.clone(), outstanding: work.outstanding[id].clone() };
            let (spec, tx, stop) = (self.spec.clone(), tx.clone(), stop.clone());
            let worker = std::thread::Builder::new()
                .name(format!("io-{}", id + 1))
                .spawn(move || Worker::new(id, &spec, engine, schedule, at, tx, link).run(&stop))
                .map_err(|source| crate::Error::Setup { what: "starting an I/O worker thread", source })?;
            self.workers.push(worker);
        }
        Ok(Started { plan, work, at })
    }

    fn finish(self, mut work: IoWork, driven: Outcome<Recorder>) -> crate::Result<IoOutcome> {
        work.drain();
        let failures: Vec<String> = self
            .workers
            .into_iter()
            .filter_map(|h| h.join().ok().and_then(|r| r.err()))
            .map(|e| e.to_string())
            .collect();
        let Engines { warnings, kind, .. } = self.engines;
        let verify_failures: u64 = work.verify.iter().map(|v| v.failed_reads).sum();
        let errors_outside_window =
            driven.all.errors.total().saturating_sub(driven.totals.errors.total()) + verify_failures;
        let detail = IoDetail {
            verify: verify_result(self.spec.verify, &work.verify),
            engine: kind,
            errors_outside_window,
        };
        let mut out = driven.with(detail);
        out.warnings.splice(0..0, warnings);
        out.warnings.extend(pace::fell_behind(&out.totals.lag, BEHIND));
        out.failed(failures);
        Ok(out)
    }
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

fn run_plan(spec: &IoSpec) -> RunShape {
    RunShape {
        warmup: Warmup::For(spec.ramp),
        length: match spec.end {
            End::Time(d) | End::BytesWithin(_, d) => Length::For(d),
            End::Bytes(_) | End::Trace => Length::UntilDone,
        },
        interval: spec.interval,
        rounds: spec.steady_state,
    }
}

/// The I/O workload as the driver sees it: the workers' reports, merged per interval.
struct IoWork {
    rx: mpsc::Receiver<Msg>,
    collector: Collector<Recorder>,
    complete: VecDeque<(u64, u64, Recorder)>,
    verify: Vec<VerifyReport>,
    /// Tells the workers to end early: set when steady state is reached or nothing completes.
    done: StopFlag,
    /// Each worker's I/Os in flight at its last interval boundary.
    outstanding: Vec<Arc<AtomicU64>>,
}

impl IoWork {
    fn new(workers: usize, rx: mpsc::Receiver<Msg>) -> Self {
        IoWork {
            rx,
            collector: Collector::new(workers),
            complete: VecDeque::new(),
            verify: Vec::new(),
            done: StopFlag::new(),
            outstanding: (0..workers).map(|_| Arc::new(AtomicU64::new(0))).collect(),
        }
    }

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Interval { worker, index, end_ns, data } => {
                self.collector.report(worker, index, end_ns, &data)
            }
            Msg::Measured { worker } => self.collector.finish(worker),
            Msg::Verified { report } => self.verify.push(report),
        }
        self.complete.extend(self.collector.take_complete());
    }

    /// Takes what the workers send after the measured phase (the verify pass's reports).
    fn drain(&mut self) {
        while let Ok(msg) = self.rx.recv() {
            self.handle(msg);
        }
    }
}

/// How an io run under a rate cap says it fell behind.
const BEHIND: Behind = Behind {
    schedule: "the rate cap fell behind",
    starts: "I/Os",
    remedy: "latency counts from each I/O's intended start, so it includes the wait (a deeper \
             --iodepth, more --workers or a lower rate may keep up)",
};

impl crate::run::Workload for IoWork {
    type Data = Recorder;
    const COLUMNS: &'static [&'static [SeriesColumn<Self>]] = &[COLUMNS, &LAG_COLUMNS];

    fn pace(&self) -> Pace {
        Pace::Workers
    }

    fn take(&mut self, index: u64, _boundary_ns: u64) -> Take<Recorder> {
        loop {
            if let Some((i, end_ns, data)) = self.complete.pop_front() {
                debug_assert_eq!(i, index, "every worker reports every interval it passes");
                return Take::Closed { end_ns, data };
            }
            if self.collector.all_finished() {
                return Take::Finished;
            }
            match self.rx.recv() {
                Ok(msg) => self.handle(msg),
                Err(_) => return Take::Finished,
            }
        }
    }

    fn wind_down(&mut self) {
        self.done.stop();
    }

    /// Stuck when no I/O completed: every one failed, or none came back.
    fn progress(&self, data: &Recorder) -> Progress {
        let outstanding = self.outstanding.iter().map(|o| o.load(Relaxed)).sum();
        let failed = data.errors.by_kind.iter().map(|(kind, n)| (kind.as_ref(), *n));
        Progress::of_requests(data.ios(), failed, outstanding)
    }
}

type Of<'a> = Interval<'a, Recorder>;

fn per_s(n: u64, i: &Of) -> Option<f64> {
    Some(n as f64 / i.span_s())
}

fn quantile_us(h: &LatencyHistogram, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| h.quantile_ns(q) as f64 / 1e3)
}

fn mean_us(h: &LatencyHistogram) -> Option<f64> {
    (!h.is_empty()).then(|| h.mean_ns() / 1e3)
}

/// The workload's columns of `timeseries.csv`.
const COLUMNS: &[SeriesColumn<IoWork>] = &[
    SeriesColumn { column: col::READ_IOPS, value: |_, i| per_s(i.data.read.ios, i) },
    SeriesColumn { column: col::WRITE_IOPS, value: |_, i| per_s(i.data.write.ios, i) },
    SeriesColumn { column: col::READ_BYTES_PER_SEC, value: |_, i| per_s(i.data.read.bytes, i) },
    SeriesColumn { column: col::WRITE_BYTES_PER_SEC, value: |_, i| per_s(i.data.write.bytes, i) },
    SeriesColumn { column: col::READ_LAT_MEAN_US, value: |_, i| mean_us(&i.data.read.latency) },
    SeriesColumn { column: col::READ_LAT_P50_US, value: |_, i| quantile_us(&i.data.read.latency, 0.5) },
    SeriesColumn { column: col::READ_LAT_P99_US, value: |_, i| quantile_us(&i.data.read.latency, 0.99) },
    SeriesColumn { column: col::READ_LAT_MAX_US, value: |_, i| quantile_us(&i.data.read.latency, 1.0) },
    SeriesColumn { column: col::WRITE_LAT_MEAN_US, value: |_, i| mean_us(&i.data.write.latency) },
    SeriesColumn { column: col::WRITE_LAT_P50_US, value: |_, i| quantile_us(&i.data.write.latency, 0.5) },
    SeriesColumn { column: col::WRITE_LAT_P99_US, value: |_, i| quantile_us(&i.data.write.latency, 0.99) },
    SeriesColumn { column: col::WRITE_LAT_MAX_US, value: |_, i| quantile_us(&i.data.write.latency, 1.0) },
    SeriesColumn { column: col::ERRORS, value: |_, i| Some(i.data.errors.total() as f64) },
];

/// Schedule lag under a rate cap, empty otherwise.
const LAG_COLUMNS: [SeriesColumn<IoWork>; 2] = pace::lag_columns();

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
