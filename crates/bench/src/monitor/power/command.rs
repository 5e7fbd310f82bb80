//! Meters that are commands: IPMI DCMI (`ipmitool`) and any command printing watts.
//!
//! A meter command runs through [`crate::command`], so that a command that hangs (or leaves
//! children behind, daemons that called setsid included) is ended whole: when a reading
//! outlives [`IO_TIMEOUT`], right after the command exits (anything it left running), and when
//! its sampler is ended ([`MeterProcess::end`]), which the CLI does before the process exits.

use super::{IO_TIMEOUT, Meter, PowerError, first_line, watts_in};
use crate::command::{self, Ending};
use crate::run::StopFlag;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Instant;

const IPMI_FIX: &str = "the BMC may not support DCMI power readings: try Redfish or an external meter; \
                        in-band access needs root and the ipmi_si and ipmi_devintf modules";

/// Largest output read from a meter command; a reading is a line or a few.
const MAX_OUTPUT: usize = 64 << 10;

#[derive(Debug)]
pub(super) struct Ipmi {
    command: Vec<String>,
    process: Arc<MeterProcess>,
}

impl Ipmi {
    pub(super) fn new(command: Vec<String>, process: Arc<MeterProcess>) -> Self {
        Ipmi { command, process }
    }
}

impl Meter for Ipmi {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        let out = self.process.run("IPMI", &self.command, IPMI_FIX)?;
        parse_dcmi_reading(&out).map(Some)
    }

    fn describe(&self) -> String {
        "IPMI DCMI".to_owned()
    }
}
/// Watts from `ipmitool dcmi power reading`: the line `Instantaneous power reading: N Watts`.
///
/// A BMC that has power measurement switched off still prints the line (with 0); its
/// `Power reading state is: deactivated` line says so, and that is an error, not 0 W.
fn parse_dcmi_reading(text: &str) -> Result<f64, PowerError> {
    let what = "ipmitool's DCMI power reading".to_owned();
    let field = |label: &str| {
        text.lines().find_map(|l| l.trim().strip_prefix(label).map(|rest| rest.trim().to_owned()))
    };
    if field("Power reading state is:").is_some_and(|s| s == "deactivated") {
        return Err(PowerError::Unusable {
            meter: "IPMI",
            problem: "the BMC reports its power reading as deactivated".to_owned(),
            fix: "enable power monitoring in the BMC's settings, or use another source",
        });
    }
    match field("Instantaneous power reading:") {
        Some(rest) if rest.ends_with("Watts") => watts_in("IPMI", what, &rest, IPMI_FIX),
        _ => Err(PowerError::NoReading { meter: "IPMI", what, got: first_line(text), fix: IPMI_FIX }),
    }
}

#[derive(Debug)]
pub(super) struct MeterCommand {
    argv: Vec<String>,
    process: Arc<MeterProcess>,
}

impl MeterCommand {
    pub(super) fn new(argv: Vec<String>, process: Arc<MeterProcess>) -> Self {
        MeterCommand { argv, process }
    }
}

const COMMAND_FIX: &str = "run the command by hand: it must exit 0 within 5 s and print the watts as \
                           its first number";

impl Meter for MeterCommand {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        let out = self.process.run("command", &self.argv, COMMAND_FIX)?;
        watts_in("command", format!("the output of `{}`", self.argv.join(" ")), &out, COMMAND_FIX).map(Some)
    }

    fn describe(&self) -> String {
        format!("command `{}`", self.argv.join(" "))
    }
}

/// The meter command being run, if one is. [`end`](Self::end) ends it (with everything it
/// started) from any thread and keeps another from starting.
#[derive(Default)]
pub struct MeterProcess {
    /// Raised by [`end`](Self::end): a reading in progress is killed, none starts.
    ended: StopFlag,
    /// The running command's killer; held while one starts, so [`end`](Self::end) cannot
    /// miss it.
    running: Mutex<Option<command::Killer>>,
}

impl std::fmt::Debug for MeterProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeterProcess").field("ended", &self.ended.is_stopped()).finish()
    }
}

impl MeterProcess {
    /// Ends the running command and everything it started; no command starts after this.
    pub fn end(&self) {
        let running = lock(&self.running);
        self.ended.stop();
        if let Some(killer) = running.as_ref() {
            killer.end();
        }
    }

