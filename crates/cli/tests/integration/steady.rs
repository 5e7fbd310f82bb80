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

/// oltp through the same rounds: a real SQLite run in rounds of 1 s, capped at 6 rounds, reports
/// exactly its last 5 rounds whether or not the rule held, in OPM, and its record rebuilds it.
#[test]
fn an_oltp_run_in_steady_state_rounds_reports_its_last_five_rounds_in_opm() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let timing = ["--warmup-time", "1s", "--run-time", "6s", "--steady-state", "1s", "--n-threads", "2"];
    crate::support::sqlite_oltp_run(dir.path(), &results, &timing);
    let s = bundle_summary(&results);
    let st = &s["steady_state"];
    assert_eq!((st["figure"].as_str(), st["round_s"].as_f64()), (Some("OPM"), Some(1.0)), "{st}");
    let rounds = st["round_iops"].as_array().unwrap();
    assert!((5..=6).contains(&rounds.len()) && st["rounds_run"] == rounds.len(), "{st}");
    let (from, to) = (st["window_start_s"].as_f64().unwrap(), st["window_end_s"].as_f64().unwrap());
    assert_eq!(to - from, 5.0, "the window is 5 rounds: {st}");
    assert_eq!(
        (s["phases"]["measured_s"].as_f64(), s["parameters"]["steady_state_s"].as_f64()),
        (Some(5.0), Some(1.0))
    );
    // The figures are the window's: its rounds' OPM over their seconds are its orders.
    let window_orders: f64 = rounds[rounds.len() - 5..].iter().map(|r| r.as_f64().unwrap() / 60.0).sum();
    let r = &s["results"];
    assert_eq!(r["orders"].as_u64(), Some(window_orders.round() as u64), "{r} vs {st}");
    assert!((r["opm"].as_f64().unwrap() - window_orders * 12.0).abs() < 1e-6, "{r}");
    if st["reached"] == false {
        assert!(s["warnings"].to_string().contains("steady state not reached in 6 rounds"), "{s}");
    }
    crate::summarize::rebuilds_field_for_field(&results);
}

#[test]
fn steady_state_is_refused_where_a_workload_has_no_figure_per_round_or_no_room_for_five() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let refuses = |args: &[&str], needle: &str| {
        let mut cmd = storbench();
        cmd.args(args).arg("--output-dir").arg(&results);
        refused(&mut cmd, needle);
        assert!(!results.exists(), "nothing may be written on bad input");
    };
    let db = dir.path().join("none.db");
    let oltp = ["oltp", "run", "--db-size", "1MB", "--path", db.to_str().unwrap(), "--steady-state"];
    refuses(
        &[&oltp[..], &["10s", "--run-time", "30s"]].concat(),
        "--run-time 30s leaves no room for the 5 rounds",
    );
    refuses(&[&oltp[..], &["1.5s"]].concat(), "a round is a whole number of seconds above 0");
    let target = dir.path().join("t");
    let t = target.to_str().unwrap();
    refuses(&["integrity", "--target", t, "--steady-state", "1s"], "integrity has no figure per round");
    let mailbox =
        ["mailbox", "--target", t, "--mailboxes", "50", "--mailbox-size", "1MB", "--steady-state", "1s"];
    refuses(&[&mailbox[..], &["--test", "backup"]].concat(), "only the performance and stress tests have");
    refuses(&[&mailbox[..], &["--tune"]].concat(), "--tune's trials are short fixed runs");
    let log = dir.path().join("calls.jsonl");
    std::fs::write(&log, "").unwrap();
    let replay = [
        "replay",
        log.to_str().unwrap(),
        "--format",
        "storbench",
        "--path",
        db.to_str().unwrap(),
        "--steady-state",
        "1s",
    ];
    refuses(&[&replay[..], &["--mode", "time-sync"]].concat(), "use it with --mode fire-hose");
}
