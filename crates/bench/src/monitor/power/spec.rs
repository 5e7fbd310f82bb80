//! `--power SPEC` read into meters and started: `auto` (RAPL or IPMI where the machine has
//! one), `none`, one source (`rapl[:ROOT]`, `ipmi`, `file:PATH`, `cmd:COMMAND`,
//! `redfish:URL`, `ptdaemon:HOST:PORT`) or named meters (`server=ipmi; enclosure=file:/run/w;
//! enclosure.baseline=108.2`). A spec is remembered as a secret's holder before anything says it,
//! and every refusal shows it with its secrets hidden.

use super::{NamedMeter, PowerMeters, PowerMonitor, PowerSampler, PowerSource};
use crate::secret;
use std::path::PathBuf;
use std::time::Duration;

/// The meters `spec` names, started: none for `none` (or where `auto` finds none, which a
/// line to `say` notes when the source found cannot be used). A source given explicitly must
/// work.
pub fn meters_of(spec: Option<&str>, say: &dyn Fn(&str)) -> Result<Option<PowerMeters>, String> {
    if let Some(spec) = spec {
        secret::remember_in(spec);
    }
    if let Some(meters) = spec.filter(|s| named(s)) {
        return Ok(Some(start_named(meters)?));
    }
    let source = match spec.unwrap_or("auto") {
        "none" => None,
        "auto" => super::detect(),
        other => Some(parse(other)?),
    };
    let Some(source) = source else { return Ok(None) };
    let explicit = spec.is_some_and(|v| v != "auto");
    match PowerSampler::new(source) {
        Ok(sampler) => Ok(Some(PowerMeters::one(PowerMonitor::start(sampler, Duration::from_secs(1))))),
        Err(e) if explicit => refuse!("--power: {e}"),
        Err(e) => {
            say(&format!("note: power source found but unusable ({e}); power_watts stays empty"));
            Ok(None)
        }
    }
}

/// Whether `spec` names its meters (`server=ipmi; enclosure=file:/run/w`): its first item
/// starts with a name and `=` before any source's own `:`.
fn named(spec: &str) -> bool {
    let first = spec.split(';').next().unwrap_or("").trim();
    match (first.find('='), first.find(':')) {
        (Some(eq), Some(colon)) => eq < colon,
        (Some(_), None) => true,
        _ => false,
    }
}

/// Named meters, `;`-separated: `NAME=SOURCE` each (a source as `--power` takes one), and
/// `NAME.baseline=WATTS` to subtract from a meter's readings.
fn parse_named(spec: &str) -> Result<Vec<(String, PowerSource, f64)>, String> {
    let mut meters: Vec<(String, PowerSource, f64)> = Vec::new();
    let mut baselines: Vec<(String, f64)> = Vec::new();
    let shape = "write named meters as --power 'server=ipmi; enclosure=file:/run/enclosure-watts; enclosure.baseline=108.2'";
    for item in spec.split(';').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((name, value)) = item.split_once('=') else {
            refuse!("--power: `{}` names no meter; {shape}", secret::redact(item))
        };
        let name = name.trim();
        if let Some(meter) = name.strip_suffix(".baseline") {
            match value.trim().parse::<f64>() {
                Ok(w) if w.is_finite() && w >= 0.0 => baselines.push((meter.to_string(), w)),
                _ => refuse!(
                    "--power: {name} = {value} is not watts; give a number such as {meter}.baseline=108.2"
                ),
            }
            continue;
        }
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            refuse!("--power: meter name `{name}` is not a plain name (letters, digits, - and _); {shape}");
        }
        if meters.iter().any(|m| m.0 == name) {
            refuse!("--power: meter `{name}` is named twice; give each meter its own name");
        }
        meters.push((name.to_string(), parse(value.trim())?, 0.0));
    }
    for (meter, w) in baselines {
        match meters.iter_mut().find(|m| m.0 == meter) {
            Some(m) => m.2 = w,
            None => refuse!("--power: {meter}.baseline names no meter; name it first: {meter}=SOURCE"),
        }
    }
    if meters.is_empty() {
        refuse!("--power: no meter given; {shape}");
    }
    Ok(meters)
}

/// Opens and starts every named meter; each must work.
fn start_named(spec: &str) -> Result<PowerMeters, String> {
    let mut out = Vec::new();
    for (name, source, baseline_w) in parse_named(spec)? {
        let sampler = PowerSampler::new(source).map_err(|e| format!("--power: meter {name}: {e}"))?;
        out.push(NamedMeter {
            name,
            monitor: PowerMonitor::start(sampler, Duration::from_secs(1)),
            baseline_w,
        });
    }
    Ok(PowerMeters::named(out))
}

fn parse(spec: &str) -> Result<PowerSource, String> {
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
        _ => refuse!(
            "--power {}: use auto, none, rapl, ipmi, file:PATH (a file holding watts), cmd:COMMAND \
             (prints watts), redfish:URL (credentials from STORBENCH_REDFISH_USER and \
             STORBENCH_REDFISH_PASSWORD, or in the URL) or ptdaemon:HOST:PORT",
            secret::redact(spec)
        ),
    })
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
        let e = parse("meter").unwrap_err();
        assert!(e.contains("--power meter") && e.contains("file:PATH"), "{e}");
        assert!(parse("file:").is_err());
    }
}
