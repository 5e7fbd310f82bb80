//! `storbench capture` on a real loop device while `storbench io` runs on it: the trace holds
//! every request io made, with its kind and size, and `storbench fingerprint` reads it back;
//! a capture of what is not a device is refused.

use crate::device::Loop;
use crate::support::{disk_tempdir, json, refused, storbench};
use storbench_bench::testing::skip;

/// Two blank 64 MiB loop devices over files in `dir`.
fn two_loops(dir: &std::path::Path) -> Option<(Loop, Loop)> {
    let images: Vec<_> = ["a.img", "b.img"].iter().map(|n| dir.join(n)).collect();
    for image in &images {
        std::fs::File::create(image).unwrap().set_len(64 << 20).unwrap();
    }
    Some((Loop::attach(&images[0])?, Loop::attach(&images[1])?))
}

/// `storbench capture --json` of `device` for `seconds` into `trace`, once it is recording.
fn start_capture(device: &str, trace: &std::path::Path, seconds: &str) -> std::process::Child {
    let capture = std::process::Command::new(storbench().get_program())
        .args(["capture", "--device", device, "--duration", seconds, "--json", "--out"])
        .arg(trace)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    storbench_bench::testing::wait_until("the capture to start", std::time::Duration::from_secs(10), || {
        trace.exists()
    });
    // The file is made just before the tracing instance is set up.
    std::thread::sleep(std::time::Duration::from_millis(300));
    capture
}

#[test]
fn a_capture_holds_every_request_a_run_made_and_its_fingerprint_says_what_they_were() {
    let dir = disk_tempdir();
    let image = dir.path().join("disk.img");
    std::fs::File::create(&image).unwrap().set_len(128 << 20).unwrap();
    let Some(dev) = Loop::attach(&image) else {
        return skip("no loop device could be attached (losetup failed)", "run the tests as root");
    };
    let trace = dir.path().join("run.sbtrace");
    let capture = start_capture(&dev.0, &trace, "4");
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

#[test]
fn a_trace_replayed_on_another_device_reproduces_its_requests_and_rate() {
    let dir = disk_tempdir();
    let Some((a, b)) = two_loops(dir.path()) else {
        return skip("no loop devices could be attached (losetup failed)", "run the tests as root");
    };
    let trace = dir.path().join("a.sbtrace");
    let capture = start_capture(&a.0, &trace, "3");
    storbench()
        .args([
            "io",
            "--target",
            &a.0,
            "--allow-device",
            "--rw",
            "randrw",
            "--rwmix-read",
            "60",
            "--bs",
            "4k",
        ])
        .args(["--rate-iops", "2000", "--runtime", "1.5", "--ramp", "0", "--power", "none", "--output-dir"])
        .arg(dir.path().join("results"))
        .assert()
        .success();
    assert!(capture.wait_with_output().unwrap().status.success());

    // Never over the captured device unless told.
    let refused = storbench()
        .args(["replay-trace"])
        .arg(&trace)
        .args(["--target", &a.0, "--allow-device"])
        .assert()
        .code(2);
    assert!(crate::support::stderr_text(&refused).contains("captured from"));

    let check = dir.path().join("b.sbtrace");
    let ran = storbench()
        .arg("replay-trace")
        .arg(&trace)
        .args(["--target", &b.0, "--allow-device", "--json", "--check"])
        .arg(&check)
        .assert()
        .success();
    let out = json(&ran.get_output().stdout);
    let figures = out["check"]["figures"].as_array().unwrap();
    for f in figures {
        assert_eq!(f["pass"], true, "{f}");
    }
    let count = figures.iter().find(|f| f["name"] == "reads and writes").unwrap();
    assert!(count["original"].as_f64().unwrap() >= 2000.0, "{count}");
    assert_eq!(count["distance"], 0.0, "every request replayed: {count}");
    assert!(out["errors"].as_object().unwrap().is_empty(), "{out}");
}

#[test]
fn an_io_job_like_a_trace_has_the_traces_fingerprint_within_ten_percent() {
    let dir = disk_tempdir();
    let Some((a, b)) = two_loops(dir.path()) else {
        return skip("no loop devices could be attached (losetup failed)", "run the tests as root");
    };
    let io = |device: &str, job: &[&str]| {
        storbench()
            .args(["io", "--target", device, "--allow-device", "--ramp", "0", "--power", "none"])
            .args(job)
            .arg("--output-dir")
            .arg(dir.path().join("results"))
            .assert()
            .success();
    };
    let (trace, like) = (dir.path().join("a.sbtrace"), dir.path().join("b.sbtrace"));
    let capture = start_capture(&a.0, &trace, "3");
    let job = [
        "--rw",
        "randrw",
        "--rwmix-read",
        "60",
        "--bs",
        "4k/70:64k/30",
        "--iodepth",
        "4",
        "--rate-iops",
        "1500",
    ];
    io(&a.0, &[&job[..], &["--runtime", "1.5"]].concat());
    assert!(capture.wait_with_output().unwrap().status.success());
    let capture = start_capture(&b.0, &like, "3");
    io(&b.0, &["--like", trace.to_str().unwrap()]);
    assert!(capture.wait_with_output().unwrap().status.success());

    let fingerprint = |t: &std::path::Path| {
        json(&storbench().arg("fingerprint").arg(t).arg("--json").assert().success().get_output().stdout)
    };
    let (original, made) = (fingerprint(&trace), fingerprint(&like));
    let data = |f: &serde_json::Value| (f["reads"].as_u64().unwrap() + f["writes"].as_u64().unwrap()) as f64;
    let rate = |f: &serde_json::Value| data(f) / f["duration_s"].as_f64().unwrap();
    let share =
        |f: &serde_json::Value, size: &str| f["size_histogram"][size].as_f64().unwrap_or(0.0) / data(f);
    let within = |what: &str, x: f64, y: f64| {
        assert!((x - y).abs() <= 0.10 * x.abs().max(1e-9), "{what}: {x} and {y}")
    };
    within("requests", data(&original), data(&made));
    within("rate", rate(&original), rate(&made));
    within(
        "read share",
        original["read_fraction"].as_f64().unwrap(),
        made["read_fraction"].as_f64().unwrap(),
    );
    within("4 KiB share", share(&original, "4096"), share(&made, "4096"));
    within("64 KiB share", share(&original, "65536"), share(&made, "65536"));
}
