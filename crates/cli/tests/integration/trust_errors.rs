//! Failed I/O is never throughput: on a device whose every write fails (a loop device over a
//! sparse file on a full tmpfs, ENOSPC), a run counts no failed I/O as IOPS, fails (exit 1)
//! and says so in the table, summary.json, the report and an evaluation, unless
//! --continue-on-error, which keeps it as a measurement with its error rate beside every figure.

use crate::support::{disk_tempdir, json, only_bundle, stderr_text, storbench};
use std::path::{Path, PathBuf};
use std::process::Command;
use storbench_bench::testing::skip;

/// A loop device over a sparse file on a tmpfs with no space left: every write to it fails.
/// Detached and unmounted when dropped.
struct FullDevice {
    dev: String,
    mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl FullDevice {
    fn new() -> Option<FullDevice> {
        let dir = tempfile::tempdir().ok()?;
        let mnt = dir.path().join("fs");
        std::fs::create_dir(&mnt).ok()?;
        let mounted =
            Command::new("mount").args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"]).arg(&mnt).status();
        if !mounted.is_ok_and(|s| s.success()) {
            return None;
        }
        let mut full = FullDevice { dev: String::new(), mnt, _dir: dir };
        let image = full.mnt.join("disk.img");
        std::fs::File::create(&image).ok()?.set_len(64 << 20).ok()?;
        // Fill what is left: the image's holes can no longer be allocated.
        let _ = std::fs::write(full.mnt.join("filler"), vec![1u8; 8 << 20]);
        let out = Command::new("losetup").args(["--find", "--show"]).arg(&image).output().ok()?;
        full.dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !full.dev.is_empty()).then_some(full)
    }

    /// The device, or None (and why, on stderr) where loop devices or mounts are not allowed.
    fn or_skip() -> Option<FullDevice> {
        let d = FullDevice::new();
        if d.is_none() {
            skip("no tmpfs could be mounted with a loop device on it", "run the tests as root");
        }
        d
    }
}

