//! Ctrl-C: the run stops within a second or two and the bundle keeps what was measured,
//! marked incomplete.

use crate::support::{interrupt_when, only_bundle, storbench};
use std::path::Path;
use std::time::{Duration, Instant};

/// Starts `storbench ARGS`, sends SIGINT after `after`, and returns the summary of the only
/// bundle under `results` once it exited 130 within 3 s.
fn interrupt(args: &[&str], results: &Path, after: Duration) -> serde_json::Value {
    let began = Instant::now();
    interrupt_when(args, results, &|| began.elapsed() >= after)
}

#[test]
fn an_interrupted_oltp_run_keeps_what_it_measured() {
    let dir = crate::support::disk_tempdir();
    let db = dir.path().join("ds3.db");
    storbench().args(["oltp", "load", "--db-size", "1MB", "--path"]).arg(&db).assert().success();
    let args = [
        "oltp",
        "run",
        "--db-size",
        "1MB",
        "--warmup-time",
        "0",
        "--run-time",
        "10",
        "--settle-time",
        "0",
        "--path",
    ];
    let mut args: Vec<&str> = args.to_vec();
    args.push(db.to_str().unwrap());
    let s = interrupt(&args, &dir.path().join("results"), Duration::from_millis(3500));
    assert!(s["results"]["orders"].as_u64().unwrap() > 0, "{}", s["results"]);
    assert!(s["phases"]["measured_s"].as_f64().unwrap() > 1.0, "{}", s["phases"]);
}

#[test]
fn an_interrupted_run_keeps_an_incomplete_bundle() {
    let out = tempfile::tempdir().unwrap();
    let s = interrupt(
        &["io", "--engine", "null", "--runtime", "60s", "--ramp", "0.5"],
        out.path(),
        Duration::from_millis(2500),
    );
    let bundle = only_bundle(out.path());
    assert!(s["phases"]["measured_s"].as_f64().unwrap() > 1.0, "{}", s["phases"]);
    assert!(s["results"]["read"]["ios"].as_u64().unwrap() > 0);
    let rows = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap().lines().count();
    assert!(rows >= 3, "header and at least two seconds of rows, got {rows}");
}
