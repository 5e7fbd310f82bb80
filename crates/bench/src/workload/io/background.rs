//! io as a background stream (`run::Stream`): one worker of this workload, usually sequential
//! at a fixed rate (a mirror rebuild's copy, emulated), beside another run on its schedule.
//! It times its own I/Os as a foreground io job does; the driver closes its intervals with the
//! run's.

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
    spec: Arc<IoSpec>,
    /// None for the null engine.
    file: Option<File>,
    work: Option<IoWork>,
    worker: Option<JoinHandle<std::io::Result<()>>>,
    phase: Option<Phase>,
    phase_total: Recorder,
    measured: Recorder,
    measured_ns: u64,
}

impl IoStream {
    /// A stream that runs `spec` (one worker; its length and warm-up are the run's) on
    /// `file`, or on the null engine without one.
    pub fn new(spec: IoSpec, file: Option<File>) -> IoStream {
        IoStream {
            spec: Arc::new(IoSpec { workers: 1, ..spec }),
            file,
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
        "io"
    }

    fn start(&mut self, schedule: Schedule, start: Instant, stop: &StopFlag) -> Result<(), String> {
        let spec = self.spec.clone();
        let opened = engine::open(spec.engine, self.file.as_ref(), spec.iodepth, spec.block_sizes.max())
            .map_err(|e| format!("setting up its I/O engine: {e}"))?;
        let (tx, rx) = mpsc::channel();
        let work = IoWork::new(1, rx);
        let link = Link { done: work.done.clone(), outstanding: work.outstanding[0].clone() };
        // It runs until the run ends, whatever the run's own length (a run until done).
        let schedule = Schedule { end_ns: None, ..schedule };
        let stop = stop.clone();
        self.worker = Some(std::thread::spawn(move || {
            Worker::new(0, &spec, opened.engine, schedule, start, tx, link).run(&stop)
        }));
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
        background::io(&self.measured, self.measured_ns as f64 / 1e9)
    }
}
