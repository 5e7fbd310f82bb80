//! io as a background stream (`run::Stream`), beside another run on its schedule: one worker
//! of this workload, usually sequential at a fixed rate (`io`), or the copy loop of an emulated
//! mirror rebuild (`rebuild`, `copy.rs`). Either times its own I/Os as a foreground io job
//! does, into the same intervals and columns; the driver closes them with the run's.

use super::copy::{CopySpec, CopyWorker};
use super::worker::{Link, Worker};
use super::{IoSpec, IoWork};
use crate::engine;
use crate::metrics::Recorder;
use crate::run::record::Recordable;
use crate::run::record::summary::background;
use crate::run::stream::Taken;
use crate::run::{Interval, Schedule, StopFlag, Stream, Take, Workload};
use std::fs::File;
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Instant;
use storbench_report::BackgroundResult;
use storbench_report::series::Phase;

/// A background io stream: its job and where it runs, its worker once started, and its
/// totals.
pub struct IoStream {
    job: Job,
    work: Option<IoWork>,
    worker: Option<JoinHandle<std::io::Result<()>>>,
    phase: Option<Phase>,
    phase_total: Recorder,
    measured: Recorder,
    measured_ns: u64,
}

/// What the stream's one worker does.
enum Job {
    /// io's worker on its file (None for the null engine).
    Io { spec: Arc<IoSpec>, file: Option<File> },
    /// The copy loop from the first file to the second (none for the null engine).
    Copy { spec: CopySpec, files: Vec<File> },
}

impl IoStream {
    /// A stream that runs `spec` (one worker; its length and warm-up are the run's) on
    /// `file`, or on the null engine without one.
    pub fn new(spec: IoSpec, file: Option<File>) -> IoStream {
        IoStream::of(Job::Io { spec: Arc::new(IoSpec { workers: 1, ..spec }), file })
    }

    /// An emulated mirror rebuild: `spec`'s copy loop from `source` to `dest` (opened for
    /// writing), or on the null engine without them.
    pub fn rebuild(spec: CopySpec, files: Option<(File, File)>) -> IoStream {
        let files = files.map(|(s, d)| vec![s, d]).unwrap_or_default();
        IoStream::of(Job::Copy { spec, files })
    }

    fn of(job: Job) -> IoStream {
        IoStream {
            job,
            work: None,
            worker: None,
            phase: None,
            phase_total: Recorder::default(),
            measured: Recorder::default(),
            measured_ns: 0,
        }
    }
}

impl Stream for IoStream {
    fn kind(&self) -> &'static str {
        match self.job {
            Job::Io { .. } => "io",
            Job::Copy { .. } => "rebuild",
        }
    }

    fn start(&mut self, schedule: Schedule, start: Instant, stop: &StopFlag) -> Result<(), String> {
        let (tx, rx) = mpsc::channel();
        let work = IoWork::new(1, rx);
        let link = Link { done: work.done.clone(), outstanding: work.outstanding[0].clone() };
        // It runs until the run ends, whatever the run's own length (a run until done).
        let schedule = Schedule { end_ns: None, ..schedule };
        let stop = stop.clone();
        let failed = |e: std::io::Error| format!("setting up its I/O engine: {e}");
        let worker = match &self.job {
            Job::Io { spec, file } => {
                let spec = spec.clone();
                let opened = engine::open(spec.engine, file.as_ref(), spec.iodepth, spec.block_sizes.max())
                    .map_err(failed)?;
                std::thread::spawn(move || {
                    Worker::new(0, &spec, opened.engine, schedule, start, tx, link).run(&stop)
                })
            }
            Job::Copy { spec, files } => {
                let spec = spec.clone();
                let files: Vec<&File> = files.iter().collect();
                let opened = engine::open_files(spec.engine, &files, &spec.slot_lens()).map_err(failed)?;
                std::thread::spawn(move || {
                    CopyWorker::new(spec, opened.engine, schedule, start, tx, link).run(&stop)
                })
            }
        };
        self.worker = Some(worker);
        self.work = Some(work);
        Ok(())
    }

    fn take(&mut self, index: u64, phase: Phase, start_ns: u64, end_ns: u64) -> Option<Taken> {
        let Take::Closed { data, .. } = self.work.as_mut()?.take(index, end_ns) else { return None };
        if self.phase != Some(phase) {
            self.phase = Some(phase);
            self.phase_total = Recorder::default();
        }
        self.phase_total.merge(&data);
        if phase == Phase::Measure {
            self.measured.merge(&data);
            self.measured_ns += end_ns.saturating_sub(start_ns);
        }
        let work = self.work.as_ref()?;
        let interval = Interval::of(index, phase, (start_ns, end_ns), &data, &self.phase_total);
        let values = crate::run::stream::values_of(work, &interval);
        Some((values, data.tally().into_owned()))
    }

    fn stop(&mut self) -> Vec<String> {
        let Some(work) = self.work.as_mut() else { return Vec::new() };
        work.wind_down();
        work.drain();
        let joined = self.worker.take().map(|w| w.join());
        match joined {
            Some(Ok(Err(e))) => vec![format!("its worker failed: {e}")],
            Some(Err(_)) => vec!["its worker ended abnormally".into()],
            _ => Vec::new(),
        }
    }

    fn result(&self) -> BackgroundResult {
        background::of(self.kind(), &self.measured, self.measured_ns as f64 / 1e9)
    }
}
