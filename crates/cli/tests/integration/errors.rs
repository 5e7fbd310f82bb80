//! Bad input: a clear message naming the problem and the fix, exit code 2, no panic or
//! backtrace, and nothing written.

use crate::support::{disk_tempdir, refused, storbench};
use std::path::Path;
use storbench_bench::testing::skip;

/// Runs `storbench io ARGS` with results under `dir`; asserts exit 2, the message, no
/// backtrace, and that no results directory was created.
fn refuses(dir: &Path, args: &[&str], needle: &str) {
    let results = dir.join("results");
    refused(storbench().arg("io").args(args).arg("--output-dir").arg(&results), needle);
    assert!(!results.exists(), "nothing may be written on bad input");
}

#[test]
fn a_block_size_that_o_direct_cannot_use_is_refused_before_anything_is_written() {
    let dir = disk_tempdir();
    let t = dir.path().to_str().unwrap();
    refuses(dir.path(), &["--target", t, "--bs", "1000", "--size", "1MiB"], "--buffered");
    assert!(!dir.path().join("storbench-io.dat").exists(), "no test file was created");
}

#[test]
fn a_size_smaller_than_a_block_is_refused() {
    let dir = disk_tempdir();
    let t = dir.path().to_str().unwrap();
    refuses(dir.path(), &["--target", t, "--bs", "64k", "--size", "4k"], "smaller than one 65536-byte block");
}

#[test]
fn a_path_in_a_missing_directory_is_refused() {
    let dir = disk_tempdir();
    let t = dir.path().join("no/such/dir/file.dat");
    refuses(dir.path(), &["--target", t.to_str().unwrap()], "does not exist");
}

/// Makes a directory unwritable even for root (the immutable attribute) while it lives.
struct Immutable(std::path::PathBuf);
impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn an_unwritable_directory_is_refused() {
    let dir = disk_tempdir();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    let made = std::process::Command::new("chattr").arg("+i").arg(&locked).status();
    if !made.is_ok_and(|s| s.success()) {
        return skip(
            "chattr +i failed on this filesystem",
            "run the tests as root on ext4 (STORBENCH_TEST_DIR)",
        );
    }
    let _guard = Immutable(locked.clone());
    refuses(dir.path(), &["--target", locked.to_str().unwrap(), "--size", "1MiB"], "not writable");
}

#[test]
fn not_enough_free_space_is_refused() {
    let dir = disk_tempdir();
    let t = dir.path().to_str().unwrap();
    refuses(dir.path(), &["--target", t, "--size", "900TiB"], "not enough free space");
}

#[test]
fn unknown_profiles_patterns_and_distributions_are_refused_with_the_choices() {
    let dir = disk_tempdir();
    refuses(dir.path(), &["--engine", "null", "--profile", "tpcc"], "the profile sets are: sqlio");
    refuses(dir.path(), &["--engine", "null", "--rw", "randomread"], "use read, write, randread");
    refuses(dir.path(), &["--engine", "null", "--random-distribution", "zipf:-1"], "zipf:1.2");
    refuses(dir.path(), &["--engine", "null", "--random-distribution", "zoned:50/50:40/50"], "add up to 100");
    refuses(dir.path(), &["--engine", "null", "--random-distribution", "zoned:60-10"], "is not IO/SPACE");
    refuses(dir.path(), &["--engine", "null", "--bs", "4k/0:8k/10"], "above 0");
}

#[test]
fn negative_and_zero_durations_are_refused() {
    let dir = disk_tempdir();
    refuses(dir.path(), &["--engine", "null", "--runtime=-5s"], "negative");
    refuses(dir.path(), &["--engine", "null", "--runtime", "0"], "more than 0");
}

#[test]
fn conflicting_options_are_refused() {
    let dir = disk_tempdir();
    refuses(dir.path(), &["--engine", "null", "--rate-iops", "10", "--rate-bw", "1M"], "cannot be used with");
    refuses(
        dir.path(),
        &["--engine", "null", "--rw", "write", "--fsync", "1", "--fdatasync", "1"],
        "cannot be used with",
    );
    refuses(dir.path(), &["--engine", "null", "--profile", "sqlio", "--bs", "4k"], "drop those options");
    refuses(dir.path(), &["--engine", "null", "--verify", "--bs", "4k/1:8k/1"], "single --bs");
}

