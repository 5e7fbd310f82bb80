//! Issue 12, classes 7, 8, 10, 11 and 13: numbers that would wrap or exhaust memory are
//! refused before anything is created, input files are read only as bounded regular files,
//! a mailbox manifest finds its logs from anywhere and a missing one fails verification,
//! verification after a dirty shutdown says so first, and messages name the real problem.

use crate::support::{disk_tempdir, refused, storbench};
use std::path::Path;
use std::time::{Duration, Instant};
use storbench_bench::testing::wait_until;

fn mailbox(dir: &Path) -> assert_cmd::Command {
    let mut cmd = storbench();
    cmd.arg("mailbox").arg("--target").arg(dir.join("db")).arg("--output-dir").arg(dir.join("results"));
    cmd
}

fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
fn mailbox_sizes_that_would_wrap_or_exceed_memory_are_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    refused(mailbox(dir.path()).args(["--mailboxes", "32", "--mailbox-size", "1EiB"]), "beyond any storage");
    refused(
        mailbox(dir.path()).args(["--mailboxes", "2", "--mailbox-size", "8EB"]),
        "larger than any storage",
    );
    for cache in ["64TB", "1PB"] {
        let err = refused(
            mailbox(dir.path()).args(["--mailboxes", "2", "--mailbox-size", "1MB", "--cache-size", cache]),
            "--cache-size",
        );
        assert!(err.contains("available") && err.contains("give a smaller --cache-size"), "{err}");
    }
    assert!(empty(dir.path()), "nothing may be created");
}

#[test]
fn io_numbers_that_would_panic_are_refused_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let io = || {
        let mut cmd = storbench();
        cmd.args(["io", "--buffered", "--size", "1M", "--target"]).arg(dir.path());
        cmd.arg("--output-dir").arg(dir.path().join("results"));
        cmd
    };
    refused(io().args(["--verify", "--rw", "randwrite", "--bs", "16"]), "32-byte header");
    refused(io().args(["--steady-state", "1e18"]), "at most 365 days");
    refused(io().args(["--bs", "64M", "--iodepth", "4096", "--workers", "1024"]), "of memory");
    let err = refused(io().args(["--runtime", "-5s"]), "'-5s' is negative");
    assert!(!err.contains("unexpected argument"), "{err}");
    assert!(empty(dir.path()), "nothing may be created");
}

#[test]
fn a_device_given_as_plan_or_parameter_file_is_refused_at_once() {
    let start = Instant::now();
    refused(storbench().args(["run", "/dev/zero"]), "/dev/zero is a character device, not a regular file");
    refused(
        storbench().args(["oltp", "run", "--config-file", "/dev/zero"]),
        "/dev/zero is a character device",
    );
    assert!(start.elapsed() < Duration::from_secs(10), "refused fast, not after reading");
}

#[test]
fn a_mailbox_manifest_linked_to_a_device_is_refused_as_a_link_never_read() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("storbench-mailbox.json")).unwrap();
    let mut cmd = storbench();
    cmd.args(["mailbox", "verify", "--target"]).arg(dir.path()).timeout(Duration::from_secs(10));
    refused(&mut cmd, "storbench-mailbox.json is a symbolic link; storbench does not follow links");
}

#[test]
fn an_output_dir_that_is_a_file_is_named_as_a_file_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results");
    std::fs::write(&file, "mine").unwrap();
    let mut cmd = storbench();
    cmd.args(["io", "--size", "1M", "--runtime", "1", "--target"])
        .arg(dir.path())
        .arg("--output-dir")
        .arg(&file);
    let err = refused(&mut cmd, "is a file, not a directory; pick a directory");
    assert!(!err.contains("os error 17"), "{err}");
    assert!(!dir.path().join("storbench-io.dat").exists(), "the test file is not made first");
}

#[test]
fn a_target_smaller_than_a_block_without_size_says_the_targets_size() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.dat");
    std::fs::write(&small, "abc").unwrap();
    let mut cmd = storbench();
    cmd.args(["io", "--runtime", "1", "--target"]).arg(&small);
    let err = refused(&mut cmd, "the target holds 3 bytes (no --size was given)");
    assert!(!err.contains("--size 3 bytes"), "{err}");
}

