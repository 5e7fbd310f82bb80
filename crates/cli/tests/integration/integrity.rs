//! `storbench integrity`: a small SQLIOSim-class stress on the real disk (data 16 MiB growing
//! to 24 MiB by 4 MiB, a 2 MiB log): a healthy run passes with every figure in its summary,
//! kept files verify, a journal of another run and damaged files are caught, and bad input is
//! refused with nothing written or removed.

use crate::support::{bundle_summary, disk_tempdir, refused, stderr_text, stdout_json, storbench};
use assert_cmd::Command;
use std::os::unix::fs::FileExt;
use std::path::Path;
use storbench_bench::testing::skip;

/// The small file set (shared with the crash command tests, `trust_commands`).
pub const SMALL: [&str; 10] = [
    "--data-size",
    "16MiB",
    "--data-max",
    "24MiB",
    "--data-growth",
    "4MiB",
    "--log-size",
    "2MiB",
    "--users",
    "2",
];

fn integrity(target: &Path, results: &Path, extra: &[&str]) -> Command {
    let mut cmd = storbench();
    cmd.args(["integrity", "--target"]).arg(target).arg("--output-dir").arg(results).args(SMALL).args(extra);
    cmd
}

#[test]
fn a_healthy_run_passes_reports_every_activity_and_removes_its_files() {
    let dir = disk_tempdir();
    let (target, results) = (dir.path().join("t"), dir.path().join("r"));
    let out = integrity(&target, &results, &["--duration", "3s", "--shrink-every", "1s", "--json"])
        .assert()
        .success();
    let s = stdout_json(&out);
    assert_eq!(s["workload"], "integrity");
    let r = &s["results"];
    assert_eq!(r["pass"], true, "{r}");
    assert!(r["ios"].as_u64().unwrap() > 100, "{r}");
    assert!(r["total_io_time_s"].as_f64().unwrap() > 0.0);
    assert!(r["grows"].as_u64().unwrap() >= 2 && r["shrinks"].as_u64().unwrap() >= 1, "{r}");
    for class in [
        "lost_writes",
        "stale_reads",
        "torn_pages",
        "misplaced_pages",
        "checksum",
        "read_errors",
        "write_errors",
    ] {
        assert_eq!(r["errors"][class], 0, "{class}");
    }
    let names: Vec<&str> =
        r["activities"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["random", "read_ahead", "bulk", "lazy_writer", "log_writer"]);
    for a in r["activities"].as_array().unwrap() {
        assert!(a["reads"].as_u64().unwrap() + a["writes"].as_u64().unwrap() > 0, "{a}");
    }
    let pages = (r["data_final_bytes"].as_u64().unwrap() + (2 << 20)) / 8192;
    assert_eq!(r["audit"]["pages_checked"].as_u64().unwrap(), pages, "the audit read every page");
    assert_eq!(s["target"]["direct"], true, "O_DIRECT by default");
    assert_eq!(bundle_summary(&results), s, "the bundle holds the summary printed");
    assert!(!target.exists(), "the files went with the run, and the directory it made for them");
}

#[test]
fn kept_files_verify_and_damage_or_another_runs_journal_is_caught() {
    let dir = disk_tempdir();
    let (target, results) = (dir.path().join("t"), dir.path().join("r"));
    integrity(&target, &results, &["--duration", "2s", "--keep"]).assert().success();
    let verify = |t: &Path| {
        let mut c = storbench();
        c.args(["integrity", "verify", "--json", "--target"]).arg(t);
        c
    };
    let ok = stdout_json(&verify(&target).assert().success());
    assert_eq!(ok["pass"], true, "{ok}");
    // A page overwritten with zeros where an acknowledged write was: a lost write at its offset.
    let data = std::fs::OpenOptions::new().write(true).open(target.join("storbench-integrity.mdf")).unwrap();
    data.write_all_at(&[0u8; 8192], 5 * 8192).unwrap();
    data.sync_all().unwrap();
    let bad = stdout_json(&verify(&target).assert().code(1));
    assert_eq!(bad["errors"]["lost_writes"], 1, "{bad}");
    assert_eq!(bad["first_errors"][0]["offset"], 5 * 8192);
    // Another run's journal beside these files is refused, and nothing is changed.
    let other = dir.path().join("o");
    integrity(&other, &results, &["--duration", "1s", "--keep", "--seed", "9"]).assert().success();
    std::fs::copy(other.join("storbench-integrity.journal"), target.join("storbench-integrity.journal"))
        .unwrap();
    refused(&mut verify(&target), "does not belong");
}

