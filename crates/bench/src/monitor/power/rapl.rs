//! RAPL (powercap sysfs): CPU package energy counters turned into watts.

use super::{Meter, PowerError, first_line};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One package zone: its energy counter and the value at which the counter wraps to zero.
#[derive(Debug)]
struct RaplZone {
    energy: PathBuf,
    max_uj: u64,
}

#[derive(Debug)]
pub(super) struct Rapl {
    zones: Vec<RaplZone>,
    prev: Option<(Instant, Vec<u64>)>,
}

const RAPL_FIX_READ: &str = "check that the intel_rapl_msr module is loaded (modprobe intel_rapl_msr)";

impl Rapl {
    pub(super) fn open(root: PathBuf) -> Result<Self, PowerError> {
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

#[cfg(test)]
pub(super) mod tests {
    use super::super::{PowerSampler, PowerSource};
    use super::*;
    use std::time::Duration;

    /// A fake powercap tree: `intel-rapl:<n>` packages, each with a `core` subzone.
    pub(in super::super) fn fake_powercap(packages: &[(u64, u64)]) -> tempfile::TempDir {
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
}
