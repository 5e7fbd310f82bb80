//! `storbench mailbox`: Jetstress-like tests on a tiny database (50 mailboxes of 1 MB, 8 KiB
//! pages, a 1 MB cache) on the real disk: the bundle and its figures, pass and fail, kept
//! databases (reuse, verification, refusal of another shape), bad input, Ctrl-C.

use crate::support::{
    bundle_summary, disk_tempdir, interrupt_when, measuring, only_bundle, refused, stderr_text, stdout_json,
    storbench,
};
use assert_cmd::Command;
use std::path::Path;

/// The tiny test: one database of 6400 pages of 8 KiB, 2 s measured after at most 1 s of warm-up.
const TINY: [&str; 16] = [
    "--preset",
    "2007",
    "--mailboxes",
    "50",
    "--mailbox-size",
    "1MB",
    "--threads",
    "4",
    "--cache-size",
    "1MB",
    "--duration",
    "2s",
    "--max-warmup",
    "1s",
    "--seed",
    "7",
];

/// Limits any disk meets, so that a run passes on a busy machine (a 1 MB cache stalls often).
const GENEROUS: [(&str, &str); 5] = [
    ("--db-read-avg-ms", "1000"),
    ("--db-read-max-ms", "5000"),
    ("--log-write-avg-ms", "1000"),
    ("--log-write-max-ms", "5000"),
    ("--page-fault-stalls", "1000000"),
];

const PAGE: u64 = 8192;
const PAGES: u64 = 50 * (1 << 20) / PAGE;

/// The tiny test's options with `changes` replacing an option's value or added.
pub(crate) fn tiny(changes: &[(&'static str, &'static str)]) -> Vec<&'static str> {
    let mut args = TINY.to_vec();
    for &(opt, value) in changes {
        match args.iter().position(|a| *a == opt) {
            Some(i) => args[i + 1] = value,
            None => args.extend([opt, value]),
        }
    }
    args
}

/// The tiny test with the generous limits, then `changes`.
pub(crate) fn generous(changes: &[(&'static str, &'static str)]) -> Vec<&'static str> {
    tiny(&[&GENEROUS[..], changes].concat())
}

/// `storbench mailbox --target DIR/db --output-dir DIR/results ARGS`.
pub(crate) fn mailbox(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = storbench();
    cmd.arg("mailbox")
        .arg("--target")
        .arg(dir.join("db"))
        .arg("--output-dir")
        .arg(dir.join("results"))
        .args(args);
    cmd
}

/// `storbench mailbox verify --target DIR/db --json`.
fn verify(dir: &Path) -> Command {
    let mut cmd = storbench();
    cmd.args(["mailbox", "verify", "--json", "--target"]).arg(dir.join("db"));
    cmd
}

