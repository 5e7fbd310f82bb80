//! A crash cycle's intervals, handed from its writer process to the run: the writer appends one
//! JSON line per closed interval (the interval with its histograms, its row of the time series
//! and when its activities started) to a file of the bundle that the run makes for the cycle
//! (`cycle<N>.intervals.jsonl`); the run records the new complete lines as the cycle goes, and
//! the rest once the writer is gone, as the cycle's stream (`cycle<N>`) on the run's timeline,
//! then removes the file.
//!
//! A line is written whole, with one write to a file opened for appending, as its interval
//! closes: a killed writer leaves every interval it closed, and the file stays in the bundle
//! when the run itself is killed before recording them.

use super::Voice;
use crate::Result;
use crate::error::Doing;
use crate::files::{self, How};
use crate::run::bundle::Bundle;
use crate::run::record::{self, HandedInterval, Recordable};
use crate::run::{Closed, Interval, IntervalData, OwnCpuTime, process_cpu};
use crate::workload::integrity::summary::crash::cycle_stream;
use crate::workload::integrity::{IntegrityInterval, IntegrityRecorder};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_report::columns::integrity as col;
use storbench_report::series::{SeriesRow, SystemSample};

/// One line of a cycle's intervals file.
#[derive(Serialize, Deserialize)]
struct Handed {
    /// When the writer's activities started, UTC nanoseconds since 1970: the interval's times
    /// count from there, its CPU time from then.
    epoch_ns: i128,
    interval: HandedInterval,
    /// The interval's row of timeseries.csv: the workload's columns by name, and the host.
    columns: Vec<(String, Option<f64>)>,
    system: SystemSample,
}

/// The writer's side: its closed intervals into the file the run made for them.
pub struct Handover {
    file: std::fs::File,
    epoch_ns: i128,
    cpu: OwnCpuTime,
    failed: bool,
    /// Says that handing over failed.
    alert: fn(&str),
}

impl Handover {
    pub fn open(path: &Path, alert: fn(&str)) -> Result<Handover> {
        let file = files::open(path, How::WRITE.append())
            .doing(&format!("opening the cycle's intervals file {}", path.display()))?;
        Ok(Handover { file, epoch_ns: 0, cpu: OwnCpuTime::default(), failed: false, alert })
    }

    /// The activities start now: the intervals' times and CPU time count from here.
    pub fn start(&mut self) {
        self.epoch_ns = jiff::Timestamp::now().as_nanosecond();
        self.cpu = process_cpu();
    }

    /// Appends the closed interval `iv`; a write that fails ends the handing over (said once
    /// to its `alert`: on stderr, which the run keeps in its log), not the stress.
    pub fn hand(&mut self, iv: &IntegrityInterval) {
        if self.failed {
            return;
        }
        let (i, tally) = (&iv.interval, iv.interval.data.tally());
        let own = Interval {
            cpu: i.cpu.since(&self.cpu),
            ..Interval::of(i.index, i.phase, (i.start_ns, i.end_ns), i.data, i.phase_total)
        };
        let line =
            record::interval_line(crate::workload::integrity::entry::WORKLOAD.name, &own, &tally, None);
        let handed = Handed {
            epoch_ns: self.epoch_ns,
            interval: HandedInterval::of(line, &tally),
            columns: iv.row.workload.iter().map(|(c, v)| (c.name.to_string(), *v)).collect(),
            system: iv.row.system.clone(),
        };
        let text = serde_json::to_string(&handed).expect("an interval serializes") + "\n";
        if let Err(e) = self.file.write_all(text.as_bytes()) {
            self.failed = true;
            (self.alert)(&format!(
                "the writer could not hand its intervals over from second {:.0} on: {e}",
                i.start_s
            ));
        }
    }
}

/// Where the cycles' intervals go: the run's bundle, on the run's timeline, and what they
/// add up to.
pub struct Sink<'a> {
    bundle: &'a mut Bundle,
    /// The run's start, UTC nanoseconds since 1970.
    epoch_ns: i128,
    /// Every recorded interval merged.
    pub totals: IntegrityRecorder,
    /// Their seconds, in nanoseconds.
    pub measured_ns: u64,
    /// The writers' CPU time over them.
    pub cpu: OwnCpuTime,
}