    /// Runs `argv` and returns its stdout (at most [`MAX_OUTPUT`] of it); an error if it
    /// cannot start, fails or outlives [`IO_TIMEOUT`]. What it left running is ended when it
    /// exits.
    fn run(&self, meter: &'static str, argv: &[String], fix: &'static str) -> Result<String, PowerError> {
        let what = format!("`{}`", argv.join(" "));
        let Some((program, args)) = argv.split_first() else {
            return Err(PowerError::Unusable { meter, problem: "the command is empty".to_owned(), fix });
        };
        let ended = || PowerError::Unusable { meter, problem: "the power monitor has ended".into(), fix };
        let spec = command::Spec::new(program, args, IO_TIMEOUT).output_limit(MAX_OUTPUT);
        let running = {
            let mut slot = lock(&self.running);
            if self.ended.is_stopped() {
                return Err(ended());
            }
            let running = command::start(&spec).map_err(|error| {
                let fix = match error.kind() {
                    io::ErrorKind::NotFound => {
                        "the program is not installed or not on PATH; install it or give its full path"
                    }
                    _ => fix,
                };
                PowerError::Read { meter, what: what.clone(), error, fix }
            })?;
            *slot = Some(running.killer());
            running
        };
        let finished = running.wait(&self.ended);
        *lock(&self.running) = None;
        let failed = |error| Err(PowerError::Read { meter, what, error, fix });
        match finished.ending {
            Ending::Exited if finished.succeeded() => Ok(finished.stdout.text()),
            Ending::Exited => failed(io::Error::other(format!(
                "{}: {}",
                finished.describe(IO_TIMEOUT),
                first_line(&finished.stderr.text())
            ))),
            Ending::TimeLimit => failed(io::Error::new(io::ErrorKind::TimedOut, "no answer within 5 s")),
            Ending::Stopped | Ending::Ended => Err(ended()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::super::{PowerSampler, PowerSource};
    use super::*;
    use std::time::Duration;

    const DCMI_OUTPUT: &str = "\n    Instantaneous power reading:                   182 Watts\n    \
        Minimum during sampling period:                 96 Watts\n    \
        Maximum during sampling period:                311 Watts\n    \
        Average power reading over sample period:      175 Watts\n    \
        IPMI timestamp:                           Tue Mar  4 10:21:51 2025\n    \
        Sampling period:                          00000001 Seconds.\n    \
        Power reading state is:                   activated\n\n";

    #[test]
    fn ipmi_takes_the_instantaneous_reading() {
        assert_eq!(parse_dcmi_reading(DCMI_OUTPUT).unwrap(), 182.0);
    }

    #[test]
    fn ipmi_without_a_reading_or_with_it_deactivated_is_an_error() {
        let unsupported = "DCMI request failed because: Invalid command (c1)\n";
        let err = parse_dcmi_reading(unsupported).unwrap_err().to_string();
        assert!(err.starts_with("IPMI: no power reading"), "{err}");
        assert!(err.contains("Invalid command (c1)") && err.contains("try Redfish"), "{err}");
        let off = DCMI_OUTPUT.replace("182 Watts", "0 Watts").replace("   activated", "   deactivated");
        let err = parse_dcmi_reading(&off).unwrap_err().to_string();
        assert!(err.contains("deactivated"), "{err}");
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn ipmi_runs_its_command_and_reports_a_failing_one() {
        let printf = format!("printf '%s' '{DCMI_OUTPUT}'");
        let mut ok = PowerSampler::new(PowerSource::Ipmi { command: sh(&printf) }).unwrap();
        assert_eq!(ok.describe(), "IPMI DCMI");
        assert_eq!(ok.sample().unwrap(), Some(182.0));
        let no_device = "echo 'Could not open device at /dev/ipmi0' >&2; exit 1";
        let mut failing = PowerSampler::new(PowerSource::Ipmi { command: sh(no_device) }).unwrap();
        let err = failing.sample().unwrap_err().to_string();
        assert!(err.contains("exit status: 1: Could not open device at /dev/ipmi0"), "{err}");
        assert!(err.contains("ipmi_devintf"), "{err}");
    }

    #[test]
    fn command_source_takes_the_first_number_of_its_output() {
        let mut sampler = PowerSampler::new(PowerSource::Command { argv: sh("echo 123.5 W") }).unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(123.5));
        let mut silent = PowerSampler::new(PowerSource::Command { argv: sh("echo no meter") }).unwrap();
        let err = silent.sample().unwrap_err().to_string();
        assert!(err.starts_with("command: no power reading") && err.contains("\"no meter\""), "{err}");
        let argv = vec!["/nonexistent/meter".to_owned()];
        let err = PowerSampler::new(PowerSource::Command { argv }).unwrap().sample().unwrap_err().to_string();
        assert!(err.contains("not installed or not on PATH"), "{err}");
    }

    #[test]
    fn a_meter_command_leaves_nothing_running_after_its_reading() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // A plain child, a child in a session of its own (its output elsewhere), and a daemon
        // (double fork, setsid) that keeps the meter's stdout open.
        let me = format!("echo $$ >> {}; exec sleep 30", pids.display());
        // The reading comes once all three have written their pid (at most 10 s): a fixed pause
        // was not always enough on a loaded machine.
        let count = format!("$(cat {} 2>/dev/null | wc -l)", pids.display());
        let script = format!(
            "sh -c '{me}' & setsid sh -c '{me} >/dev/null 2>&1' & (setsid sh -c '{me}' &); n=0; \
             while [ \"{count}\" -lt 3 ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; echo 42 W"
        );
        let mut sampler = PowerSampler::new(PowerSource::Command { argv: sh(&script) }).unwrap();
        let began = Instant::now();
        assert_eq!(sampler.sample().unwrap(), Some(42.0));
        assert!(began.elapsed() < Duration::from_secs(3), "the reading took {:?}", began.elapsed());
        let pids: Vec<String> = std::fs::read_to_string(&pids).unwrap().lines().map(str::to_owned).collect();
        assert_eq!(pids.len(), 3, "{pids:?}");
        let deadline = Instant::now() + Duration::from_secs(10);
        // Killed at once; reaped a moment later (longer on a loaded machine).
        while pids.iter().any(|p| alive(p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let left: Vec<&String> = pids.iter().filter(|p| alive(p)).collect();
        assert!(left.is_empty(), "the meter's children survived: {left:?}");
    }

    /// Whether process `pid` exists and is not a zombie.
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    }
}
