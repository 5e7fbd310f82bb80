//! Real I/O on temporary files: io_uring and psync, the SQLIO set, verification, and what a
//! bundle holds.

use crate::support::{disk_tempdir, io_in, only_bundle, stderr_text, stdout_json, storbench};
use std::path::Path;

/// A one-second job on a 32 MiB file in `dir`, its summary.json.
fn run_json(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let args = [&["--size", "32MiB", "--runtime", "1s", "--json"], extra].concat();
    stdout_json(&io_in(dir, &args))
}

#[test]
fn io_uring_random_reads_on_a_new_file_use_o_direct_and_fill_the_bundle() {
    let dir = disk_tempdir();
    let s = run_json(dir.path(), &["--rw", "randread", "--bs", "4k", "--iodepth", "8"]);
    assert_eq!(s["engine"], "io_uring");
    assert_eq!(s["target"]["kind"], "file");
    assert_eq!(s["target"]["direct"], true);
    assert_eq!(s["target"]["size_bytes"], 32 << 20);
    assert!(s["results"]["read"]["ios"].as_u64().unwrap() > 100, "{s}");
    assert_eq!(s["results"]["write"]["ios"], 0);
    assert_eq!(s["results"]["errors"]["total"], 0);
    let file = dir.path().join("storbench-io.dat");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 32 << 20);
    let bundle = only_bundle(&dir.path().join("results"));
    let csv = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for col in [
        "t_s",
        "phase",
        "read_iops",
        "read_lat_p99_us",
        "disk_reads_per_sec",
        "disk_busy_pct",
        "cpu_iowait_pct",
        "mem_available_bytes",
    ] {
        assert!(header.contains(&col), "timeseries.csv lacks {col}: {header:?}");
    }
    assert!(csv.lines().skip(1).any(|l| l.contains(",measure,")), "{csv}");
    let hlog = std::fs::read_to_string(bundle.join("latency.hlog")).unwrap();
    assert!(hlog.lines().any(|l| l.starts_with("Tag=read-total,")), "{hlog}");
    // The system under test, with the device the file lives on (the one the summary names).
    let d = crate::support::json(&std::fs::read(bundle.join("disclosure.json")).unwrap());
    assert!(d["kernel"]["release"].as_str().is_some_and(|r| !r.is_empty()), "{d}");
    assert!(d["cpu"]["threads"].as_u64().unwrap() >= 1, "{d}");
    if let Some(dev) = s["target"]["device"]["name"].as_str() {
        let names: Vec<&str> =
            d["devices"].as_array().unwrap().iter().filter_map(|x| x["name"].as_str()).collect();
        assert!(names.contains(&dev), "{dev} not in {names:?}");
    }
}

#[test]
fn a_second_run_reuses_the_file_storbench_created() {
    let dir = disk_tempdir();
    let first = io_in(dir.path(), &["--size", "16MiB", "--runtime", "0.3"]);
    assert!(stderr_text(&first).contains("created"));
    let file = dir.path().join("storbench-io.dat");
    let before = std::fs::metadata(&file).unwrap().modified().unwrap();
    let second = io_in(dir.path(), &["--runtime", "0.3"]);
    assert!(!stderr_text(&second).contains("created"));
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), before, "not re-filled");
}

#[test]
fn psync_writes_and_reads_with_a_block_size_mix() {
    let dir = disk_tempdir();
    let s = run_json(
        dir.path(),
        &["--engine", "psync", "--rw", "randrw", "--bs", "4k/50:16k/50", "--iodepth", "4"],
    );
    assert_eq!(s["engine"], "psync");
    assert!(s["results"]["read"]["ios"].as_u64().unwrap() > 10);
    assert!(s["results"]["write"]["ios"].as_u64().unwrap() > 10);
    let warnings = s["warnings"].to_string();
    assert!(warnings.contains("psync is synchronous"), "{warnings}");
}