impl<'a> Sink<'a> {
    pub fn new(bundle: &'a mut Bundle, epoch_ns: i128) -> Sink<'a> {
        Sink {
            bundle,
            epoch_ns,
            totals: IntegrityRecorder::default(),
            measured_ns: 0,
            cpu: OwnCpuTime::default(),
        }
    }

    /// Records `h` as an interval of `stream`, its row in the time series; its CPU time.
    fn record(&mut self, stream: &str, h: Handed) -> std::result::Result<OwnCpuTime, String> {
        let (line, tally) = h.interval.into_parts()?;
        let data = IntegrityRecorder::from_tally(&tally)?;
        let shift = u64::try_from(h.epoch_ns - self.epoch_ns).unwrap_or(0);
        let cpu = OwnCpuTime {
            user: Duration::from_nanos(line.cpu_user_ns),
            sys: Duration::from_nanos(line.cpu_sys_ns),
        };
        let at = (line.start_ns + shift, line.end_ns + shift);
        let interval = Interval { cpu, ..Interval::of(line.index, line.phase, at, &data, &data) };
        let workload = h
            .columns
            .iter()
            .filter_map(|(name, v)| col::ALL.iter().find(|c| c.name == name).map(|c| (*c, *v)));
        let row = SeriesRow {
            t_s: interval.end_s,
            phase: line.phase,
            workload: workload.collect(),
            streams: Vec::new(),
            system: h.system,
        };
        self.bundle.recorded(&Closed { row, interval, streams: &[] }, stream, &tally);
        self.totals.merge(&data);
        self.measured_ns += line.end_ns.saturating_sub(line.start_ns);
        Ok(cpu)
    }
}

/// A cycle's intervals file, read as its writer appends to it.
pub struct Intake {
    path: PathBuf,
    file: std::fs::File,
    /// What was read after the last complete line.
    pending: Vec<u8>,
    stream: String,
    /// The writer's CPU time at its last interval.
    cpu: OwnCpuTime,
}

impl Intake {
    /// Makes cycle `cycle`'s file, empty, in the bundle.
    pub fn create(sink: &Sink, cycle: u32) -> Result<Intake> {
        let stream = cycle_stream(cycle);
        let path = sink.bundle.dir().join(format!("{stream}.intervals.jsonl"));
        let made = files::create(&path, How::WRITE).and_then(|_| files::open(&path, How::READ));
        let file = made.doing(&format!("making {}", path.display()))?;
        Ok(Intake { path, file, pending: Vec::new(), stream, cpu: OwnCpuTime::default() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records the complete lines the writer appended since the last call; a line that does
    /// not read is left out, and said.
    pub fn take(&mut self, sink: &mut Sink, voice: Voice) -> Result<()> {
        self.file.read_to_end(&mut self.pending).doing(&format!("reading {}", self.path.display()))?;
        let complete = self.pending.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
        let lines: Vec<u8> = self.pending.drain(..complete).collect();
        for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let handed = serde_json::from_slice(line).map_err(|e| e.to_string());
            match handed.and_then(|h| sink.record(&self.stream, h)) {
                Ok(cpu) => self.cpu = cpu,
                Err(why) => (voice.alert)(&format!(
                    "warning: an interval of crash {} was left out: {why}",
                    self.stream
                )),
            }
        }
        Ok(())
    }

    /// Once the writer is gone: records the rest (a line cut short by the kill is not an
    /// interval), adds the writer's CPU time and removes the file.
    pub fn finish(mut self, sink: &mut Sink, voice: Voice) -> Result<()> {
        self.take(sink, voice)?;
        sink.cpu = OwnCpuTime { user: sink.cpu.user + self.cpu.user, sys: sink.cpu.sys + self.cpu.sys };
        files::remove_own(&self.path).doing(&format!("removing {}", self.path.display()))?;
        Ok(())
    }
}
