//! `io --steady-state`: the run ends once the SNIA PTS rule holds, and the results, the summary
//! and the table say which seconds they cover. The paced null engine is steady from the start.

use crate::support::{bundle_summary, disk_tempdir, refused, storbench};

#[test]
fn a_steady_null_run_ends_after_five_rounds_and_reports_only_them() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let a = storbench()
        .args(["io", "--engine", "null", "--rate-iops", "1000", "--ramp", "0", "--steady-state", "1s"])
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success();
    let table = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let s = bundle_summary(&results);
    let st = &s["steady_state"];
    assert_eq!(st["reached"], true, "{st}");
    let rounds = st["rounds_run"].as_u64().unwrap();
    assert!((5..=7).contains(&rounds), "steady at once, far from the 25-round cap: {st}");
    assert_eq!(s["parameters"]["runtime_s"], 25.0, "without --runtime the cap is 25 rounds");
    assert_eq!(s["parameters"]["steady_state_s"], 1.0);
    assert_eq!(st["round_iops"].as_array().unwrap().len() as u64, rounds);
    let (from, to) = (st["window_start_s"].as_f64().unwrap(), st["window_end_s"].as_f64().unwrap());
    assert_eq!((from, to), ((rounds - 5) as f64, rounds as f64), "{st}");
    assert_eq!(s["phases"]["measured_s"], 5.0);
    let ios = s["results"]["read"]["ios"].as_u64().unwrap();
    assert!((4950..=5050).contains(&ios), "1000 IOPS over the 5 s window, not the whole run: {ios}");
    assert!(s["warnings"].as_array().unwrap().iter().all(|w| !w.as_str().unwrap().contains("steady")), "{s}");
    let line =
        format!("steady state reached after {rounds} rounds of 1 s; figures cover {from:.0}-{to:.0} s");
    assert!(table.contains(&line), "{table}");
}

#[test]
fn steady_state_rounds_that_cannot_work_are_refused() {
    let dir = disk_tempdir();
    let refuses = |args: &[&str], needle: &str| {
        let results = dir.path().join("results");
        let mut cmd = storbench();
        cmd.args(["io", "--engine", "null"]).args(args).arg("--output-dir").arg(&results);
        refused(&mut cmd, needle);
        assert!(!results.exists(), "nothing may be written on bad input");
    };
    refuses(&["--steady-state", "0"], "a round is a whole number of seconds above 0");
    refuses(&["--steady-state", "1.5s"], "a round is a whole number of seconds above 0");
    refuses(&["--steady-state", "60s", "--runtime", "2m"], "use --runtime 5m or more");
    refuses(&["--steady-state", "10s", "--runtime", "5s"], "leaves no room for the 5 rounds");
    refuses(&["--steady-state", "10s", "--io-size", "1M"], "cannot be used with");
}
