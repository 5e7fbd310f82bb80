//! The run's power: one meter, or several named ones read at once (001 measured the server
//! and its external enclosure, each and the total), each less an optional baseline (003
//! subtracted the empty enclosure's 108.2 W). Each meter samples on its own thread
//! ([`PowerMonitor`]); this only adds up their latest readings for the per-second rows.

use super::PowerMonitor;
use std::time::{Duration, Instant};

/// One named meter and the watts to subtract from its readings.
#[derive(Debug)]
pub struct NamedMeter {
    pub name: String,
    pub monitor: PowerMonitor,
    pub baseline_w: f64,
}

/// The meters a run reads.
#[derive(Debug)]
pub struct PowerMeters {
    meters: Vec<NamedMeter>,
    /// Whether they were named (`--power 'server=ipmi; enclosure=file:...'`): then each has
    /// columns of its own beside the total.
    named: bool,
}

impl PowerMeters {
    /// A single meter, its readings as they are.
    pub fn one(monitor: PowerMonitor) -> Self {
        PowerMeters {
            meters: vec![NamedMeter { name: String::new(), monitor, baseline_w: 0.0 }],
            named: false,
        }
    }

    /// Several named meters, each less its baseline.
    pub fn named(meters: Vec<NamedMeter>) -> Self {
        PowerMeters { meters, named: true }
    }

    /// The total, each meter less its baseline; None unless every meter has a reading (a sum
    /// missing a meter would pass for a lower power).
    pub fn latest(&self) -> Option<f64> {
        self.meters.iter().map(|m| Some(m.monitor.latest()? - m.baseline_w)).sum()
    }

    /// Each named meter's latest reading less its baseline; empty for a single unnamed meter.
    pub fn each(&self) -> Vec<(String, Option<f64>)> {
        if !self.named {
            return Vec::new();
        }
        self.meters.iter().map(|m| (m.name.clone(), m.monitor.latest().map(|w| w - m.baseline_w))).collect()
    }

    /// Where the power comes from: the meter, or each named one with its baseline.
    pub fn describe(&self) -> String {
        if !self.named {
            return self.meters.iter().map(|m| m.monitor.describe().to_string()).collect();
        }
        let each: Vec<String> = self
            .meters
            .iter()
            .map(|m| {
                let less =
                    if m.baseline_w != 0.0 { format!(", less {} W", m.baseline_w) } else { String::new() };
                format!("{}: {}{less}", m.name, m.monitor.describe())
            })
            .collect();
        format!("the sum of {}", each.join("; "))
    }

    /// The last error of any meter, with its name where it has one.
    pub fn error(&self) -> Option<String> {
        self.meters.iter().find_map(|m| {
            let e = m.monitor.error()?;
            Some(if m.name.is_empty() { e } else { format!("{}: {e}", m.name) })
        })
    }

    /// The longest stretch since `since` in which some meter gave no reading.
    pub fn longest_silence_since(&self, since: Instant) -> Duration {
        self.meters.iter().map(|m| m.monitor.longest_silence_since(since)).max().unwrap_or_default()
    }

    /// Whether every meter gave a reading at or after `since`.
    pub fn read_since(&self, since: Instant) -> bool {
        self.meters.iter().all(|m| m.monitor.read_since(since))
    }

    /// Stops every meter.
    pub fn stop(&self) {
        self.meters.iter().for_each(|m| m.monitor.stop());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::power::{PowerSampler, PowerSource};

    fn file_meter(dir: &std::path::Path, name: &str, watts: &str) -> PowerMonitor {
        let path = dir.join(name);
        std::fs::write(&path, watts).unwrap();
        let sampler = PowerSampler::new(PowerSource::File { path }).unwrap();
        PowerMonitor::start(sampler, Duration::from_millis(10))
    }

    fn settled(m: &PowerMeters) {
        crate::testing::wait_until("a reading of every meter", Duration::from_secs(5), || {
            m.latest().is_some()
        });
    }

    #[test]
    fn named_meters_add_up_each_less_its_baseline_and_the_total_waits_for_every_one() {
        let dir = tempfile::tempdir().unwrap();
        let server = NamedMeter {
            name: "server".into(),
            monitor: file_meter(dir.path(), "s", "250.5"),
            baseline_w: 0.0,
        };
        let shelf = NamedMeter {
            name: "enclosure".into(),
            monitor: file_meter(dir.path(), "e", "300"),
            baseline_w: 108.2,
        };
        let m = PowerMeters::named(vec![server, shelf]);
        settled(&m);
        assert!((m.latest().unwrap() - (250.5 + 300.0 - 108.2)).abs() < 1e-9);
        let each = m.each();
        assert_eq!(each[0], ("server".to_string(), Some(250.5)));
        assert_eq!(each[1].0, "enclosure");
        assert!((each[1].1.unwrap() - 191.8).abs() < 1e-9);
        assert!(
            m.describe().starts_with("the sum of server: ") && m.describe().contains("less 108.2 W"),
            "{}",
            m.describe()
        );
        m.stop();
        // A meter without a reading leaves the total empty rather than low.
        let missing = NamedMeter {
            name: "gone".into(),
            monitor: file_meter(dir.path(), "g", "not watts"),
            baseline_w: 0.0,
        };
        let partial = PowerMeters::named(vec![
            NamedMeter {
                name: "server".into(),
                monitor: file_meter(dir.path(), "s2", "100"),
                baseline_w: 0.0,
            },
            missing,
        ]);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(partial.latest(), None);
        assert!(partial.error().is_some_and(|e| e.starts_with("gone: ")), "{:?}", partial.error());
        // One unnamed meter: its reading, no columns of its own.
        let one = PowerMeters::one(file_meter(dir.path(), "o", "42"));
        settled(&one);
        assert_eq!((one.latest(), one.each()), (Some(42.0), Vec::new()));
    }
}
