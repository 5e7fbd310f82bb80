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
//! up to [`IO_TIMEOUT`] (a slow BMC), so the caller samples from a thread of its own.

use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;

/// Where the kernel publishes RAPL zones.
pub const POWERCAP_ROOT: &str = "/sys/class/powercap";

/// Longest wait for a command, BMC or daemon to answer one reading (Kepler's Redfish default).
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest reply read from a Redfish BMC; a Power resource is a few KiB.
const MAX_HTTP_REPLY: u64 = 1 << 20;

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
}

/// The state one kind of source keeps between readings.
trait Meter: std::fmt::Debug + Send {
    fn read(&mut self, now: Instant) -> Result<Option<f64>, PowerError>;
    fn describe(&self) -> String;
}

impl PowerSampler {
    /// Opens `source`: finds RAPL zones, checks a Redfish URL and its credentials, greets a
    /// PTDaemon. Commands and files are only tried at the first sample.
    pub fn new(source: PowerSource) -> Result<Self, PowerError> {
        Self::with_env(source, &|name| std::env::var(name).ok())
    }

    /// [`new`](Self::new) with the environment given as a lookup, so tests need not change
    /// the process environment (unsafe while other threads run).
    fn with_env(source: PowerSource, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, PowerError> {
        let meter: Box<dyn Meter> = match source {
            PowerSource::Rapl { root } => Box::new(Rapl::open(root)?),
            PowerSource::Ipmi { command } => Box::new(Ipmi { command }),
            PowerSource::Redfish { url, user_env, password_env } => {
                Box::new(Redfish::open(url, &user_env, &password_env, env)?)
            }
            PowerSource::PtDaemon { addr } => Box::new(PtDaemon::open(addr)?),
            PowerSource::Command { argv } => Box::new(MeterCommand { argv }),
            PowerSource::File { path } => Box::new(MeterFile { path }),
        };
        Ok(PowerSampler { meter })
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

// ---------------------------------------------------------------------------------------------
// RAPL

/// One package zone: its energy counter and the value at which the counter wraps to zero.
#[derive(Debug)]
struct RaplZone {
    energy: PathBuf,
    max_uj: u64,
}

#[derive(Debug)]
struct Rapl {
    zones: Vec<RaplZone>,
    prev: Option<(Instant, Vec<u64>)>,
}

const RAPL_FIX_READ: &str = "check that the intel_rapl_msr module is loaded (modprobe intel_rapl_msr)";

impl Rapl {
    fn open(root: PathBuf) -> Result<Self, PowerError> {
        let zones = package_zones(&root)?;
        if zones.is_empty() {
            return Err(PowerError::Unusable {
                meter: "RAPL",
                problem: format!("no package zones under {}", root.display()),
                fix: "load intel_rapl_msr (modprobe intel_rapl_msr); virtual machines usually have no \
                      RAPL, so use IPMI, Redfish or an external meter there",
            });
        }
        Ok(Rapl { zones, prev: None })
    }
}

impl Meter for Rapl {
    fn read(&mut self, now: Instant) -> Result<Option<f64>, PowerError> {
        let cur = self.zones.iter().map(|z| read_uj(&z.energy)).collect::<Result<Vec<_>, _>>()?;
        let Some((then, prev)) = self.prev.replace((now, cur.clone())) else { return Ok(None) };
        let secs = now.saturating_duration_since(then).as_secs_f64();
        if secs <= 0.0 {
            return Ok(None);
        }
        let uj: u64 = self
            .zones
            .iter()
            .zip(prev.iter().zip(&cur))
            .map(|(z, (&p, &c))| energy_delta_uj(p, c, z.max_uj))
            .sum();
        Ok(Some(uj as f64 / 1e6 / secs))
    }

    fn describe(&self) -> String {
        let n = self.zones.len();
        format!("RAPL package power ({n} zone{})", if n == 1 { "" } else { "s" })
    }
}

/// The top-level package zones under `root`, one per package.
///
/// A zone directory is `<control type>:<n>` (`intel-rapl:0`); its subzones (`intel-rapl:0:0`,
/// core, uncore, dram) are parts of the package energy and would be counted twice. Among
/// top-level zones only `package-*` ones count: `psys` (platform) already includes the
/// packages, and the MMIO control type (`intel-rapl-mmio:0`) shows the same package counter
/// again under the same name, hence one zone per name.
fn package_zones(root: &Path) -> Result<Vec<RaplZone>, PowerError> {
    let entries = fs::read_dir(root).map_err(|error| rapl_read_error(root, error))?;
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| is_top_level_zone(p)).collect();
    dirs.sort();
    let mut names = Vec::new();
    let mut zones = Vec::new();
    for dir in dirs {
        let Ok(name) = fs::read_to_string(dir.join("name")) else { continue };
        let name = name.trim().to_owned();
        if !name.starts_with("package") || names.contains(&name) {
            continue;
        }
        let max_uj = read_uj(&dir.join("max_energy_range_uj"))?;
        zones.push(RaplZone { energy: dir.join("energy_uj"), max_uj });
        names.push(name);
    }
    Ok(zones)
}

/// `intel-rapl:0` yes; `intel-rapl:0:1` (a subzone) and `intel-rapl` (the control type) no.
fn is_top_level_zone(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    match name.split_once(':') {
        Some((kind, n)) => !kind.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

/// A microjoule counter file.
fn read_uj(path: &Path) -> Result<u64, PowerError> {
    let text = fs::read_to_string(path).map_err(|error| rapl_read_error(path, error))?;
    text.trim().parse().map_err(|_| PowerError::NoReading {
        meter: "RAPL",
        what: path.display().to_string(),
        got: first_line(&text),
        fix: RAPL_FIX_READ,
    })
}

/// Since Linux 5.10 (CVE-2020-8694) `energy_uj` is readable by root only.
fn rapl_read_error(path: &Path, error: io::Error) -> PowerError {
    let fix = if error.kind() == io::ErrorKind::PermissionDenied {
        "needs root or a udev rule making energy_uj readable (it is root-only since Linux 5.10)"
    } else {
        RAPL_FIX_READ
    };
    PowerError::Read { meter: "RAPL", what: path.display().to_string(), error, fix }
}

/// Energy between two counter readings; the counter wraps to zero past `max_uj`. Sampling once
/// a second sees at most one wrap (the range is tens of seconds at full power, or more).
fn energy_delta_uj(prev: u64, cur: u64, max_uj: u64) -> u64 {
    if cur >= prev { cur - prev } else { max_uj.saturating_sub(prev) + cur }
}

// ---------------------------------------------------------------------------------------------
// Commands: IPMI and any meter

const IPMI_FIX: &str = "the BMC may not support DCMI power readings: try Redfish or an external meter; \
                        in-band access needs root and the ipmi_si and ipmi_devintf modules";

#[derive(Debug)]
struct Ipmi {
    command: Vec<String>,
}

impl Meter for Ipmi {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        let out = run_capture("IPMI", &self.command, IPMI_FIX)?;
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
struct MeterCommand {
    argv: Vec<String>,
}

const COMMAND_FIX: &str = "run the command by hand: it must exit 0 and print the watts as its first number";

impl Meter for MeterCommand {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        let out = run_capture("command", &self.argv, COMMAND_FIX)?;
        watts_in("command", format!("the output of `{}`", self.argv.join(" ")), &out, COMMAND_FIX).map(Some)
    }

    fn describe(&self) -> String {
        format!("command `{}`", self.argv.join(" "))
    }
}

/// Runs `argv` and returns its stdout; an error if it cannot start, fails or outlives
/// [`IO_TIMEOUT`]. Output is collected after exit, which is fine for a meter's few lines
/// (more than a pipe's 64 KiB would stall the child until the timeout kills it).
fn run_capture(meter: &'static str, argv: &[String], fix: &'static str) -> Result<String, PowerError> {
    let what = format!("`{}`", argv.join(" "));
    let read_error = |error| PowerError::Read { meter, what: what.clone(), error, fix };
    let Some((program, args)) = argv.split_first() else {
        return Err(PowerError::Unusable { meter, problem: "the command is empty".to_owned(), fix });
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| match error.kind() {
            io::ErrorKind::NotFound => PowerError::Read {
                meter,
                what: what.clone(),
                error,
                fix: "the program is not installed or not on PATH; install it or give its full path",
            },
            _ => read_error(error),
        })?;
    let deadline = Instant::now() + IO_TIMEOUT;
    while child.try_wait().map_err(read_error)?.is_none() {
        if Instant::now() >= deadline {
            // Best effort: the child may exit on its own between the check and the kill.
            let _ = child.kill();
            let _ = child.wait();
            return Err(read_error(io::Error::new(io::ErrorKind::TimedOut, "no answer in time")));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().map_err(read_error)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let message = format!("{}: {}", out.status, first_line(&stderr));
        return Err(read_error(io::Error::other(message)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[derive(Debug)]
struct MeterFile {
    path: PathBuf,
}

const FILE_FIX: &str = "the meter daemon must keep writing the watts into this file";

impl Meter for MeterFile {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        let what = self.path.display().to_string();
        let text = fs::read_to_string(&self.path).map_err(|error| PowerError::Read {
            meter: "file",
            what: what.clone(),
            error,
            fix: FILE_FIX,
        })?;
        watts_in("file", what, &text, FILE_FIX).map(Some)
    }

    fn describe(&self) -> String {
        format!("file {}", self.path.display())
    }
}

// ---------------------------------------------------------------------------------------------
// Redfish

const REDFISH_FIX: &str = "check that the URL names the chassis Power resource, e.g. \
                           http://bmc/redfish/v1/Chassis/1/Power";

/// Names the https trust settings are read from: a PEM file of the BMC's CA (or its own
/// certificate), and `1` to accept any certificate.
pub const REDFISH_CA_ENV: &str = "STORBENCH_REDFISH_CA";
pub const REDFISH_INSECURE_ENV: &str = "STORBENCH_REDFISH_INSECURE";

/// A Redfish `Power` resource over HTTP or HTTPS (most BMCs serve https only, with a
/// certificate of their own: see [`REDFISH_CA_ENV`]).
#[derive(Debug)]
struct Redfish {
    url: String,
    /// `host:port` to connect to, and the `Host` header.
    authority: String,
    path: String,
    /// For https: the TLS configuration and the host name the certificate must carry.
    tls: Option<(std::sync::Arc<rustls::ClientConfig>, String)>,
    /// The value of the `Authorization` header, when credentials were given.
    auth: Option<Secret>,
    /// The credential variables' names, for the error when the BMC refuses.
    credential_vars: String,
}

/// A header value holding a password: kept out of `Debug` output.
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Redfish {
    fn open(
        url: String,
        user_env: &str,
        password_env: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, PowerError> {
        let parts = split_http_url(&url)?;
        let auth = basic_auth(user_env, password_env, env)?.map(Secret);
        let credential_vars = format!("{user_env} and {password_env}");
        let tls = match parts.tls {
            false => None,
            true => Some((tls_config(env)?, parts.host)),
        };
        Ok(Redfish { url, authority: parts.authority, path: parts.path, tls, auth, credential_vars })
    }

    fn get(&self) -> Result<(u16, Vec<u8>), PowerError> {
        let read_error =
            |error| PowerError::Read { meter: "Redfish", what: self.url.clone(), error, fix: REDFISH_FIX };
        let tcp = connect(&self.authority).map_err(read_error)?;
        // HTTP/1.0 so the BMC answers with a plain body ended by closing, never chunked.
        let mut request =
            format!("GET {} HTTP/1.0\r\nHost: {}\r\nAccept: application/json\r\n", self.path, self.authority);
        if let Some(Secret(auth)) = &self.auth {
            request.push_str(&format!("Authorization: {auth}\r\n"));
        }
        request.push_str("Connection: close\r\n\r\n");
        let reply = match &self.tls {
            None => exchange(tcp, &request),
            Some((config, host)) => {
                let stream = super::tls::connect(config, host, tcp).map_err(|problem| {
                    PowerError::Unusable { meter: "Redfish", problem, fix: REDFISH_FIX }
                })?;
                exchange(stream, &request)
            }
        };
        let reply = reply.map_err(|e| tls_hint(read_error(e)))?;
        split_http_reply(&reply).ok_or_else(|| PowerError::NoReading {
            meter: "Redfish",
            what: self.url.clone(),
            got: first_line(&String::from_utf8_lossy(&reply)),
            fix: REDFISH_FIX,
        })
    }
}

impl Meter for Redfish {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        let (status, body) = self.get()?;
        let problem = format!("{} answered HTTP {status}", self.url);
        match status {
            200 => power_consumed_watts(&self.url, &body).map(Some),
            401 | 403 => Err(PowerError::Unusable {
                meter: "Redfish",
                problem: format!("{problem}; the credentials come from {}", self.credential_vars),
                fix: "set both variables to a BMC account allowed to read the chassis",
            }),
            _ => Err(PowerError::Unusable { meter: "Redfish", problem, fix: REDFISH_FIX }),
        }
    }

    fn describe(&self) -> String {
        format!("Redfish PowerControl at {}", self.url)
    }
}

/// Sends `request` and reads the reply until the server closes. A TLS peer that closes
/// without saying so (many BMCs) ends the reply too, once something has arrived.
fn exchange<S: Read + Write>(mut stream: S, request: &str) -> io::Result<Vec<u8>> {
    stream.write_all(request.as_bytes())?;
    stream.flush()?;
    let mut reply = Vec::new();
    match stream.take(MAX_HTTP_REPLY).read_to_end(&mut reply) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && !reply.is_empty() => Ok(reply),
        other => other.map(|_| reply),
    }
}

/// The trust for https, from the environment.
fn tls_config(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<std::sync::Arc<rustls::ClientConfig>, PowerError> {
    let trust = match env(REDFISH_INSECURE_ENV).as_deref() {
        Some("1") => super::tls::Trust::Anything,
        _ => super::tls::Trust::Verify { extra_ca: env(REDFISH_CA_ENV).map(std::path::PathBuf::from) },
    };
    super::tls::client_config(&trust).map_err(|problem| PowerError::Unusable {
        meter: "Redfish",
        problem,
        fix: "give STORBENCH_REDFISH_CA a PEM file holding the BMC's CA or certificate",
    })
}

/// A certificate the BMC's TLS did not pass gets the way out named.
fn tls_hint(e: PowerError) -> PowerError {
    match e {
        PowerError::Read { meter, what, error, .. } if error.to_string().contains("certificate") => {
            PowerError::Read {
                meter,
                what,
                error,
                fix: "the BMC's certificate is not signed by a public CA: give STORBENCH_REDFISH_CA a PEM \
                  file holding its CA (or the certificate itself), or set STORBENCH_REDFISH_INSECURE=1 \
                  to accept any certificate on a network you trust",
            }
        }
        other => other,
    }
}

/// A Redfish URL's parts.
#[derive(Debug, PartialEq)]
struct UrlParts {
    tls: bool,
    /// `host:port`, the port defaulting to 80 or 443.
    authority: String,
    host: String,
    path: String,
}

/// `http[s]://host[:port]/path` → its parts.
fn split_http_url(url: &str) -> Result<UrlParts, PowerError> {
    let unusable = |problem: String, fix| PowerError::Unusable { meter: "Redfish", problem, fix };
    let (tls, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        (None, None) => {
            return Err(unusable(format!("{url} is not an http:// or https:// URL"), REDFISH_FIX));
        }
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.is_empty() {
        return Err(unusable(format!("{url} names no host"), REDFISH_FIX));
    }
    // A port follows the last ':' unless that ':' is inside an IPv6 literal "[...]".
    let port_at = authority.rfind(':').filter(|&i| !authority[i..].contains(']'));
    let host = port_at.map_or(authority, |i| &authority[..i]).to_owned();
    let authority = match port_at {
        Some(_) => authority.to_owned(),
        None => format!("{authority}:{}", if tls { 443 } else { 80 }),
    };
    let path = if path.is_empty() { "/" } else { path }.to_owned();
    Ok(UrlParts { tls, authority, host, path })
}

/// `Basic base64(user:password)` from the two variables; none when neither is set. One
/// without the other is a mistake worth stopping for, not a silent anonymous request.
fn basic_auth(
    user_env: &str,
    password_env: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, PowerError> {
    let (user, password) = (env(user_env), env(password_env));
    let missing = match (&user, &password) {
        (Some(user), Some(password)) => {
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            return Ok(Some(format!("Basic {token}")));
        }
        (None, None) => return Ok(None),
        (Some(_), None) => password_env,
        (None, Some(_)) => user_env,
    };
    Err(PowerError::Unusable {
        meter: "Redfish",
        problem: format!("{missing} is not set, but the other credential variable is"),
        fix: "set both the user and the password variable, or neither for a BMC without authentication",
    })
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

/// Status code and body of an HTTP reply; `None` when it is not one.
fn split_http_reply(reply: &[u8]) -> Option<(u16, Vec<u8>)> {
    let end = reply.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&reply[..end]).ok()?;
    let status_line = head.lines().next()?;
    let mut parts = status_line.split_whitespace();
    parts.next().filter(|v| v.starts_with("HTTP/"))?;
    let status = parts.next()?.parse().ok()?;
    Some((status, reply[end + 4..].to_vec()))
}

/// `PowerControl[0].PowerConsumedWatts` of a Power resource.
fn power_consumed_watts(url: &str, body: &[u8]) -> Result<f64, PowerError> {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let watts = json.pointer("/PowerControl/0/PowerConsumedWatts").and_then(serde_json::Value::as_f64);
    match watts {
        Some(w) if w.is_finite() && w >= 0.0 => Ok(w),
        _ => Err(PowerError::NoReading {
            meter: "Redfish",
            what: format!("PowerControl[0].PowerConsumedWatts of {url}"),
            got: first_line(&String::from_utf8_lossy(body)),
            fix: "this BMC may publish power only under PowerSubsystem or EnvironmentMetrics, which \
                  storbench does not read yet; use IPMI or an external meter",
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// SPEC PTDaemon

const PTD_FIX: &str =
    "start PTDaemon with the analyzer attached and name its host:port (its default port is 8888)";

/// A client of SPEC's PTDaemon, which talks to an AC power analyzer and answers text commands,
/// one line each way, ended by CRLF (as MLCommons' power client does).
///
/// Minimal on purpose: `Hello` checks that it is PTDaemon, `Identify` names the analyzer for the
/// report, and each sample asks `Watts` for the latest reading. Ranging (`SR`), logging
/// (`Go`/`Stop`) and uncertainty are left to the operator's PTDaemon setup. After a failed
/// exchange the connection is dropped and the next sample connects again.
#[derive(Debug)]
struct PtDaemon {
    addr: String,
    identity: String,
    conn: Option<BufReader<TcpStream>>,
}

impl PtDaemon {
    fn open(addr: String) -> Result<Self, PowerError> {
        let mut ptd = PtDaemon { addr, identity: String::new(), conn: None };
        ptd.identity = ptd.greet()?;
        Ok(ptd)
    }

    /// Connects, checks the greeting and returns the analyzer's identity.
    fn greet(&mut self) -> Result<String, PowerError> {
        let stream = connect(&self.addr).map_err(|error| self.read_error(error))?;
        self.conn = Some(BufReader::new(stream));
        let hello = self.command("Hello")?;
        if !hello.starts_with("Hello, PTDaemon here") {
            self.conn = None;
            return Err(PowerError::NoReading {
                meter: "PTDaemon",
                what: format!("the greeting of {}", self.addr),
                got: hello,
                fix: "this is not a PTDaemon; check the port (PTDaemon's default is 8888)",
            });
        }
        self.command("Identify")
    }

    /// Sends one command and returns the one-line reply; drops the connection on failure.
    fn command(&mut self, command: &str) -> Result<String, PowerError> {
        let Some(conn) = self.conn.as_mut() else {
            return Err(self.read_error(io::ErrorKind::NotConnected.into()));
        };
        let mut line = String::new();
        let exchange = conn
            .get_mut()
            .write_all(format!("{command}\r\n").as_bytes())
            .and_then(|()| conn.read_line(&mut line))
            .and_then(|n| match n {
                0 => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "PTDaemon closed the connection")),
                _ => Ok(()),
            });
        if let Err(error) = exchange {
            self.conn = None;
            return Err(self.read_error(error));
        }
        Ok(line.trim_end().to_owned())
    }

    fn read_error(&self, error: io::Error) -> PowerError {
        PowerError::Read { meter: "PTDaemon", what: self.addr.clone(), error, fix: PTD_FIX }
    }
}

impl Meter for PtDaemon {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        if self.conn.is_none() {
            self.greet()?;
        }
        let reply = self.command("Watts")?;
        let what = format!("the Watts reply of {}", self.addr);
        watts_in("PTDaemon", what, &reply, "check the analyzer's connection and PTDaemon's log").map(Some)
    }

    fn describe(&self) -> String {
        format!("SPEC PTDaemon at {} ({})", self.addr, self.identity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::mpsc;

    /// A fake powercap tree: `intel-rapl:<n>` packages, each with a `core` subzone.
    fn fake_powercap(packages: &[(u64, u64)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir(root.path().join("intel-rapl")).unwrap();
        for (n, &(energy, max)) in packages.iter().enumerate() {
            let zone = root.path().join(format!("intel-rapl:{n}"));
            write_zone(&zone, &format!("package-{n}"), energy, max);
            write_zone(&zone.join(format!("intel-rapl:{n}:0")), "core", 999_000_000, max);
        }
        root
    }

    fn write_zone(dir: &Path, name: &str, energy: u64, max: u64) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join("name"), format!("{name}\n")).unwrap();
        fs::write(dir.join("energy_uj"), format!("{energy}\n")).unwrap();
        fs::write(dir.join("max_energy_range_uj"), format!("{max}\n")).unwrap();
    }

    fn set_energy(root: &Path, zone: &str, energy: u64) {
        fs::write(root.join(zone).join("energy_uj"), format!("{energy}\n")).unwrap();
    }

    fn rapl(root: &Path) -> PowerSampler {
        PowerSampler::new(PowerSource::Rapl { root: root.to_owned() }).unwrap()
    }

    /// Reads the meter at `t` seconds after `start`, so watts do not depend on the clock.
    fn read_at(sampler: &mut PowerSampler, start: Instant, t: f64) -> Option<f64> {
        sampler.meter.read(start + Duration::from_secs_f64(t)).unwrap()
    }

    #[test]
    fn rapl_sums_packages_but_not_their_subzones() {
        let root = fake_powercap(&[(1_000_000, 262_143_328_850), (5_000_000, 262_143_328_850)]);
        let mut sampler = rapl(root.path());
        assert_eq!(sampler.describe(), "RAPL package power (2 zones)");
        let start = Instant::now();
        assert_eq!(read_at(&mut sampler, start, 0.0), None, "the first sample only primes");
        set_energy(root.path(), "intel-rapl:0", 1_000_000 + 60_000_000);
        set_energy(root.path(), "intel-rapl:1", 5_000_000 + 40_000_000);
        // A subzone racing ahead must not change the total: it is part of its package.
        set_energy(root.path(), "intel-rapl:0/intel-rapl:0:0", 5_000_000_000);
        let watts = read_at(&mut sampler, start, 2.0).unwrap();
        assert!((watts - 50.0).abs() < 1e-9, "(60 J + 40 J) / 2 s = 50 W, got {watts}");
    }

    #[test]
    fn rapl_ignores_psys_and_the_mmio_copy_of_a_package() {
        let root = fake_powercap(&[(0, 1_000_000_000)]);
        write_zone(&root.path().join("intel-rapl:1"), "psys", 0, 1_000_000_000);
        write_zone(&root.path().join("intel-rapl-mmio:0"), "package-0", 0, 1_000_000_000);
        assert_eq!(rapl(root.path()).describe(), "RAPL package power (1 zone)");
    }

    #[test]
    fn rapl_counter_wrapping_between_samples_gives_the_true_watts() {
        let max = 262_143_328_850;
        let root = fake_powercap(&[(max - 10_000_000, max)]);
        let mut sampler = rapl(root.path());
        let start = Instant::now();
        read_at(&mut sampler, start, 10.0);
        // 10 J to the wrap point, then 20 J past zero: 30 J in one second.
        set_energy(root.path(), "intel-rapl:0", 20_000_000);
        let watts = read_at(&mut sampler, start, 11.0).unwrap();
        assert!((watts - 30.0).abs() < 1e-9, "got {watts}");
    }

    #[test]
    fn rapl_without_zones_says_how_to_get_them() {
        let root = tempfile::tempdir().unwrap();
        let err =
            PowerSampler::new(PowerSource::Rapl { root: root.path().to_owned() }).unwrap_err().to_string();
        assert!(err.starts_with("RAPL: no package zones under"), "{err}");
        assert!(err.contains("modprobe intel_rapl_msr"), "{err}");
    }

    #[test]
    fn rapl_energy_readable_by_root_only_says_so() {
        // Tests may run as root, where a mode of 000 does not stop reading: build the error
        // from the errno that a non-root read of energy_uj gets.
        let path = Path::new("/sys/class/powercap/intel-rapl:0/energy_uj");
        let err = rapl_read_error(path, io::ErrorKind::PermissionDenied.into()).to_string();
        assert!(err.starts_with("RAPL: cannot read /sys/class/powercap/intel-rapl:0/energy_uj"), "{err}");
        assert!(err.contains("needs root or a udev rule making energy_uj readable"), "{err}");
    }

    #[test]
    fn rapl_energy_that_cannot_be_read_names_the_file() {
        let root = fake_powercap(&[(0, 1_000_000_000)]);
        let mut sampler = rapl(root.path());
        let energy = root.path().join("intel-rapl:0/energy_uj");
        fs::remove_file(&energy).unwrap();
        fs::create_dir(&energy).unwrap();
        let err = sampler.sample().unwrap_err().to_string();
        assert!(err.contains(&format!("cannot read {}", energy.display())), "{err}");
        assert!(err.contains("intel_rapl_msr"), "{err}");
    }

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
    fn file_source_reads_the_file_at_every_sample() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watts");
        fs::write(&path, "412.25\n").unwrap();
        let mut sampler = PowerSampler::new(PowerSource::File { path: path.clone() }).unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(412.25));
        fs::write(&path, "power=398 W\n").unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(398.0));
        fs::remove_file(&path).unwrap();
        assert!(sampler.sample().unwrap_err().to_string().starts_with("file: cannot read"));
    }

    /// An HTTP server answering one request with `body`; the request comes back on the channel.
    fn serve_http_once(status: &str, body: &str) -> (String, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reply = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut request = String::new();
            while reader.read_line(&mut request).unwrap() > 2 {}
            reader.get_mut().write_all(reply.as_bytes()).unwrap();
            tx.send(request).unwrap();
        });
        (format!("http://{addr}/redfish/v1/Chassis/1/Power"), rx)
    }

    const POWER_JSON: &str = r#"{"@odata.id":"/redfish/v1/Chassis/1/Power","PowerControl":[{"Name":"System Power Control","PowerConsumedWatts":344,"PowerMetrics":{"IntervalInMin":1,"AverageConsumedWatts":338}}]}"#;

    fn redfish(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<PowerSampler, PowerError> {
        let source = PowerSource::Redfish {
            url: url.to_owned(),
            user_env: "BMC_USER".into(),
            password_env: "BMC_PASS".into(),
        };
        PowerSampler::with_env(source, env)
    }

    #[test]
    fn redfish_reads_power_consumed_watts_with_basic_auth() {
        let (url, request) = serve_http_once("200 OK", POWER_JSON);
        let env = |name: &str| match name {
            "BMC_USER" => Some("root".to_owned()),
            "BMC_PASS" => Some("calvin".to_owned()),
            _ => None,
        };
        let mut sampler = redfish(&url, &env).unwrap();
        assert!(!format!("{sampler:?}").contains("cm9vdDpjYWx2aW4="), "Debug output shows the password");
        assert_eq!(sampler.sample().unwrap(), Some(344.0));
        let request = request.recv().unwrap();
        assert!(request.starts_with("GET /redfish/v1/Chassis/1/Power HTTP/1."), "{request}");
        // base64("root:calvin")
        assert!(request.contains("Authorization: Basic cm9vdDpjYWx2aW4=\r\n"), "{request}");
    }

    #[test]
    fn redfish_sends_no_credentials_when_none_are_set() {
        let (url, request) = serve_http_once("200 OK", POWER_JSON);
        let mut sampler = redfish(&url, &|_| None).unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(344.0));
        assert!(!request.recv().unwrap().contains("Authorization"));
    }

    #[test]
    fn redfish_refusals_and_missing_readings_name_the_fix() {
        let (url, _request) = serve_http_once("401 Unauthorized", "{}");
        let err = redfish(&url, &|_| None).unwrap().sample().unwrap_err().to_string();
        assert!(err.contains("answered HTTP 401") && err.contains("from BMC_USER and BMC_PASS"), "{err}");
        let (url, _request) = serve_http_once("200 OK", r#"{"PowerControl":[{"PowerConsumedWatts":null}]}"#);
        let err = redfish(&url, &|_| None).unwrap().sample().unwrap_err().to_string();
        assert!(err.contains("PowerConsumedWatts") && err.contains("PowerSubsystem"), "{err}");
        let only_user = |name: &str| (name == "BMC_USER").then(|| "root".to_owned());
        let err = redfish("http://bmc/redfish/v1/Chassis/1/Power", &only_user).unwrap_err().to_string();
        assert!(err.contains("BMC_PASS is not set"), "{err}");
    }

    /// An https server for `localhost` with a certificate of its own, answering one request
    /// with `body`; returns the URL and the certificate's PEM.
    fn serve_https_once(body: &str) -> (String, String) {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let pem = cert.cert.pem();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.key_pair.serialize_der().into());
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.cert.der().clone()], key)
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        std::thread::spawn(move || {
            let (tcp, _) = listener.accept().unwrap();
            let conn = rustls::ServerConnection::new(std::sync::Arc::new(config)).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            let mut reader = BufReader::new(&mut tls);
            let mut request = String::new();
            // A client that refuses the certificate ends here.
            while reader.read_line(&mut request).unwrap_or(0) > 2 {}
            let _ = tls.write_all(reply.as_bytes());
            tls.conn.send_close_notify();
            let _ = tls.flush();
        });
        (format!("https://localhost:{port}/redfish/v1/Chassis/1/Power"), pem)
    }

    #[test]
    fn redfish_over_https_trusts_the_bmcs_ca_when_named_and_says_how_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let (url, pem) = serve_https_once(POWER_JSON);
        let ca = dir.path().join("bmc.pem");
        fs::write(&ca, pem).unwrap();
        let with_ca = |name: &str| (name == REDFISH_CA_ENV).then(|| ca.display().to_string());
        assert_eq!(redfish(&url, &with_ca).unwrap().sample().unwrap(), Some(344.0));

        let (url, _) = serve_https_once(POWER_JSON);
        let err = redfish(&url, &|_| None).unwrap().sample().unwrap_err().to_string();
        assert!(
            err.contains("certificate") && err.contains(REDFISH_CA_ENV) && err.contains(REDFISH_INSECURE_ENV),
            "{err}"
        );

        let (url, _) = serve_https_once(POWER_JSON);
        let insecure = |name: &str| (name == REDFISH_INSECURE_ENV).then(|| "1".to_owned());
        assert_eq!(redfish(&url, &insecure).unwrap().sample().unwrap(), Some(344.0));

        let missing = |name: &str| (name == REDFISH_CA_ENV).then(|| "/no/such/ca.pem".to_owned());
        let err = redfish(&url, &missing).unwrap_err().to_string();
        assert!(err.contains("/no/such/ca.pem"), "{err}");
    }

    #[test]
    fn http_urls_split_into_address_and_path() {
        let split = |url| {
            let p = split_http_url(url).unwrap();
            (p.tls, p.authority, p.host, p.path)
        };
        assert_eq!(
            split("http://10.0.0.5/redfish/v1/Chassis/1/Power"),
            (false, "10.0.0.5:80".into(), "10.0.0.5".into(), "/redfish/v1/Chassis/1/Power".into())
        );
        assert_eq!(split("http://bmc:8000"), (false, "bmc:8000".into(), "bmc".into(), "/".into()));
        assert_eq!(
            split("https://[fe80::1]/x"),
            (true, "[fe80::1]:443".into(), "[fe80::1]".into(), "/x".into())
        );
        assert!(split_http_url("ftp://bmc/x").is_err());
    }

    /// A fake PTDaemon on one connection, greeting with `hello`; the commands it received come
    /// back on the channel when the client hangs up.
    fn fake_ptdaemon(hello: &'static str) -> (String, mpsc::Receiver<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut seen = Vec::new();
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                let command = line.trim_end_matches("\r\n").to_owned();
                let reply = match command.as_str() {
                    "Hello" => hello,
                    "Identify" => "PTDaemon v1.10.0, WT310",
                    "Watts" => "Watts,23.430000",
                    _ => "Error: unknown command",
                };
                if reader.get_mut().write_all(format!("{reply}\r\n").as_bytes()).is_err() {
                    break;
                }
                seen.push(command);
                line.clear();
            }
            tx.send(seen).unwrap();
        });
        (addr, rx)
    }

    #[test]
    fn ptdaemon_greets_identifies_and_reads_watts() {
        let (addr, commands) = fake_ptdaemon("Hello, PTDaemon here!");
        let mut sampler = PowerSampler::new(PowerSource::PtDaemon { addr: addr.clone() }).unwrap();
        assert_eq!(sampler.describe(), format!("SPEC PTDaemon at {addr} (PTDaemon v1.10.0, WT310)"));
        assert_eq!(sampler.sample().unwrap(), Some(23.43));
        assert_eq!(sampler.sample().unwrap(), Some(23.43));
        drop(sampler);
        assert_eq!(commands.recv().unwrap(), ["Hello", "Identify", "Watts", "Watts"]);
    }

    #[test]
    fn something_else_than_ptdaemon_is_refused() {
        let (addr, _commands) = fake_ptdaemon("SSH-2.0-OpenSSH_9.6");
        let err = PowerSampler::new(PowerSource::PtDaemon { addr }).unwrap_err().to_string();
        assert!(err.contains("not a PTDaemon") && err.contains("SSH-2.0"), "{err}");
    }

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

/// Samples a power source once a second on its own thread (a reading may block for up to
/// [`IO_TIMEOUT`]), keeping the latest watts for the run's per-second rows to pick up.
#[derive(Debug)]
pub struct PowerMonitor {
    shared: std::sync::Arc<MonitorState>,
    describe: String,
}

#[derive(Debug, Default)]
struct MonitorState {
    /// The latest watts as f64 bits; NaN while there is none.
    watts: std::sync::atomic::AtomicU64,
    error: std::sync::Mutex<Option<String>>,
    stop: std::sync::atomic::AtomicBool,
}

impl PowerMonitor {
    /// Starts sampling `sampler` every `every`.
    pub fn start(mut sampler: PowerSampler, every: Duration) -> Self {
        use std::sync::atomic::Ordering::Relaxed;
        let shared = std::sync::Arc::new(MonitorState::default());
        shared.watts.store(f64::NAN.to_bits(), Relaxed);
        let describe = sampler.describe();
        let s = shared.clone();
        let spawned = std::thread::Builder::new().name("power".into()).spawn(move || {
            while !s.stop.load(Relaxed) {
                let next = Instant::now() + every;
                match sampler.sample() {
                    Ok(Some(w)) => s.watts.store(w.to_bits(), Relaxed),
                    Ok(None) => {}
                    Err(e) => {
                        s.watts.store(f64::NAN.to_bits(), Relaxed);
                        *s.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                    }
                }
                while Instant::now() < next && !s.stop.load(Relaxed) {
                    std::thread::sleep(Duration::from_millis(20).min(every));
                }
            }
        });
        if let Err(e) = spawned {
            *shared.error.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(format!("starting the power thread: {e}"));
        }
        PowerMonitor { shared, describe }
    }

    /// The latest reading in watts; None before the first or after a failed one.
    pub fn latest(&self) -> Option<f64> {
        let w = f64::from_bits(self.shared.watts.load(std::sync::atomic::Ordering::Relaxed));
        w.is_finite().then_some(w)
    }

    /// The last error, if a reading failed.
    pub fn error(&self) -> Option<String> {
        self.shared.error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn describe(&self) -> &str {
        &self.describe
    }
}

impl Drop for PowerMonitor {
    fn drop(&mut self) {
        self.shared.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod monitor_tests {
    use super::*;

    #[test]
    fn the_monitor_keeps_the_latest_reading_and_reports_a_failing_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watts");
        std::fs::write(&path, "250.5\n").unwrap();
        let m = PowerMonitor::start(
            PowerSampler::new(PowerSource::File { path: path.clone() }).unwrap(),
            Duration::from_millis(20),
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while m.latest().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(m.latest(), Some(250.5));
        std::fs::remove_file(&path).unwrap();
        while m.error().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(m.error().is_some_and(|e| e.contains("watts")), "{:?}", m.error());
        assert_eq!(m.latest(), None, "a failed reading is not carried forward");
    }
}
