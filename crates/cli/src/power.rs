//! `--power`: which meter every run's per-second rows take their watts from. The monitor is
//! chosen once per command (before anything runs) and shared by every bundle it writes; it is
//! stopped (a meter command still running is ended) when the process exits. An evaluation's
//! configuration may have a meter of its own (`power` in its table): its runs read that one
//! ([`use_meter_of`]), so an enclosure's meter is never added to another configuration's watts.
//!
//! The spec is kept and shown with its secrets hidden (`redfish:https://user:***@bmc/...`);
//! Redfish credentials can also come from `STORBENCH_REDFISH_USER`/`STORBENCH_REDFISH_PASSWORD`.

use anyhow::Result;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use storbench_bench::monitor::SystemSampler;
use storbench_bench::monitor::power::{self, PowerMeters, SILENCE_WARNING};
use storbench_bench::secret;

static MONITOR: OnceLock<Option<Arc<PowerMeters>>> = OnceLock::new();

/// The configurations with a meter of their own (None: `none`, no power for them).
static OWN: OnceLock<Vec<(String, Option<Arc<PowerMeters>>)>> = OnceLock::new();

/// The configuration whose runs are being measured, where it has a meter of its own.
static CHOSEN: Mutex<Option<String>> = Mutex::new(None);

/// The meter of the run now: its configuration's own, else the command's.
fn current() -> Option<Arc<PowerMeters>> {
    let chosen = CHOSEN.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let own = chosen.and_then(|name| OWN.get()?.iter().find(|(n, _)| *n == name).map(|(_, m)| m.clone()));
    match own {
        Some(own) => own,
        None => MONITOR.get().cloned().flatten(),
    }
}

/// Whether the configuration being measured has `power = "none"` of its own.
fn own_is_none() -> bool {
    let chosen = CHOSEN.lock().unwrap_or_else(|p| p.into_inner()).clone();
    chosen.is_some_and(|name| OWN.get().is_some_and(|own| own.iter().any(|(n, m)| *n == name && m.is_none())))
}

/// Starts the meters of the configurations that have their own (`(name, spec)` each), each as
/// `--power` takes it and each required to work; before anything runs.
pub fn start_own(own: &[(&str, &str)]) -> Result<()> {
    let mut out = Vec::new();
    for (name, spec) in own {
        secret::remember_in(spec);
        let meter = monitor_of(Some(spec)).map_err(|e| anyhow::anyhow!("configuration {name}: {e}"))?;
        out.push((name.to_string(), meter));
    }
    let _ = OWN.set(out);
    Ok(())
}

/// Whether the plan's meters (`plan`) and each configuration's own (`own`) can be read, as a
/// run starts them; none is kept. Auto-detection never fails a plan, so only named meters are
/// tried.
pub fn check(plan: Option<&str>, own: &[(&str, &str)]) -> Vec<anyhow::Error> {
    let plan = plan
        .filter(|p| *p != "auto")
        .map(|p| monitor_of(Some(p)).err().map(|e| e.context("the plan's method")));
    let own = own
        .iter()
        .map(|(name, spec)| monitor_of(Some(spec)).err().map(|e| e.context(format!("configuration {name}"))));
    plan.into_iter().chain(own).flatten().collect()
}

/// The runs from now on are configuration `name`'s: its own meter where it has one.
pub fn use_meter_of(name: &str) {
    *CHOSEN.lock().unwrap_or_else(|p| p.into_inner()) = Some(name.to_string());
}

/// Whether some configuration has a meter of its own.
pub fn any_own() -> bool {
    OWN.get().is_some_and(|own| own.iter().any(|(_, m)| m.is_some()))
}

/// What configuration `name`'s own meter is, where it has one (`none` where it has none).
pub fn own_meter(name: &str) -> Option<String> {
    let (_, m) = OWN.get()?.iter().find(|(n, _)| n == name)?;
    Some(m.as_ref().map_or("none".into(), |m| m.describe().to_string()))
}

/// When the current run started sampling, for its warning about a silent meter.
static RUN_STARTED: Mutex<Option<Instant>> = Mutex::new(None);

