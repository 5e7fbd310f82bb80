//! `storbench capture` on a real loop device while `storbench io` runs on it: the trace holds
//! every request io made, with its kind and size, and `storbench fingerprint` reads it back;
//! a capture of what is not a device is refused.

use crate::device::Loop;
use crate::support::{disk_tempdir, json, refused, storbench};
use storbench_bench::testing::skip;

#[test]
fn a_capture_holds_every_request_a_run_made_and_its_fingerprint_says_what_they_were() {
    let dir = disk_tempdir();
    let image = dir.path().join("disk.img");
    std::fs::File::create(&image).unwrap().set_len(128 << 20).unwrap();
    let Some(dev) = Loop::attach(&image) else {
        return skip("no loop device could be attached (losetup failed)", "run the tests as root");
    };
    let trace = dir.path().join("run.sbtrace");
    let capture = std::process::Command::new(storbench().get_program())
        .args(["capture", "--device", &dev.0, "--duration", "4", "--json", "--out"])
        .arg(&trace)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    storbench_bench::testing::wait_until("the capture to start", std::time::Duration::from_secs(10), || {
        trace.exists()
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let ran = storbench()
        .args([
            "io",
            "--target",
            &dev.0,
            "--allow-device",
            "--rw",
            "randrw",
            "--rwmix-read",
            "70",
            "--bs",
            "8k",
        ])
        .args([
            "--iodepth",
            "4",
            "--runtime",
            "1.5",
            "--ramp",
            "0",
            "--power",
            "none",
            "--json",
            "--output-dir",
        ])
        .arg(dir.path().join("results"))
        .assert()
        .success();
    let io = json(&ran.get_output().stdout);
    let pid = capture.id();
    let out = capture.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let captured = json(&out.stdout);
    let (reads, writes) =
        (io["results"]["read"]["ios"].as_u64().unwrap(), io["results"]["write"]["ios"].as_u64().unwrap());
    let f = &captured["fingerprint"];
    // Every request of the run is in the trace (the kernel may add a few of its own: a
    // partition table's read as the device is opened).
    let (r, w) = (f["reads"].as_u64().unwrap(), f["writes"].as_u64().unwrap());
    assert!(r >= reads && r <= reads + reads / 100 + 16, "trace {r} reads, io {reads}");
    assert!(w >= writes && w <= writes + writes / 100 + 16, "trace {w} writes, io {writes}");
    assert_eq!(captured["never_completed"], 0, "{captured}");
    let eight_k = f["size_histogram"]["8192"].as_u64().unwrap();
    assert!(eight_k >= reads + writes, "{}", f["size_histogram"]);
    let read_fraction = f["read_fraction"].as_f64().unwrap();
    assert!((read_fraction - 0.7).abs() < 0.03, "{read_fraction}");
    assert!(f["latency"]["read"]["p99_us"].as_f64().unwrap() > 0.0);
    // The trace on disk reads back to the same fingerprint.
    let again = storbench().arg("fingerprint").arg(&trace).arg("--json").assert().success();
    let again = json(&again.get_output().stdout);
    for key in ["requests", "read_fraction", "size_histogram", "sequential_fraction", "mean_iops"] {
        assert_eq!(again[key], f[key], "{key}");
    }
    // The capture's tracing instance is gone with it.
    let instance = format!("/sys/kernel/tracing/instances/storbench-{pid}-capture");
    assert!(!std::path::Path::new(&instance).exists(), "{instance} is left");
}

#[test]
fn a_capture_of_what_is_not_a_device_or_an_unreadable_trace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    refused(storbench().args(["capture", "--device"]).arg(&file), "not a block device");
    refused(storbench().arg("fingerprint").arg(&file), "not a storbench trace");
}
