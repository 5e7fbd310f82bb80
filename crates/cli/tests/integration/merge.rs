//! `storbench merge`: shards of one null-engine io job run at once and merged. The merged
//! counts are the shards' sums, the merged percentiles those of the union of the shards'
//! histograms (read from their latency.hlog), the merged bundle rebuilds from its record and
//! reports with a per-shard table; a killed shard is named, not averaged away; bad input is
//! refused with exit 2.

use crate::support::{disk_tempdir, json, only_bundle, refused, storbench};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use storbench_bench::metrics::{LatencyHistogram, read_hlog};

/// A null-engine io shard of 2000 IOPS for `runtime` with `extra`, spawned, its bundle under
/// `results`.
fn spawn_shard(results: &Path, runtime: &str, extra: &[&str]) -> Child {
    Command::new(storbench().get_program())
        .args(["io", "--engine", "null", "--ramp", "0", "--rate-iops", "2000", "--seed", "7"])
        .args(["--size", "1M", "--runtime", runtime, "--json", "--output-dir"])
        .arg(results)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("storbench starts")
}

/// `n` shards run at once to the end, each with `extra`, their bundles.
fn shards(root: &Path, n: usize, extra: &[&str]) -> Vec<PathBuf> {
    let results: Vec<PathBuf> = (0..n).map(|i| root.join(format!("shard{i}"))).collect();
    let mut running: Vec<Child> = results.iter().map(|r| spawn_shard(r, "2s", extra)).collect();
    for child in &mut running {
        assert!(child.wait().unwrap().success());
    }
    results.iter().map(|r| only_bundle(r)).collect()
}

fn merge(bundles: &[PathBuf], out: &Path) -> serde_json::Value {
    merge_ending(bundles, out, 0)
}

/// `storbench merge BUNDLES --out OUT --json`, which must exit `code`: the merged summary.
fn merge_ending(bundles: &[PathBuf], out: &Path, code: i32) -> serde_json::Value {
    let a = storbench().arg("merge").args(bundles).arg("--out").arg(out).arg("--json").assert().code(code);
    json(&a.get_output().stdout)
}

