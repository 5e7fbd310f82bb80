//! `storbench summarize BUNDLE --check`: for every workload a run's bundle rebuilds its
//! summary.json from the record alone, field for field, and a record edited by hand is caught
//! (exit 1, naming the field); an unreadable bundle is refused (exit 2).

use crate::support::{disk_tempdir, only_bundle, stderr_text, storbench};
use std::path::Path;

/// `summarize --check` passes on the run's bundle in `results`, and fails naming a field once
/// `count` of `stream`'s first measured interval (of the stream's part `p0.` where the run has
/// parts) is raised by one.
pub(crate) fn rebuilds_and_catches_an_edit(results: &Path, stream: &str, count: &str) {
    let bundle = rebuilds_field_for_field(results);
    let rebuilt = storbench().args(["summarize", "--json"]).arg(&bundle).assert().code(0);
    let rebuilt: serde_json::Value = serde_json::from_slice(&rebuilt.get_output().stdout).unwrap();
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("summary.json")).unwrap()).unwrap();
    assert_eq!(rebuilt, stored);
    raise_first_measured(&bundle.join("record.jsonl"), stream, count);
    let caught = storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(1);
    let said = stderr_text(&caught);
    assert!(said.contains(" differs: summary.json has "), "{said}");
}

/// `summarize --check` of the only bundle under `results` agrees with its summary.json; the
/// bundle.
pub(crate) fn rebuilds_field_for_field(results: &Path) -> std::path::PathBuf {
    let bundle = only_bundle(results);
    let ok = storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(0);
    assert!(stderr_text(&ok).contains("field for field"), "{}", stderr_text(&ok));
    bundle
}

/// Adds one to `count` in `stream`'s first measured interval in the record that has it.
fn raise_first_measured(record: &Path, stream: &str, count: &str) {
    let text = std::fs::read_to_string(record).unwrap();
    let mut done = false;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let ours = |i: &&mut serde_json::Value| !done && i["phase"] == "measure" && i["stream"] == stream;
            if let Some(i) = v.get_mut("interval").filter(ours)
                && let Some(n) = i["counts"].get_mut(count)
            {
                *n = (n.as_u64().unwrap() + 1).into();
                done = true;
            }
            v.to_string()
        })
        .collect();
    assert!(done, "no measured interval counts {count}: {text}");
    std::fs::write(record, lines.join("\n") + "\n").unwrap();
}

#[test]
fn an_io_bundle_rebuilds_its_summary_and_an_edited_count_is_caught() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    storbench()
        .args(["io", "--engine", "null", "--ramp", "1s", "--runtime", "2s", "--output-dir"])
        .arg(&results)
        .assert()
        .success();
    rebuilds_and_catches_an_edit(&results, "io", "read.ios");
}

#[test]
fn a_steady_state_io_bundle_rebuilds_the_figures_of_its_window() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    storbench()
        .args(["io", "--engine", "null", "--rate-iops", "1000", "--ramp", "0", "--steady-state", "1s"])
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success();
    rebuilds_field_for_field(&results);
}

#[test]
fn an_oltp_sqlite_bundle_rebuilds_its_summary_and_an_edited_count_is_caught() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let timing = ["--warmup-time", "1s", "--run-time", "2s", "--n-threads", "2"];
    crate::support::sqlite_oltp_run(dir.path(), &results, &timing);
    rebuilds_and_catches_an_edit(&results, "oltp", "p0.login.calls");
}

#[test]
fn a_mailbox_bundle_rebuilds_its_summary_and_an_edited_count_is_caught() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let mut args = crate::mailbox::tiny(&[("--duration", "1s")]);
    args.extend(["--db-read-avg-ms", "1000", "--db-read-max-ms", "5000", "--log-write-avg-ms", "1000"]);
    args.extend(["--log-write-max-ms", "5000", "--page-fault-stalls", "1000000"]);
    crate::mailbox::mailbox(dir.path(), &args).assert().success();
    rebuilds_and_catches_an_edit(&results, "mailbox", "p0.log_writes.ios");
}

#[test]
fn a_mailbox_backup_bundle_rebuilds_its_summary_and_an_edited_count_is_caught() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    crate::mailbox::mailbox(dir.path(), &crate::mailbox::tiny(&[("--test", "backup")])).assert().success();
    rebuilds_and_catches_an_edit(&results, "backup", "p0.bytes");
}

