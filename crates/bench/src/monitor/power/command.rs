//! Meters that are commands: IPMI DCMI (`ipmitool`) and any command printing watts.
//!
//! A meter command runs in a process group of its own, so that a command that hangs (or
//! leaves children behind) is ended whole: when a reading outlives [`IO_TIMEOUT`], right after
//! the command exits (anything it left running), and when its sampler is ended
//! ([`MeterProcess::end`]), which the CLI does before the process exits.

use super::{IO_TIMEOUT, Meter, PowerError, first_line, watts_in};
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const IPMI_FIX: &str = "the BMC may not support DCMI power readings: try Redfish or an external meter; \
                        in-band access needs root and the ipmi_si and ipmi_devintf modules";

/// Largest output read from a meter command; a reading is a line or a few.
const MAX_OUTPUT: u64 = 64 << 10;

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

/// The process group of the meter command being run, if one is. [`end`](Self::end) kills it
/// from any thread and keeps another from starting.
#[derive(Debug, Default)]
pub struct MeterProcess {
    /// The running command's process group; held while it is signalled, so a group is only
    /// signalled while its leader is not yet reaped (its id cannot be reused until then).
    group: Mutex<Option<Pid>>,
    ended: AtomicBool,
}

impl MeterProcess {
    /// Ends the running command and everything it started; no command starts after this.
    pub fn end(&self) {
        let group = self.group.lock().unwrap_or_else(|p| p.into_inner());
        self.ended.store(true, Ordering::Relaxed);
        if let Some(pid) = *group {
            // The group may have ended on its own meanwhile: nothing to do then.
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }

    /// Runs `argv` and returns its stdout; an error if it cannot start, fails or outlives
    /// [`IO_TIMEOUT`]. Output is read after exit, at most [`MAX_OUTPUT`] of it (more would
    /// stall the command until the timeout ends it).
    fn run(&self, meter: &'static str, argv: &[String], fix: &'static str) -> Result<String, PowerError> {
        let what = format!("`{}`", argv.join(" "));
        let read_error = |error| PowerError::Read { meter, what: what.clone(), error, fix };
        let mut child = self.spawn(meter, argv, fix)?;
        let exited = wait_until(&child, Instant::now() + IO_TIMEOUT);
        self.kill_group();
        let status = child.wait().map_err(read_error)?;
        match exited.map_err(read_error)? {
            false => Err(read_error(io::Error::new(io::ErrorKind::TimedOut, "no answer within 5 s"))),
            true if !status.success() => {
                let stderr = bounded(child.stderr.take());
                Err(read_error(io::Error::other(format!("{status}: {}", first_line(&stderr)))))
            }
            true => Ok(bounded(child.stdout.take())),
        }
    }

    /// Starts `argv` in a new process group and records the group, unless [`end`](Self::end)
    /// came first.
    fn spawn(&self, meter: &'static str, argv: &[String], fix: &'static str) -> Result<Child, PowerError> {
        let what = format!("`{}`", argv.join(" "));
        let Some((program, args)) = argv.split_first() else {
            return Err(PowerError::Unusable { meter, problem: "the command is empty".to_owned(), fix });
        };
        let mut group = self.group.lock().unwrap_or_else(|p| p.into_inner());
        if self.ended.load(Ordering::Relaxed) {
            return Err(PowerError::Unusable { meter, problem: "the power monitor has ended".into(), fix });
        }
        let child = Command::new(program)
            .args(args)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| {
                let fix = match error.kind() {
                    io::ErrorKind::NotFound => {
                        "the program is not installed or not on PATH; install it or give its full path"
                    }
                    _ => fix,
                };
                PowerError::Read { meter, what, error, fix }
            })?;
        *group = Some(Pid::from_child(&child));
        Ok(child)
    }

    /// Kills what is left of the command's group (all of it after a timeout, its leftovers
    /// after an exit) while the leader is not yet reaped, and forgets the group.
    fn kill_group(&self) {
        let mut group = self.group.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pid) = group.take() {
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }
}

/// What a pipe holds, at most [`MAX_OUTPUT`] of it.
fn bounded(pipe: Option<impl Read>) -> String {
    let mut bytes = Vec::new();
    if let Some(pipe) = pipe {
        // A pipe that fails to read gives what it gave so far.
        let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether `child` exited before `deadline`; it is left unreaped (a zombie) either way, so
/// its process group id stays its own until the caller waits for it.
fn wait_until(child: &Child, deadline: Instant) -> io::Result<bool> {
    let pid = Pid::from_child(child);
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        if rustix::process::waitid(WaitId::Pid(pid), options)?.is_some() {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PowerSampler, PowerSource};
    use super::*;

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
        let pid_file = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; echo 42 W", pid_file.display());
        let mut sampler = PowerSampler::new(PowerSource::Command { argv: sh(&script) }).unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(42.0));
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let stat = format!("/proc/{}/stat", pid.trim());
        let deadline = Instant::now() + Duration::from_secs(2);
        // Killed at once; init reaps it a moment later.
        while std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z")) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            std::fs::read_to_string(&stat).map_or(true, |s| s.contains(") Z")),
            "the meter's child survived"
        );
    }
}
