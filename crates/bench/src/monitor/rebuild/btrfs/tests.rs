use super::*;
use crate::target::device::tests::run as sh;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A recorded status output under tests/data/rebuild/btrfs/.
fn recorded(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rebuild/btrfs").join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn running_reading(status: Option<Status>) -> RebuildActivity {
    match status {
        Some(Status::Running(reading)) => reading,
        other => panic!("expected a running operation, got {other:?}"),
    }
}

#[test]
fn a_replace_in_progress_is_read_with_its_percent_and_a_finished_one_is_not_running() {
    let r = running_reading(parse_replace(&recorded("replace-running.out")));
    assert_eq!(
        (r.kind, r.action, r.paused, r.done_pct),
        (StackKind::Btrfs, Action::Replace, false, Some(56.5))
    );
    for idle in ["replace-idle.out", "replace-finished.out", "replace-cancelled.out"] {
        assert_eq!(parse_replace(&recorded(idle)), Some(Status::NotRunning), "{idle}");
    }
    let suspended = "Started on 26.Nov 11:30:39, suspended on 26.Nov 11:31:00 at 12.0%, 0 write errs, 0 uncorr. read errs";
    let r = running_reading(parse_replace(suspended));
    assert_eq!((r.paused, r.done_pct), (true, Some(12.0)));
}

#[test]
fn a_running_balance_reports_the_chunks_done_and_a_paused_one_says_paused() {
    let r = running_reading(parse_balance(&recorded("balance-running.out")));
    assert_eq!((r.action, r.paused, r.done_pct), (Action::Balance, false, Some(40.0)));
    let r = running_reading(parse_balance(&recorded("balance-paused.out")));
    assert_eq!((r.paused, r.done_pct), (true, Some(75.0)));
    assert_eq!(parse_balance(&recorded("balance-idle.out")), Some(Status::NotRunning));
}

#[test]
fn a_running_scrub_reports_bytes_percent_and_rate_raw_or_with_units() {
    let r = running_reading(parse_scrub(&recorded("scrub-running-raw.out")));
    assert_eq!((r.action, r.done_pct), (Action::Scrub, Some(14.46)));
    assert_eq!((r.bytes_done, r.bytes_total), (Some(212_598_784), Some(1_469_857_792)));
    assert_eq!(r.speed_bytes_per_s, Some(42_519_756));
    // Without --raw: 407.75 MiB of 1.37 GiB at 40.77 MiB/s, to the unit's precision.
    let r = running_reading(parse_scrub(&recorded("scrub-running.out")));
    assert_eq!((r.bytes_done, r.done_pct), (Some(40_775 * (1 << 20) / 100), Some(29.09)));
    assert_eq!(r.bytes_total, Some((1.37 * (1u64 << 30) as f64) as u64));
    assert_eq!(r.speed_bytes_per_s, Some((40.77 * (1u64 << 20) as f64) as u64));
    // Its first seconds, before any statistics: running, at nothing yet.
    let r = running_reading(parse_scrub(&recorded("scrub-just-started.out")));
    assert_eq!((r.bytes_done, r.done_pct), (Some(0), Some(0.0)));
    for idle in ["scrub-idle.out", "scrub-finished.out", "scrub-cancelled-raw.out"] {
        assert_eq!(parse_scrub(&recorded(idle)), Some(Status::NotRunning), "{idle}");
    }
}

#[test]
fn the_older_scrub_wording_is_read_too() {
    let old = "scrub status for 2be72c8b-8c79-4862-9655-ff05a9ee9b32\n\
               \tscrub started at Thu Nov 26 11:29:19 2026, running for 00:00:10\n\
               \ttotal bytes scrubbed: 407.75MiB with 0 errors\n";
    assert_eq!(running_reading(parse_scrub(old)).action, Action::Scrub);
    let done = old.replace(", running for", " and finished after");
    assert_eq!(parse_scrub(&done), Some(Status::NotRunning));
}

#[test]
fn output_that_is_none_of_these_is_unreadable_never_a_panic() {
    for parse in [parse_replace, parse_balance, parse_scrub] {
        for junk in
            ["", "\n", "ERROR: not a btrfs filesystem: /tmp", "%", "nan% done", "1e400% done", "Balance on"]
        {
            if let Some(Status::Running(r)) = parse(junk) {
                assert!(r.done_pct.is_none_or(|p| (0.0..=100.0).contains(&p)), "{junk:?}: {r:?}");
            }
        }
    }
    assert_eq!(parse_replace("ERROR: cannot open mnt"), None);
    assert_eq!(parse_scrub("ERROR: cannot open mnt"), None);
    assert_eq!(size("18446744073709551615"), Some(u64::MAX));
    assert_eq!(size("99999999999EiB"), None);
    assert_eq!(size("1.5XiB"), None);
    assert_eq!(size("2KiB"), Some(2048));
}

