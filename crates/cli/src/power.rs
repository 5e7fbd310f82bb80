//! `--power`: which meter every run's per-second rows take their watts from. The monitor is
//! chosen once per command (before anything runs) and shared by every bundle it writes.

use anyhow::{Result, bail};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use storbench_bench::monitor::SystemSampler;
use storbench_bench::monitor::power::{self, PowerMonitor, PowerSampler, PowerSource};

static MONITOR: OnceLock<Option<Arc<PowerMonitor>>> = OnceLock::new();

/// Parses `--power` and starts the monitor. `auto` (the default) uses RAPL or IPMI where the
/// machine has one; a source given explicitly must work, or the command stops here.
pub fn start(spec: Option<&str>) -> Result<()> {
    let source = match spec.unwrap_or("auto") {
        "none" => None,
        "auto" => power::detect(),
        other => Some(parse(other)?),
    };
    let monitor = match source {
        None => None,
        Some(s) => {
            let explicit = spec.is_some_and(|v| v != "auto");
            match PowerSampler::new(s) {
                Ok(sampler) => Some(Arc::new(PowerMonitor::start(sampler, Duration::from_secs(1)))),
                Err(e) if explicit => bail!("--power: {e}"),
                Err(e) => {
                    say!("note: power source found but unusable ({e}); power_watts stays empty");
                    None
                }
            }
        }
    };
    let _ = MONITOR.set(monitor);
    Ok(())
}

fn parse(spec: &str) -> Result<PowerSource> {
    let (kind, arg) = spec.split_once(':').unwrap_or((spec, ""));
    Ok(match (kind, arg) {
        ("rapl", "") => PowerSource::default_rapl(),
        ("rapl", root) => PowerSource::Rapl { root: PathBuf::from(root) },
        ("ipmi", "") => PowerSource::default_ipmi(),
        ("file", p) if !p.is_empty() => PowerSource::File { path: PathBuf::from(p) },
        ("cmd", c) if !c.trim().is_empty() => {
            PowerSource::Command { argv: vec!["sh".into(), "-c".into(), c.into()] }
        }
        ("redfish", url) if !url.is_empty() => PowerSource::Redfish {
            url: url.into(),
            user_env: "STORBENCH_REDFISH_USER".into(),
            password_env: "STORBENCH_REDFISH_PASSWORD".into(),
        },
        ("ptdaemon", addr) if !addr.is_empty() => PowerSource::PtDaemon { addr: addr.into() },
        _ => bail!(
            "--power {spec}: use auto, none, rapl, ipmi, file:PATH (a file holding watts), cmd:COMMAND \
             (prints watts), redfish:URL (credentials from STORBENCH_REDFISH_USER and \
             STORBENCH_REDFISH_PASSWORD) or ptdaemon:HOST:PORT"
        ),
    })
}

fn no_source() -> String {
    "no power source on this machine (no readable RAPL, no IPMI); the power_watts column stays empty. \
     Give --power file:PATH or --power cmd:COMMAND for an external meter"
        .into()
}

/// A host sampler for `device` that adds the power reading to every row. The first one says
/// where power comes from (once the run is really starting, not before input is checked).
pub fn system_sampler(device: Option<&str>) -> SystemSampler {
    static SAID: std::sync::Once = std::sync::Once::new();
    let monitor = MONITOR.get().cloned().flatten();
    SAID.call_once(|| match &monitor {
        Some(m) => say!("power: {}", m.describe()),
        None => say!("note: {}", no_source()),
    });
    SystemSampler::new(device).with_power(monitor)
}

/// The power source being sampled, if there is one.
pub fn describe() -> Option<String> {
    MONITOR.get().cloned().flatten().map(|m| m.describe().to_string())
}

/// The latest power reading, watts.
pub fn latest() -> Option<f64> {
    MONITOR.get().cloned().flatten().and_then(|m| m.latest())
}

/// What a summary should say about power: nothing when a source is sampled.
pub fn warning() -> Option<String> {
    match MONITOR.get() {
        Some(Some(m)) => m.error().map(|e| format!("power readings failed: {e}")),
        _ => Some(no_source()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_specs_name_their_source_and_a_bad_one_says_what_is_accepted() {
        assert_eq!(parse("file:/run/watts").unwrap(), PowerSource::File { path: "/run/watts".into() });
        assert_eq!(
            parse("ptdaemon:10.0.0.5:8888").unwrap(),
            PowerSource::PtDaemon { addr: "10.0.0.5:8888".into() }
        );
        assert!(matches!(parse("cmd:echo 5").unwrap(), PowerSource::Command { argv } if argv[2] == "echo 5"));
        let e = parse("meter").unwrap_err().to_string();
        assert!(e.contains("--power meter") && e.contains("file:PATH"), "{e}");
        assert!(parse("file:").is_err());
    }
}