impl Drop for FullDevice {
    fn drop(&mut self) {
        if !self.dev.is_empty() {
            let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        }
        // The loop device lets go of its file a moment after it is detached.
        for _ in 0..100 {
            let done = Command::new("umount").arg(&self.mnt).stderr(std::process::Stdio::null()).status();
            if done.is_ok_and(|s| s.success()) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = Command::new("umount").arg("--lazy").arg(&self.mnt).status();
    }
}

/// `storbench io` of random 64 KiB writes on `dev` for a second, results under `results`.
fn randwrite(dev: &str, results: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    storbench()
        .args(["io", "--target", dev, "--allow-device", "--rw", "randwrite", "--bs", "64k"])
        .args(["--iodepth", "4", "--runtime", "1", "--ramp", "0", "--power", "none", "--output-dir"])
        .arg(results)
        .args(extra)
        .assert()
}

fn summary_of(bundle: &Path) -> serde_json::Value {
    json(&std::fs::read(bundle.join("summary.json")).unwrap())
}

/// `storbench report BUNDLE`, and the report.md it wrote.
fn report_md(bundle: &Path) -> String {
    storbench().arg("report").arg(bundle).assert().success();
    std::fs::read_to_string(bundle.join("report.md")).unwrap()
}

#[test]
fn an_io_run_on_a_full_device_fails_and_counts_no_failed_write_as_iops() {
    let Some(dev) = FullDevice::or_skip() else { return };
    let tmp = disk_tempdir();
    let results = tmp.path().join("results");
    let a = randwrite(&dev.dev, &results, &[]).code(1);
    let table = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let err = stderr_text(&a);
    assert!(table.contains("I/Os failed") && table.contains("100.0 %"), "{table}");
    assert!(table.contains("count completed I/Os only"), "{table}");
    assert!(err.contains("I/Os failed") && err.contains("--continue-on-error"), "{err}");

    let bundle = only_bundle(&results);
    let s = summary_of(&bundle);
    let r = &s["results"];
    assert_eq!(r["write"]["ios"], 0, "every write failed: {r}");
    assert_eq!(r["write"]["iops"], 0.0);
    assert_eq!(r["write"]["bytes_per_sec"], 0.0);
    assert!(r["errors"]["total"].as_u64().unwrap() > 100, "{r}");
    assert_eq!(r["error_rate_pct"], 100.0);
    assert_eq!(s["parameters"]["continue_on_error"], false);

    let md = report_md(&bundle);
    assert!(md.contains("| failed: ") && md.contains("I/Os failed (100.0 %"), "{md}");
    assert!(md.contains("No run has a result that counts: 1 failed"), "{md}");
}

#[test]
fn with_continue_on_error_a_run_on_a_full_device_exits_0_with_the_error_rate_beside_its_figures() {
    let Some(dev) = FullDevice::or_skip() else { return };
    let tmp = disk_tempdir();
    let results = tmp.path().join("results");
    let a = randwrite(&dev.dev, &results, &["--continue-on-error"]).success();
    let table = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let row = table.lines().find(|l| l.contains("write")).unwrap_or_else(|| panic!("no write row: {table}"));
    assert!(row.contains("100.0 %"), "the error rate is on the write row: {table}");
    assert!(table.contains("ENOSPC") || table.contains("EIO"), "{table}");

    let bundle = only_bundle(&results);
    let s = summary_of(&bundle);
    assert_eq!(s["results"]["error_rate_pct"], 100.0);
    assert_eq!(s["results"]["write"]["iops"], 0.0);
    assert_eq!(s["parameters"]["continue_on_error"], true);
    let warned =
        s["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("I/Os failed"));
    assert!(warned, "{}", s["warnings"]);

    let md = report_md(&bundle);
    assert!(md.contains("| done |"), "kept as a measurement: {md}");
    assert!(md.contains("0 IOPS (100.0 % of I/Os failed)"), "beside the key finding: {md}");
}

const IO: &str = "kind = \"io\"\nrw = \"randwrite\"\nbs = \"64k\"\nruntime = 1\nramp = 0\n";

/// `storbench run` of a plan on `dev` with `method` lines and `workloads`, results under `dir`.
fn evaluate(dev: &str, dir: &Path, method: &str, workloads: &str) -> assert_cmd::assert::Assert {
    let plan = format!(
        "name = \"full\"\n[method]\nrepetitions = 1\nidle_settle = 0\npower = \"none\"\n{method}\
         [[configuration]]\nname = \"full\"\ntarget = \"{dev}\"\nallow_device = true\n{workloads}"
    );
    let path = dir.join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    storbench().arg("run").arg(&path).arg("--output-dir").arg(dir.join("results")).assert()
}

#[test]
fn an_evaluation_records_a_run_with_failed_ios_as_failed_and_never_as_its_median() {
    let Some(dev) = FullDevice::or_skip() else { return };
    let tmp = disk_tempdir();
    let workloads = format!(
        "[[workload]]\nlabel = \"strict\"\n{IO}[[workload]]\nlabel = \"kept\"\ncontinue_on_error = true\n{IO}"
    );
    // A failed run fails the evaluation as `decide` fails it: exit 1 (2 is for bad input).
    let a = evaluate(&dev.dev, tmp.path(), "", &workloads).code(1);
    let results = tmp.path().join("results");
    let err = stderr_text(&a);
    assert!(err.contains("1 run(s) failed"), "{err}");

    let e = json(&std::fs::read(only_bundle(&results).join("evaluation.json")).unwrap());
    let decided = storbench().arg("decide").arg(only_bundle(&results)).assert().code(1);
    let said = stderr_text(&decided);
    assert!(said.contains("the evaluation fails: 1 run(s) failed"), "decide exits as run did: {said}");
    let run = |id: &str| e["runs"].as_array().unwrap().iter().find(|r| r["id"] == id).unwrap().clone();
    let strict = run("strict.full.r1");
    assert_eq!(strict["status"], "failed", "{strict}");
    assert_eq!(strict["reported"], false, "a failed run is no median candidate: {strict}");
    assert!(strict["error"].as_str().unwrap().contains("I/Os failed"), "{strict}");
    let kept = run("kept.full.r1");
    assert_eq!(kept["status"], "done", "{kept}");
    assert_eq!(kept["reported"], true);
    assert_eq!(kept["headline"]["error_rate_pct"], 100.0, "{kept}");
    let table = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(table.contains("(100.0 % of I/Os failed)"), "beside the kept run's median: {table}");
}

#[test]
fn buffered_writes_that_the_device_cannot_store_fail_the_run_when_flushed_at_its_end() {
    let Some(dev) = FullDevice::or_skip() else { return };
    let tmp = disk_tempdir();
    let results = tmp.path().join("results");
    // The page cache takes every write; only the flush finds that none can be stored.
    let a = randwrite(&dev.dev, &results, &["--buffered"]).code(1);
    let err = stderr_text(&a);
    assert!(err.contains("flushing the page cache to the target at the end failed"), "{err}");
    assert!(err.contains("failed outside the measured window"), "{err}");
    let s = summary_of(&only_bundle(&results));
    assert_eq!(s["results"]["errors_outside_window"], 1, "{}", s["results"]);
}

#[test]
fn preconditioning_whose_writes_fail_stops_the_evaluation_before_any_run() {
    let Some(dev) = FullDevice::or_skip() else { return };
    let tmp = disk_tempdir();
    let workloads = format!("[[workload]]\nlabel = \"rw\"\n{IO}");
    let a = evaluate(&dev.dev, tmp.path(), "precondition = 1\n", &workloads).code(2);
    let err = stderr_text(&a);
    assert!(err.contains("preconditioning full failed: its writes did not all complete"), "{err}");
    let e = json(&std::fs::read(only_bundle(&tmp.path().join("results")).join("evaluation.json")).unwrap());
    assert_eq!(e["runs"][0]["status"], "pending", "no run measured unpreconditioned storage: {e}");
}
