//! The block devices a run uses, each counted on its own: the devices of every filesystem under
//! the run's paths (data and log targets, a database's data and WAL directories), a
//! multi-device btrfs's every member, read from one `/proc/diskstats` per reading.
//!
//! The devices found when the run starts are the series' own columns (`disk.<device>.*`, a
//! header is written once). A btrfs filesystem's members are listed again at every reading,
//! so a device that joins during the run (a replace's target) counts in the run's totals
//! (`disk_*`) from its second reading on: its first is the base its growth is counted from.

use std::path::Path;
use std::time::Duration;

use storbench_report::{DeviceSample, DiskSample};

use super::diskstats::{self, DiskCounters};
use super::{device, rebuild::btrfs};

const SYSFS: &str = "/sys";

/// The devices of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunDisks {
    /// Found when the run started, in the order of its paths: kernel names.
    named: Vec<String>,
    /// The UUIDs of the btrfs filesystems among them, whose members are listed at each reading.
    btrfs: Vec<String>,
}

/// Every device's counters at one moment, by kernel name.
pub type DiskReading = Vec<(String, DiskCounters)>;

impl RunDisks {
    /// The devices under `paths`; a path that cannot be examined (yet) gives its nearest
    /// existing ancestor's, one with no block device (tmpfs) none.
    pub fn for_paths(paths: &[&Path]) -> RunDisks {
        let sys = Path::new(SYSFS);
        let mut disks = RunDisks::default();
        for path in paths {
            let path = path.ancestors().find(|p| p.exists()).unwrap_or(path);
            for top in device::filesystem_devices(path).unwrap_or_default() {
                if let Some(fsid) = btrfs::fsid_of_device(sys, &top.name) {
                    push_new(&mut disks.btrfs, fsid);
                }
                push_new(&mut disks.named, top.name);
            }
        }
        disks
    }

    /// The one device `name` (none for `None`).
    pub fn of(name: Option<&str>) -> RunDisks {
        RunDisks { named: name.map(str::to_owned).into_iter().collect(), btrfs: Vec::new() }
    }

    /// The devices found when the run started.
    pub fn named(&self) -> &[String] {
        &self.named
    }

    /// Every device now: those named, then members that joined a btrfs since.
    fn current(&self) -> Vec<String> {
        let mut names = self.named.clone();
        for fsid in &self.btrfs {
            for member in btrfs::members(Path::new(SYSFS), fsid) {
                push_new(&mut names, member);
            }
        }
        names
    }

    /// The counters of every device now; a device the kernel does not list is left out.
    pub fn read(&self) -> DiskReading {
        if self.named.is_empty() {
            return Vec::new();
        }
        let Ok(text) = diskstats::read_text() else { return Vec::new() };
        let found = |name: String| Some((diskstats::find_device(&text, &name)?, name));
        self.current().into_iter().filter_map(found).map(|(counters, name)| (name, counters)).collect()
    }

    /// The rates between two readings `wall` apart: every device read both times together,
    /// and each named device on its own when there are several.
    pub fn sample(
        &self,
        prev: &DiskReading,
        cur: &DiskReading,
        wall: Duration,
    ) -> (Option<DiskSample>, Vec<DeviceSample>) {
        let of = |name: &str| {
            let find = |r: &DiskReading| r.iter().find(|(n, _)| n == name).map(|(_, c)| *c);
            diskstats::disk_sample(&find(prev)?, &find(cur)?, wall)
        };
        let each: Vec<DiskSample> = cur.iter().filter_map(|(name, _)| of(name)).collect();
        let devices = match self.named.len() {
            0 | 1 => Vec::new(),
            _ => {
                self.named.iter().map(|name| DeviceSample { device: name.clone(), disk: of(name) }).collect()
            }
        };
        (diskstats::combined(&each), devices)
    }
}

fn push_new(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(reads: u64, sectors_written: u64, ticks: u64) -> DiskCounters {
        DiskCounters {
            reads,
            sectors_written,
            writes: sectors_written / 8,
            io_ticks_ms: ticks,
            ..DiskCounters::default()
        }
    }

    #[test]
    fn several_devices_are_counted_each_on_its_own_and_together_with_a_joiner_in_the_total() {
        let disks = RunDisks { named: vec!["loop0".into(), "loop1".into()], btrfs: Vec::new() };
        let prev = vec![("loop0".into(), counters(10, 0, 0)), ("loop1".into(), counters(0, 0, 0))];
        let cur = vec![
            ("loop0".into(), counters(110, 800, 500)),
            ("loop1".into(), counters(0, 800, 250)),
            // A replace's target, listed from this reading on: no growth to count yet.
            ("loop2".into(), counters(0, 8000, 900)),
        ];
        let (total, each) = disks.sample(&prev, &cur, Duration::from_secs(1));
        let total = total.unwrap();
        assert_eq!((total.reads_per_sec, total.write_bytes_per_sec), (100.0, 2.0 * 800.0 * 512.0));
        // The busiest device's share, not a sum beyond 100 %.
        assert_eq!(total.busy_pct, 50.0);
        let names: Vec<&str> = each.iter().map(|d| d.device.as_str()).collect();
        assert_eq!(names, ["loop0", "loop1"]);
        assert_eq!(each[1].disk.as_ref().map(|d| d.write_bytes_per_sec), Some(800.0 * 512.0));
        let next: DiskReading = cur
            .iter()
            .map(|(n, c)| (n.clone(), DiskCounters { sectors_written: c.sectors_written + 8, ..*c }))
            .collect();
        let (total, _) = disks.sample(&cur, &next, Duration::from_secs(1));
        assert_eq!(total.unwrap().write_bytes_per_sec, 3.0 * 8.0 * 512.0, "loop2 counts once it has a base");
    }

    #[test]
    fn one_device_has_no_columns_of_its_own_and_none_has_no_disk() {
        let one = RunDisks::of(Some("vda"));
        let reading = vec![("vda".into(), counters(0, 0, 0))];
        let (total, each) = one.sample(&reading, &reading, Duration::from_secs(1));
        assert!(total.is_some() && each.is_empty());
        assert_eq!(
            RunDisks::of(None).sample(&Vec::new(), &Vec::new(), Duration::from_secs(1)),
            (None, Vec::new())
        );
    }
}
