//! One planned run of an evaluation, from its empty record to its figures: a new bundle under
//! `runs/<id>/`, what the workload must have in place before the device settles, the settle,
//! idle power, the run into the bundle, and its record from the summary the run returns (its
//! one status, headline, warnings, power and performance per watt). How a run ends for the
//! exit code ([`Ending`]) is here too, with the run it ended ([`Ran`]).
//!
//! The workload comes in as [`Planned`] (a plan's run, or the same run as a cluster's
//! shards) and the program around it as [`Host`] (its terminal and log, its power meter, how
//! it words an error), so the steps and their order are the library's alone.

use super::StopFlag;
use super::bundle::{self, BundleError};
use super::measure::Measured;
use std::path::Path;
use std::time::{Duration, Instant};
use storbench_report::Summary;
use storbench_report::evaluation::{self as ev, RunRecord, RunStatus};

/// How a command ended, for the exit code.
pub enum Ending {
    Ok,
    /// A check failed: data verification found mismatches, I/Os failed (io without
    /// --continue-on-error, mailbox), or sales disagree with orders.
    CheckFailed,
    /// Stopped while running: the bundles keep what was measured.
    Interrupted,
    /// Stopped while running a command that writes no bundle: what it kept, said as the
    /// sentence's end ("the trace x.sbtrace holds ...").
    InterruptedKeeping(String),
    /// Stopped before anything was measured (while preparing a target or loading).
    InterruptedBeforeRun,
}

impl Ending {
    /// The exit of a run that ended with summary `s`, from its one status
    /// (`evaluation::status`): done is 0, interrupted 130 when it was stopped; a run that
    /// failed, failed its check, or ended early with nobody stopping it is 1.
    pub fn of(s: &Summary, stop: &StopFlag) -> Ending {
        match ev::status(s) {
            RunStatus::Done => Ending::Ok,
            RunStatus::Interrupted if stop.is_stopped() => Ending::Interrupted,
            _ => Ending::CheckFailed,
        }
    }

    /// The status of a run that ended so, before its summary is judged.
    fn status(&self) -> RunStatus {
        match self {
            Ending::Ok => RunStatus::Done,
            Ending::CheckFailed => RunStatus::CheckFailed,
            Ending::Interrupted | Ending::InterruptedKeeping(_) | Ending::InterruptedBeforeRun => {
                RunStatus::Interrupted
            }
        }
    }
}

/// How a measuring run ended: its exit status, and the run itself when it got as far as
/// measuring (an interrupt while preparing ends it before).
pub struct Ran {
    pub ending: Ending,
    pub measured: Option<Measured>,
}

/// A planned run, as an evaluation runs it.
pub trait Planned<E> {
    /// What must be in place before the settle and idle window (the io file, the loaded
    /// database).
    fn prepare(&self, bundle: &Path, stop: &StopFlag) -> Result<(), E>;
    /// Whether the run settles the device itself (after its own preparation inside the run).
    fn settles_itself(&self) -> bool;
    /// The run into `bundle`.
    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran, E>;
    /// Why no step held, where the run is a search and its result failed its check.
    fn none_held(&self) -> Option<String> {
        None
    }
}

/// What a run of an evaluation asks of the program around it.
pub trait Host<E> {
    /// Starts the run's log in `bundle` (what the run says from now on); the run keeps what
    /// it returns until its end.
    fn open_log(&self, bundle: &Path) -> Result<Box<dyn std::any::Any>, E>;
    /// The phase the run is in, for a live view ("prepare", "idle").
    fn phase(&self, phase: &str);
    /// Says a line on the terminal and in the run's log.
    fn say(&self, line: &str);
    /// An error as the plan's user reads it.
    fn worded(&self, e: &E) -> String;
    /// The power meter's latest reading; None where there is no meter or no reading yet.
    fn power_reading(&self) -> Option<f64>;
    /// Whether a power meter is read at all.
    fn has_power(&self) -> bool;
    /// Whether a summary's warning belongs in the run's record (not one the evaluation says
    /// once for all its runs).
    fn records_warning(&self, warning: &str) -> bool;
}

/// Where a run goes and how long its quiet windows before it are.
pub struct Place<'a> {
    /// The evaluation's directory: the bundle goes under `runs/<id>/`, and the record names
    /// it relative to here.
    pub root: &'a Path,
    /// The block device the settle watches; None where the target has none.
    pub device: Option<&'a str>,
    /// The longest wait for the device to go quiet.
    pub settle: Duration,
    /// How long idle power is read.
    pub idle_power: Duration,
}