#[test]
fn members_and_fsid_are_read_from_sysfs() {
    let sys = tempfile::tempdir().unwrap();
    let devices = sys.path().join("fs/btrfs/2be72c8b-8c79-4862-9655-ff05a9ee9b32/devices");
    fs::create_dir_all(&devices).unwrap();
    fs::create_dir_all(sys.path().join("fs/btrfs/features")).unwrap();
    for name in ["loop1", "loop0"] {
        symlink(format!("../../../../devices/virtual/block/{name}"), devices.join(name)).unwrap();
    }
    let fsid = "2be72c8b-8c79-4862-9655-ff05a9ee9b32";
    assert_eq!(members(sys.path(), fsid), ["loop0", "loop1"]);
    assert_eq!(fsid_of_device(sys.path(), "loop1").as_deref(), Some(fsid));
    assert_eq!(fsid_of_device(sys.path(), "sda"), None);
    assert!(members(sys.path(), "no-such-fs").is_empty());
    assert_eq!(fsid_of_device(Path::new("/nonexistent/storbench"), "loop0"), None);
}

/// Each loop device's size: sparse, so only what a test writes takes room; a replace needs
/// room beside the data (1 GiB devices holding 384 MiB refuse one with ENOSPC).
const IMAGE_SIZE: u64 = 2 << 30;

/// A btrfs RAID1 of two loop devices over sparse files, mounted; unmounted and detached on
/// drop even when a test fails.
pub(crate) struct LoopRaid1 {
    pub(crate) mount: PathBuf,
    /// The loop devices' kernel names, sorted.
    pub(crate) devices: Vec<String>,
    /// The filesystem's UUID as mkfs.btrfs printed it.
    pub(crate) fsid: String,
    /// Every loop device attached, members and spares, for the drop to detach.
    attached: Vec<String>,
    mounted: bool,
    dir: tempfile::TempDir,
}

impl LoopRaid1 {
    /// Made and mounted, or `None` after [`crate::testing::skip`] said what is missing.
    pub(crate) fn new() -> Option<LoopRaid1> {
        if !rustix::process::geteuid().is_root() {
            crate::testing::skip("a btrfs RAID1 on loop devices needs root", "run the tests as root");
            return None;
        }
        match LoopRaid1::make() {
            Ok(fs) => Some(fs),
            Err(why) => {
                crate::testing::skip(&why, "install btrfs-progs and util-linux (losetup), with loop devices");
                None
            }
        }
    }

    fn make() -> Result<LoopRaid1, String> {
        let dir = tempfile::tempdir_in("/var/tmp").map_err(|e| e.to_string())?;
        let mount = dir.path().join("mnt");
        fs::create_dir(&mount).map_err(|e| e.to_string())?;
        let mut fs = LoopRaid1 {
            mount,
            devices: Vec::new(),
            fsid: String::new(),
            attached: Vec::new(),
            mounted: false,
            dir,
        };
        for image in ["a.img", "b.img"] {
            let device = fs.attach(image)?;
            fs.devices.push(device);
        }
        let nodes: Vec<String> = fs.devices.iter().map(|d| format!("/dev/{d}")).collect();
        let mut mkfs = vec!["-f", "-d", "raid1", "-m", "raid1"];
        mkfs.extend(nodes.iter().map(String::as_str));
        let made = sh("mkfs.btrfs", &mkfs)?;
        fs.fsid = made
            .lines()
            .find_map(|l| l.strip_prefix("UUID:"))
            .ok_or("mkfs.btrfs printed no UUID")?
            .trim()
            .to_owned();
        sh("mount", &[&nodes[0], fs.mount.to_str().unwrap()])?;
        fs.mounted = true;
        fs.devices.sort();
        Ok(fs)
    }