fn f64_of(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn a_short_2007_run_passes_fills_the_bundle_and_removes_its_databases() {
    let dir = disk_tempdir();
    let began = std::time::Instant::now();
    let a = mailbox(dir.path(), &generous(&[])).arg("--json").assert().code(0);
    // Creation, 1 s of warm-up, 2 s measured, the shutdown and the verification.
    assert!(began.elapsed().as_secs() < 30, "a 2 s test took {:?}", began.elapsed());
    let s = stdout_json(&a);
    assert_eq!(s, bundle_summary(&dir.path().join("results")), "stdout is the bundle's summary.json");
    assert_eq!(s["workload"], "mailbox");
    assert_eq!(s["complete"], true);
    let r = &s["results"];
    assert_eq!(r["pass"], true, "{r}");
    assert_eq!(r["checksum_ok"], true, "{r}");
    assert!(r["checks"].as_array().unwrap().iter().all(|c| c["pass"] == true), "{}", r["checks"]);
    assert_eq!(
        (r["preset"].as_str(), r["threads"].as_u64(), r["mailboxes"].as_u64()),
        (Some("2007"), Some(4), Some(50))
    );
    assert_eq!(r["mix"], serde_json::json!({"insert": 40, "delete": 30, "replace": 5, "read": 25}));

    let (reads, writes, logs) =
        (f64_of(&r["db_reads_per_sec"]), f64_of(&r["db_writes_per_sec"]), f64_of(&r["log_writes_per_sec"]));
    assert!(reads > 0.0 && writes > 0.0 && logs > 0.0, "{r}");
    let transactional = f64_of(&r["transactional_iops"]);
    assert!(close(transactional, reads + writes), "{r}");
    assert!(close(f64_of(&r["total_iops"]), transactional + logs), "{r}");
    assert!(f64_of(&r["db_read_avg_ms"]) > 0.0 && f64_of(&r["log_write_avg_ms"]) > 0.0, "{r}");
    // Log writes are whole sectors: the average is at least one, and the bytes written add
    // up to whole sectors.
    let log = &r["databases"][0]["log_writes"];
    let per_write = f64_of(&r["log_bytes_per_write"]);
    assert!(per_write >= 512.0, "{r}");
    let sectors = log["ios"].as_u64().unwrap() as f64 * per_write / 512.0;
    assert!((sectors - sectors.round()).abs() < 1e-3, "{sectors} sectors: {log}");

    // Every page is verified, the appended ones too; the database grew from its 50 MiB.
    let (initial, last) =
        (r["initial_db_size_bytes"].as_u64().unwrap(), r["final_db_size_bytes"].as_u64().unwrap());
    assert_eq!(initial, PAGES * PAGE);
    assert!(last > initial, "inserts append pages: {last}");
    assert_eq!(r["pages_verified"].as_u64(), Some(last / PAGE));
    assert_eq!(r["databases"][0]["database"], 1);

    let bundle = only_bundle(&dir.path().join("results"));
    let csv = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "transactional_iops").expect("transactional_iops column");
    let measured: Vec<f64> = csv
        .lines()
        .filter(|l| l.contains(",measure,"))
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    assert!(measured.len() >= 2 && measured.iter().all(|&x| x > 0.0), "{csv}");
    let hlog = std::fs::read_to_string(bundle.join("latency.hlog")).unwrap();
    for tag in ["db_read", "db_write", "log_write"] {
        assert!(hlog.contains(&format!("Tag={tag}-total,")), "latency.hlog lacks {tag}");
    }

    let db = dir.path().join("db");
    for gone in [db.join("mailbox1.edb"), db.join("log1"), db.join("storbench-mailbox.json"), db.clone()] {
        assert!(!gone.exists(), "{} left behind without --keep", gone.display());
    }
}

#[test]
fn a_directory_the_user_made_stays_when_the_databases_go() {
    let dir = disk_tempdir();
    let mine = dir.path().join("db");
    std::fs::create_dir(&mine).unwrap();
    mailbox(dir.path(), &generous(&[])).assert().code(0);
    assert!(mine.is_dir(), "the user's directory was removed");
    assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 0, "the databases are gone");
}

#[test]
fn a_latency_over_its_limit_fails_the_run_with_exit_1_and_names_the_check() {
    let dir = disk_tempdir();
    let a = mailbox(dir.path(), &generous(&[("--db-read-avg-ms", "0")])).assert().code(1);
    let table = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(table.contains("FAIL") && table.contains("db_read_avg_ms"), "{table}");
    // 2 s measured are one 15 s sample window: no maximum over windows, and the table says so.
    assert!(table.contains("— (1 window)"), "{table}");
    assert!(table.contains("2 s measured hold one sample window of 15 s, so there is no maximum"), "{table}");
    let s = bundle_summary(&dir.path().join("results"));
    assert_eq!(s["complete"], true);
    let r = &s["results"];
    assert_eq!(r["pass"], false);
    assert_eq!(r["checksum_ok"], true, "a slow read is not a corruption");
    let failed: Vec<&str> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["pass"] == false)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["db_read_avg_ms"], "{}", r["checks"]);
    // The report's status names the check, with what was measured and its limit.
    let bundle = crate::support::only_bundle(&dir.path().join("results"));
    crate::support::storbench().arg("report").arg(&bundle).assert().success();
    let md = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(md.contains("check failed: db_read_avg_ms (database 1): ") && md.contains("(at most 0)"), "{md}");
}