#[test]
fn verify_checks_blocks_it_wrote_and_finds_no_mismatch_on_a_healthy_disk() {
    let dir = disk_tempdir();
    let s = run_json(
        dir.path(),
        &["--rw", "randrw", "--bs", "4k", "--iodepth", "16", "--workers", "2", "--verify"],
    );
    let v = &s["results"]["verify"];
    assert_eq!(v["enabled"], true);
    assert!(v["blocks_checked"].as_u64().unwrap() > 100, "{v}");
    assert_eq!(v["mismatches"], 0);
}

#[test]
fn the_sqlio_set_runs_six_profiles_each_with_its_own_direction_and_block_size() {
    let dir = disk_tempdir();
    let v = stdout_json(&io_in(
        dir.path(),
        &["--profile", "sqlio", "--size", "64MiB", "--runtime", "0.5", "--json"],
    ));
    let profiles = v["profiles"].as_array().expect("profiles array");
    let names: Vec<&str> = profiles.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "randread-8k-qd4",
            "randwrite-8k-qd4",
            "read-64k-qd4",
            "write-64k-qd4",
            "randread-8k-qd1",
            "randwrite-8k-qd1"
        ]
    );
    for p in profiles {
        let (r, w) =
            (p["results"]["read"]["ios"].as_u64().unwrap(), p["results"]["write"]["ios"].as_u64().unwrap());
        let writes = p["name"].as_str().unwrap().contains("write");
        assert!(if writes { w > 0 && r == 0 } else { r > 0 && w == 0 }, "{}: r={r} w={w}", p["name"]);
    }
    assert_eq!(profiles[2]["parameters"]["bs"][0]["bytes"], 65536);
    assert_eq!(profiles[4]["parameters"]["iodepth"], 1);
    let sets: Vec<_> = std::fs::read_dir(dir.path().join("results")).unwrap().collect();
    assert_eq!(sets.len(), 1, "one directory for the set");
}

#[test]
fn the_table_shows_percent_of_best_for_the_sqlio_set() {
    let dir = disk_tempdir();
    let a = io_in(dir.path(), &["--profile", "sqlio", "--size", "64MiB", "--runtime", "0.3"]);
    let table = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(
        table.contains("% of best") && table.contains("random read, 4-deep") && table.contains("100 %"),
        "{table}"
    );
}

#[test]
fn a_rate_cap_holds_the_iops_near_the_target() {
    let out = tempfile::tempdir().unwrap();
    let a = storbench()
        .args([
            "io",
            "--engine",
            "null",
            "--rate-iops",
            "2000",
            "--runtime",
            "2s",
            "--ramp",
            "0",
            "--iodepth",
            "4",
            "--json",
        ])
        .arg("--output-dir")
        .arg(out.path())
        .assert()
        .success();
    let read = &stdout_json(&a)["results"]["read"];
    let iops = read["iops"].as_f64().unwrap();
    assert!((1900.0..=2050.0).contains(&iops), "iops {iops}");
    let (lat, service) =
        (read["lat_ns"]["p50"].as_u64().unwrap(), read["service_lat_ns"]["p50"].as_u64().unwrap());
    assert!(service <= lat, "service time is part of the latency from the intended start: {service} > {lat}");
}

/// The cells of `column` in the bundle's `timeseries.csv`, each with its row's phase.
pub(crate) fn series_column(bundle: &Path, column: &str) -> Vec<(String, String)> {
    let csv = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|c| *c == column).unwrap_or_else(|| panic!("no {column}: {header:?}"));
    let phase = header.iter().position(|c| *c == "phase").unwrap();
    let cells = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
    csv.lines().skip(1).map(cells).map(|c| (c[phase].clone(), c[at].clone())).collect()
}

/// A one- or two-second job on the null engine into `results`, its summary.json.
fn null_json(results: &Path, extra: &[&str]) -> serde_json::Value {
    let base = ["io", "--engine", "null", "--ramp", "0", "--json", "--output-dir"];
    stdout_json(&storbench().args(base).arg(results).args(extra).assert().success())
}

