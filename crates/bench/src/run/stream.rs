//! Background streams: work that runs beside a run's workload on the run's own schedule (a
//! fixed-rate sequential stream, an emulated rebuild's copy, a user's command), closed at
//! the same interval boundaries as the workload, with its own columns in the same series
//! (`bg1.write_bytes_per_sec`) and its own lines in the record (stream `bg1`, histograms
//! tagged `bg1.write`).
//!
//! The run arms them before its workers start (`Lifecycle::run`: what must be in place for
//! the first request), the driver starts the streams `Beside::streams` holds when it starts,
//! closes each one's interval after the workload's, and stops them when the run ends; what
//! each did over the measured phase is `Streams::results` (each stream's figures cover every
//! measured interval, steady-state window or not).

use super::record::Tally;
use super::schedule::Schedule;
use super::{Interval, StopFlag, Workload};
use std::time::Instant;
use storbench_report::columns::Column;
use storbench_report::series::Phase;
use storbench_report::{BackgroundResult, StreamValues};

/// One background stream's kind: how it starts, closes an interval and sums up.
pub trait Stream: Send {
    /// What the stream is (`io`), as the record and the summary name it.
    fn kind(&self) -> &'static str;

    /// Makes ready what must be in place before the workload's first request (a capture's
    /// tracing), before the workload's workers start.
    fn arm(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Starts the stream's workers on the run's schedule (its start is `start`); `stop` is
    /// the run's stop request.
    fn start(&mut self, schedule: Schedule, start: Instant, stop: &StopFlag) -> Result<(), String>;

    /// Closes interval `index`, which the workload closed at `end_ns`: its columns' values and
    /// its data as the record keeps it; None once the stream's workers are gone.
    fn take(&mut self, index: u64, phase: Phase, start_ns: u64, end_ns: u64) -> Option<Taken>;

    /// Ends the workers and waits for them; why any failed.
    fn stop(&mut self) -> Vec<String>;

    /// Whether `stop` waits for the stream to end by itself (a command the run waits for):
    /// such streams are stopped after every other.
    fn waits(&self) -> bool {
        false
    }

    /// Its figures over the measured intervals it closed.
    fn result(&self) -> BackgroundResult;

    /// What the record's end keeps of it besides its intervals (a command's exit status and
    /// seconds), for `result` to be built again from the record.
    fn finding(&self) -> Option<serde_json::Value> {
        None
    }

    /// Text for the run's log once it stopped (a command's output).
    fn log(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A stream's closed interval: its columns' values for the row, its data for the record.
pub type Taken = (Vec<(Column, Option<f64>)>, Tally<'static>);

/// One interval of one background stream, as the driver hands it on with the workload's.
#[derive(Debug)]
pub struct StreamInterval {
    pub stream: String,
    pub tally: Tally<'static>,
}

/// The background streams of one run, in the order they were given.
#[derive(Default)]
pub struct Streams {
    streams: Vec<(String, Box<dyn Stream>)>,
    armed: bool,
    started: bool,
    stopped: bool,
    warnings: Vec<String>,
}

impl Streams {
    pub fn new() -> Streams {
        Streams::default()
    }

    /// Adds `stream` under `name` (`bg1`).
    pub fn add(&mut self, name: impl Into<String>, stream: Box<dyn Stream>) {
        self.streams.push((name.into(), stream));
    }

    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// Arms every stream once, before the first run's workers start (`Lifecycle::run`).
    pub(crate) fn arm(&mut self) {
        if !std::mem::replace(&mut self.armed, true) {
            self.each_starting(|s| s.arm());
        }
    }

    /// `step` of every stream, a stream it fails for said not to have started.
    fn each_starting(&mut self, mut step: impl FnMut(&mut dyn Stream) -> Result<(), String>) {
        for (name, s) in &mut self.streams {
            if let Err(why) = step(s.as_mut()) {
                self.warnings.push(format!("background stream {name} did not start: {why}"));
            }
        }
    }

    /// Starts every stream once, with the first run driven (a later phase of the same command,
    /// a mailbox backup, runs without them).
    pub(crate) fn start(&mut self, schedule: Schedule, start: Instant, stop: &StopFlag) {
        if !std::mem::replace(&mut self.started, true) {
            self.each_starting(|s| s.start(schedule, start, stop));
        }
    }

    /// Closes interval `index` of every running stream: each one's columns for the row and
    /// its tally for the record.
    pub(crate) fn take(
        &mut self,
        index: u64,
        phase: Phase,
        start_ns: u64,
        end_ns: u64,
    ) -> (Vec<StreamValues>, Vec<StreamInterval>) {
        let (mut values, mut tallies) = (Vec::new(), Vec::new());
        if !self.started || self.stopped {
            return (values, tallies);
        }
        for (name, s) in &mut self.streams {
            if let Some((v, tally)) = s.take(index, phase, start_ns, end_ns) {
                values.push(StreamValues { stream: name.clone(), values: v });
                let tally = tally.tagged_under(&format!("{name}."));
                tallies.push(StreamInterval { stream: name.clone(), tally });
            }
        }
        (values, tallies)
    }

    /// Ends every stream's workers (the run is over): those the run waits for last, so that
    /// nothing of storbench's runs beside them while it waits.
    pub(crate) fn stop(&mut self) {
        if !self.started || std::mem::replace(&mut self.stopped, true) {
            return;
        }
        for waiting in [false, true] {
            for (name, s) in self.streams.iter_mut().filter(|(_, s)| s.waits() == waiting) {
                self.warnings
                    .extend(s.stop().into_iter().map(|why| format!("background stream {name}: {why}")));
            }
        }
    }

    /// Each stream's figures over the measured phase, named, with the spec each was given.
    pub fn results(&self) -> Vec<BackgroundResult> {
        self.streams.iter().map(|(name, s)| BackgroundResult { name: name.clone(), ..s.result() }).collect()
    }

    /// Each stream's finding for the record's end (`Stream::finding`), by name.
    pub fn findings(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
        self.streams.iter().filter_map(|(name, s)| Some((name.clone(), s.finding()?))).collect()
    }

    /// What the streams have for the run's log (a command's output), each with its name.
    pub fn logs(&self) -> Vec<String> {
        let named = self.streams.iter().flat_map(|(name, s)| s.log().into_iter().map(move |l| (name, l)));
        named.map(|(name, text)| format!("background stream {name}: {text}")).collect()
    }

    /// What went wrong with a stream (one that did not start, a worker that failed).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// The values of `W`'s columns over `interval`: the row the driver writes for a workload, and
/// a background stream of that workload's kind writes under its name.
pub fn values_of<W: Workload>(w: &W, interval: &Interval<'_, W::Data>) -> Vec<(Column, Option<f64>)> {
    W::COLUMNS.iter().flat_map(|g| g.iter()).map(|c| (c.column, (c.value)(w, interval))).collect()
}

/// A host sampler with the run's background streams beside it: what a command hands the
/// driver when it has streams.
pub struct WithStreams<H> {
    pub host: H,
    pub streams: Streams,
}

impl<H: super::Beside> super::Beside for WithStreams<H> {
    fn sample(&mut self) -> storbench_report::SystemSample {
        self.host.sample()
    }

    fn streams(&mut self) -> Option<&mut Streams> {
        Some(&mut self.streams)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A stream that notes when it was stopped.
    struct Noted {
        name: &'static str,
        waits: bool,
        stopped: Arc<Mutex<Vec<&'static str>>>,
    }

    impl Stream for Noted {
        fn kind(&self) -> &'static str {
            "test"
        }
        fn start(&mut self, _: Schedule, _: Instant, _: &StopFlag) -> Result<(), String> {
            Ok(())
        }
        fn take(&mut self, _: u64, _: Phase, _: u64, _: u64) -> Option<Taken> {
            None
        }
        fn stop(&mut self) -> Vec<String> {
            self.stopped.lock().unwrap().push(self.name);
            Vec::new()
        }
        fn waits(&self) -> bool {
            self.waits
        }
        fn result(&self) -> BackgroundResult {
            BackgroundResult::default()
        }
    }

    #[test]
    fn a_stream_the_run_waits_for_is_stopped_after_every_other() {
        let stopped = Arc::new(Mutex::new(Vec::new()));
        let mut streams = Streams::new();
        for (name, waits) in [("command", true), ("io", false), ("rebuild", false)] {
            streams.add(name, Box::new(Noted { name, waits, stopped: stopped.clone() }));
        }
        let schedule = Schedule { ramp_ns: 0, end_ns: None, interval_ns: 1_000_000_000 };
        streams.start(schedule, Instant::now(), &StopFlag::new());
        streams.stop();
        assert_eq!(*stopped.lock().unwrap(), ["io", "rebuild", "command"]);
    }
}