#[test]
fn bad_sizes_and_a_target_holding_files_are_refused_with_nothing_written() {
    let dir = disk_tempdir();
    let (target, results) = (dir.path().join("t"), dir.path().join("r"));
    let cases: [(&[&str], &str); 3] = [
        (&["--data-size", "16MiB", "--data-max", "8MiB"], "below its initial size"),
        (&["--data-size", "16MiB", "--data-max", "32MiB", "--data-growth", "0"], "growth of zero"),
        (&["--data-size", "16MiB", "--log-size", "1PiB"], "free"),
    ];
    for (args, needle) in cases {
        let mut cmd = storbench();
        cmd.args(["integrity", "--target"]).arg(&target).arg("--output-dir").arg(&results).args(args);
        refused(&mut cmd, needle);
        assert!(!results.exists(), "{args:?}: no bundle");
        assert!(std::fs::read_dir(&target).map_or(0, |d| d.count()) == 0, "{args:?}: no file");
    }
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("storbench-integrity.mdf"), b"the user's own data").unwrap();
    let err = refused(&mut integrity(&target, &results, &["--duration", "1s"]), "already exists");
    assert!(err.contains("integrity verify"), "{err}");
    assert_eq!(std::fs::read(target.join("storbench-integrity.mdf")).unwrap(), b"the user's own data");
    let err =
        stderr_text(&storbench().args(["integrity", "verify", "--target"]).arg(dir.path()).assert().code(2));
    assert!(err.contains("storbench-integrity.json"), "{err}");
}

#[test]
fn a_plan_runs_the_integrity_stress_on_each_configuration_into_one_evaluation() {
    let dir = disk_tempdir();
    for c in ["a", "b"] {
        std::fs::create_dir_all(dir.path().join(c)).unwrap();
    }
    let plan = dir.path().join("plan.toml");
    let text = format!(
        "name = \"qualify\"\n[method]\nidle_settle = 0\nrepetitions = 1\npower = \"none\"\n\
         [[configuration]]\nname = \"a\"\ntarget = \"{}\"\n[[configuration]]\nname = \"b\"\ntarget = \"{}\"\n\
         [[workload]]\nkind = \"integrity\"\ndata_size = \"8MiB\"\ndata_max = \"12MiB\"\ndata_growth = \"2MiB\"\n\
         log_size = \"1MiB\"\nduration = \"2s\"\nusers = 2\n",
        dir.path().join("a").display(),
        dir.path().join("b").display()
    );
    std::fs::write(&plan, text).unwrap();
    let results = dir.path().join("results");
    storbench().arg("run").arg(&plan).arg("--output-dir").arg(&results).assert().success();
    let eval_dir = std::fs::read_dir(&results).unwrap().next().unwrap().unwrap().path();
    let e = crate::support::json(&std::fs::read(eval_dir.join("evaluation.json")).unwrap());
    let runs = e["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["status"], "done", "{r}");
        assert_eq!(r["headline"]["metric"], "IOPS");
        let s = crate::support::json(
            &std::fs::read(eval_dir.join(r["bundle"].as_str().unwrap()).join("summary.json")).unwrap(),
        );
        assert_eq!(s["results"]["pass"], true);
    }
    for c in ["a", "b"] {
        let place = dir.path().join(c).join("storbench-integrity");
        assert!(!place.exists(), "{c}: the run's files are gone, and the directory it made");
    }
}