/// Parses `--power` and starts the monitor. `auto` (the default) uses RAPL or IPMI where the
/// machine has one; a source given explicitly must work, or the command stops here.
pub fn start(spec: Option<&str>) -> Result<()> {
    let monitor = monitor_of(spec)?;
    if spec == Some("none") {
        NOT_ASKED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let _ = MONITOR.set(monitor);
    Ok(())
}

/// The meters `spec` names, started (`monitor::power::spec`).
fn monitor_of(spec: Option<&str>) -> Result<Option<Arc<PowerMeters>>> {
    let meters = power::spec::meters_of(spec, &crate::console::say_line).map_err(anyhow::Error::msg)?;
    Ok(meters.map(Arc::new))
}

/// Whether the user chose no power source (`none`), which is not a missing meter.
static NOT_ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the user chose no power source.
pub fn not_asked() -> bool {
    NOT_ASKED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether a summary's warning is the one about power not being measured (an evaluation says
/// that once in its notes instead of once per run).
pub fn is_no_source_warning(warning: &str) -> bool {
    warning == no_source()
}

fn no_source() -> String {
    if not_asked() || own_is_none() {
        return "power was not measured (power source: none)".into();
    }
    "no power source on this machine (no readable RAPL, no IPMI); the power_watts column stays empty. \
     Give --power file:PATH or --power cmd:COMMAND for an external meter"
        .into()
}

/// A host sampler of the devices under `targets` (else `device`) that adds the power reading
/// to every row. The first one says where power comes from (once the run is really starting,
/// not before input is checked).
pub fn system_sampler(targets: &[&std::path::Path], device: Option<&str>) -> SystemSampler {
    announce(true);
    let monitor = current();
    *RUN_STARTED.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    SystemSampler::for_paths(targets, device).with_power(monitor)
}

/// Says where power comes from, once per command, on the terminal whatever a run's output
/// does: a profile set or an evaluation says it before its first run, not amid its run
/// lines. `missing`: whether to note that there is no source (an evaluation says that in
/// its notes instead).
pub fn announce(missing: bool) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        match MONITOR.get().cloned().flatten() {
            Some(m) => alert!("power: {}", m.describe()),
            None if not_asked() || !missing => {}
            None => alert!("note: {}", no_source()),
        }
        for (name, m) in OWN.get().into_iter().flatten() {
            alert!("power of {name}: {}", m.as_ref().map_or("none".into(), |m| m.describe()));
        }
    });
}

/// The power source being sampled, if there is one.
pub fn describe() -> Option<String> {
    current().map(|m| m.describe().to_string())
}

/// The latest power reading, watts.
pub fn latest() -> Option<f64> {
    current().and_then(|m| m.latest())
}

/// What a summary should say about power: nothing when the source gave its readings.
pub fn warning() -> Option<String> {
    match current() {
        Some(m) => silence(&m).or_else(|| m.error().map(|e| format!("power readings failed: {e}"))),
        None => Some(no_source()),
    }
}

/// A warning when the meter gave no reading in the current run, or none for
/// [`SILENCE_WARNING`] at a stretch (the commands print their summary's warnings).
fn silence(m: &PowerMeters) -> Option<String> {
    let since = RUN_STARTED.lock().unwrap_or_else(|p| p.into_inner()).unwrap_or_else(Instant::now);
    let silent = m.longest_silence_since(since).as_secs();
    let what = match m.read_since(since) {
        false => format!("gave no reading during this run ({silent} s)"),
        true if silent >= SILENCE_WARNING.as_secs() => format!("gave no reading for {silent} s"),
        true => return None,
    };
    let why = m.error().map(|e| format!(" (last error: {e})")).unwrap_or_default();
    Some(format!(
        "the power meter, {}, {what}{why}; power_watts is empty for those seconds: check the meter",
        m.describe()
    ))
}

/// Stops the power monitor, ending a meter command still running (and what it started).
pub fn stop() {
    let own = OWN.get().into_iter().flatten().filter_map(|(_, m)| m.as_ref());
    for m in MONITOR.get().into_iter().flatten().chain(own) {
        m.stop();
    }
}
