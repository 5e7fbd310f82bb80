//! Power draw in watts, sampled about once a second from one of several meters, and the
//! arithmetic that turns samples into idle watts, active watts and performance per watt.
//!
//! Sources (see `spec/oltp-power-metrics.md` §3):
//! - RAPL (powercap sysfs): a model of CPU package energy; excludes drives, fans and PSU losses,
//!   so it is component power, not wall power. Power is the energy difference over time.
//! - IPMI DCMI (`ipmitool dcmi power reading`): the BMC's whole-server input power, integer watts.
//! - Redfish: the BMC's `Power` resource, `PowerControl[0].PowerConsumedWatts`.
//! - SPEC PTDaemon: an external AC analyzer behind SPEC's daemon, read with its text protocol.
//! - Any command or file that yields a number of watts.
//!
//! [`detect`] picks RAPL, else IPMI. A [`PowerSampler`] reads one source; a reading can block
//! up to [`IO_TIMEOUT`] (a slow BMC), so a [`PowerMonitor`] samples from a thread of its own.
//! Each meter lives in a file of its own; a meter command runs through [`crate::command`] (with
//! everything it starts, ended when it exits, at its time limit and with the sampler:
//! [`MeterProcess`]).

mod command;
mod file;
mod meters;
mod monitor;
mod ptdaemon;
mod rapl;
mod redfish;
pub mod spec;

pub use command::MeterProcess;
pub use meters::{NamedMeter, PowerMeters};
pub use monitor::{PowerMonitor, SILENCE_WARNING};
pub use redfish::{REDFISH_CA_ENV, REDFISH_INSECURE_ENV};

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the kernel publishes RAPL zones.
pub const POWERCAP_ROOT: &str = "/sys/class/powercap";

/// Longest wait for a command, BMC or daemon to answer one reading (Kepler's Redfish default).
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Where power readings come from; see the module docs for what each one measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PowerSource {
    /// Sum of the top-level package zones under `root` (normally [`POWERCAP_ROOT`]).
    Rapl { root: PathBuf },
    /// A command printing ipmitool's DCMI power reading (normally [`PowerSource::default_ipmi`]).
    Ipmi { command: Vec<String> },
    /// A Redfish `Power` resource, e.g. `http://bmc/redfish/v1/Chassis/1/Power`. Basic
    /// authentication uses the environment variables named here when they are set.
    Redfish { url: String, user_env: String, password_env: String },
    /// A SPEC PTDaemon, `host:port` (PTDaemon's default port is 8888).
    PtDaemon { addr: String },
    /// Any meter: a command run at each sample; the first number in its output is watts.
    Command { argv: Vec<String> },
    /// A file rewritten by a meter daemon; the first number in it is watts.
    File { path: PathBuf },
}

impl PowerSource {
    /// RAPL at the kernel's usual place.
    pub fn default_rapl() -> Self {
        PowerSource::Rapl { root: PathBuf::from(POWERCAP_ROOT) }
    }

    /// IPMI through the local BMC (`ipmitool dcmi power reading`).
    pub fn default_ipmi() -> Self {
        let command = ["ipmitool", "dcmi", "power", "reading"].map(String::from).to_vec();
        PowerSource::Ipmi { command }
    }
}

/// Why a power source cannot give a reading; the message names the source and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PowerError {
    /// A file, command or connection could not be read.
    #[error("{meter}: cannot read {what}: {error}; {fix}")]
    Read {
        meter: &'static str,
        what: String,
        #[source]
        error: io::Error,
        fix: &'static str,
    },
    /// The source answered, but not with a reading.
    #[error("{meter}: no power reading in {what} (got {got:?}); {fix}")]
    NoReading { meter: &'static str, what: String, got: String, fix: &'static str },
    /// The source cannot be used as configured.
    #[error("{meter}: {problem}; {fix}")]
    Unusable { meter: &'static str, problem: String, fix: &'static str },
}

/// Picks the first usable source on this machine: RAPL if its energy counters are readable,
/// else IPMI if `ipmitool` exists and answers with a reading, else `None`.
pub fn detect() -> Option<PowerSource> {
    detect_among([PowerSource::default_rapl(), PowerSource::default_ipmi()])
}

/// The first candidate that gives a reading (RAPL's priming read counts).
fn detect_among(candidates: impl IntoIterator<Item = PowerSource>) -> Option<PowerSource> {
    candidates.into_iter().find(|source| {
        let Ok(mut sampler) = PowerSampler::new(source.clone()) else { return false };
        match source {
            PowerSource::Rapl { .. } => sampler.sample().is_ok(),
            _ => matches!(sampler.sample(), Ok(Some(_))),
        }
    })
}

/// One open power source; each [`sample`](PowerSampler::sample) gives watts.
#[derive(Debug)]
pub struct PowerSampler {
    meter: Box<dyn Meter>,
    /// The meter command being run, for [`MeterProcess::end`] from another thread.
    process: Arc<MeterProcess>,
}

/// The state one kind of source keeps between readings.
trait Meter: std::fmt::Debug + Send {
    fn read(&mut self, now: Instant) -> Result<Option<f64>, PowerError>;
    fn describe(&self) -> String;
}