#[test]
fn a_rate_capped_run_has_its_schedule_lag_in_summary_and_series_and_rebuilds_it() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let s = null_json(&results, &["--rate-iops", "2000", "--runtime", "2s", "--iodepth", "4"]);
    let lag = &s["results"]["schedule_lag_ms"];
    let at = |q: &str| lag[q].as_f64().unwrap_or_else(|| panic!("no {q}: {lag}"));
    assert!(0.0 <= at("p50") && at("p50") <= at("p99") && at("p99") <= at("max"), "{lag}");
    let bundle = only_bundle(&results);
    for column in ["schedule_lag_p99_ms", "schedule_lag_max_ms"] {
        let cells = series_column(&bundle, column);
        assert!(!cells.is_empty(), "{column}");
        assert!(cells.iter().all(|(_, v)| v.parse::<f64>().is_ok_and(|ms| ms >= 0.0)), "{column}: {cells:?}");
    }
    crate::summarize::rebuilds_and_catches_an_edit(&results, "io", "read.ios");
}

#[test]
fn an_unpaced_run_has_no_schedule_lag_and_its_lag_columns_stay_empty() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let s = null_json(&results, &["--runtime", "1s"]);
    assert!(s["results"].get("schedule_lag_ms").is_none(), "no lag field, not zeros: {}", s["results"]);
    let cells = series_column(&only_bundle(&results), "schedule_lag_p99_ms");
    assert!(!cells.is_empty() && cells.iter().all(|(_, v)| v.is_empty()), "{cells:?}");
}

#[test]
fn a_rate_the_run_cannot_keep_is_a_warning_with_its_lag_and_rebuilds() {
    // A billion I/Os a second, one at a time: every I/O falls further behind its schedule.
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let s = null_json(&results, &["--rate-iops", "1000000000", "--runtime", "1s", "--iodepth", "1"]);
    let p99 = s["results"]["schedule_lag_ms"]["p99"].as_f64().unwrap();
    assert!(p99 > 10.0, "{}", s["results"]);
    let warned = s["warnings"].as_array().unwrap().iter().filter_map(|w| w.as_str());
    let behind: Vec<&str> =
        warned.filter(|w| w.starts_with("the rate cap fell behind: I/Os started")).collect();
    assert_eq!(behind.len(), 1, "{}", s["warnings"]);
    crate::summarize::rebuilds_and_catches_an_edit(&results, "io", "read.ios");
}