#[test]
fn kept_databases_are_reused_verified_and_not_replaced_by_another_shape() {
    let dir = disk_tempdir();
    let db = dir.path().join("db");
    let edb = db.join("mailbox1.edb");
    let first = mailbox(dir.path(), &generous(&[("--duration", "1s")])).arg("--keep").assert().code(0);
    assert!(stderr_text(&first).contains("databases kept"), "{}", stderr_text(&first));
    assert!(edb.exists() && db.join("storbench-mailbox.json").exists());

    let clean = verify(dir.path()).assert().code(0);
    let v = stdout_json(&clean);
    assert_eq!((v["ok"].as_bool(), v["corruptions"].as_u64()), (Some(true), Some(0)), "{v}");
    let len = std::fs::metadata(&edb).unwrap().len();
    assert_eq!(v["pages_checked"].as_u64(), Some(len / PAGE), "{v}");
    assert!(v["log_blocks_checked"].as_u64().unwrap() > 0, "{v}");

    let again = mailbox(dir.path(), &generous(&[("--duration", "1s")])).arg("--no-verify").assert().code(0);
    let err = stderr_text(&again);
    assert!(err.contains("reusing 1 database(s)") && !err.contains("created"), "{err}");
    assert!(edb.exists(), "databases a run reused stay");

    let before =
        (std::fs::metadata(&edb).unwrap().len(), std::fs::metadata(&edb).unwrap().modified().unwrap());
    let bundles = std::fs::read_dir(dir.path().join("results")).unwrap().count();
    refused(
        &mut mailbox(dir.path(), &generous(&[("--mailboxes", "100")])),
        "give the options they were created with",
    );
    let after =
        (std::fs::metadata(&edb).unwrap().len(), std::fs::metadata(&edb).unwrap().modified().unwrap());
    assert_eq!(after, before, "mailbox1.edb untouched");
    assert_eq!(std::fs::read_dir(dir.path().join("results")).unwrap().count(), bundles, "no bundle written");
    // The same shape with its logs asked for elsewhere: the kept logs are not silently used.
    let elsewhere = dir.path().join("logs");
    let err = refused(
        mailbox(dir.path(), &generous(&[("--duration", "1s")])).arg("--log-target").arg(&elsewhere),
        "keep their logs in",
    );
    assert!(err.contains(&format!("--log-target {}", db.display())), "{err}");
    assert!(!elsewhere.exists());

    // One byte changed in a page in the middle of the database.
    let page = after.0 / PAGE / 2 * PAGE;
    let f = std::fs::OpenOptions::new().read(true).write(true).open(&edb).unwrap();
    let mut byte = [0u8];
    std::os::unix::fs::FileExt::read_exact_at(&f, &mut byte, page + 100).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &[byte[0] ^ 0xFF], page + 100).unwrap();
    drop(f);
    let bad = verify(dir.path()).assert().code(1);
    let v = stdout_json(&bad);
    assert_eq!((v["ok"].as_bool(), v["corruptions"].as_u64()), (Some(false), Some(1)), "{v}");
    assert_eq!(v["first"][0]["file"].as_str(), edb.to_str(), "{v}");
    assert_eq!(v["first"][0]["offset"].as_u64(), Some(page), "{v}");
    let text = storbench().args(["mailbox", "verify", "--target"]).arg(&db).assert().code(1);
    assert!(
        stderr_text(&text).contains(&format!("{} at offset {page}", edb.display())),
        "{}",
        stderr_text(&text)
    );
}

#[test]
fn a_database_cut_short_fails_verification_where_it_ends() {
    let dir = disk_tempdir();
    mailbox(dir.path(), &generous(&[("--duration", "1s")])).args(["--keep", "--no-verify"]).assert().code(0);
    let edb = dir.path().join("db/mailbox1.edb");
    let len = std::fs::metadata(&edb).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&edb).unwrap().set_len(len - 10 * PAGE).unwrap();
    let v = stdout_json(&verify(dir.path()).assert().code(1));
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["first"][0]["offset"].as_u64(), Some(len - 10 * PAGE), "{v}");
}