#[test]
fn a_mailbox_soft_recovery_bundle_rebuilds_its_summary_and_an_edited_count_is_caught() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let args = crate::mailbox::tiny(&[("--test", "soft-recovery"), ("--log-files", "2")]);
    crate::mailbox::mailbox(dir.path(), &args).assert().success();
    rebuilds_and_catches_an_edit(&results, "recovery", "p0.logs");
}

#[test]
fn an_integrity_bundle_rebuilds_its_summary_and_an_edited_count_is_caught() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    storbench()
        .args(["integrity", "--target"])
        .arg(dir.path().join("t"))
        .arg("--output-dir")
        .arg(&results)
        .args(crate::integrity::SMALL)
        .args(["--duration", "2s"])
        .assert()
        .success();
    rebuilds_and_catches_an_edit(&results, "integrity", "log_writer.writes.ios");
}

#[test]
fn a_bundle_without_a_record_is_refused_with_the_reason() {
    let dir = disk_tempdir();
    let a = storbench().args(["summarize", "--check"]).arg(dir.path()).assert().code(2);
    assert!(stderr_text(&a).contains("record.jsonl"), "{}", stderr_text(&a));
    std::fs::write(dir.path().join("record.jsonl"), "{\"start\": 1}\n").unwrap();
    std::fs::write(dir.path().join("latency.hlog"), "").unwrap();
    let a = storbench().args(["summarize"]).arg(dir.path()).assert().code(2);
    assert!(stderr_text(&a).contains("record.jsonl line 1"), "{}", stderr_text(&a));
}

#[test]
fn a_report_over_a_window_rebuilds_the_run_there_and_refuses_an_empty_one() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    storbench()
        .args(["io", "--engine", "null", "--ramp", "1s", "--runtime", "3s", "--output-dir"])
        .arg(&results)
        .assert()
        .success();
    let bundle = only_bundle(&results);
    let out = dir.path().join("report");
    storbench().arg("report").arg(&bundle).args(["--window", "2s..4s", "--out"]).arg(&out).assert().code(0);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("IOPS"), "{md}");
    // The page says the window it stands on, and where its seconds count from.
    let said =
        "Every figure stands on seconds 2.00–4.00 of each run, counted from its start (its warm-up included)";
    assert!(md.contains(said), "{md}");
    // decide takes the same window, and says it first.
    let a = storbench().arg("decide").arg(&bundle).args(["--window", "2s..4s", "--json"]).assert().success();
    let d = crate::support::stdout_json(&a);
    assert!(d["window"].as_str().is_some_and(|w| w.starts_with(said)), "{d}");
    assert!(d["why"].as_str().is_some_and(|w| w.starts_with(said)), "{d}");
    let a = storbench().arg("report").arg(&bundle).args(["--window", "30s..40s", "--out"]).arg(&out).assert();
    let said = stderr_text(&a.code(2));
    assert!(said.contains("holds no whole measured interval"), "{said}");
    let a = storbench().arg("report").arg(&bundle).args(["--window", "4s..2s"]).assert().code(2);
    assert!(stderr_text(&a).contains("ends before it starts"), "{}", stderr_text(&a));
}

#[test]
fn a_bundle_with_a_background_stream_rebuilds_its_figures_and_an_edited_count_of_it_is_caught() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    storbench()
        .args(["io", "--engine", "null", "--ramp", "1s", "--runtime", "2s", "--background", "io:rate=8MiB"])
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success();
    rebuilds_and_catches_an_edit(&results, "bg1", "write.ios");
}

#[test]
fn a_mailbox_bundle_under_a_target_has_its_schedule_lag_and_rebuilds_it() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let args = crate::mailbox::generous(&[("--iops-per-mailbox", "2")]);
    // A busy machine may miss the target (exit 1): the lag is there either way.
    let code = crate::mailbox::mailbox(dir.path(), &args).output().unwrap().status.code();
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    let lag = &crate::support::bundle_summary(&results)["results"]["schedule_lag_ms"];
    let at = |q: &str| lag[q].as_f64().unwrap_or_else(|| panic!("no {q}: {lag}"));
    assert!(0.0 <= at("p50") && at("p50") <= at("p99") && at("p99") <= at("max"), "{lag}");
    assert!(at("max") <= 1001.0, "the pacer never catches up more than 1 s: {lag}");
    let paced = crate::io_runs::series_column(&only_bundle(&results), "schedule_lag_p99_ms");
    assert!(paced.iter().any(|(_, v)| v.parse::<f64>().is_ok()), "{paced:?}");
    rebuilds_and_catches_an_edit(&results, "mailbox", "p0.log_writes.ios");
}