/// Runs `run`, whose empty record is `record`: a new bundle, its preparation, the settle and
/// idle power, then the run; its record filled in from what it returned.
pub fn run<E: From<BundleError>>(
    mut record: RunRecord,
    run: &dyn Planned<E>,
    place: Place,
    host: &dyn Host<E>,
    stop: &StopFlag,
) -> RunRecord {
    host.phase("prepare");
    record.started_at = Some(jiff::Timestamp::now().to_string());
    // A new directory: an earlier attempt's bundle (before a resume) is not this run's.
    let opened = bundle::new_dir(&place.root.join("runs").join(&record.id), &record.id)
        .map_err(E::from)
        .and_then(|bundle| host.open_log(&bundle).map(|log| (bundle, log)));
    let (bundle, _log) = match opened {
        Ok(opened) => opened,
        Err(e) => return failed(record, host.worded(&e)),
    };
    // Before the settle and idle window: the io file filled, the oltp database loaded.
    if let Err(e) = run.prepare(&bundle, stop) {
        record.error = Some(host.worded(&e));
        record.status = if stop.is_stopped() { RunStatus::Interrupted } else { RunStatus::Failed };
        return record;
    }
    if !run.settles_itself() {
        super::settle(place.device, place.settle, stop);
    }
    host.phase("idle");
    record.idle_watts = idle_power(host, place.idle_power, stop);
    if stop.is_stopped() {
        record.status = RunStatus::Interrupted;
        return record;
    }
    let ran = run.measure(&bundle, stop);
    record_ran(&mut record, ran, &bundle, place.root, host);
    if record.status == RunStatus::CheckFailed {
        record.error = record.error.take().or_else(|| run.none_held());
    }
    record
}

fn failed(record: RunRecord, why: String) -> RunRecord {
    RunRecord { error: Some(why), status: RunStatus::Failed, ..record }
}

/// How the run into `bundle` went, into its record.
fn record_ran<E>(
    record: &mut RunRecord,
    ran: Result<Ran, E>,
    bundle: &Path,
    root: &Path,
    host: &dyn Host<E>,
) {
    match ran {
        Ok(ran) => {
            record.status = ran.ending.status();
            if let Some(m) = &ran.measured {
                record_measured(record, m, root, host);
            }
        }
        Err(e) => {
            let why = host.worded(&e);
            host.say(&format!("error: run {} failed: {why}", record.id));
            record.error = Some(why);
            record.status = RunStatus::Failed;
            // A run that failed after measuring keeps its bundle for the report.
            if bundle.join("summary.json").is_file() {
                record.bundle = Some(relative(bundle, root));
            }
        }
    }
}

/// Average of the power readings over `window`, one a second; None without a power source.
fn idle_power<E>(host: &dyn Host<E>, window: Duration, stop: &StopFlag) -> Option<f64> {
    if !host.has_power() {
        return None;
    }
    let end = Instant::now() + window;
    let mut readings = Vec::new();
    while Instant::now() < end && !stop.is_stopped() {
        std::thread::sleep(Duration::from_secs(1).min(end.saturating_duration_since(Instant::now())));
        readings.extend(host.power_reading());
    }
    (!readings.is_empty()).then(|| readings.iter().sum::<f64>() / readings.len() as f64)
}

/// `bundle` as evaluation.json records it: relative to the evaluation directory.
fn relative(bundle: &Path, root: &Path) -> String {
    bundle.strip_prefix(root).unwrap_or(bundle).display().to_string()
}

