//! The summary of integrity crash cycles (`storbench integrity --crash-after`): the I/O figures
//! of the cycles' writers from their recorded intervals, what the audits after each crash
//! found, and each cycle's crash, as the record keeps them (`CrashFacts`).
//!
//! Each cycle's writer is its own stream of the record, `cycle1`, `cycle2` and so on: its
//! intervals keep the writer's own numbering from 0 and lie where they ran on the run's
//! timeline (the files' creation and the audit between two cycles are gaps), so a cycle's
//! seconds are told apart without a field the record's other streams lack, and the run's
//! figures are every cycle stream merged.

use super::{IntegrityRecorder, audit_result, measured};
use crate::run::record::summary::{cpu_usage, ended};
use crate::run::record::{RecordError, StoredRecord};
use crate::run::{IntervalData, Outcome};
use serde::{Deserialize, Serialize};
use storbench_report::{CrashResult, IntegrityErrors, IntegrityResults, Phases, Results, Summary};

/// The record's stream of cycle `cycle`'s writer.
pub fn cycle_stream(cycle: u32) -> String {
    format!("cycle{cycle}")
}

fn is_cycle_stream(name: &str) -> bool {
    name.strip_prefix("cycle").is_some_and(|n| n.parse::<u32>().is_ok())
}

/// Whether `started` (a summary as its run started) is of crash cycles: their results have a
/// `crash` from the start.
pub fn is_crash(started: &Summary) -> bool {
    matches!(&started.results, Results::Integrity(r) if r.crash.is_some())
}

/// What crash cycles know besides their writers' intervals, as the record's end keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CrashFacts {
    /// The cycles asked for.
    pub planned: u32,
    /// A stop request ended the run.
    pub interrupted: bool,
    /// Every cycle that came to its crash, in order; a failed one ends the run.
    pub cycles: Vec<CycleRecord>,
    /// What the audits found of the acknowledged writes.
    pub crash: CrashResult,
    /// The audits' errors by class.
    pub errors: IntegrityErrors,
    pub pages_checked: u64,
    pub audit_s: f64,
}

/// One cycle's crash: when it was planned, when it really came and how. Times are seconds
/// after the writer's activities started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleRecord {
    pub cycle: u32,
    pub planned_s: f64,
    /// When the writer was killed, or the command started.
    pub crash_s: f64,
    /// When the writer was gone (killed, or ended by the command).
    pub writer_ended_s: f64,
    /// Whether storbench killed the writer after the command (it failed, or left the writer
    /// running).
    pub writer_killed: bool,
    /// The command's end ("exit status: 0 after 0.21 s"), with a command.
    pub command: Option<String>,
    /// Why the cycle failed, if it did.
    pub failure: Option<String>,
}

impl CycleRecord {
    /// "the writer killed 0.74 s (planned 0.72 s) into its activities", and so on; a failed
    /// cycle starts with why.
    pub fn describe(&self) -> String {
        match &self.failure {
            None => self.crash(),
            Some(why) => format!("FAILED: {}", self.failed_because(why)),
        }
    }

    /// The summary's warning for a failed cycle.
    fn failure_warning(&self) -> Option<String> {
        let why = self.failure.as_ref()?;
        Some(format!("crash cycle {} failed: {}", self.cycle, self.failed_because(why)))
    }

    /// Why the cycle failed, with its times.
    fn failed_because(&self, why: &str) -> String {
        match (&self.command, self.crash()) {
            (None, _) => why.to_owned(),
            (Some(_), crash) => format!("{why}; {crash}"),
        }
    }

    /// When the crash came, and how.
    fn crash(&self) -> String {
        let at = format!("{:.2} s (planned {:.2} s)", self.crash_s, self.planned_s);
        let gone =
            if self.writer_killed { "the writer killed by storbench at" } else { "the writer gone at" };
        match &self.command {
            None => format!("the writer killed {at} into its activities"),
            Some(end) => format!(
                "--crash-cmd ran {at} into the writer's activities, {end}; {gone} {:.2} s",
                self.writer_ended_s
            ),
        }
    }
}

/// The summary of crash cycles: `started` with the writers' I/O figures (the outcome's totals
/// over its measured seconds, every cycle's recorded intervals), what the audits found, and
/// the cycles' failures: one fails the run, each with its reason among the warnings, and the
/// cycles left unrun are said.
pub fn summary(started: Summary, out: &Outcome<IntegrityRecorder, CrashFacts>, ended_at: &str) -> Summary {
    let mut s = ended(started, ended_at);
    let base = match &s.results {
        Results::Integrity(r) => r.clone(),
        _ => IntegrityResults::default(),
    };
    let f = &out.detail;
    let failures: Vec<String> = f.cycles.iter().filter_map(CycleRecord::failure_warning).collect();
    let r = IntegrityResults {
        pass: out.complete && f.errors.total() == 0 && f.crash.lost == 0 && failures.is_empty(),
        interrupted: f.interrupted,
        errors: f.errors.clone(),
        audit: Some(audit_result(f.pages_checked, f.audit_s, out.complete)),
        crash: Some(f.crash.clone()),
        ..measured(base, &out.totals, out.measured_s)
    };
    s.complete = out.complete;
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: out.measured_s };
    s.cpu = cpu_usage(out, r.ios);
    s.warnings.extend(out.warnings.iter().cloned());
    let ran = f.cycles.len() as u32;
    let unrun = (!failures.is_empty() && ran < f.planned)
        .then(|| format!("crash cycles {} to {} were not run: the cycle before failed", ran + 1, f.planned));
    s.warnings.extend(failures);
    s.warnings.extend(unrun);
    s.results = Results::Integrity(r);
    s
}

/// The summary of the crash cycles in `record`: every cycle stream's intervals merged, with
/// the end's facts. Their figures are not cut to a window: each cycle is audited whole.
pub(super) fn rebuilt(
    record: &StoredRecord,
    started: Summary,
    window: Option<(f64, f64)>,
    at: &str,
) -> Result<Summary, RecordError> {
    if window.is_some() {
        return Err(RecordError::Read(
            "crash cycles are not cut to a window: each cycle's figures go with its audit".into(),
        ));
    }
    let mut streams: Vec<&str> = Vec::new();
    for i in &record.intervals {
        if is_cycle_stream(&i.stream) && !streams.contains(&i.stream.as_str()) {
            streams.push(&i.stream);
        }
    }
    let mut totals = IntegrityRecorder::default();
    for stream in streams {
        totals.merge(&record.merged(stream, |_| true)?);
    }
    let out = record.end()?.facts.outcome(totals.clone(), totals, record.detail()?);
    Ok(summary(started, &out, at))
}