#[test]
fn a_power_meter_fills_the_power_column_and_without_one_the_summary_says_so() {
    let dir = disk_tempdir();
    let watts = dir.path().join("watts");
    std::fs::write(&watts, "212.5\n").unwrap();
    let power = format!("file:{}", watts.display());
    let s = run_json(dir.path(), &["--power", &power]);
    assert!(!s["warnings"].to_string().contains("power"), "{}", s["warnings"]);
    let csv =
        std::fs::read_to_string(only_bundle(&dir.path().join("results")).join("timeseries.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "power_watts").expect("power_watts column");
    let values: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').nth(col).unwrap()).collect();
    assert!(!values.is_empty() && values.iter().all(|v| *v == "212.500"), "{values:?}");

    let other = disk_tempdir();
    let s = run_json(other.path(), &["--power", "none"]);
    let warnings = s["warnings"].to_string();
    assert!(warnings.contains("power was not measured (power source: none)"), "{warnings}");
    assert!(!warnings.contains("no power source on this machine"), "none is a choice, not a missing meter");
    let mut bad = storbench();
    bad.args(["io", "--engine", "null", "--runtime", "1s", "--power", "meter", "--output-dir"])
        .arg(other.path().join("r2"));
    let err = crate::support::refused(&mut bad, "--power meter");
    assert!(err.contains("file:PATH"), "{err}");
}

#[test]
fn named_meters_each_get_a_column_less_their_baseline_and_power_watts_is_their_sum() {
    // 001's server and enclosure, each and the total; 003's empty enclosure subtracted.
    let dir = disk_tempdir();
    let (server, shelf) = (dir.path().join("server"), dir.path().join("shelf"));
    std::fs::write(&server, "250\n").unwrap();
    std::fs::write(&shelf, "300\n").unwrap();
    let power = format!(
        "server=file:{}; enclosure=file:{}; enclosure.baseline=108.2",
        server.display(),
        shelf.display()
    );
    let results = dir.path().join("results");
    let s = null_json(&results, &["--runtime", "2s", "--power", &power]);
    assert!(!s["warnings"].to_string().contains("power"), "{}", s["warnings"]);
    let bundle = only_bundle(&results);
    let measured = |col: &str| -> Vec<String> {
        series_column(&bundle, col).into_iter().filter(|(p, _)| p == "measure").map(|(_, v)| v).collect()
    };
    for (col, watts) in
        [("power_watts", "441.800"), ("power.server.watts", "250"), ("power.enclosure.watts", "191.800")]
    {
        let v = measured(col);
        assert!(!v.is_empty() && v.iter().all(|x| x == watts), "{col}: {v:?}");
    }
    // The report's table has each meter's active watts beside the total.
    storbench().arg("report").arg(&bundle).assert().success();
    let md = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(
        md.contains("| active W | server W | enclosure W |") && md.contains("| 441.8 | 250.0 | 191.8 |"),
        "{md}"
    );
    // A baseline of a meter not named, a name given twice: refused before anything runs.
    for (spec, says) in
        [("a=file:/x; b.baseline=3", "b.baseline names no meter"), ("a=file:/x; a=file:/y", "named twice")]
    {
        let mut bad = storbench();
        bad.args(["io", "--engine", "null", "--runtime", "1s", "--power", spec, "--output-dir"])
            .arg(dir.path().join("r2"));
        crate::support::refused(&mut bad, says);
    }
}

#[test]
fn a_profile_set_shows_a_line_per_profile_and_says_each_warning_once() {
    let dir = disk_tempdir();
    let out = storbench()
        .args([
            "io",
            "--profile",
            "sqlio",
            "--engine",
            "null",
            "--runtime",
            "1s",
            "--ramp",
            "0",
            "--output-dir",
        ])
        .arg(dir.path().join("results"))
        .assert()
        .success();
    let err = stderr_text(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(lines.len(), 6, "{err}");
    assert!(
        lines.iter().all(|l| l.contains("/6] ") && l.ends_with(" IOPS")),
        "each with its headline: {err}"
    );
    assert!(err.matches("no power source").count() <= 1, "the power note once, not six times: {err}");
    assert!(!err.contains("bundle: "), "each profile's own output is in its log: {err}");
    let set = crate::support::only_bundle(&dir.path().join("results"));
    for job in std::fs::read_dir(&set).unwrap().map(|e| e.unwrap().path()) {
        let log = std::fs::read_to_string(job.join("output.log")).unwrap();
        assert!(log.contains(&format!("bundle: {}", job.display())), "{log}");
    }
}

#[test]
fn a_job_with_both_io_size_and_runtime_ends_at_whichever_comes_first() {
    let dir = disk_tempdir();
    let run = |extra: &[&str]| {
        let args = [&["--engine", "null", "--bs", "4k", "--json"], extra].concat();
        stdout_json(&io_in(dir.path(), &args))
    };
    let by_bytes = run(&["--io-size", "1M", "--runtime", "30s"]);
    assert_eq!(by_bytes["results"]["read"]["ios"], 256, "1 MiB of 4 KiB reads, long before 30 s");
    assert!(by_bytes["phases"]["measured_s"].as_f64().unwrap() < 30.0);
    let by_time = run(&["--io-size", "1G", "--runtime", "1s", "--rate-iops", "200"]);
    let ios = by_time["results"]["read"]["ios"].as_u64().unwrap();
    assert!((150..=250).contains(&ios), "a second at 200 IOPS, long before 1 GiB: {ios}");
    assert_eq!(
        (by_time["parameters"]["runtime_s"].as_f64(), by_time["parameters"]["io_size"].as_u64()),
        (Some(1.0), Some(1 << 30))
    );
}
