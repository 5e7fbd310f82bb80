//! The per-second host sampler: one reading of every source, and the rates between two.
//!
//! A reading is cheap (a few small procfs and sysfs reads and one syscall), so the run loop can
//! take one every interval from its own thread; btrfs's rebuild status, which takes commands,
//! is read on a thread of its own ([`RebuildSampler`]) and taken as it last stood. Rates use
//! the time actually elapsed between readings, never the nominal interval, so a late tick does
//! not inflate or deflate them.

use std::path::Path;
use std::time::{Duration, Instant};

use storbench_report::{CpuSample, SystemSample};

use super::cpu::{self, HostCpuTicks};
use super::disks::{DiskReading, RunDisks};
use super::memory;
use super::rebuild::{RebuildSampler, Watched};

/// The raw counters of one moment; a source that could not be read is `None`.
#[derive(Debug, Clone)]
struct Reading {
    at: Instant,
    disks: DiskReading,
    cpu: Option<HostCpuTicks>,
    self_cpu: Duration,
}

/// Samples the host: the run's block devices, CPU, memory, storbench's own CPU and the
/// rebuild activity under the run's paths.
#[derive(Debug)]
pub struct SystemSampler {
    disks: RunDisks,
    rebuild: Option<RebuildSampler>,
    prev: Reading,
    power: Option<std::sync::Arc<super::power::PowerMeters>>,
}

impl SystemSampler {
    /// `device`: kernel name as in /proc/diskstats (e.g. "vda", "dm-0"), or None.
    ///
    /// Takes the first reading, so the first `sample()` covers the time since `new()`.
    pub fn new(device: Option<&str>) -> Self {
        SystemSampler::of(RunDisks::of(device), None)
    }

    /// A sampler of every device under `paths` (each member of a multi-device btrfs; data and
    /// log volumes each on its own), and of the md arrays and btrfs filesystems there: what
    /// they rebuild, resync or scrub (btrfs read on a thread started here). Where the paths
    /// have no block device, `device` (or none).
    pub fn for_paths(paths: &[&Path], device: Option<&str>) -> Self {
        let mut disks = RunDisks::for_paths(paths);
        if disks.named().is_empty() {
            disks = RunDisks::of(device);
        }
        let rebuild = Watched::for_paths(paths).ok().and_then(|w| RebuildSampler::start(&w, Path::new("/")));
        SystemSampler::of(disks, rebuild)
    }

    /// A sampler of `disks` with the stacks `rebuild` reads.
    pub fn of(disks: RunDisks, rebuild: Option<RebuildSampler>) -> Self {
        let prev = read(&disks);
        SystemSampler { disks, rebuild, prev, power: None }
    }

    /// Adds the latest reading of `power` to every sample.
    pub fn with_power(mut self, power: Option<std::sync::Arc<super::power::PowerMeters>>) -> Self {
        self.power = power;
        self
    }

    /// Rates since the previous call (or since new()); uses the real elapsed time between readings.
    ///
    /// Never fails: a source that cannot be read leaves its part empty (`disk: None`, zero
    /// CPU or memory) rather than stopping a run that is measuring something else.
    pub fn sample(&mut self) -> SystemSample {
        let cur = read(&self.disks);
        let prev = std::mem::replace(&mut self.prev, cur);
        let cur = &self.prev;
        let wall = cur.at.saturating_duration_since(prev.at);
        let (disk, devices) = self.disks.sample(&prev.disks, &cur.disks, wall);
        let cpu = match (&prev.cpu, &cur.cpu) {
            (Some(a), Some(b)) => cpu::cpu_sample(a, b),
            _ => CpuSample::default(),
        };
        SystemSample {
            disk,
            devices,
            rebuild: self.rebuild.as_ref().map(RebuildSampler::sample).unwrap_or_default(),
            cpu,
            // A level, not a counter: read now rather than kept from the last reading.
            mem_available_bytes: memory::read_mem_available().ok().flatten().unwrap_or(0),
            self_cpu_pct: cpu::self_cpu_pct(prev.self_cpu, cur.self_cpu, wall),
            power_watts: self.power.as_ref().and_then(|p| p.latest()),
            meters: self.power.as_ref().map(|p| p.each()).unwrap_or_default(),
        }
    }
}

/// Reads every counter; the clock is read right before the disk counters, whose rates are
/// the ones most sensitive to the exact interval.
fn read(disks: &RunDisks) -> Reading {
    let at = Instant::now();
    Reading { at, disks: disks.read(), cpu: cpu::read_stat().ok().flatten(), self_cpu: cpu::self_cpu_time() }
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
    fn a_recorded_md_recovery_goes_into_the_series_as_its_own_columns() {
        use storbench_report::columns::rebuild;
        use storbench_report::render::timeseries::Series;
        use storbench_report::series::{Phase, SeriesRow};
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rebuild/md/raid1-recovery");
        let watched = Watched { devices: vec!["md0".into(), "sda".into()], btrfs_mounts: Vec::new() };
        let mut sampler = SystemSampler::of(RunDisks::of(None), RebuildSampler::start(&watched, &root));
        let row = SeriesRow {
            t_s: 1.0,
            phase: Phase::Measure,
            workload: Vec::new(),
            streams: Vec::new(),
            system: sampler.sample(),
        };
        let csv =
            storbench_report::export::series_header(&row) + &storbench_report::export::series_line(&row);
        let series = Series::parse(&csv).unwrap();
        let one = |column| series.each(rebuild::PREFIX, column);
        assert_eq!(one(rebuild::ACTION), [("md0", &[Some(rebuild::code("recovery").unwrap() as f64)][..])]);
        assert_eq!(one(rebuild::PCT_DONE), [("md0", &[Some(12.6)][..])]);
        assert_eq!(one(rebuild::SPEED_BYTES_PER_SEC), [("md0", &[Some(220_629.0 * 1024.0)][..])]);
        assert_eq!(one(rebuild::BYTES_DONE), [("md0", &[Some(2_646_016.0 * 512.0)][..])]);
        assert_eq!(one(rebuild::DEGRADED_DEVICES), [("md0", &[Some(1.0)][..])]);
        assert!(series.streams().is_empty(), "the host's columns are no background stream");
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
