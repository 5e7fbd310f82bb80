//! Block-device targets on a real loop device: allowed with --allow-device when blank, refused
//! when it carries a filesystem unless --force, and reported as a device in the summary.

use crate::support::{disk_tempdir, stderr_text, stdout_json, storbench};
use std::path::Path;
use std::process::Command;
use storbench_bench::testing::skip;

/// A loop device over a file; detached when dropped.
pub(crate) struct Loop(pub(crate) String);

impl Loop {
    pub(crate) fn attach(file: &Path) -> Option<Loop> {
        let out = Command::new("losetup").args(["--find", "--show"]).arg(file).output().ok()?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !dev.is_empty()).then_some(Loop(dev))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

fn io_on_device(dev: &str, dir: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    storbench()
        .args(["io", "--target", dev, "--ramp", "0", "--runtime", "0.5", "--json", "--output-dir"])
        .arg(dir.join("results"))
        .args(extra)
        .assert()
}

#[test]
fn a_blank_loop_device_is_used_with_allow_device_and_one_with_ext4_needs_force() {
    let dir = disk_tempdir();
    let image = dir.path().join("disk.img");
    std::fs::File::create(&image).unwrap().set_len(64 << 20).unwrap();
    let Some(dev) = Loop::attach(&image) else {
        return skip("no loop device could be attached (losetup failed)", "run the tests as root");
    };
    let a = io_on_device(&dev.0, dir.path(), &["--rw", "randwrite", "--bs", "4k", "--iodepth", "4"]).code(2);
    assert!(stderr_text(&a).contains("--allow-device"));
    let a = io_on_device(&dev.0, dir.path(), &["--allow-device", "--rw", "randwrite", "--iodepth", "4"])
        .success();
    let s = stdout_json(&a);
    assert_eq!(s["target"]["kind"], "device");
    assert_eq!(s["target"]["size_bytes"], 64 << 20);
    assert!(s["results"]["write"]["ios"].as_u64().unwrap() > 0);

    let made = Command::new("mkfs.ext4").args(["-q", "-F", &dev.0]).status();
    if !made.is_ok_and(|s| s.success()) {
        return skip("mkfs.ext4 failed, for the signature half", "install e2fsprogs");
    }
    let a = io_on_device(&dev.0, dir.path(), &["--allow-device", "--rw", "randwrite"]).code(2);
    let err = stderr_text(&a);
    assert!(err.contains("ext4") && err.contains("--force"), "{err}");
    io_on_device(&dev.0, dir.path(), &["--allow-device", "--force", "--rw", "randread"]).success();
}

#[test]
fn shards_of_one_run_share_a_device_each_on_its_own_slice() {
    let dir = disk_tempdir();
    let image = dir.path().join("disk.img");
    std::fs::File::create(&image).unwrap().set_len(64 << 20).unwrap();
    let Some(dev) = Loop::attach(&image) else {
        return skip("no loop device could be attached (losetup failed)", "run the tests as root");
    };
    // Verified writes and reads at once: a block one shard wrote and the other read back would
    // be a mismatch, so none shows only if their slices are apart.
    let shard = |spec: &str| {
        let mut c = Command::new(storbench().get_program());
        c.args(["io", "--target", &dev.0, "--allow-device", "--rw", "randrw", "--bs", "4k", "--verify"])
            .args(["--iodepth", "4", "--ramp", "0", "--runtime", "1", "--power", "none", "--json"])
            .args(["--shard", spec, "--output-dir"])
            .arg(dir.path().join("results-{shard}"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    let shards = [shard("1/2"), shard("2/2")];
    let mut slices = Vec::new();
    for child in shards {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let verify = &s["results"]["verify"];
        assert!(verify["blocks_checked"].as_u64().unwrap() > 0, "{verify}");
        assert_eq!(verify["mismatches"].as_u64(), Some(0), "{verify}");
        assert!(s["results"]["write"]["ios"].as_u64().unwrap() > 0);
        let p = &s["parameters"];
        slices.push((p["offset"].as_u64().unwrap(), p["size"].as_u64().unwrap()));
    }
    assert_eq!(slices, [(0, 32 << 20), (32 << 20, 32 << 20)]);
}