#[test]
fn crash_cycles_find_every_acknowledged_write_and_a_crash_that_loses_one_fails() {
    let dir = disk_tempdir();
    let (target, results) = (dir.path().join("t"), dir.path().join("r"));
    let out = integrity(&target, &results, &["--crash-after", "3s", "--crash-cycles", "2", "--json"])
        .assert()
        .success();
    let crash = &stdout_json(&out)["results"]["crash"];
    assert_eq!(crash["cycles"], 2, "{crash}");
    let acknowledged = crash["writes_acknowledged"].as_u64().unwrap();
    assert!(acknowledged > 2 * 2048, "at least the filled pages of each cycle: {crash}");
    assert_eq!(crash["writes_found"].as_u64().unwrap(), acknowledged);
    assert_eq!(crash["lost"], 0);
    assert!(!target.exists(), "healthy cycles leave no files");
    // A "power cut" that takes an acknowledged page with it: the writer is killed and page 5
    // of the data file zeroed, as a cache that never wrote it would leave it.
    let mdf = target.join("storbench-integrity.mdf");
    let zero_page_5 =
        format!("dd if=/dev/zero of={} bs=8192 seek=5 count=1 conv=notrunc status=none", mdf.display());
    let cut = kill_writer_then(&target, &zero_page_5);
    let results2 = dir.path().join("r2");
    let out = integrity(&target, &results2, &["--crash-after", "1s", "--crash-cmd", &cut, "--json"])
        .assert()
        .code(1);
    let r = &stdout_json(&out)["results"];
    assert_eq!(r["crash"]["lost"], 1, "{r}");
    assert_eq!(r["errors"]["lost_writes"], 1, "{r}");
    let errors =
        std::fs::read_to_string(crate::support::only_bundle(&results2).join("errors.jsonl")).unwrap();
    assert!(errors.contains("\"offset\":40960"), "{errors}");
    assert!(mdf.exists(), "the files of a cycle with errors are kept");
}

