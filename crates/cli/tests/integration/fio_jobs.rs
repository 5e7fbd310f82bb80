//! fio's job files run by `storbench io JOB.fio` and by a plan's `fio_job`: the jobs in their
//! order, each moving what fio's would, and a refused option naming its line.

use crate::support::{disk_tempdir, refused, stdout_json, storbench};
use std::path::Path;

/// A job file of two jobs in `dir`: a random 70/30 mix of 4k and 16k blocks in two copies of
/// 4 MiB each, then, after a stonewall, 4 MiB of sequential 4k writes.
fn two_jobs(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("two.fio");
    let text = "[global]\nsize=4m\n; both on one file\n[mixed]\nrw=randrw\nrwmixread=70\n\
                bssplit=4k/50:16k/50\nnumjobs=2\nnorandommap\n[writes]\nstonewall\nrw=write\nbs=4k\n";
    std::fs::write(&path, text).unwrap();
    path
}

/// `storbench io JOB --target DIR --json` in `dir`: what it printed.
fn run_job(dir: &Path, job: &Path) -> serde_json::Value {
    let out = storbench()
        .arg("io")
        .arg(job)
        .arg("--target")
        .arg(dir)
        .arg("--output-dir")
        .arg(dir.join("results"))
        .arg("--json")
        .assert()
        .success();
    stdout_json(&out)
}

#[test]
fn a_job_file_runs_its_jobs_in_order_each_moving_its_size_in_every_copy() {
    let dir = disk_tempdir();
    let job = two_jobs(dir.path());
    let s = run_job(dir.path(), &job);
    let jobs = s["profiles"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["mixed", "writes"]);
    let (mixed, writes) = (&jobs[0], &jobs[1]);
    assert_eq!(
        (mixed["engine"].as_str(), mixed["target"]["direct"].as_bool()),
        (Some("psync"), Some(false)),
        "fio's defaults"
    );
    let moved = |j: &serde_json::Value, d: &str| j["results"][d]["bytes"].as_u64().unwrap();
    let total = moved(mixed, "read") + moved(mixed, "write");
    // Two copies of 4 MiB; each worker's last block may pass its share by less than a block.
    assert!(((8 << 20)..(8 << 20) + 2 * 16384).contains(&total), "{total}");
    let ios = |j: &serde_json::Value, d: &str| j["results"][d]["ios"].as_u64().unwrap() as f64;
    let read_share = ios(mixed, "read") / (ios(mixed, "read") + ios(mixed, "write"));
    assert!((read_share - 0.70).abs() < 0.01, "{read_share}");
    let mean = total as f64 / (ios(mixed, "read") + ios(mixed, "write"));
    assert!((mean - 10240.0).abs() < 512.0, "half 4k, half 16k: {mean}");
    assert_eq!((ios(writes, "write"), moved(writes, "write"), ios(writes, "read")), (1024.0, 4 << 20, 0.0));
}

#[test]
fn an_option_storbench_does_not_run_is_refused_with_its_file_and_line() {
    let dir = disk_tempdir();
    let job = dir.path().join("zoned.fio");
    std::fs::write(&job, "[disk]\nsize=1m\nzonemode=strided\n").unwrap();
    let e = refused(
        storbench().arg("io").arg(&job).arg("--target").arg(dir.path()),
        "zoned.fio:3: fio option `zonemode`",
    );
    assert!(e.contains("remove it from the job"), "{e}");
    assert!(
        !dir.path().join("storbench-io.dat").exists(),
        "nothing is made before the job file is read whole"
    );
}

#[test]
fn a_plans_fio_job_is_one_workload_per_job_on_the_configurations_target() {
    let dir = disk_tempdir();
    let job = two_jobs(dir.path());
    let plan = dir.path().join("plan.toml");
    let text = format!(
        "[method]\nrepetitions = 1\nidle_settle = \"0s\"\nidle_power = \"0s\"\n\
         [[configuration]]\nname = \"here\"\ntarget = {:?}\n\
         [[workload]]\nkind = \"io\"\nfio_job = {:?}\n",
        dir.path().display().to_string(),
        job.display().to_string()
    );
    std::fs::write(&plan, text).unwrap();
    let out = storbench().args(["plan", "check"]).arg(&plan).assert().success();
    let said = String::from_utf8_lossy(&out.get_output().stdout).into_owned()
        + &String::from_utf8_lossy(&out.get_output().stderr);
    assert!(said.contains("2 runs of 2 workload(s)"), "{said}");
    let out = storbench()
        .arg("run")
        .arg(&plan)
        .arg("--output-dir")
        .arg(dir.path().join("ev"))
        .args(["--power", "none"])
        .assert()
        .success();
    let said = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(said.contains("two-mixed.here.r1") && said.contains("two-writes.here.r1"), "{said}");
}

#[test]
fn a_jobs_fsync_flushes_after_every_nth_write_as_fio_does() {
    let dir = disk_tempdir();
    let job = dir.path().join("sync.fio");
    std::fs::write(&job, "[logger]\nrw=write\nbs=4k\nsize=1m\nfsync=4\ndirect=1\n").unwrap();
    let s = run_job(dir.path(), &job);
    assert_eq!(s["parameters"]["fsync"], 4.0, "{}", s["parameters"]);
    assert!(s["parameters"]["fdatasync"].is_null());
    assert_eq!(s["results"]["write"]["ios"], 256);
    assert_eq!(s["results"]["flush"]["ios"], 64, "{}", s["results"]["flush"]);
}

#[test]
fn a_jobs_offset_places_its_io_that_far_into_a_file_made_long_enough_to_hold_it() {
    let dir = disk_tempdir();
    let job = dir.path().join("late.fio");
    std::fs::write(&job, "[late]\nrw=write\nbs=64k\nsize=4m\noffset=8m\ndirect=1\n").unwrap();
    let s = run_job(dir.path(), &job);
    assert_eq!(
        (s["parameters"]["offset"].as_u64(), s["target"]["size_bytes"].as_u64()),
        (Some(8 << 20), Some(4 << 20))
    );
    assert_eq!(s["results"]["write"]["bytes"], 4 << 20);
    let file = std::fs::metadata(dir.path().join("storbench-io.dat")).unwrap();
    assert_eq!(file.len(), 12 << 20, "the 8 MiB before the offset and the job's 4 MiB");
    // A file of the user's, only read: the offset past its end is refused, naming it.
    let theirs = dir.path().join("theirs.dat");
    std::fs::write(&theirs, vec![7u8; 1 << 20]).unwrap();
    let past = dir.path().join("past.fio");
    std::fs::write(&past, "[past]\nrw=read\noffset=64m\n").unwrap();
    let target = ["--target", theirs.to_str().unwrap(), "--runtime", "1s"]; // the file gives no end
    refused(
        storbench().arg("io").arg(&past).args(target),
        "--offset 67108864 is at or past the end of the target (1048576 bytes)",
    );
}