#[test]
fn bad_input_is_refused_with_exit_2_before_anything_is_created() {
    let dir = disk_tempdir();
    for (changes, needle) in [
        (&[("--preset", "2012")][..], "--preset 2012: unknown Jetstress generation; use 2007, 2010 or 2013"),
        (&[("--threads", "0")], "--threads 0: at least one thread"),
        (&[("--mix", "40/20/5/30")], "--mix 40/20/5/30: the shares add up to 95, not 100"),
        (
            &[("--mailboxes", "1000000"), ("--mailbox-size", "1GB")],
            "give fewer --mailboxes, a smaller --mailbox-size",
        ),
        (&[("--engine", "null")], "--engine null: the mailbox workload needs real files"),
    ] {
        let err = refused(&mut mailbox(dir.path(), &tiny(changes)), needle);
        assert!(err.starts_with("error: "), "{err}");
        assert!(!dir.path().join("db").exists(), "{changes:?} created the target");
        assert!(!dir.path().join("results").exists(), "{changes:?} wrote results");
    }
}

#[test]
fn a_database_file_storbench_did_not_create_is_left_alone() {
    let dir = disk_tempdir();
    let db = dir.path().join("db");
    std::fs::create_dir(&db).unwrap();
    std::fs::write(db.join("mailbox1.edb"), vec![7u8; 1 << 20]).unwrap();
    refused(&mut mailbox(dir.path(), &tiny(&[])), "will not overwrite it");
    assert!(std::fs::read(db.join("mailbox1.edb")).unwrap().iter().all(|&b| b == 7), "contents untouched");
    let left: Vec<_> = std::fs::read_dir(&db).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["mailbox1.edb"], "nothing added next to it");
    assert!(!dir.path().join("results").exists());
}

#[test]
fn verify_without_databases_is_refused() {
    let dir = disk_tempdir();
    refused(&mut verify(dir.path()), "holds no storbench mailbox databases");
}

#[test]
fn an_interrupted_mailbox_run_stops_at_once_and_keeps_an_incomplete_bundle() {
    let dir = disk_tempdir();
    let db = dir.path().join("db");
    let results = dir.path().join("results");
    let mut args = vec!["mailbox", "--target", db.to_str().unwrap()];
    args.extend(generous(&[("--duration", "60s")]));
    // Interrupted once the measured phase has a row.
    let s = interrupt_when(&args, &results, &|| measuring(&results) > 0);
    let r = &s["results"];
    assert!(f64_of(&r["transactional_iops"]) > 0.0, "{r}");
    assert!(f64_of(&s["phases"]["measured_s"]) > 0.0, "{}", s["phases"]);
    assert!(r["checksum_ok"].is_null(), "an interrupted run is not verified: {r}");
    assert!(!db.join("mailbox1.edb").exists(), "an interrupted run removes the databases it created");
}

/// `args` followed by `flags` (options without a value).
fn and(mut args: Vec<&'static str>, flags: &[&'static str]) -> Vec<&'static str> {
    args.extend_from_slice(flags);
    args
}

#[test]
fn backup_and_soft_recovery_report_their_figures_on_kept_databases() {
    let dir = disk_tempdir();
    mailbox(dir.path(), &and(generous(&[]), &["--keep"])).assert().code(0);
    let b =
        stdout_json(&mailbox(dir.path(), &and(tiny(&[("--test", "backup")]), &["--json"])).assert().code(0));
    let r = &b["results"];
    let head = |r: &serde_json::Value| {
        (r["test"].as_str().map(String::from), r["pass"].as_bool(), r["checksum_ok"].as_bool())
    };
    assert_eq!(head(r), (Some("backup".into()), Some(true), Some(true)));
    assert!(r["pages_verified"].as_u64().unwrap() >= PAGES, "{r}");
    assert!(f64_of(&r["backup_total_mb_per_sec"]) > 0.0 && f64_of(&r["backup_mb_per_sec"][0]) > 0.0);
    let recovery = generous(&[("--test", "soft-recovery"), ("--log-files", "3")]);
    let s = stdout_json(&mailbox(dir.path(), &and(recovery, &["--json"])).assert().code(0));
    let r = &s["results"];
    assert_eq!(head(r), (Some("soft_recovery".into()), Some(true), Some(true)));
    assert!(r["logs_replayed"].as_u64().unwrap() >= 3, "{r}");
    assert!(f64_of(&r["seconds_per_log"]) > 0.0);
    assert!(r["checks"].as_array().unwrap().is_empty(), "the generation phase is not judged");
    // The databases stay (they were kept before) and verify clean after the replay.
    assert_eq!(stdout_json(&verify(dir.path()).assert().code(0))["ok"], true);
}