    /// A loop device of the same size over a new file `image`, not in the filesystem: its
    /// kernel name.
    pub(crate) fn attach(&mut self, image: &str) -> Result<String, String> {
        let path = self.dir.path().join(image);
        fs::File::create(&path).and_then(|f| f.set_len(IMAGE_SIZE)).map_err(|e| e.to_string())?;
        let node = sh("losetup", &["--find", "--show", path.to_str().unwrap()])?;
        let name = node.trim_start_matches("/dev/").to_owned();
        self.attached.push(name.clone());
        Ok(name)
    }
}

impl Drop for LoopRaid1 {
    fn drop(&mut self) {
        // A process that used the filesystem (a scrub ending) may hold it a moment longer;
        // unmounted, the temporary directory's removal cannot reach into it.
        let mount = self.mount.to_str().unwrap_or_default();
        let tries = if self.mounted { 50 } else { 0 };
        for _ in 0..tries {
            if sh("umount", &[mount]).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        for device in &self.attached {
            let _ = sh("losetup", &["--detach", &format!("/dev/{device}")]);
        }
    }
}

#[test]
fn a_real_btrfs_raid1_on_loop_devices_lists_both_members_and_reads_as_idle() {
    let Some(fs) = LoopRaid1::new() else { return };
    let sys = Path::new("/sys");
    assert_eq!(members(sys, &fs.fsid), fs.devices);
    for device in &fs.devices {
        assert_eq!(fsid_of_device(sys, device).as_deref(), Some(fs.fsid.as_str()), "{device}");
    }
    // The real status commands, through the bounded command helper: nothing runs.
    let readings = sample(&fs.mount, &StopFlag::new()).unwrap();
    let idle = RebuildActivity::new(fs.mount.to_string_lossy(), StackKind::Btrfs, Action::Idle);
    assert_eq!(readings, [idle]);
}

#[test]
fn a_status_command_on_something_not_btrfs_is_an_error() {
    if Command::new("btrfs").arg("--version").stdout(Stdio::null()).status().is_err() {
        return crate::testing::skip("btrfs-progs is not installed", "install btrfs-progs");
    }
    let dir = tempfile::tempdir().unwrap();
    let err = sample(dir.path(), &StopFlag::new()).unwrap_err();
    assert!(matches!(err, StatusError::Failed { .. } | StatusError::Unreadable { .. }), "{err}");
    assert!(err.to_string().contains("btrfs replace status -1"), "{err}");
}

#[test]
fn a_real_btrfs_replace_is_read_while_it_runs_and_its_target_joins_the_members() {
    let Some(mut raid) = LoopRaid1::new() else { return };
    // 512 MiB to copy, committed: the replace lasts about a second (256 MiB took 0.25 s).
    let data = raid.mount.join("data");
    let chunk: Vec<u8> = (0..4u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let mut file = fs::File::create(&data).unwrap();
    for _ in 0..128 {
        std::io::Write::write_all(&mut file, &chunk).unwrap();
    }
    rustix::fs::syncfs(&file).unwrap();
    let spare = raid.attach("spare.img").unwrap();
    let (old, mount) = (format!("/dev/{}", raid.devices[0]), raid.mount.clone());
    let mut replace = Command::new("btrfs");
    replace.args(["replace", "start", "-B", "-f", &old, &format!("/dev/{spare}")]).arg(&mount);
    let mut replace = replace.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Read as the run would, back to back, until the replace ends.
    let mut seen = Vec::new();
    while replace.try_wait().unwrap().is_none() {
        seen.extend(
            sample(&mount, &StopFlag::new()).unwrap().into_iter().filter(|r| r.action == Action::Replace),
        );
    }
    let done = replace.wait_with_output().unwrap();
    assert!(done.status.success(), "{done:?}");
    let reading = seen.first().expect("a reading while the replace ran");
    assert_eq!(
        (reading.kind, reading.paused, reading.device.as_str()),
        (StackKind::Btrfs, false, mount.to_str().unwrap())
    );
    let progress: Vec<f64> = seen.iter().map(|r| r.done_pct.expect("a replace says how far it is")).collect();
    assert!(
        progress.windows(2).all(|w| w[0] <= w[1]) && progress.iter().all(|p| *p <= 100.0),
        "{progress:?}"
    );
    // Done: idle again, and sysfs lists the new device in place of the old.
    let idle = RebuildActivity::new(mount.to_string_lossy(), StackKind::Btrfs, Action::Idle);
    assert_eq!(sample(&mount, &StopFlag::new()).unwrap(), [idle]);
    let mut expected = vec![raid.devices[1].clone(), spare];
    expected.sort();
    assert_eq!(members(Path::new("/sys"), &raid.fsid), expected);
}
