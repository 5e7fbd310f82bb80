//! A user's command as a background stream (`cmd:COMMAND`): a real rebuild started beside the
//! run (`btrfs replace start -B ...`, `mdadm --manage ... --add ...`, a vendor CLI).
//!
//! The command runs through the one bounded helper (`crate::command`: a session and cgroup of
//! its own, output captured, never on storbench's stdout) by `sh -c`, from the start of the
//! measured phase. When the run ends it is asked to stop (SIGTERM to its process group), and
//! [`TERM_GRACE`] later ended with everything it started; or, when the run waits for it
//! (`--background-wait`), the run's end waits until it exits, bounded by its time limit
//! ([`TIME_LIMIT`]) and the run's stop request. Its result (exit status, seconds, whether
//! storbench stopped it) is the stream's summary entry and its finding in the record; its
//! output goes to the run's log (`Stream::log`). It has no columns in the series.

use super::record::summary::background;
use super::stream::Taken;
use super::{Schedule, StopFlag, Stream};
use crate::command::{self, Ending, Finished, Waited};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storbench_report::series::Phase;
use storbench_report::{BackgroundResult, CommandRun};

/// How long a command asked to stop (SIGTERM) has to exit before it is killed with everything
/// it started.
pub const TERM_GRACE: Duration = Duration::from_secs(5);

/// The longest a background command may run: a run that waits for it waits no longer.
pub const TIME_LIMIT: Duration = Duration::from_secs(24 * 3600);

/// How often the command's thread looks at the run's end and the start of its measured phase.
const POLL: Duration = Duration::from_millis(20);

/// A background command: what to run, whether the run's end waits for it, and how it ended.
pub struct CommandStream {
    command: String,
    wait: bool,
    /// Raised at the first measured interval: the command starts then if it has not yet.
    measuring: StopFlag,
    /// Raised when the run ends.
    ended: StopFlag,
    thread: Option<JoinHandle<Option<Finished>>>,
    /// How it ended, once the run ended; None while it runs or when it never started.
    finished: Option<Finished>,
    run: CommandRun,
}

impl CommandStream {
    /// `command`, run by `sh -c` when the measured phase starts; the run's end waits for it
    /// when `wait`.
    pub fn new(command: &str, wait: bool) -> CommandStream {
        CommandStream {
            command: command.into(),
            wait,
            measuring: StopFlag::new(),
            ended: StopFlag::new(),
            thread: None,
            finished: None,
            run: CommandRun { command: command.into(), stopped: true, ..CommandRun::default() },
        }
    }
}

impl Stream for CommandStream {
    fn kind(&self) -> &'static str {
        "cmd"
    }

    fn start(&mut self, schedule: Schedule, start: Instant, stop: &StopFlag) -> Result<(), String> {
        let spec = command::Spec::shell(&self.command, TIME_LIMIT);
        let flags =
            Flags { measuring: self.measuring.clone(), ended: self.ended.clone(), stop: stop.clone() };
        let at = start + Duration::from_nanos(schedule.ramp_ns);
        let wait = self.wait;
        // The command dies with the thread that started it: this thread lives as long as it.
        let thread = std::thread::Builder::new()
            .name("bg-command".into())
            .spawn(move || run(&spec, at, &flags, wait))
            .map_err(|e| format!("starting its thread: {e}"))?;
        self.thread = Some(thread);
        Ok(())
    }

    fn take(&mut self, _index: u64, phase: Phase, _start_ns: u64, _end_ns: u64) -> Option<Taken> {
        if phase == Phase::Measure {
            self.measuring.stop();
        }
        None
    }

    fn stop(&mut self) -> Vec<String> {
        self.ended.stop();
        let joined = self.thread.take().map(JoinHandle::join);
        self.finished = match joined {
            Some(Ok(f)) => f,
            Some(Err(_)) => return vec!["its thread ended abnormally".into()],
            None => None,
        };
        let Some(f) = &self.finished else {
            return vec![format!(
                "`{}` did not start: the run ended before its measured phase",
                self.command
            )];
        };
        self.run = command_run(&self.command, f);
        failure(&self.run, f).into_iter().collect()
    }

    fn waits(&self) -> bool {
        self.wait
    }

    fn result(&self) -> BackgroundResult {
        background::command(&self.run)
    }

    fn finding(&self) -> Option<serde_json::Value> {
        Some(serde_json::to_value(&self.run).expect("a command's run serializes"))
    }

    fn log(&self) -> Vec<String> {
        let Some(f) = &self.finished else { return Vec::new() };
        let output = [("stdout", &f.stdout), ("stderr", &f.stderr)].into_iter();
        output
            .map(|(stream, out)| (stream, out.text()))
            .filter(|(_, text)| !text.trim().is_empty())
            .map(|(stream, text)| format!("`{}` {stream}:\n{}", self.command, text.trim_end()))
            .collect()
    }
}