impl PowerSampler {
    /// Opens `source`: finds RAPL zones, checks a Redfish URL and its credentials, greets a
    /// PTDaemon, checks that a file meter is a regular file. Commands are only tried at the
    /// first sample.
    pub fn new(source: PowerSource) -> Result<Self, PowerError> {
        Self::with_env(source, &|name| std::env::var(name).ok())
    }

    /// [`new`](Self::new) with the environment given as a lookup, so tests need not change
    /// the process environment (unsafe while other threads run).
    fn with_env(source: PowerSource, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, PowerError> {
        let process = Arc::new(MeterProcess::default());
        let meter: Box<dyn Meter> = match source {
            PowerSource::Rapl { root } => Box::new(rapl::Rapl::open(root)?),
            PowerSource::Ipmi { command } => Box::new(command::Ipmi::new(command, process.clone())),
            PowerSource::Redfish { url, user_env, password_env } => {
                Box::new(redfish::Redfish::open(&url, &user_env, &password_env, env)?)
            }
            PowerSource::PtDaemon { addr } => Box::new(ptdaemon::PtDaemon::open(addr)?),
            PowerSource::Command { argv } => Box::new(command::MeterCommand::new(argv, process.clone())),
            PowerSource::File { path } => Box::new(file::MeterFile::open(path)?),
        };
        Ok(PowerSampler { meter, process })
    }

    /// The handle that ends this sampler's meter command (and what it started) from another
    /// thread, and keeps it from starting another.
    pub fn process(&self) -> Arc<MeterProcess> {
        self.process.clone()
    }

    /// Watts: for RAPL the average since the previous sample (the first one only primes the
    /// counters and gives `None`); for the others the source's current reading.
    pub fn sample(&mut self) -> Result<Option<f64>, PowerError> {
        self.meter.read(Instant::now())
    }

    /// A short name of the source for the report, e.g. "RAPL package power (2 zones)".
    pub fn describe(&self) -> String {
        self.meter.describe()
    }
}

/// Average watts of the samples inside the idle window and inside the active window.
///
/// `samples` are `(seconds since start, watts)`; a window `(from, to)` holds the samples with
/// `from <= t < to`, so back-to-back windows never share a sample. An empty window is `None`.
pub fn idle_and_active(
    samples: &[(f64, f64)],
    idle: (f64, f64),
    active: (f64, f64),
) -> (Option<f64>, Option<f64>) {
    (window_mean(samples, idle), window_mean(samples, active))
}

fn window_mean(samples: &[(f64, f64)], (from, to): (f64, f64)) -> Option<f64> {
    let inside: Vec<f64> = samples.iter().filter(|(t, _)| (from..to).contains(t)).map(|&(_, w)| w).collect();
    (!inside.is_empty()).then(|| inside.iter().sum::<f64>() / inside.len() as f64)
}

/// The first number in `text` ("123.5 W", "Watts,23.43", "power=80"), if any.
fn first_number(text: &str) -> Option<f64> {
    let numeric = |c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E');
    text.split(|c| !numeric(c)).find_map(|token| token.parse::<f64>().ok())
}

/// A reading the report can use: finite and not negative.
fn watts_in(meter: &'static str, what: String, text: &str, fix: &'static str) -> Result<f64, PowerError> {
    match first_number(text) {
        Some(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err(PowerError::NoReading { meter, what, got: first_line(text), fix }),
    }
}

/// The first non-empty line, shortened, to quote in an error.
fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    line.chars().take(200).collect()
}

/// A TCP connection with [`IO_TIMEOUT`] on connecting, reading and writing.
fn connect(addr: &str) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{addr} resolves to no address"));
    for sock in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&sock, IO_TIMEOUT) {
            Ok(stream) => {
                stream.set_read_timeout(Some(IO_TIMEOUT))?;
                stream.set_write_timeout(Some(IO_TIMEOUT))?;
                return Ok(stream);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::rapl::tests::fake_powercap;
    use super::*;

    #[test]
    fn detect_prefers_readable_rapl_and_skips_what_does_not_answer() {
        let root = fake_powercap(&[(0, 1_000_000_000)]);
        let rapl = PowerSource::Rapl { root: root.path().to_owned() };
        let no_rapl = PowerSource::Rapl { root: root.path().join("missing") };
        let no_ipmitool = PowerSource::Ipmi { command: vec!["/nonexistent/ipmitool".into()] };
        assert_eq!(detect_among([rapl.clone(), no_ipmitool.clone()]), Some(rapl));
        assert_eq!(detect_among([no_rapl, no_ipmitool]), None);
    }

    #[test]
    fn idle_and_active_average_only_their_windows() {
        let samples = [(0.0, 100.0), (1.0, 110.0), (2.0, 300.0), (3.0, 320.0), (4.0, 310.0), (5.0, 999.0)];
        // Half-open windows: the sample at t=2 belongs to the active window only.
        let (idle, active) = idle_and_active(&samples, (0.0, 2.0), (2.0, 5.0));
        assert_eq!(idle, Some(105.0));
        assert_eq!(active, Some(310.0));
        assert_eq!(idle_and_active(&samples, (10.0, 20.0), (0.0, 0.0)), (None, None));
    }
}
