//! Ctrl-C: the run stops within a second or two and the bundle keeps what was measured,
//! marked incomplete.

use crate::support::{only_bundle, storbench};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn an_interrupted_run_keeps_an_incomplete_bundle() {
    let out = tempfile::tempdir().unwrap();
    let bin = storbench().get_program().to_owned();
    let mut child = Command::new(bin)
        .args(["io", "--engine", "null", "--runtime", "60s", "--ramp", "0.5"])
        .arg("--output-dir")
        .arg(out.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let sent = Instant::now();
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let status = child.wait().unwrap();
    assert!(sent.elapsed() < Duration::from_secs(3), "stopped in {:?}", sent.elapsed());
    assert_eq!(status.code(), Some(130));
    let bundle = only_bundle(out.path());
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["complete"], false);
    assert!(s["phases"]["measured_s"].as_f64().unwrap() > 1.0, "{}", s["phases"]);
    assert!(s["results"]["read"]["ios"].as_u64().unwrap() > 0);
    let rows = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap().lines().count();
    assert!(rows >= 3, "header and at least two seconds of rows, got {rows}");
}
