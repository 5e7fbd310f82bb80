//! summary.json read back with types written independently of the report crate: the fields a
//! script relies on exist, with the documented meaning.

use crate::support::{only_bundle, storbench};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Summary {
    schema_version: u32,
    tool: serde_json::Value,
    workload: String,
    name: String,
    complete: bool,
    started_at: String,
    ended_at: Option<String>,
    seed: u64,
    host: serde_json::Value,
    parameters: serde_json::Value,
    target: serde_json::Value,
    engine: String,
    phases: Phases,
    results: Results,
    cpu: Cpu,
    warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Phases {
    ramp_s: f64,
    measured_s: f64,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Results {
    read: Direction,
    write: Direction,
    errors: serde_json::Value,
    verify: serde_json::Value,
}

#[derive(Deserialize)]
struct Direction {
    ios: u64,
    bytes: u64,
    iops: f64,
    bytes_per_sec: f64,
    lat_ns: Option<Lat>,
}

#[derive(Deserialize)]
struct Lat {
    mean: f64,
    p50: u64,
    p90: u64,
    p99: u64,
    p999: u64,
    max: u64,
}

#[derive(Deserialize)]
struct Cpu {
    user_s: f64,
    sys_s: f64,
    ns_per_io: Option<f64>,
}

#[test]
fn a_size_based_null_run_does_exactly_the_io_asked_for_and_the_summary_says_so() {
    let out = tempfile::tempdir().unwrap();
    let assert = storbench()
        .args(["io", "--engine", "null", "--bs", "4k", "--io-size", "4MiB", "--ramp", "0", "--json"])
        .arg("--output-dir")
        .arg(out.path())
        .assert()
        .success();
    let s: Summary = serde_json::from_slice(&assert.get_output().stdout).expect("summary.json schema");
    assert_eq!(s.schema_version, 1);
    assert_eq!((s.workload.as_str(), s.engine.as_str(), s.complete), ("io", "null", true));
    assert_eq!(s.results.read.ios, 1024, "4 MiB of 4 KiB reads");
    assert_eq!(s.results.read.bytes, 4 << 20);
    assert_eq!(s.results.write.ios, 0);
    assert!(s.results.write.lat_ns.is_none(), "no writes, no write latency");
    let lat = s.results.read.lat_ns.as_ref().expect("read latency");
    assert!(lat.p50 <= lat.p90 && lat.p90 <= lat.p99 && lat.p99 <= lat.p999 && lat.p999 <= lat.max);
    assert!(lat.mean > 0.0);
    let r = &s.results.read;
    assert!(r.iops > 0.0 && (r.bytes_per_sec / (r.iops * 4096.0) - 1.0).abs() < 1e-9);
    assert!(s.phases.measured_s > 0.0 && s.phases.ramp_s == 0.0);
    assert!(s.cpu.user_s + s.cpu.sys_s >= 0.0 && s.cpu.ns_per_io.is_some());
    assert!(s.ended_at.is_some() && s.seed == 1);
    let on_disk = std::fs::read(only_bundle(out.path()).join("summary.json")).unwrap();
    let s2: Summary = serde_json::from_slice(&on_disk).unwrap();
    assert_eq!(s2.results.read.ios, 1024, "the bundle holds the same summary as stdout");
}

#[test]
fn the_same_seed_gives_the_same_io_and_the_seed_is_recorded() {
    let run = |seed: &str| {
        let out = tempfile::tempdir().unwrap();
        let a = storbench()
            .args(["io", "--engine", "null", "--rw", "randrw", "--bs", "4k/50:64k/50", "--io-size", "8MiB"])
            .args(["--ramp", "0", "--json", "--seed", seed])
            .arg("--output-dir")
            .arg(out.path())
            .assert()
            .success();
        let s: Summary = serde_json::from_slice(&a.get_output().stdout).unwrap();
        (s.seed, s.results.read.ios, s.results.write.ios, s.results.read.bytes)
    };
    let a = run("7");
    assert_eq!(a, run("7"));
    assert_ne!(a, run("8"), "another seed draws another mix");
    assert_eq!(a.0, 7);
}