/// The run's figures from the summary it returned: its headline and warnings, its status as
/// the summary judges it, and active power (from the run's readings) and the per-watt figure.
fn record_measured<E>(record: &mut RunRecord, m: &Measured, root: &Path, host: &dyn Host<E>) {
    record.bundle = Some(relative(&m.bundle, root));
    let summary = &m.summary;
    // The run's one status, from its summary; a run that ended early with nobody stopping it
    // (its command ended it as failed) failed.
    record.status = match (ev::status(summary), record.status) {
        (RunStatus::Interrupted, RunStatus::CheckFailed | RunStatus::Failed) => RunStatus::Failed,
        (judged, _) => judged,
    };
    // Which I/Os or checks failed, by name with what was measured: evaluation.json and the
    // terminal say it.
    record.error = record.error.take().or_else(|| ev::status_reason(summary));
    record.headline = ev::headline(summary);
    record.warnings = summary.warnings.iter().filter(|w| host.records_warning(w)).cloned().collect();
    record.active_watts = m.active_watts;
    record.per_watt = match (&record.headline, record.active_watts) {
        (Some(h), Some(w)) => ev::perf_per_watt(h.value, w),
        _ => None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A workload whose preparation may fail and whose run ends as told, counting its runs.
    struct Fake {
        prepare_fails: bool,
        ends: fn() -> Ending,
        runs: Cell<u32>,
    }

    #[derive(Debug)]
    struct Failure(String);

    impl From<BundleError> for Failure {
        fn from(e: BundleError) -> Failure {
            Failure(e.to_string())
        }
    }

    impl Planned<Failure> for Fake {
        fn prepare(&self, _bundle: &Path, _stop: &StopFlag) -> Result<(), Failure> {
            if self.prepare_fails { Err(Failure("the database server refused".into())) } else { Ok(()) }
        }
        fn settles_itself(&self) -> bool {
            true
        }
        fn measure(&self, _bundle: &Path, _stop: &StopFlag) -> Result<Ran, Failure> {
            self.runs.set(self.runs.get() + 1);
            Ok(Ran { ending: (self.ends)(), measured: None })
        }
        fn none_held(&self) -> Option<String> {
            Some("no step held p99<=1ms".into())
        }
    }

    /// A meter reading 120 W, and the phases said.
    struct Bench {
        phases: std::cell::RefCell<Vec<String>>,
    }

    impl Host<Failure> for Bench {
        fn open_log(&self, _bundle: &Path) -> Result<Box<dyn std::any::Any>, Failure> {
            Ok(Box::new(()))
        }
        fn phase(&self, phase: &str) {
            self.phases.borrow_mut().push(phase.into());
        }
        fn say(&self, _line: &str) {}
        fn worded(&self, e: &Failure) -> String {
            format!("worded: {}", e.0)
        }
        fn power_reading(&self) -> Option<f64> {
            Some(120.0)
        }
        fn has_power(&self) -> bool {
            true
        }
        fn records_warning(&self, _warning: &str) -> bool {
            true
        }
    }

    fn run_with(fake: &Fake, idle: Duration, stop: &StopFlag) -> (RunRecord, Vec<String>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let host = Bench { phases: Default::default() };
        let place = Place { root: dir.path(), device: None, settle: Duration::ZERO, idle_power: idle };
        let record = RunRecord { id: "r1".into(), ..RunRecord::default() };
        let record = run(record, fake, place, &host, stop);
        (record, host.phases.into_inner(), dir)
    }

    #[test]
    fn a_run_whose_preparation_fails_is_failed_with_the_reason_and_never_measured() {
        let fake = Fake { prepare_fails: true, ends: || Ending::Ok, runs: Cell::new(0) };
        let (record, phases, dir) = run_with(&fake, Duration::ZERO, &StopFlag::new());
        assert_eq!(record.status, RunStatus::Failed);
        assert_eq!(record.error.as_deref(), Some("worded: the database server refused"));
        assert_eq!(fake.runs.get(), 0);
        assert_eq!(phases, ["prepare"]);
        assert!(record.started_at.is_some());
        // Its bundle was made new under runs/<id>/.
        let made: Vec<_> = std::fs::read_dir(dir.path().join("runs/r1")).unwrap().collect();
        assert_eq!(made.len(), 1);
    }

    #[test]
    fn idle_power_is_read_before_the_run_and_a_failed_search_says_why_no_step_held() {
        let fake = Fake { prepare_fails: false, ends: || Ending::CheckFailed, runs: Cell::new(0) };
        let (record, phases, _dir) = run_with(&fake, Duration::from_millis(1100), &StopFlag::new());
        assert_eq!(fake.runs.get(), 1);
        assert_eq!(phases, ["prepare", "idle"]);
        assert_eq!(record.idle_watts, Some(120.0));
        assert_eq!(record.status, RunStatus::CheckFailed);
        assert_eq!(record.error.as_deref(), Some("no step held p99<=1ms"));
    }

    #[test]
    fn a_stop_before_the_run_leaves_it_interrupted_and_unmeasured() {
        let fake = Fake { prepare_fails: false, ends: || Ending::Ok, runs: Cell::new(0) };
        let stop = StopFlag::new();
        stop.stop();
        let (record, _, _dir) = run_with(&fake, Duration::from_secs(5), &stop);
        assert_eq!(record.status, RunStatus::Interrupted);
        assert_eq!(record.idle_watts, None, "no reading was taken");
        assert_eq!(fake.runs.get(), 0);
        let fake = Fake { prepare_fails: false, ends: || Ending::Ok, runs: Cell::new(0) };
        let (record, _, _dir) = run_with(&fake, Duration::ZERO, &StopFlag::new());
        assert_eq!((record.status, record.error), (RunStatus::Done, None));
    }
}