fn read_json(path: &Path) -> serde_json::Value {
    json(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The union of every `read` interval histogram in the bundles' latency.hlog.
fn union_of_reads(bundles: &[PathBuf]) -> LatencyHistogram {
    let mut union = LatencyHistogram::default();
    for b in bundles {
        let text = std::fs::read_to_string(b.join("latency.hlog")).unwrap();
        for (tag, _, _, h) in read_hlog(&text).unwrap() {
            if tag == "read" {
                union.merge(&h);
            }
        }
    }
    union
}

#[test]
fn merged_shards_sum_their_counts_and_have_the_percentiles_of_their_union() {
    let dir = disk_tempdir();
    let bundles = shards(dir.path(), 3, &[]);
    let out = dir.path().join("merged");
    let merged = merge(&bundles, &out);
    let shards = read_json(&out.join("shards.json"));
    assert_eq!(shards["complete"], true, "{shards}");
    // Started together, every shard's two measured seconds are in the common window.
    for s in shards["shards"].as_array().unwrap() {
        assert_eq!((s["intervals"].as_u64(), s["late"].as_bool()), (Some(2), Some(false)), "{shards}");
        assert!(s["headline"].as_str().is_some_and(|h| h.contains("IOPS")), "{s}");
    }
    let read = |s: &serde_json::Value| s["results"]["read"]["ios"].as_u64().unwrap();
    let sum: u64 = bundles.iter().map(|b| read(&read_json(&b.join("summary.json")))).sum();
    assert_eq!(read(&merged), sum, "{merged}");
    let union = serde_json::to_value(union_of_reads(&bundles).summary()).unwrap();
    assert_eq!(merged["results"]["read"]["lat_ns"], union, "percentiles of the union");
    let iops = merged["results"]["read"]["iops"].as_f64().unwrap();
    assert!((iops - 6000.0).abs() < 60.0, "three shards of 2000 IOPS: {iops}");
    storbench().args(["summarize", "--check"]).arg(&out).assert().code(0);
    let series = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let first_row = series.lines().nth(1).unwrap_or_default();
    // Each shard's capped 2,000 in its first second, summed (a busy machine may miss a few).
    let cells: Vec<&str> = first_row.split(',').collect();
    let summed: f64 = cells.get(2).and_then(|c| c.parse().ok()).unwrap_or(0.0);
    assert!(
        cells[..2] == ["1.000", "measure"] && (summed - 6000.0).abs() < 60.0,
        "summed by second: {series}"
    );
    storbench().arg("report").arg(&out).arg("--out").arg(dir.path().join("report")).assert().success();
    let md = std::fs::read_to_string(dir.path().join("report/report.md")).unwrap();
    assert!(md.contains("## Shards") && md.contains("shard2"), "{md}");
}

/// Unix seconds `ahead` from now, for `--start-at`.
fn start_in(ahead: u64) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    (now.as_secs() + ahead).to_string()
}

/// The reads of each measured workload interval the record under `results` holds (none
/// before it has one).
fn measured_reads(results: &Path) -> Vec<u64> {
    let bundles = std::fs::read_dir(results).into_iter().flatten().flatten();
    let text = bundles.filter_map(|b| std::fs::read_to_string(b.path().join("record.jsonl")).ok()).next();
    let lines =
        text.unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect::<Vec<_>>();
    lines
        .iter()
        .map(|l: &serde_json::Value| &l["interval"])
        .filter(|i| i["stream"] == "io" && i["phase"] == "measure" && i["tail"].as_bool() != Some(true))
        .map(|i| i["counts"]["read.ios"].as_u64().unwrap_or(0))
        .collect()
}

#[test]
fn a_killed_shard_adds_its_seconds_in_the_window_and_the_merge_names_it_incomplete() {
    let dir = disk_tempdir();
    let (whole, killed) = (dir.path().join("whole"), dir.path().join("killed"));
    // Started together on the wall clock, the shards' seconds fall in the same slots.
    let at = start_in(2);
    let mut a = spawn_shard(&whole, "3s", &["--shard", "1/2", "--start-at", &at]);
    let mut b = spawn_shard(&killed, "3s", &["--shard", "2/2", "--start-at", &at]);
    // Its record, not its series, must hold a measured second: a second's row is written
    // before its record line (waiting on the series, a kill between them left none).
    storbench_bench::testing::wait_until(
        "a measured interval in the shard's record",
        std::time::Duration::from_secs(30),
        || !measured_reads(&killed).is_empty(),
    );
    b.kill().unwrap();
    b.wait().unwrap();
    assert!(a.wait().unwrap().success());
    let kept = measured_reads(&killed);
    let bundles = [only_bundle(&whole), only_bundle(&killed)];
    // Kept, and failed (exit 1): it is not the run's whole load.
    let merged = merge_ending(&bundles, &dir.path().join("merged"), 1);
    assert_eq!(merged["complete"], false, "{merged}");
    let shards = read_json(&dir.path().join("merged/shards.json"));
    assert_eq!(shards["complete"], false);
    let said = shards["missing"].as_array().unwrap();
    let host = storbench_bench::monitor::host().hostname;
    let named = format!("shard 2/2 ({host}): incomplete");
    assert!(said.iter().any(|m| m.as_str().unwrap().starts_with(&named)), "{named}: {said:?}");
    assert_eq!(shards["shards"][1]["intervals"].as_u64(), Some(kept.len() as u64), "{shards}");
    // Every second the killed shard measured lies in the whole one's window, and adds to it.
    let read = |s: &serde_json::Value| s["results"]["read"]["ios"].as_u64().unwrap();
    let whole_reads = read(&read_json(&bundles[0].join("summary.json")));
    assert_eq!(read(&merged), whole_reads + kept.iter().sum::<u64>(), "{merged}");
}

#[test]
fn merge_refuses_one_bundle_the_same_bundle_twice_and_different_workloads() {
    let dir = disk_tempdir();
    let io = shards(dir.path(), 1, &["--shard", "1/2"]).remove(0);
    let out = dir.path().join("merged");
    let merge = |bundles: &[&Path]| {
        let mut cmd = storbench();
        cmd.arg("merge").args(bundles).arg("--out").arg(&out);
        cmd
    };
    refused(&mut merge(&[&io]), "two or more shards");
    refused(&mut merge(&[&io, &io]), "the same run's bundle");
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for f in ["record.jsonl", "latency.hlog", "summary.json"] {
        std::fs::copy(io.join(f), copy.join(f)).unwrap();
    }
    refused(&mut merge(&[&io, &copy]), "the same run's bundle");
    // The copy as another run's shard 1/2 (another start): two bundles of one shard.
    let record = std::fs::read_to_string(io.join("record.jsonl")).unwrap();
    let epoch = serde_json::from_str::<serde_json::Value>(record.lines().next().unwrap()).unwrap()["start"]
        ["epoch_ns"]
        .to_string();
    let later = (epoch.parse::<i128>().unwrap() + 1).to_string();
    std::fs::write(copy.join("record.jsonl"), record.replacen(&epoch, &later, 1)).unwrap();
    let err = refused(&mut merge(&[&io, &copy]), "both claim to be shard 1/2");
    assert!(err.contains(io.to_str().unwrap()) && err.contains(copy.to_str().unwrap()), "{err}");
    let oltp = dir.path().join("oltp");
    crate::support::sqlite_oltp_run(dir.path(), &oltp, &["--run-time", "1s", "--warmup-time", "0"]);
    let err = refused(&mut merge(&[&io, &only_bundle(&oltp)]), "different workloads");
    assert!(err.contains("is io") && err.contains("is oltp"), "{err}");
    // Issue 37: a shard of another launch (its own start time), one whose summary.json was
    // edited (its record rebuilds another), one without its per-second series: refused, by
    // name, before anything is summed.
    let run_shard = |name: &str, extra: &[&str]| {
        let results = dir.path().join(name);
        assert!(spawn_shard(&results, "2s", extra).wait().unwrap().success());
        only_bundle(&results)
    };
    let launched = run_shard("launched", &["--shard", "2/2", "--start-at", &start_in(1)]);
    refused(&mut merge(&[&io, &launched]), "are of different launches");
    let second = run_shard("second", &["--shard", "2/2"]);
    let summary = std::fs::read_to_string(second.join("summary.json")).unwrap();
    let edited = summary.replacen("\"ios\": ", "\"ios\": 1", 1);
    assert_ne!(edited, summary);
    std::fs::write(second.join("summary.json"), &edited).unwrap();
    let err = refused(&mut merge(&[&io, &second]), "its summary.json does not match its record");
    assert!(err.contains(second.to_str().unwrap()), "{err}");
    std::fs::write(second.join("summary.json"), &summary).unwrap();
    std::fs::remove_file(second.join("timeseries.csv")).unwrap();
    refused(&mut merge(&[&io, &second]), "its per-second series");
    assert!(!out.exists(), "nothing written on refusal");
}