/// Runs the mailbox module's tiny test with --keep for `duration`; with `kill`, kills it with
/// SIGKILL once it has marked the databases in use and written its first log generation
/// (circular logging removes that one soon after: a recovery needs it).
fn kept_run(dir: &Path, duration: &'static str, kill: bool) {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin!("storbench"));
    cmd.arg("mailbox").arg("--target").arg(dir.join("db")).arg("--output-dir").arg(dir.join("results"));
    cmd.args(crate::mailbox::tiny(&[("--duration", duration)])).args(["--keep", "--no-verify"]);
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    if kill {
        let manifest = dir.join("db/storbench-mailbox.json");
        let in_use = || std::fs::read_to_string(&manifest).is_ok_and(|t| t.contains("\"clean\": false"));
        // A generation's file: E01 and its number (E01tmp.log is the next one being prepared).
        let logging = || {
            let names = std::fs::read_dir(dir.join("db/log1")).into_iter().flatten().flatten();
            names
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .any(|n| n.starts_with("E01") && n != "E01tmp.log")
        };
        wait_until("the run to mark its databases in use and log", Duration::from_secs(60), || {
            assert!(child.try_wait().unwrap().is_none(), "the run ended before it was killed");
            in_use() && logging()
        });
        child.kill().unwrap();
    }
    child.wait().unwrap();
}

/// `storbench mailbox verify --json --target DIR/db`, run from `/`.
fn verify_from_root(dir: &Path) -> assert_cmd::assert::Assert {
    let mut cmd = storbench();
    cmd.current_dir("/").args(["mailbox", "verify", "--json", "--target"]).arg(dir.join("db")).assert()
}

#[test]
fn verify_from_another_directory_finds_the_logs_and_fails_on_a_missing_one() {
    let dir = disk_tempdir();
    kept_run(dir.path(), "2s", false);
    let path = dir.path().join("db/storbench-mailbox.json");
    let manifest = std::fs::read_to_string(&path).unwrap();
    let absolute = format!("\"log_dir\": \"{}\"", dir.path().join("db").display());
    assert!(manifest.contains(&absolute), "the manifest names its logs absolutely: {manifest}");
    // As versions before this one wrote it: relative to where the run was started.
    std::fs::write(&path, manifest.replace(&absolute, "\"log_dir\": \"db\"")).unwrap();
    let ok = crate::support::stdout_json(&verify_from_root(dir.path()).code(0));
    assert!(ok["log_blocks_checked"].as_u64().unwrap() > 0, "the logs were found: {ok}");
    let logs = dir.path().join("db/log1");
    let mut files: Vec<_> = std::fs::read_dir(&logs).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    std::fs::remove_file(&files[0]).unwrap();
    let failed = verify_from_root(dir.path()).code(1);
    let err = crate::support::stderr_text(&failed);
    assert!(err.contains("missing: the manifest's log stream needs this file"), "{err}");
    std::fs::remove_file(dir.path().join("db/mailbox1.edb")).unwrap();
    let err = crate::support::stderr_text(&verify_from_root(dir.path()).code(2));
    assert_eq!(err.matches("No such file or directory").count(), 1, "said once: {err}");
}

#[test]
fn verify_after_a_killed_run_reports_the_dirty_shutdown_first_and_recover_makes_it_clean() {
    let dir = disk_tempdir();
    kept_run(dir.path(), "60s", true);
    let db = dir.path().join("db");
    let verify = || {
        let mut cmd = storbench();
        cmd.args(["mailbox", "verify", "--target"]).arg(&db);
        cmd
    };
    let out = verify().assert().code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let dirty = err.find("not shut down cleanly (a dirty shutdown").unwrap_or_else(|| panic!("{err}"));
    let counted = err.find("verified ").unwrap_or_else(|| panic!("{err}"));
    assert!(dirty < counted, "the dirty shutdown comes first:\n{err}");
    assert!(err.contains("not evidence of storage corruption") && !err.contains(" corrupt:"), "{err}");
    if err.contains("soft recovery cannot replay these logs") {
        eprintln!("circular logging removed the run's first log file before the kill: recover not tried");
        return;
    }
    assert!(err.contains("`storbench mailbox recover --target"), "{err}");
    storbench().args(["mailbox", "recover", "--target"]).arg(&db).assert().code(0);
    verify().assert().code(0);
}
