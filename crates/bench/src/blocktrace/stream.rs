//! A run's capture of its own block requests, as a background stream (`--capture`): armed
//! before the workers start, it records from the measured phase's start (warm-up is not in
//! it) to the run's end, the device's requests into a trace file in the run's bundle. At the end the trace's fingerprint and the capture's
//! cost are the stream's result, and its finding in the record, so that a summary rebuilt
//! from the record has them too. It has no columns in the series.

use super::{capture, fingerprint};
use crate::run::stream::Taken;
use crate::run::{Schedule, StopFlag, Stream};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use storbench_report::BackgroundResult;
use storbench_report::fingerprint::CaptureResult;
use storbench_report::series::Phase;

/// A capture of `device` into `trace`, armed before the run's workers start and recording
/// from its measured phase's start.
pub struct CaptureStream {
    device: PathBuf,
    trace: PathBuf,
    running: Option<capture::Capture>,
    /// Whether arming was tried (a failure is said once).
    armed: bool,
    /// When the measured phase starts.
    measured_at: Option<Instant>,
    result: Option<CaptureResult>,
}

impl CaptureStream {
    /// A capture of the block device `device` into the new trace file `trace`.
    pub fn new(device: PathBuf, trace: PathBuf) -> CaptureStream {
        CaptureStream { device, trace, running: None, armed: false, measured_at: None, result: None }
    }

    /// Stops the capture and reads its trace's fingerprint.
    fn finish(&mut self, capture: capture::Capture) -> Result<CaptureResult, String> {
        let trace = &self.trace;
        let stats = capture.stop().map_err(|e| format!("writing its trace {}: {e}", trace.display()))?;
        let (header, fingerprint) = fingerprint::of_file(trace)?;
        Ok(CaptureResult {
            trace: trace.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            device: header.device,
            major_minor: header.major_minor,
            records: stats.records,
            unmatched_completions: stats.unmatched_completions,
            never_completed: stats.never_completed,
            kernel_dropped: stats.kernel_dropped,
            cpu_us_per_request: stats.cpu_us_per_request(),
            fingerprint,
        })
    }
}

impl Stream for CaptureStream {
    fn kind(&self) -> &'static str {
        "capture"
    }

    /// Tracing on before the workers start, so the measured phase's first request is in it.
    fn arm(&mut self) -> Result<(), String> {
        self.armed = true;
        let (running, _) =
            capture::armed(&self.device, &self.trace).map_err(|e| format!("did not start: {e}"))?;
        self.running = Some(running);
        Ok(())
    }

    fn start(&mut self, schedule: Schedule, start: Instant, _stop: &StopFlag) -> Result<(), String> {
        let at = start + Duration::from_nanos(schedule.ramp_ns);
        self.measured_at = Some(at);
        if !std::mem::replace(&mut self.armed, true) {
            self.arm()?;
        }
        if let Some(running) = &self.running {
            running.record_from(at);
        }
        Ok(())
    }

    fn take(&mut self, _index: u64, _phase: Phase, _start_ns: u64, _end_ns: u64) -> Option<Taken> {
        None
    }

    fn stop(&mut self) -> Vec<String> {
        let Some(running) = self.running.take() else { return Vec::new() };
        let before_measuring = self.measured_at.is_none_or(|at| Instant::now() < at);
        match self.finish(running) {
            Ok(_) if before_measuring => {
                vec!["nothing captured: the run ended before its measured phase".into()]
            }
            Ok(r) => {
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
            Err(why) => vec![why],
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