#[test]
fn a_file_storbench_did_not_create_is_not_overwritten() {
    let dir = disk_tempdir();
    let file = dir.path().join("precious.db");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    refuses(dir.path(), &["--target", file.to_str().unwrap(), "--rw", "randwrite"], "--force");
    assert!(std::fs::read(&file).unwrap().iter().all(|&b| b == 7), "contents untouched");
}

#[test]
fn a_file_storbench_did_not_create_may_be_read() {
    let dir = disk_tempdir();
    let file = dir.path().join("existing.dat");
    std::fs::write(&file, vec![9u8; 1 << 20]).unwrap();
    storbench()
        .args(["io", "--rw", "randread", "--runtime", "0.2", "--ramp", "0", "--target"])
        .arg(&file)
        .arg("--output-dir")
        .arg(dir.path().join("r"))
        .assert()
        .success();
    assert!(std::fs::read(&file).unwrap().iter().all(|&b| b == 9));
}

/// The block device under the root filesystem: /dev/NAME, its name from sysfs for its
/// MAJ:MIN (a machine without udev, as CI's, has no /dev/block links; the test skipped there).
fn root_block_device() -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let dev = info.lines().find(|l| l.split(' ').nth(4) == Some("/"))?.split(' ').nth(2)?.to_string();
    let link = std::fs::read_link(format!("/sys/dev/block/{dev}")).ok()?;
    let path = format!("/dev/{}", link.file_name()?.to_string_lossy());
    std::fs::metadata(&path).ok().filter(|m| m.file_type().is_block_device()).map(|_| path)
}

#[test]
fn a_block_device_needs_allow_device_and_a_mounted_one_is_refused_even_with_force() {
    let Some(dev) = root_block_device() else {
        return skip(
            "the root filesystem is not on a block device here",
            "run the tests on a machine whose / is on a disk",
        );
    };
    let dir = disk_tempdir();
    refuses(dir.path(), &["--target", &dev, "--rw", "randread"], "--allow-device");
    refuses(dir.path(), &["--target", &dev, "--allow-device", "--force", "--rw", "randwrite"], "mounted");
}

#[test]
fn flushes_without_writes_or_below_one_write_and_a_random_share_of_a_sequential_job_are_refused() {
    let dir = disk_tempdir();
    let t = dir.path().to_str().unwrap();
    refuses(dir.path(), &["--target", t, "--rw", "randwrite", "--fdatasync", "0.5"], "from 1");
    refuses(dir.path(), &["--target", t, "--rw", "randread", "--fdatasync", "2"], "only reads");
    refuses(
        dir.path(),
        &["--target", t, "--rw", "write", "--percentage-random", "50"],
        "needs a random pattern",
    );
    refuses(dir.path(), &["--target", t, "--percentage-random", "101"], "0 to 100");
    assert!(!dir.path().join("storbench-io.dat").exists(), "no test file was created");
}

#[test]
fn a_rate_profile_of_no_rates_or_beside_another_rate_is_refused() {
    let dir = disk_tempdir();
    refuses(dir.path(), &["--engine", "null", "--rate-profile", "0,0"], "every second is 0");
    refuses(dir.path(), &["--engine", "null", "--rate-profile", "100,-5"], "is not a rate");
    refuses(dir.path(), &["--engine", "null", "--rate-profile", "100,lots"], "is not a number");
    refuses(
        dir.path(),
        &["--engine", "null", "--rate-profile", "100", "--rate-iops", "5"],
        "cannot be used with",
    );
}

/// A plan error of a shard quotes the plan's line as written, `{shard}` and all (it quoted the
/// line with the shard's index already put in), its caret under the same place.
#[test]
fn a_plan_error_of_a_shard_quotes_the_line_as_the_plan_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, "name = \"p\"\n[[configuration]]\nname = \"c\"\ntarget = \"/mnt/s{shard}\" x\n")
        .unwrap();
    let err = refused(
        storbench().arg("run").arg(&plan).args(["--on", "kubernetes", "--image", "x"]),
        "plan.toml:4:",
    );
    assert!(err.contains("target = \"/mnt/s{shard}\" x"), "{err}");
    let quoted = err.lines().find(|l| l.contains("{shard}")).unwrap();
    let caret = err.lines().skip_while(|l| !l.contains("{shard}")).nth(1).unwrap();
    assert_eq!(caret.find('^'), quoted.find(" x").map(|i| i + 1), "{err}");
}
