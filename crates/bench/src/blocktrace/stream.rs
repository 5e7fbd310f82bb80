//! A run's capture of its own block requests, as a background stream (`--capture`): from the
//! measured phase's start (warm-up is not in it) to the run's end, the device's requests go
//! to a trace file in the run's bundle. At the end the trace's fingerprint and the capture's
//! cost are the stream's result, and its finding in the record, so that a summary rebuilt
//! from the record has them too. It has no columns in the series.

use super::{capture, fingerprint};
use crate::run::stream::Taken;
use crate::run::{Schedule, StopFlag, Stream};
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storbench_report::BackgroundResult;
use storbench_report::fingerprint::CaptureResult;
use storbench_report::series::Phase;

/// How often the capture's thread looks at the measured phase's start and the run's end.
const POLL: Duration = Duration::from_millis(20);

/// A capture of `device` into `trace`, begun with the measured phase.
pub struct CaptureStream {
    device: PathBuf,
    trace: PathBuf,
    /// Raised when the run ends.
    ended: StopFlag,
    thread: Option<JoinHandle<Result<Option<CaptureResult>, String>>>,
    result: Option<CaptureResult>,
}

impl CaptureStream {
    /// A capture of the block device `device` into the new trace file `trace`.
    pub fn new(device: PathBuf, trace: PathBuf) -> CaptureStream {
        CaptureStream { device, trace, ended: StopFlag::new(), thread: None, result: None }
    }
}

impl Stream for CaptureStream {
    fn kind(&self) -> &'static str {
        "capture"
    }

    fn start(&mut self, schedule: Schedule, start: Instant, stop: &StopFlag) -> Result<(), String> {
        let at = start + Duration::from_nanos(schedule.ramp_ns);
        let (device, trace) = (self.device.clone(), self.trace.clone());
        let (ended, stop) = (self.ended.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("bg-capture".into())
            .spawn(move || run(&device, &trace, at, &ended, &stop))
            .map_err(|e| format!("starting its thread: {e}"))?;
        self.thread = Some(thread);
        Ok(())
    }

    fn take(&mut self, _index: u64, _phase: Phase, _start_ns: u64, _end_ns: u64) -> Option<Taken> {
        None
    }

    fn stop(&mut self) -> Vec<String> {
        self.ended.stop();
        let joined = self.thread.take().map(JoinHandle::join);
        match joined {
            Some(Ok(Ok(Some(r)))) => {
                let lost = (r.never_completed + r.kernel_dropped > 0).then(|| {
                    format!(
                        "{} request(s) in its trace have no completion (in flight at the end, or lost); the \
                         kernel dropped {} event(s) when its trace buffer was full",
                        r.never_completed, r.kernel_dropped
                    )
                });
                self.result = Some(r);
                lost.into_iter().collect()
            }
            Some(Ok(Ok(None))) => vec!["nothing captured: the run ended before its measured phase".into()],
            Some(Ok(Err(why))) => vec![why],
            Some(Err(_)) => vec!["its thread ended abnormally".into()],
            None => Vec::new(),
        }
    }

    fn result(&self) -> BackgroundResult {
        result(self.result.clone())
    }

    fn finding(&self) -> Option<serde_json::Value> {
        let r = self.result.as_ref()?;
        Some(serde_json::to_value(r).expect("a capture's result serializes"))
    }
}

/// A capture stream's entry in the summary, from what it captured (None: nothing).
pub fn result(capture: Option<CaptureResult>) -> BackgroundResult {
    let measured_s = capture.as_ref().map_or(0.0, |c| c.fingerprint.duration_s);
    BackgroundResult {
        kind: "capture".into(),
        measured_s,
        capture: capture.map(Box::new),
        ..BackgroundResult::default()
    }
}

/// Waits for the measured phase, captures until the run ends, then reads the trace's
/// fingerprint. None when the run ended first.
fn run(
    device: &std::path::Path,
    trace: &std::path::Path,
    at: Instant,
    ended: &StopFlag,
    stop: &StopFlag,
) -> Result<Option<CaptureResult>, String> {
    while Instant::now() < at {
        if ended.is_stopped() || stop.is_stopped() {
            return Ok(None);
        }
        std::thread::sleep(POLL);
    }
    let (running, header) = capture::begin(device, trace).map_err(|e| format!("did not start: {e}"))?;
    while !ended.is_stopped() {
        std::thread::sleep(POLL);
    }
    let stats = running.stop().map_err(|e| format!("writing its trace {}: {e}", trace.display()))?;
    let (_, fingerprint) = fingerprint::of_file(trace)?;
    Ok(Some(CaptureResult {
        trace: trace.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        device: header.device,
        major_minor: header.major_minor,
        records: stats.records,
        unmatched_completions: stats.unmatched_completions,
        never_completed: stats.never_completed,
        kernel_dropped: stats.kernel_dropped,
        cpu_us_per_request: stats.cpu_ns as f64 / 1e3 / stats.records.max(1) as f64,
        fingerprint,
    }))
}
