//! What to watch for one run, found from the paths it uses, and one reading of all of it: the
//! md arrays anywhere in the device stacks under the paths, and the mount point of each btrfs
//! they live on.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{RebuildActivity, btrfs, md};
use crate::monitor::device;
use crate::run::StopFlag;

const MOUNTINFO: &str = "/proc/self/mountinfo";

/// The storage under a run's paths that can rebuild.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Watched {
    /// Every device under the paths, top layer first (the md arrays among them are read).
    pub devices: Vec<String>,
    /// The mount point of each btrfs filesystem a path lives on.
    pub btrfs_mounts: Vec<PathBuf>,
}

impl Watched {
    /// The storage under `paths` (targets, logs, a database's data and WAL directories):
    /// every layer of every device each filesystem spans, and the btrfs mounts. An error only
    /// when a path cannot be examined.
    pub fn for_paths(paths: &[&Path]) -> io::Result<Watched> {
        let mountinfo = fs::read_to_string(MOUNTINFO).unwrap_or_default();
        let mut watched = Watched::default();
        for path in paths {
            // A file the run has yet to create (a first run's data file) is on its directory's
            // storage.
            let path = path.ancestors().find(|p| p.exists()).unwrap_or(path);
            for top in device::filesystem_devices(path)? {
                for name in device::layers(Path::new("/sys"), &top.name) {
                    push_new(&mut watched.devices, name);
                }
            }
            let mount = device::find_mount(&mountinfo, &fs::canonicalize(path)?);
            if let Some(mount) = mount.filter(|m| m.fstype == "btrfs") {
                push_new(&mut watched.btrfs_mounts, PathBuf::from(mount.point));
            }
        }
        Ok(watched)
    }

    /// One reading of everything watched: md from procfs and sysfs under `root` ("/" on a live
    /// system), btrfs from its status commands. A btrfs whose status cannot be read gives its
    /// error beside the readings, so one broken filesystem does not hide the others.
    pub fn sample(&self, root: &Path, stop: &StopFlag) -> (Vec<RebuildActivity>, Vec<btrfs::StatusError>) {
        let mut readings = md::sample(root, &self.devices);
        let mut errors = Vec::new();
        for mount in &self.btrfs_mounts {
            match btrfs::sample(mount, stop) {
                Ok(found) => readings.extend(found),
                Err(error) => errors.push(error),
            }
        }
        (readings, errors)
    }

    /// The readings that show a rebuild, scrub or degraded array now, for the warning of a run
    /// about to start (see [`super::describe`]), and the errors of what could not be read.
    pub fn active_at_start(&self, stop: &StopFlag) -> (Vec<RebuildActivity>, Vec<btrfs::StatusError>) {
        let (readings, errors) = self.sample(Path::new("/"), stop);
        (readings.into_iter().filter(RebuildActivity::is_abnormal).collect(), errors)
    }
}

fn push_new<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::rebuild::btrfs::tests::LoopRaid1;
    use crate::monitor::rebuild::{Action, StackKind};
    use std::process::{Command, Stdio};
    use std::time::Duration;

    #[test]
    fn a_file_on_a_real_btrfs_raid1_watches_both_loop_devices_and_the_mount() {
        let Some(raid) = LoopRaid1::new() else { return };
        let file = raid.mount.join("data");
        fs::write(&file, b"x").unwrap();
        let watched = Watched::for_paths(&[&file, &raid.mount]).unwrap();
        assert_eq!(
            watched,
            Watched { devices: raid.devices.clone(), btrfs_mounts: vec![raid.mount.clone()] }
        );
        let (active, errors) = watched.active_at_start(&StopFlag::new());
        assert!(active.is_empty() && errors.is_empty(), "{active:?} {errors:?}");
    }

    #[test]
    fn a_scrub_running_when_a_run_starts_is_reported() {
        let Some(raid) = LoopRaid1::new() else { return };
        // 32 MiB to scrub per copy at 1 MiB/s per device: it runs well beyond the readings.
        // Committed (syncfs; an fsync only logs it), or the scrub finds nothing to read yet.
        let data = raid.mount.join("data");
        fs::write(&data, vec![7u8; 32 << 20]).unwrap();
        rustix::fs::syncfs(fs::File::open(&data).unwrap()).unwrap();
        let devinfo = Path::new("/sys/fs/btrfs").join(&raid.fsid).join("devinfo");
        for id in ["1", "2"] {
            fs::write(devinfo.join(id).join("scrub_speed_max"), "1m").unwrap();
        }
        // -B: the scrub is this child, which the test waits for after cancelling it, so that
        // nothing holds the filesystem when it is unmounted.
        let quiet = || Stdio::null();
        let mut scrub = Command::new("btrfs");
        let mut scrub = scrub
            .args(["scrub", "start", "-B"])
            .arg(&raid.mount)
            .stdout(quiet())
            .stderr(quiet())
            .spawn()
            .unwrap();
        let watched = Watched::for_paths(&[&raid.mount]).unwrap();
        let mut seen = None;
        crate::testing::wait_until(
            "the scrub to show in btrfs scrub status",
            Duration::from_secs(20),
            || {
                let (active, errors) = watched.active_at_start(&StopFlag::new());
                assert!(errors.is_empty(), "{errors:?}");
                seen = active.into_iter().next();
                seen.is_some()
            },
        );
        let _ = Command::new("btrfs").args(["scrub", "cancel"]).arg(&raid.mount).stdout(quiet()).status();
        let _ = scrub.wait();
        let scrub = seen.unwrap();
        assert_eq!((scrub.kind, scrub.action, scrub.paused), (StackKind::Btrfs, Action::Scrub, false));
        assert_eq!(scrub.device, raid.mount.to_string_lossy());
        assert!(scrub.done_pct.is_some_and(|p| p < 100.0), "{scrub:?}");
    }

    #[test]
    fn a_file_not_made_yet_is_watched_on_its_directorys_storage() {
        let dir = tempfile::tempdir().unwrap();
        let later = dir.path().join("not-yet").join("storbench-io.dat");
        assert_eq!(Watched::for_paths(&[&later]).unwrap(), Watched::for_paths(&[dir.path()]).unwrap());
    }

    #[test]
    fn md_arrays_in_the_stack_are_read_from_the_root() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rebuild/md/raid1-recovery");
        let watched =
            Watched { devices: vec!["dm-0".into(), "md0".into(), "sda".into()], btrfs_mounts: Vec::new() };
        let (readings, errors) = watched.sample(&root, &StopFlag::new());
        assert!(errors.is_empty());
        assert_eq!(
            readings.iter().map(|r| (r.device.as_str(), r.action)).collect::<Vec<_>>(),
            [("md0", Action::Recovery)]
        );
    }
}