#[test]
fn tuning_that_cannot_pass_with_one_thread_and_fifty_mailboxes_says_so() {
    let dir = disk_tempdir();
    let args = tiny(&[("--threads", "2"), ("--db-read-avg-ms", "0"), ("--trial-duration", "1s")]);
    let a = mailbox(dir.path(), &and(args, &["--tune"])).assert().code(2);
    let err = stderr_text(&a);
    assert!(err.contains("trial: 2 threads, 50 mailboxes: fail"), "{err}");
    assert!(err.contains("trial: 1 threads, 50 mailboxes: fail"), "{err}");
    assert!(err.contains("even one thread fails the thresholds with 50 mailboxes"), "{err}");
    assert!(!dir.path().join("db").join("mailbox1.edb").exists(), "the tuning databases are removed");
}

#[test]
fn a_dangling_link_in_the_databases_place_is_refused_and_left() {
    let dir = disk_tempdir();
    let db = dir.path().join("db");
    std::fs::create_dir_all(&db).unwrap();
    let link = db.join("mailbox1.edb");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
    refused(&mut mailbox(dir.path(), &generous(&[])), "storbench did not create it");
    assert!(link.symlink_metadata().is_ok(), "the link is still there");
}

/// The data rows of `timeseries.csv` in the only bundle under `results` (none before it has any).
fn series_rows(results: &Path) -> Vec<String> {
    let bundles = std::fs::read_dir(results).into_iter().flatten().flatten();
    let csv = bundles.filter_map(|b| std::fs::read_to_string(b.path().join("timeseries.csv")).ok()).next();
    csv.map_or_else(Vec::new, |csv| csv.lines().skip(1).map(String::from).collect())
}

/// A filesystem over `dir/backing` mounted at `dir/mnt` whose reads go at 5 MB/s, so that
/// the tiny test's backup (it creates its 50 MiB database first) takes about ten seconds;
/// None where FUSE is not available (the test is skipped).
fn slow_disk(dir: &Path) -> Option<(crate::faultfs::Mounted, std::path::PathBuf)> {
    let (backing, mnt) = (dir.join("backing"), dir.join("mnt"));
    std::fs::create_dir_all(&backing).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let fs = crate::faultfs::mount(&backing, &mnt, None, 0)?;
    fs.slow_reads(5_000_000);
    Some((fs, mnt.join("db")))
}

/// `storbench ARGS --output-dir RESULTS` started with its output dropped, to kill as it runs.
fn spawn_quiet(args: &[&str], results: &Path) -> std::process::Child {
    use std::process::Stdio;
    let mut cmd = std::process::Command::new(storbench().get_program());
    cmd.args(args).arg("--output-dir").arg(results).stdout(Stdio::null()).stderr(Stdio::null());
    cmd.spawn().unwrap()
}

