//! The per-second host sampler: one reading of every source, and the rates between two.
//!
//! A reading is cheap (four small procfs reads and one syscall), so the run loop can take one
//! every interval from its own thread. Rates use the time actually elapsed between readings,
//! never the nominal interval, so a late tick does not inflate or deflate them.

use std::time::{Duration, Instant};

use storbench_report::{CpuSample, SystemSample};

use super::cpu::{self, HostCpuTicks};
use super::diskstats::{self, DiskCounters};
use super::memory;

/// The raw counters of one moment; a source that could not be read is `None`.
#[derive(Debug, Clone)]
struct Reading {
    at: Instant,
    disk: Option<DiskCounters>,
    cpu: Option<HostCpuTicks>,
    self_cpu: Duration,
}

/// Samples the host: the target's block device, CPU, memory and storbench's own CPU.
#[derive(Debug)]
pub struct SystemSampler {
    device: Option<String>,
    prev: Reading,
    power: Option<std::sync::Arc<super::power::PowerMonitor>>,
}

impl SystemSampler {
    /// `device`: kernel name as in /proc/diskstats (e.g. "vda", "dm-0"), or None.
    ///
    /// Takes the first reading, so the first `sample()` covers the time since `new()`.
    pub fn new(device: Option<&str>) -> Self {
        let device = device.map(str::to_owned);
        let prev = read(device.as_deref());
        SystemSampler { device, prev, power: None }
    }

    /// Adds the latest reading of `power` to every sample.
    pub fn with_power(mut self, power: Option<std::sync::Arc<super::power::PowerMonitor>>) -> Self {
        self.power = power;
        self
    }

    /// Rates since the previous call (or since new()); uses the real elapsed time between readings.
    ///
    /// Never fails: a source that cannot be read leaves its part empty (`disk: None`, zero
    /// CPU or memory) rather than stopping a run that is measuring something else.
    pub fn sample(&mut self) -> SystemSample {
        let cur = read(self.device.as_deref());
        let prev = std::mem::replace(&mut self.prev, cur);
        let cur = &self.prev;
        let wall = cur.at.saturating_duration_since(prev.at);
        let disk = match (&prev.disk, &cur.disk) {
            (Some(a), Some(b)) => diskstats::disk_sample(a, b, wall),
            _ => None,
        };
        let cpu = match (&prev.cpu, &cur.cpu) {
            (Some(a), Some(b)) => cpu::cpu_sample(a, b),
            _ => CpuSample::default(),
        };
        SystemSample {
            disk,
            cpu,
            // A level, not a counter: read now rather than kept from the last reading.
            mem_available_bytes: memory::read_mem_available().ok().flatten().unwrap_or(0),
            self_cpu_pct: cpu::self_cpu_pct(prev.self_cpu, cur.self_cpu, wall),
            power_watts: self.power.as_ref().and_then(|p| p.latest()),
        }
    }
}

/// Reads every counter; the clock is read right before the disk counters, whose rates are
/// the ones most sensitive to the exact interval.
fn read(device: Option<&str>) -> Reading {
    let at = Instant::now();
    let disk = device.and_then(|name| diskstats::read_device(name).ok().flatten());
    Reading { at, disk, cpu: cpu::read_stat().ok().flatten(), self_cpu: cpu::self_cpu_time() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn assert_finite_non_negative(what: &str, value: f64) {
        assert!(value.is_finite() && value >= 0.0, "{what} = {value}");
    }

    #[test]
    fn samples_the_disk_and_cpu_while_writing() {
        let Some((name, _)) = super::super::device::tests::var_tmp_device() else {
            return crate::testing::skip(
                "/var/tmp is not on a block device here",
                "run on a machine whose /var/tmp is on a disk",
            );
        };
        let mut sampler = SystemSampler::new(Some(&name));
        let mut file = tempfile::NamedTempFile::new_in("/var/tmp").unwrap();
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(200) {
            file.write_all(&[0x5a; 4096]).unwrap();
            file.as_file().sync_all().unwrap();
        }
        let s = sampler.sample();
        let d = s.disk.expect("the device is in /proc/diskstats");
        for (what, v) in [
            ("reads_per_sec", d.reads_per_sec),
            ("writes_per_sec", d.writes_per_sec),
            ("read_bytes_per_sec", d.read_bytes_per_sec),
            ("write_bytes_per_sec", d.write_bytes_per_sec),
            ("queue_size", d.queue_size),
            ("busy_pct", d.busy_pct),
        ] {
            assert_finite_non_negative(what, v);
        }
        for (what, v) in [("read_await", d.read_await_ms), ("write_await", d.write_await_ms)] {
            assert_finite_non_negative(what, v.unwrap_or(0.0));
        }
        assert!(d.writes_per_sec > 0.0, "fsyncs must reach the disk: {d:?}");
        assert!(d.busy_pct <= 100.0);
        for (what, v) in
            [("user", s.cpu.user_pct), ("system", s.cpu.system_pct), ("iowait", s.cpu.iowait_pct)]
        {
            assert!((0.0..=100.0).contains(&v), "cpu {what} = {v}");
        }
        assert!(s.mem_available_bytes > 0);
        assert_finite_non_negative("self_cpu_pct", s.self_cpu_pct);
    }

    #[test]
    fn no_device_or_an_unknown_one_gives_no_disk() {
        assert_eq!(SystemSampler::new(None).sample().disk, None);
        assert_eq!(SystemSampler::new(Some("no-such-disk")).sample().disk, None);
    }

    #[test]
    fn each_sample_covers_only_the_time_since_the_last() {
        let mut sampler = SystemSampler::new(None);
        let first = sampler.prev.at;
        std::thread::sleep(Duration::from_millis(20));
        sampler.sample();
        assert!(sampler.prev.at >= first + Duration::from_millis(20));
        let second = sampler.prev.at;
        sampler.sample();
        assert!(sampler.prev.at >= second);
    }
}
