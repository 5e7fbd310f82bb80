//! The commit path (`storbench wal`) on a real disk: a point's bundle that `summarize --check`
//! rebuilds, every method in turn with the fastest one named, bad options refused before
//! anything is written, and a plan's wal workload judged against a requirement on its commit
//! latency.

use crate::support::{disk_tempdir, json, only_bundle, refused, stdout_json, storbench};
use std::path::Path;

/// `storbench wal --target DIR/log --output-dir DIR/results ARGS`.
fn wal(dir: &Path, args: &[&str]) -> assert_cmd::Command {
    std::fs::create_dir_all(dir.join("log")).unwrap();
    let mut cmd = storbench();
    cmd.args(["wal", "--target"])
        .arg(dir.join("log"))
        .arg("--output-dir")
        .arg(dir.join("results"))
        .args(args);
    cmd
}

fn log_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("log"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_point_commits_durably_into_a_bundle_that_its_record_rebuilds() {
    let dir = disk_tempdir();
    let a = wal(
        dir.path(),
        &[
            "--sync-method",
            "fdatasync",
            "--bs",
            "4k",
            "--writers",
            "2",
            "--ramp",
            "0.2s",
            "--runtime",
            "1s",
            "--json",
        ],
    )
    .assert()
    .success();
    let s = stdout_json(&a);
    assert_eq!(s["workload"], "wal");
    let r = &s["results"];
    assert_eq!(
        (&r["sync_method"], &r["bytes_per_commit"], &r["writers"]),
        (&"fdatasync".into(), &4096.into(), &2.into())
    );
    let commits = r["commits"].as_u64().unwrap();
    assert!(commits > 0 && r["errors"] == 0, "{r}");
    // The rate is the commits over the measured second, and every commit is in the histogram.
    let measured = s["phases"]["measured_s"].as_f64().unwrap();
    assert!((r["commits_per_sec"].as_f64().unwrap() - commits as f64 / measured).abs() < 1e-6, "{s}");
    assert!(r["commit_lat_ns"]["p99"].as_u64().unwrap() >= r["commit_lat_ns"]["p50"].as_u64().unwrap());
    assert!(
        (r["bytes_per_sec"].as_f64().unwrap() - 4096.0 * r["commits_per_sec"].as_f64().unwrap()).abs() < 1e-3
    );
    assert_eq!(log_files(dir.path()), Vec::<String>::new(), "the log file is removed");

    let bundle = only_bundle(&dir.path().join("results"));
    for file in ["record.jsonl", "latency.hlog", "timeseries.csv", "summary.json"] {
        assert!(bundle.join(file).is_file(), "{file}");
    }
    let header = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    assert!(
        header.lines().next().unwrap().contains("commits_per_sec,commit_bytes_per_sec,commit_p50_us"),
        "{header}"
    );
    storbench().arg("summarize").arg("--check").arg(&bundle).assert().success();
    storbench().arg("report").arg(&bundle).assert().success();
    let md = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(md.contains("## Commit path") && md.contains("fdatasync 4,096 B x2 (preallocated)"), "{md}");
}

#[test]
fn every_method_runs_in_turn_and_the_fastest_trusted_one_is_named() {
    let dir = disk_tempdir();
    let a = wal(dir.path(), &["--bs", "4k", "--runtime", "0.5s", "--ramp", "0s"]).assert().success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    for method in ["fdatasync", "fsync", "open_datasync", "open_sync", "open_direct_datasync"] {
        assert!(out.contains(&format!("{method} 4,096 B x1 (preallocated): ")), "{method}: {out}");
    }
    // Named either way: the fastest trusted method, or, where every one was too fast to be
    // durable (a virtual disk's cache), none proven with the fastest measured.
    assert!(out.contains("fastest safe method: "), "{out}");
    let set = only_bundle(&dir.path().join("results"));
    assert_eq!(std::fs::read_dir(&set).unwrap().filter(|e| e.as_ref().unwrap().path().is_dir()).count(), 5);
}

#[test]
fn bad_options_are_refused_before_anything_is_written() {
    let dir = disk_tempdir();
    refused(&mut wal(dir.path(), &["--bs", "1000"]), "not a whole number of 512-byte sectors");
    refused(
        &mut wal(dir.path(), &["--sync-method", "osync"]),
        "the methods are fdatasync, fsync, open_datasync",
    );
    refused(&mut wal(dir.path(), &["--layout", "sparse"]), "give preallocated or growing");
    refused(&mut wal(dir.path(), &["--writers", "0"]), "0 writers; give from 1 to 1024");
    let mut missing = storbench();
    missing.args(["wal", "--target"]).arg(dir.path().join("nowhere"));
    refused(&mut missing, "no such directory");
    assert!(!dir.path().join("results").exists());
    assert_eq!(log_files(dir.path()), Vec::<String>::new());
}

#[test]
fn a_plans_wal_workload_sweeps_its_method_and_is_judged_on_its_commit_latency() {
    let dir = disk_tempdir();
    let target = dir.path().join("c1");
    std::fs::create_dir_all(&target).unwrap();
    let plan = |workload: &str| {
        format!(
            "name = \"w\"\n[method]\nrepetitions = 1\nidle_settle = 0\npower = \"none\"\n\
             [[configuration]]\nname = \"disk\"\ntarget = \"{}\"\n[[workload]]\nkind = \"wal\"\nbs = \"4k\"\n\
             runtime = \"0.5s\"\nramp = \"0s\"\n{workload}[requirements]\n\"wal.commit_p99_ms\" = \"<= 60000\"\n",
            target.display()
        )
    };
    let path = dir.path().join("plan.toml");
    std::fs::write(&path, plan("sweep = { sync_method = [\"fdatasync\", \"open_datasync\"] }\n")).unwrap();
    let results = dir.path().join("results");
    storbench().arg("run").arg(&path).arg("--output-dir").arg(&results).assert().success();
    let e = json(&std::fs::read(only_bundle(&results).join("evaluation.json")).unwrap());
    let runs = e["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r["status"] == "done" && r["headline"]["metric"] == "commits/s"), "{e}");
    storbench().args(["decide"]).arg(only_bundle(&results)).assert().success();

    // One bundle per run: "all" methods belong on the command line.
    std::fs::write(&path, plan("sync_method = \"all\"\n")).unwrap();
    let mut run = storbench();
    run.arg("run").arg(&path).arg("--output-dir").arg(dir.path().join("none"));
    refused(&mut run, "sync_method = \"all\" runs a bundle per method");
}

#[test]
fn a_search_finds_the_most_writers_whose_commits_hold_the_limit() {
    // A limit every step holds: the search doubles to its maximum and confirms it.
    let dir = disk_tempdir();
    let args = ["--sync-method", "fdatasync", "--bs", "4k", "--ramp", "0s", "--runtime", "0.5s"];
    let search = ["--search", "threads", "--latency-limit", "commit:p99<=60s", "--search-max", "2"];
    let a = wal(dir.path(), &[&args[..], &search[..], &["--search-step-time", "0.3s", "--json"]].concat())
        .assert()
        .success();
    let s = stdout_json(&a);
    assert_eq!(
        (&s["search"]["chosen"], &s["results"]["writers"]),
        (&2.0.into(), &2.into()),
        "{}",
        s["search"]
    );
    assert_eq!(s["search"]["throughput"], "commits/s");
    // A method set cannot be searched.
    refused(
        &mut wal(dir.path(), &["--sync-method", "all", "--search", "threads", "--latency-limit", "p99<=1s"]),
        "not all",
    );
}

#[test]
fn shards_run_at_once_merge_into_one_point_with_every_shards_writers_and_commits() {
    let dir = disk_tempdir();
    let point = ["--sync-method", "fdatasync", "--ramp", "0", "--runtime", "2s", "--json"];
    let spawn = |n: usize| {
        let results = dir.path().join(format!("shard{n}"));
        let mut cmd = std::process::Command::new(storbench().get_program());
        cmd.args(["wal", "--target"]).arg(dir.path()).arg("--output-dir").arg(&results).args(point);
        let child = cmd.stdout(std::process::Stdio::null()).spawn().expect("storbench starts");
        (child, results)
    };
    let mut running: Vec<_> = (0..2).map(spawn).collect();
    let bundles: Vec<_> = running
        .iter_mut()
        .map(|(child, results)| {
            assert!(child.wait().unwrap().success());
            only_bundle(results)
        })
        .collect();
    let out = dir.path().join("merged");
    let merged =
        storbench().arg("merge").args(&bundles).arg("--out").arg(&out).arg("--json").assert().success();
    let m = stdout_json(&merged);
    // Each shard had one writer: the merged point had two, and every shard's commits.
    assert_eq!((&m["parameters"]["writers"], &m["results"]["writers"]), (&2.into(), &2.into()), "{m}");
    let commits =
        |b: &Path| json(&std::fs::read(b.join("summary.json")).unwrap())["results"]["commits"].as_u64();
    let each: Vec<u64> = bundles.iter().map(|b| commits(b).unwrap()).collect();
    assert!(each.iter().all(|c| *c > 0), "{each:?}");
    let merged_commits = m["results"]["commits"].as_u64().unwrap();
    // The merge keeps the seconds the shards shared: at most their sum, and most of it.
    assert!(merged_commits <= each.iter().sum::<u64>() && merged_commits > 0, "{merged_commits} of {each:?}");
    storbench().arg("summarize").arg("--check").arg(&out).assert().success();
}
