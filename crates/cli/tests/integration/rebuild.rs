//! Runs on storage that is rebuilding: a run that starts while its filesystem is being
//! scrubbed (a real btrfs scrub on a loop device, throttled so it outlasts the run's start)
//! says so in its warnings, and a run on idle storage does not.

use crate::device::Loop;
use crate::support::{disk_tempdir, stdout_json, storbench};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use storbench_bench::testing::skip;

fn sh(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A btrfs on a loop device, mounted; unmounted on drop (before the loop device is detached).
struct Mounted {
    point: String,
    _device: Loop,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // The scrub's process may hold the filesystem a moment after it is cancelled.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !sh("umount", &[&self.point]) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn btrfs_on_loop(dir: &Path) -> Option<Mounted> {
    let image = dir.join("disk.img");
    std::fs::File::create(&image).unwrap().set_len(1 << 30).unwrap();
    let device = Loop::attach(&image)?;
    let point = dir.join("mnt");
    std::fs::create_dir(&point).unwrap();
    let point = point.to_str().unwrap().to_string();
    (sh("mkfs.btrfs", &["-f", &device.0]) && sh("mount", &[&device.0, &point]))
        .then_some(Mounted { point, _device: device })
}

fn io_warnings(target: &str, results: &Path) -> Vec<String> {
    let a = storbench()
        .args([
            "io",
            "--target",
            target,
            "--size",
            "16M",
            "--rw",
            "randread",
            "--runtime",
            "0.5",
            "--ramp",
            "0",
        ])
        .args(["--json", "--output-dir"])
        .arg(results)
        .assert()
        .success();
    let s = stdout_json(&a);
    s["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_run_that_starts_during_a_scrub_says_so_and_one_on_idle_storage_does_not() {
    let dir = disk_tempdir();
    let Some(fs) = btrfs_on_loop(dir.path()) else {
        return skip(
            "no btrfs on a loop device (root, losetup and mkfs.btrfs needed)",
            "install btrfs-progs, run as root",
        );
    };
    let idle = io_warnings(&fs.point, &dir.path().join("idle"));
    assert!(!idle.iter().any(|w| w.contains("under way")), "{idle:?}");

    // 64 MiB to scrub at 1 MiB/s: the scrub outlasts the run's start by far.
    std::fs::write(Path::new(&fs.point).join("data"), vec![5u8; 64 << 20]).unwrap();
    assert!(sh("sync", &["-f", &fs.point]));
    let uuid =
        String::from_utf8(Command::new("findmnt").args(["-no", "UUID", &fs.point]).output().unwrap().stdout)
            .unwrap();
    let speed = format!("/sys/fs/btrfs/{}/devinfo/1/scrub_speed_max", uuid.trim());
    std::fs::write(&speed, "1m").unwrap();
    let mut scrub = Command::new("btrfs")
        .args(["scrub", "start", "-B", &fs.point])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    storbench_bench::testing::wait_until("the scrub to be under way", Duration::from_secs(20), || {
        let out = Command::new("btrfs").args(["scrub", "status", &fs.point]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).contains("running")
    });
    let during = io_warnings(&fs.point, &dir.path().join("scrub"));
    let _ = sh("btrfs", &["scrub", "cancel", &fs.point]);
    let _ = scrub.wait();
    let said = during.iter().find(|w| w.contains("was under way when the run started")).cloned();
    let said = said.unwrap_or_else(|| panic!("no rebuild warning: {during:?}"));
    assert!(said.starts_with(&format!("{}: scrub", fs.point)), "{said}");
    assert!(said.contains("% done") && said.contains("not of normal storage"), "{said}");
    let bundle = crate::support::only_bundle(&dir.path().join("scrub"));
    storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(0);
}