/// What the command's thread watches: the measured phase's start, the run's end and its stop
/// request.
struct Flags {
    measuring: StopFlag,
    ended: StopFlag,
    stop: StopFlag,
}

/// Runs `spec` from `at` (or the first measured interval) until it exits, or until the run
/// ends (then it is asked to stop, unless the run waits for it). None when the run ended
/// before the command was due.
fn run(spec: &command::Spec, at: Instant, flags: &Flags, wait: bool) -> Option<Finished> {
    while Instant::now() < at && !flags.measuring.is_stopped() {
        if flags.ended.is_stopped() || flags.stop.is_stopped() {
            return None;
        }
        std::thread::sleep(POLL);
    }
    let mut running = match command::start(spec) {
        Ok(r) => r,
        Err(e) => return Some(not_started(e)),
    };
    loop {
        match running.wait_for(Some(Instant::now() + POLL), &flags.stop, |_| false) {
            Waited::Finished(f) => return Some(f),
            Waited::Running(r) if flags.ended.is_stopped() && !wait => return Some(r.terminate(TERM_GRACE)),
            Waited::Running(r) => running = r,
        }
    }
}

/// A command that could not start (the shell itself missing), as a run that ended at once.
fn not_started(e: std::io::Error) -> Finished {
    let now = std::time::SystemTime::now();
    let stderr = command::Output { bytes: format!("could not start: {e}").into_bytes(), dropped: 0 };
    Finished {
        ending: Ending::Exited,
        status: None,
        started_at: now,
        ended_at: now,
        ran_for: Duration::ZERO,
        stdout: command::Output::default(),
        stderr,
    }
}

/// The summary's view of how `f` ended.
fn command_run(command: &str, f: &Finished) -> CommandRun {
    let exited = f.ending == Ending::Exited;
    CommandRun {
        command: command.into(),
        exit_code: f.status.and_then(|s| s.code()).filter(|_| exited),
        seconds: f.ran_for.as_secs_f64(),
        stopped: !exited,
    }
}

/// The warning for a command that failed: it exited non-zero, was ended by a signal from
/// elsewhere, or reached its time limit; None when it succeeded or storbench stopped it at the
/// run's end.
fn failure(run: &CommandRun, f: &Finished) -> Option<String> {
    let said = f.stderr.text();
    let last = said.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("");
    let said = if last.is_empty() {
        String::new()
    } else {
        format!(": {}", last.chars().take(300).collect::<String>())
    };
    match f.ending {
        Ending::Exited if f.succeeded() => None,
        Ending::Exited => Some(format!(
            "`{}` failed ({} after {:.1} s){said}; its output is in output.log",
            run.command,
            f.describe(TIME_LIMIT),
            run.seconds
        )),
        Ending::TimeLimit => Some(format!("`{}` was {}", run.command, f.describe(TIME_LIMIT))),
        Ending::Stopped | Ending::Ended => None,
    }
}