#[test]
fn a_backup_killed_midway_keeps_its_seconds_in_its_bundle() {
    use storbench_bench::testing::wait_until;
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let Some((fs, target)) = slow_disk(dir.path()) else { return };
    let mut args = vec!["mailbox", "--target", target.to_str().unwrap()];
    args.extend(tiny(&[("--test", "backup")]));
    let mut child = spawn_quiet(&args, &results);
    wait_until("two seconds of backup in timeseries.csv", std::time::Duration::from_secs(120), || {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the backup ended ({status}) before it was killed");
        }
        series_rows(&results).len() >= 2
    });
    let seen = series_rows(&results);
    child.kill().unwrap();
    child.wait().unwrap();
    drop(fs);

    let bundle = only_bundle(&results);
    let csv = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let kept: Vec<&str> = csv.lines().skip(1).collect();
    assert!(kept.len() >= seen.len() && kept[..seen.len()] == seen[..], "rows lost: {seen:?} then {csv}");
    let col = header.iter().position(|c| *c == "backup_mb_per_sec").expect("backup_mb_per_sec column");
    assert!(header.contains(&"db1_mb_per_sec"), "{csv}");
    let read: f64 = seen.iter().map(|l| l.split(',').nth(col).unwrap().parse::<f64>().unwrap()).sum();
    assert!(read > 0.0, "the backup's seconds read nothing: {csv}");
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("summary.json")).unwrap()).expect("summary.json");
    assert_eq!(
        (s["complete"].as_bool(), s["results"]["test"].as_str()),
        (Some(false), Some("backup")),
        "{s}"
    );
    // The record holds each of those seconds, and no end.
    let record = std::fs::read_to_string(bundle.join("record.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = record.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let seconds = lines.iter().filter(|l| l["interval"]["stream"] == "backup").count();
    assert!(seconds >= seen.len(), "{} rows, {seconds} backup intervals: {record}", seen.len());
    assert!(lines.iter().all(|l| l.get("end").is_none()), "{record}");
}

#[test]
fn an_interrupted_backup_fails_incomplete_with_what_it_read_and_its_record_rebuilds_it() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let Some((fs, target)) = slow_disk(dir.path()) else { return };
    let mut args = vec!["mailbox", "--target", target.to_str().unwrap()];
    args.extend(tiny(&[("--test", "backup")]));
    let s = interrupt_when(&args, &results, &|| !series_rows(&results).is_empty());
    drop(fs);
    let r = &s["results"];
    assert_eq!((r["pass"].as_bool(), r["checksum_ok"].as_bool()), (Some(false), Some(false)), "{r}");
    let pages = r["pages_verified"].as_u64().unwrap();
    assert!(pages > 0 && pages < PAGES, "{pages} of {PAGES} pages read before the interrupt");
    assert!(f64_of(&r["backup_total_mb_per_sec"]) > 0.0 && f64_of(&s["phases"]["measured_s"]) >= 1.0, "{s}");
    let bundle = only_bundle(&results);
    let ok = storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(0);
    assert!(stderr_text(&ok).contains("field for field"), "{}", stderr_text(&ok));
}

/// The intervals of `stream` in the record of the only bundle under `results` (none before
/// there is one), each as its JSON object.
fn record_intervals(results: &Path, stream: &str) -> Vec<serde_json::Value> {
    let bundles = std::fs::read_dir(results).into_iter().flatten().flatten();
    let record = bundles.filter_map(|b| std::fs::read_to_string(b.path().join("record.jsonl")).ok()).next();
    let lines = record.iter().flat_map(|r| r.lines());
    let parsed = lines.filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok());
    parsed.filter_map(|l| l.get("interval").cloned()).filter(|i| i["stream"] == stream).collect()
}

/// The soft recovery test on `target`, the slow disk of `slow_disk` (the generation's reads
/// go at its rate too): three log files, whose replay reads some 20 MB at 5 MB/s.
fn slow_soft_recovery(target: &Path) -> Vec<&str> {
    let mut args = vec!["mailbox", "--target", target.to_str().unwrap()];
    args.extend(tiny(&[("--test", "soft-recovery"), ("--log-files", "3")]));
    args
}