/// The lines of the bundle's `record.jsonl`.
fn record_lines(bundle: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(bundle.join("record.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The sum of an interval's counts whose names end with one of `ends`.
fn counted(interval: &serde_json::Value, ends: &[&str]) -> u64 {
    let counts = interval["counts"].as_object().unwrap();
    counts.iter().filter(|(k, _)| ends.iter().any(|e| k.ends_with(e))).map(|(_, v)| v.as_u64().unwrap()).sum()
}

fn span_s(interval: &serde_json::Value) -> f64 {
    (interval["end_ns"].as_u64().unwrap() - interval["start_ns"].as_u64().unwrap()) as f64 / 1e9
}

#[test]
fn crash_cycles_keep_the_seconds_their_killed_writers_closed_and_their_bundle_rebuilds() {
    let dir = disk_tempdir();
    let (target, results) = (dir.path().join("t"), dir.path().join("r"));
    // The crash comes 2 to 4 s into each cycle's activities: at least one closed interval
    // each, however late a loaded machine closes it (at 2.5s a crash at 1.3 s left one none).
    let out = integrity(&target, &results, &["--crash-after", "4s", "--crash-cycles", "2", "--json"])
        .assert()
        .success();
    let s = stdout_json(&out);
    let bundle = crate::support::only_bundle(&results);
    let record = record_lines(&bundle);
    let intervals: Vec<&serde_json::Value> = record.iter().filter_map(|l| l.get("interval")).collect();
    let cycles = record.last().unwrap()["end"]["detail"]["cycles"].as_array().unwrap().clone();
    assert_eq!(cycles.len(), 2, "{cycles:?}");
    for c in &cycles {
        let stream = format!("cycle{}", c["cycle"]);
        let own: Vec<_> = intervals.iter().filter(|i| i["stream"] == stream.as_str()).collect();
        assert!(own.iter().map(|i| counted(i, &[".writes.ios"])).sum::<u64>() > 0, "{stream} wrote: {own:?}");
        // Killed mid-interval: the intervals the writer closed and handed over before the kill
        // are there, the open one not. A loaded machine may kill it before it hands over the
        // interval it closed last (1 s of 2.4 s seen with four tests at a time), never after.
        let (seconds, crash_s) = (own.iter().map(|i| span_s(i)).sum::<f64>(), c["crash_s"].as_f64().unwrap());
        assert!(seconds > crash_s - 2.25 && seconds < crash_s + 0.25, "{stream}: {seconds} s of {crash_s} s");
    }
    // The summary's figures are the recorded seconds'.
    let r = &s["results"];
    let ios: u64 = intervals.iter().map(|i| counted(i, &[".reads.ios", ".writes.ios"])).sum();
    let seconds: f64 = intervals.iter().map(|i| span_s(i)).sum();
    assert_eq!(r["ios"], ios, "{r}");
    assert_eq!(s["phases"]["measured_s"].as_f64().unwrap(), seconds);
    assert!(r["bytes"].as_u64().unwrap() > 0 && r["lat_ns"]["p50"].as_u64().unwrap() > 0, "{r}");
    assert!((r["iops"].as_f64().unwrap() - ios as f64 / seconds).abs() < 1e-6, "{r}");
    let warnings = s["warnings"].to_string();
    assert!(!warnings.contains("not kept"), "{warnings}");
    // timeseries.csv has a row per recorded interval, whose IOPS make the summary's I/Os.
    let csv = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    let mut lines = csv.lines();
    let column = lines.next().unwrap().split(',').position(|c| c == "iops").unwrap();
    let rows: Vec<f64> = lines.map(|l| l.split(',').nth(column).unwrap().parse().unwrap()).collect();
    assert_eq!(rows.len(), intervals.len(), "{csv}");
    let from_rows: f64 = rows.iter().zip(&intervals).map(|(iops, i)| iops * span_s(i)).sum();
    assert!((from_rows - ios as f64).abs() <= rows.len() as f64, "{from_rows} vs {ios}");
    let left: Vec<_> =
        std::fs::read_dir(&bundle).unwrap().filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    assert!(
        !left.iter().any(|n| n.contains("intervals")),
        "the handed-over files went once recorded: {left:?}"
    );
    // The bundle rebuilds its summary, and a figure edited by hand is caught.
    storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(0);
    let mut edited = crate::support::bundle_summary(&results);
    edited["results"]["iops"] = (r["iops"].as_f64().unwrap() + 1.0).into();
    std::fs::write(bundle.join("summary.json"), edited.to_string()).unwrap();
    let caught = storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(1);
    assert!(stderr_text(&caught).contains("results.iops differs"), "{}", stderr_text(&caught));
}

/// A crash command: kills the crash writer of `target` and, once it has exited (its last write
/// done: a write still in flight could land after `then` and hide what it does), runs `then`.
/// It fails if the writer outlives the kill by 10 s. (`[-]` keeps the pattern from matching
/// the command lines that carry it.)
fn kill_writer_then(target: &Path, then: &str) -> String {
    let writer = format!("'[-]-crash-writer --target {}'", target.display());
    format!(
        "pkill -KILL -f -- {writer}; n=0; while pgrep -f -- {writer} >/dev/null; do \
         [ $n -lt 200 ] || {{ echo 'the killed writer is still there after 10 s' >&2; exit 1; }}; \
         sleep 0.05; n=$((n+1)); done; {then}"
    )
}

/// A loop device over a sparse file of `mib` MiB; detached when dropped.
struct LoopDev {
    dev: String,
    dir: tempfile::TempDir,
}

impl LoopDev {
    fn new(mib: u64) -> Option<LoopDev> {
        let dir = disk_tempdir();
        let image = dir.path().join("disk.img");
        std::fs::File::create(&image).ok()?.set_len(mib << 20).ok()?;
        let out =
            std::process::Command::new("losetup").args(["--find", "--show"]).arg(&image).output().ok()?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !dev.is_empty()).then_some(LoopDev { dev, dir })
    }

    /// None (after [`skip`]) where loop devices are not allowed.
    fn or_skip(mib: u64) -> Option<LoopDev> {
        let made = LoopDev::new(mib);
        if made.is_none() {
            skip("no loop device could be attached (losetup failed)", "run the tests as root");
        }
        made
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A filesystem of `kind` made on a loop device, mounted; unmounted when dropped (before
/// the device is detached).
struct LoopFs {
    mnt: std::path::PathBuf,
    _dev: LoopDev,
}

impl LoopFs {
    /// None (after [`skip`]) where loop devices, the mkfs tool or mounts are missing.
    fn new(kind: &str) -> Option<LoopFs> {
        let made = Self::make(kind);
        if made.is_none() {
            let missing = format!("no {kind} filesystem could be made and mounted on a loop device");
            skip(&missing, &format!("run the tests as root with losetup and mkfs.{kind} installed"));
        }
        made
    }

    fn make(kind: &str) -> Option<LoopFs> {
        use std::process::Command;
        let dev = LoopDev::new(512)?;
        let mnt = dev.dir.path().join("mnt");
        std::fs::create_dir(&mnt).ok()?;
        let force = if kind == "btrfs" { "-f" } else { "-F" };
        let made = Command::new(format!("mkfs.{kind}")).args(["-q", force, &dev.dev]).output().ok()?;
        let mounted =
            made.status.success() && Command::new("mount").arg(&dev.dev).arg(&mnt).status().ok()?.success();
        mounted.then_some(LoopFs { mnt, _dev: dev })
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        use std::process::Command;
        // The filesystem may be busy a moment after the run's last file closed.
        for _ in 0..100 {
            let done = Command::new("umount").arg(&self.mnt).stderr(std::process::Stdio::null()).status();
            if done.is_ok_and(|s| s.success()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

#[test]
fn healthy_ext4_and_btrfs_on_loop_devices_show_no_error() {
    for kind in ["ext4", "btrfs"] {
        let Some(fs) = LoopFs::new(kind) else { continue };
        let (target, results) = (fs.mnt.join("t"), fs.mnt.join("r"));
        let out = integrity(&target, &results, &["--duration", "3s", "--shrink-every", "1s", "--json"])
            .assert()
            .success();
        let r = &stdout_json(&out)["results"];
        assert_eq!(r["pass"], true, "{kind}: {r}");
        assert_eq!(
            r["errors"],
            serde_json::json!({"lost_writes": 0, "stale_reads": 0, "torn_pages": 0,
            "misplaced_pages": 0, "checksum": 0, "read_errors": 0, "write_errors": 0}),
            "{kind}"
        );
        assert!(r["shrinks"].as_u64().unwrap() >= 1, "{kind}: the file was cut and grown again: {r}");
    }
}

/// Runs the stress on `rule`'s faulting filesystem; its summary's results, the errors.jsonl
/// records and the faults made; None where FUSE is unavailable.
fn through_faultfs(
    rule: Option<(crate::faultfs::Fault, u64)>,
) -> Option<(serde_json::Value, Vec<serde_json::Value>, Vec<crate::faultfs::Injected>)> {
    let dir = disk_tempdir();
    let (backing, mnt) = (dir.path().join("backing"), dir.path().join("mnt"));
    std::fs::create_dir_all(&backing).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    // Faults start once the data file's 16 MiB fill is written.
    let fs = crate::faultfs::mount(&backing, &mnt, rule, 16 << 20)?;
    let results = dir.path().join("r");
    let out = integrity(&mnt.join("t"), &results, &["--duration", "2s", "--json"]).output().unwrap();
    let summary = crate::support::json(&out.stdout);
    let errors = std::fs::read_to_string(crate::support::only_bundle(&results).join("errors.jsonl"))
        .unwrap_or_default();
    let records = errors.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let injected = fs.log.lock().unwrap().clone();
    drop(fs);
    Some((summary["results"].clone(), records, injected))
}

#[test]
fn through_a_faulting_fuse_filesystem_every_fault_is_found_in_its_class_and_place() {
    use crate::faultfs::Fault;
    let Some((healthy, records, _)) = through_faultfs(None) else { return };
    assert_eq!(healthy["pass"], true, "no false alarm through FUSE: {healthy} {records:?}");
    let cases = [
        (Fault::DropWrite, "lost_writes"),
        (Fault::Tear(3), "torn_pages"),
        (Fault::Misdirect, "misplaced_pages"),
        (Fault::EioWrite, "write_errors"),
        (Fault::StaleRead, "stale_reads"),
    ];
    for (fault, class) in cases {
        let every = if fault == Fault::StaleRead { 5 } else { 30 };
        let (r, records, injected) = through_faultfs(Some((fault, every))).unwrap();
        assert!(!injected.is_empty(), "{fault:?} was made");
        assert_eq!(r["pass"], false, "{fault:?}: {r}");
        assert!(r["errors"][class].as_u64().unwrap() > 0, "{fault:?} reported as {class}: {}", r["errors"]);
        assert!(!records.is_empty(), "{fault:?}: errors.jsonl names them");
        for e in &records {
            let (file, offset) = (e["file"].as_u64().unwrap(), e["offset"].as_u64().unwrap());
            assert_eq!(file, 0, "{fault:?}: only the data file was faulted: {e}");
            assert!(injected.iter().any(|i| i.covers(offset)), "{fault:?}: {e} is explained by a fault made");
        }
    }
}

#[test]
fn a_block_device_needs_allow_device_holds_data_and_log_and_verifies_from_its_journal_dir() {
    let Some(dev) = LoopDev::or_skip(64) else { return };
    let results = dev.dir.path().join("r");
    let journal = dev.dir.path().join("j");
    let run = |extra: &[&str]| {
        let mut c = storbench();
        c.args(["integrity", "--target", &dev.dev, "--output-dir"]).arg(&results).args(SMALL).args(extra);
        c
    };
    refused(&mut run(&["--duration", "1s"]), "pass --allow-device");
    assert!(!results.exists(), "nothing written");
    let j = journal.to_str().unwrap();
    let out = run(&["--allow-device", "--journal-dir", j, "--duration", "2s", "--keep", "--json"])
        .assert()
        .success();
    let s = stdout_json(&out);
    assert_eq!(s["results"]["pass"], true, "{}", s["results"]);
    let pages = (24 << 20) / 8192 + (2 << 20) / 8192;
    assert_eq!(
        s["results"]["audit"]["pages_checked"], pages,
        "the data region at its largest and the log region"
    );
    let verified =
        stdout_json(&storbench().args(["integrity", "verify", "--json", "--target", j]).assert().success());
    assert_eq!(verified["pass"], true, "{verified}");
    // A device with a filesystem on it needs --force too.
    assert!(std::process::Command::new("mkfs.ext4").args(["-q", "-F", &dev.dev]).status().unwrap().success());
    let other = dev.dir.path().join("j2");
    let err = refused(&mut run(&["--allow-device", "--journal-dir", other.to_str().unwrap()]), "ext4");
    assert!(err.contains("--force"), "{err}");
}

/// The bundle under `results` once it exists, and the rows its timeseries.csv has so far.
fn rows_so_far(results: &Path) -> usize {
    let Some(Ok(bundle)) = std::fs::read_dir(results).ok().and_then(|mut d| d.next()) else { return 0 };
    std::fs::read_to_string(bundle.path().join("timeseries.csv"))
        .map_or(0, |t| t.lines().count().saturating_sub(1))
}

/// `suspect_pages.csv` of the only bundle under `results`: its rows as column name -> value.
fn suspect_rows(results: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(crate::support::only_bundle(results).join("suspect_pages.csv"))
        .expect("suspect_pages.csv in the bundle");
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().expect("a header").split(',').map(String::from).collect();
    assert_eq!(header, ["file", "page", "offset", "class", "count", "first_seen_s", "last_seen_s", "audit"]);
    lines.map(|l| header.iter().cloned().zip(l.split(',').map(String::from)).collect()).collect()
}

#[test]
fn pages_damaged_during_a_run_are_listed_once_left_as_found_and_verify_finds_them() {
    use std::process::Stdio;
    let dir = disk_tempdir();
    let (target, results) = (dir.path().join("t"), dir.path().join("r"));
    let child = std::process::Command::new(storbench().get_program())
        .args(["integrity", "--target"])
        .arg(&target)
        .arg("--output-dir")
        .arg(&results)
        .args(SMALL)
        .args(["--buffered", "--duration", "6s", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = std::time::Instant::now();
    while rows_so_far(&results) < 2 {
        assert!(began.elapsed().as_secs() < 60, "the run did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Garbage over 12 pages of the data file while the activities run, through the page cache
    // the buffered run reads: a disk or a stray writer damaging them.
    let damaged: Vec<u64> = (0..12).map(|i| 100 + i * 151).collect();
    let data = std::fs::OpenOptions::new().write(true).open(target.join("storbench-integrity.mdf")).unwrap();
    for &page in &damaged {
        data.write_all_at(&[0x5Au8; 8192], page * 8192).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let s = crate::support::json(&out.stdout);
    let r = &s["results"];
    let rows = suspect_rows(&results);
    assert!(!rows.is_empty(), "the damage was found: {r}");
    let mut pages = Vec::new();
    for row in &rows {
        let page: u64 = row["page"].parse().unwrap();
        assert!(row["file"] == "0" && damaged.contains(&page), "only damaged pages are listed: {row:?}");
        assert_eq!((&row["class"][..], &row["audit"][..]), ("checksum", "found"), "{row:?}");
        assert_eq!(row["offset"], (page * 8192).to_string());
        pages.push(page);
    }
    let occurrences: u64 = rows.iter().map(|row| row["count"].parse::<u64>().unwrap()).sum();
    assert_eq!(r["errors"]["checksum"], rows.len(), "each page once: {r}");
    assert_eq!(r["occurrences"]["checksum"], occurrences, "{r}");
    assert_eq!(r["audit_found"], rows.len(), "{r}");
    let note = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| w.contains("taken out of use"));
    let note = note.unwrap_or_else(|| panic!("the summary says what became of them: {}", s["warnings"]));
    assert!(note.contains("suspect_pages.csv") && note.contains("integrity verify --target"), "{note}");
    // The pages stayed as they were found: verify, later, names each of them.
    let verify =
        storbench().args(["integrity", "verify", "--json", "--target"]).arg(&target).assert().code(1);
    let v = stdout_json(&verify);
    assert_eq!(v["errors"]["checksum"], rows.len(), "{v}");
    let named: Vec<u64> =
        v["first_errors"].as_array().unwrap().iter().map(|e| e["page"].as_u64().unwrap()).collect();
    assert_eq!(named, pages, "{v}");
}

#[test]
fn a_journal_cut_short_is_a_damaged_journal_for_verify_and_after_a_crash_not_storage_errors() {
    let dir = disk_tempdir();
    let (target, results) = (dir.path().join("t"), dir.path().join("r"));
    integrity(&target, &results, &["--duration", "2s", "--keep"]).assert().success();
    let journal = target.join("storbench-integrity.journal");
    let whole = std::fs::read(&journal).unwrap();
    // Cut to its header, and to its header and run identity (no reservation left).
    for (cut, why) in [(8, "cut short after its header"), (32, "never reserved")] {
        std::fs::write(&journal, &whole[..cut]).unwrap();
        let mut verify = storbench();
        verify.args(["integrity", "verify", "--json", "--target"]).arg(&target);
        let err = refused(&mut verify, "is damaged");
        assert!(err.contains(why) && err.contains(&journal.display().to_string()), "{cut}: {err}");
        assert!(!err.contains("checksum"), "{cut}: no page is blamed: {err}");
    }
    // A crash whose journal lost everything after its identity: the cycle's audit says so.
    let target2 = dir.path().join("t2");
    let cut = kill_writer_then(
        &target2,
        &format!("truncate -s 32 {}", target2.join("storbench-integrity.journal").display()),
    );
    let mut crash =
        integrity(&target2, &dir.path().join("r2"), &["--crash-after", "1s", "--crash-cmd", &cut]);
    let err = refused(&mut crash, "is damaged");
    assert!(err.contains("never reserved") && err.contains("not blamed"), "{err}");
}

#[test]
fn an_interrupted_run_says_interrupted_not_fail() {
    let dir = disk_tempdir();
    let (target, results) = (dir.path().join("t"), dir.path().join("r"));
    let mut args = vec!["integrity", "--target", target.to_str().unwrap(), "--duration", "60s"];
    args.extend(SMALL);
    let s = crate::support::interrupt_when(&args, &results, &|| rows_so_far(&results) >= 2);
    let r = &s["results"];
    assert_eq!((&r["interrupted"], &r["pass"]), (&serde_json::json!(true), &serde_json::json!(false)), "{r}");
    let log = std::fs::read_to_string(crate::support::only_bundle(&results).join("output.log")).unwrap();
    // The result table, as the terminal shows it, is in the run's log.
    let row = log.lines().skip_while(|l| !l.contains("total I/O time")).find(|l| l.contains("interrupted"));
    assert!(row.is_some(), "{log}");
    assert!(!log.contains("FAIL"), "{log}");
}

#[test]
fn storage_that_fails_every_request_ends_the_run_as_failed_after_the_stated_limit() {
    use crate::faultfs::Fault;
    let dir = disk_tempdir();
    let (backing, mnt) = (dir.path().join("backing"), dir.path().join("mnt"));
    std::fs::create_dir_all(&backing).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    // Every read and write of the data file fails once its 16 MiB fill is written.
    let Some(fs) = crate::faultfs::mount(&backing, &mnt, Some((Fault::EioAll, 1)), 16 << 20) else { return };
    let results = dir.path().join("r");
    let began = std::time::Instant::now();
    let out =
        integrity(&mnt.join("t"), &results, &["--duration", "60s", "--delay-threshold", "2s", "--json"])
            .assert()
            .code(1);
    assert!(began.elapsed().as_secs() < 40, "ended at the limit, not the duration: {:?}", began.elapsed());
    let s = stdout_json(&out);
    assert_eq!(
        (&s["complete"], &s["results"]["pass"]),
        (&serde_json::json!(false), &serde_json::json!(false))
    );
    let warnings: Vec<&str> = s["warnings"].as_array().unwrap().iter().filter_map(|w| w.as_str()).collect();
    let why = warnings.iter().find(|w| w.starts_with("nothing completed for"));
    let why = why.unwrap_or_else(|| panic!("the reason is given: {warnings:?}"));
    assert!(why.contains("the limit is 5 s") && why.contains("every I/O failed (read_errors"), "{why}");
    assert!(s["phases"]["measured_s"].as_f64().unwrap() < 10.0, "{}", s["phases"]);
    assert!(!fs.log.lock().unwrap().is_empty());
    drop(fs);
}