/// Each line of the record in `bundle`.
fn record_lines(bundle: &Path) -> Vec<serde_json::Value> {
    let record = std::fs::read_to_string(bundle.join("record.jsonl")).unwrap();
    record.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The record's intervals in `bundle` lie in file order, each one starting where the one
/// before it ended or later, and the replay's (`recovery`) follow the generation's
/// (`mailbox`), starting where they ended.
fn the_replay_follows_the_generation_on_the_timeline(bundle: &Path) {
    let intervals: Vec<serde_json::Value> =
        record_lines(bundle).into_iter().filter_map(|l| l.get("interval").cloned()).collect();
    let ns = |i: &serde_json::Value, at: &str| i[at].as_u64().unwrap();
    for pair in intervals.windows(2) {
        assert!(ns(&pair[1], "start_ns") >= ns(&pair[0], "end_ns"), "out of order: {pair:?}");
    }
    let first_replay = intervals.iter().position(|i| i["stream"] == "recovery").expect("a replay interval");
    assert!(first_replay > 0 && intervals[first_replay - 1]["stream"] == "mailbox", "{intervals:?}");
    assert!(intervals[first_replay..].iter().all(|i| i["stream"] == "recovery"), "{intervals:?}");
    assert_eq!(ns(&intervals[first_replay], "start_ns"), ns(&intervals[first_replay - 1], "end_ns"));
}

#[test]
fn a_soft_recovery_killed_during_its_replay_keeps_the_replays_seconds_in_its_record() {
    use storbench_bench::testing::wait_until;
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let Some((fs, target)) = slow_disk(dir.path()) else { return };
    let mut child = spawn_quiet(&slow_soft_recovery(&target), &results);
    wait_until("a second of replay in record.jsonl", std::time::Duration::from_secs(180), || {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the soft recovery ended ({status}) before it was killed");
        }
        !record_intervals(&results, "recovery").is_empty()
    });
    let seen = record_intervals(&results, "recovery");
    child.kill().unwrap();
    child.wait().unwrap();
    drop(fs);

    let kept = record_intervals(&results, "recovery");
    assert!(
        kept.len() >= seen.len() && kept[..seen.len()] == seen[..],
        "seconds lost: {seen:?} then {kept:?}"
    );
    let replayed: u64 = kept.iter().map(|i| i["counts"]["p0.pages_read"].as_u64().unwrap_or(0)).sum();
    assert!(replayed > 0, "the replay's seconds read nothing: {kept:?}");
    let bundle = only_bundle(&results);
    the_replay_follows_the_generation_on_the_timeline(&bundle);
    assert!(record_lines(&bundle).iter().all(|l| l.get("end").is_none()), "a killed run's record has no end");
    // The series keeps one header: every row, the replay's too, has its cells.
    let csv = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    let cells = |l: &str| l.split(',').count();
    let header = csv.lines().next().unwrap();
    assert!(csv.lines().all(|l| cells(l) == cells(header)), "{csv}");
    let rows = csv.lines().count() - 1;
    assert!(rows >= record_intervals(&results, "mailbox").len() + seen.len(), "{csv}");
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("summary.json")).unwrap()).expect("summary.json");
    assert_eq!(
        (s["complete"].as_bool(), s["results"]["test"].as_str()),
        (Some(false), Some("soft_recovery"))
    );
}

#[test]
fn an_interrupted_soft_recovery_fails_incomplete_and_its_record_rebuilds_it() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let Some((fs, target)) = slow_disk(dir.path()) else { return };
    let args = slow_soft_recovery(&target);
    let s = interrupt_when(&args, &results, &|| !record_intervals(&results, "recovery").is_empty());
    drop(fs);
    let r = &s["results"];
    assert_eq!((r["test"].as_str(), r["pass"].as_bool()), (Some("soft_recovery"), Some(false)), "{r}");
    assert!(r["logs_replayed"].as_u64().is_some_and(|n| n < 3), "{r}");
    assert!(r["checksum_ok"].is_null(), "an interrupted replay is not verified: {r}");
    let bundle = only_bundle(&results);
    the_replay_follows_the_generation_on_the_timeline(&bundle);
    // The replay's time is its database's, inside the seconds the record holds of it.
    let replay = record_intervals(&results, "recovery");
    let ns = |i: &serde_json::Value, at: &str| i[at].as_u64().unwrap() as f64 / 1e9;
    let span = ns(replay.last().unwrap(), "end_ns") - ns(&replay[0], "start_ns");
    let measured = f64_of(&s["phases"]["measured_s"]);
    assert!(measured > 0.0 && measured <= span, "{measured} s of {span} s: {s}");
    let ok = storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(0);
    assert!(stderr_text(&ok).contains("field for field"), "{}", stderr_text(&ok));
}
