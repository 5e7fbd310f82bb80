//! Runs on storage that is rebuilding: a run that starts while its filesystem is being
//! scrubbed (a real btrfs scrub on a loop device, throttled so it outlasts the run's start)
//! says so in its warnings, and a run on idle storage does not; a btrfs replace during a run
//! is in its series second by second, with every device of the RAID1 counted.

use crate::device::Loop;
use crate::support::{disk_tempdir, stdout_json, storbench};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use storbench_bench::testing::skip;
use storbench_report::columns::{rebuild, system};
use storbench_report::render::timeseries::Series;

fn sh(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A btrfs on loop devices, mounted; unmounted on drop (before the loop devices are detached).
struct Mounted {
    point: String,
    /// Its devices (a RAID1's two members, then a spare).
    devices: Vec<Loop>,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // The scrub's process may hold the filesystem a moment after it is cancelled.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !sh("umount", &[&self.point]) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn btrfs_on_loop(dir: &Path) -> Option<Mounted> {
    let image = dir.join("disk.img");
    std::fs::File::create(&image).unwrap().set_len(1 << 30).unwrap();
    let device = Loop::attach(&image)?;
    let point = dir.join("mnt");
    std::fs::create_dir(&point).unwrap();
    let point = point.to_str().unwrap().to_string();
    (sh("mkfs.btrfs", &["-f", &device.0]) && sh("mount", &[&device.0, &point]))
        .then_some(Mounted { point, devices: vec![device] })
}

fn io_warnings(target: &str, results: &Path) -> Vec<String> {
    let a = storbench()
        .args([
            "io",
            "--target",
            target,
            "--size",
            "16M",
            "--rw",
            "randread",
            "--runtime",
            "0.5",
            "--ramp",
            "0",
        ])
        .args(["--json", "--output-dir"])
        .arg(results)
        .assert()
        .success();
    let s = stdout_json(&a);
    s["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_run_that_starts_during_a_scrub_says_so_and_one_on_idle_storage_does_not() {
    let dir = disk_tempdir();
    let Some(fs) = btrfs_on_loop(dir.path()) else {
        return skip(
            "no btrfs on a loop device (root, losetup and mkfs.btrfs needed)",
            "install btrfs-progs, run as root",
        );
    };
    let idle = io_warnings(&fs.point, &dir.path().join("idle"));
    assert!(!idle.iter().any(|w| w.contains("under way")), "{idle:?}");

    // 64 MiB to scrub at 1 MiB/s: the scrub outlasts the run's start by far.
    std::fs::write(Path::new(&fs.point).join("data"), vec![5u8; 64 << 20]).unwrap();
    assert!(sh("sync", &["-f", &fs.point]));
    let uuid =
        String::from_utf8(Command::new("findmnt").args(["-no", "UUID", &fs.point]).output().unwrap().stdout)
            .unwrap();
    let speed = format!("/sys/fs/btrfs/{}/devinfo/1/scrub_speed_max", uuid.trim());
    std::fs::write(&speed, "1m").unwrap();
    let mut scrub = Command::new("btrfs")
        .args(["scrub", "start", "-B", &fs.point])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    storbench_bench::testing::wait_until("the scrub to be under way", Duration::from_secs(20), || {
        let out = Command::new("btrfs").args(["scrub", "status", &fs.point]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).contains("running")
    });
    let during = io_warnings(&fs.point, &dir.path().join("scrub"));
    let _ = sh("btrfs", &["scrub", "cancel", &fs.point]);
    let _ = scrub.wait();
    let said = during.iter().find(|w| w.contains("was under way when the run started")).cloned();
    let said = said.unwrap_or_else(|| panic!("no rebuild warning: {during:?}"));
    assert!(said.starts_with(&format!("{}: scrub", fs.point)), "{said}");
    assert!(said.contains("% done") && said.contains("not of normal storage"), "{said}");
    let bundle = crate::support::only_bundle(&dir.path().join("scrub"));
    storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(0);
}

/// A btrfs RAID1 of two loop devices with a third attached beside it, mounted.
fn raid1_on_loops(dir: &Path) -> Option<Mounted> {
    let mut devices = Vec::new();
    for image in ["a.img", "b.img", "spare.img"] {
        let image = dir.join(image);
        // Sparse: only what the test writes takes room; a replace needs room beside the data.
        std::fs::File::create(&image).unwrap().set_len(1 << 30).unwrap();
        devices.push(Loop::attach(&image)?);
    }
    let point = dir.join("mnt");
    std::fs::create_dir(&point).unwrap();
    let point = point.to_str().unwrap().to_string();
    let (a, b) = (&devices[0].0, &devices[1].0);
    let made = sh("mkfs.btrfs", &["-f", "-d", "raid1", "-m", "raid1", a, b]) && sh("mount", &[a, &point]);
    made.then_some(Mounted { point, devices })
}

/// The kernel name of a `/dev` node.
fn kernel_name(node: &str) -> &str {
    node.trim_start_matches("/dev/")
}

#[test]
fn a_replace_during_a_run_is_in_its_series_with_every_device_and_in_its_warnings() {
    let dir = disk_tempdir();
    let Some(raid) = raid1_on_loops(dir.path()) else {
        return skip(
            "no btrfs RAID1 on loop devices (root, losetup and mkfs.btrfs needed)",
            "install btrfs-progs, run as root",
        );
    };
    // 128 MiB to copy, committed, at 24 MiB/s (a replace is paced by its source's scrub
    // throttle): the replace lasts five seconds or so of the run, several readings of the btrfs
    // thread even on a busy machine.
    let chunk: Vec<u8> = (0..4u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let mut file = std::fs::File::create(Path::new(&raid.point).join("data")).unwrap();
    for _ in 0..32 {
        std::io::Write::write_all(&mut file, &chunk).unwrap();
    }
    drop(file);
    assert!(sh("sync", &["-f", &raid.point]));
    let uuid = Command::new("findmnt").args(["-no", "UUID", &raid.point]).output().unwrap().stdout;
    let uuid = String::from_utf8(uuid).unwrap();
    std::fs::write(format!("/sys/fs/btrfs/{}/devinfo/2/scrub_speed_max", uuid.trim()), "24m").unwrap();

    // Writes, paced: a RAID1 writes each to both members.
    let results = dir.path().join("results");
    let run = Command::new(assert_cmd::cargo::cargo_bin!("storbench"))
        .args(["io", "--target", &raid.point, "--size", "16M", "--rw", "randwrite", "--bs", "64k"])
        .args(["--rate-iops", "400", "--runtime", "12", "--ramp", "0", "--json", "--output-dir"])
        .arg(&results)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    storbench_bench::testing::wait_until("the run to measure", Duration::from_secs(30), || {
        std::fs::read_dir(&results)
            .is_ok_and(|d| d.flatten().any(|b| b.path().join("timeseries.csv").exists()))
    });
    let (old, new) = (&raid.devices[1].0, &raid.devices[2].0);
    let replaced =
        Command::new("btrfs").args(["replace", "start", "-B", "-f", old, new, &raid.point]).output().unwrap();
    assert!(replaced.status.success(), "{replaced:?}");
    let out = run.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let bundle = crate::support::only_bundle(&results);
    let series = Series::parse(&std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap()).unwrap();

    // The replace's progress, every second while it runs, never falling, then idle. btrfs
    // moves its progress a block group at a time (a data block group here is about 100 MiB),
    // so readings within one group repeat the same figure: it need not rise between two.
    let actions = series.each(rebuild::PREFIX, rebuild::ACTION);
    let pct = series.each(rebuild::PREFIX, rebuild::PCT_DONE);
    assert_eq!((actions.len(), actions[0].0), (1, raid.point.as_str()), "{actions:?}");
    let replace = rebuild::code("replace").map(|c| c as f64);
    let rows: Vec<usize> = (0..series.t_s.len()).filter(|&i| actions[0].1[i] == replace).collect();
    let progress: Vec<f64> =
        rows.iter().map(|&i| pct[0].1[i].expect("a replace says how far it is")).collect();
    assert!(
        progress.len() >= 2
            && progress.windows(2).all(|w| w[0] <= w[1])
            && progress.iter().all(|p| (0.0..100.0).contains(p)),
        "{progress:?}"
    );
    let after = rows[rows.len() - 1] + 1;
    assert_eq!(actions[0].1.get(after), Some(&Some(0.0)), "idle once it finished: {actions:?}");

    // Both members on their own, and the new device in the run's totals from when it joined.
    let writes = series.each_device(system::DISK_WRITE_BYTES_PER_SEC);
    let mut members: Vec<&str> = writes.iter().map(|(device, _)| *device).collect();
    members.sort_unstable();
    let mut expected = vec![kernel_name(&raid.devices[0].0), kernel_name(old)];
    expected.sort_unstable();
    assert_eq!(members, expected);
    assert!(writes.iter().all(|(_, w)| w[0].is_some_and(|w| w > 0.0)), "{writes:?}");
    let total = series.column(system::DISK_WRITE_BYTES_PER_SEC).unwrap();
    let beside_members: f64 = (0..series.t_s.len())
        .map(|i| total[i].unwrap_or(0.0) - writes.iter().map(|(_, w)| w[i].unwrap_or(0.0)).sum::<f64>())
        .sum();
    assert!(beside_members > (40 << 20) as f64, "the new device wrote {beside_members} B/s-seconds");

    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = summary["warnings"].as_array().unwrap();
    let said = warnings.iter().filter_map(|w| w.as_str()).find(|w| w.contains("replace during the run"));
    let said = said.unwrap_or_else(|| panic!("no rebuild warning: {warnings:?}"));
    // btrfs runs a replace on its scrub machinery: a reading taken as the replace starts may
    // see a scrub running (seen once in CI: "scrub and replace during the run"), so the
    // warning names the replace among what it saw.
    assert!(
        said.starts_with(&format!("{}: ", raid.point))
            && said.contains("replace during the run")
            && said.contains("then finished"),
        "{said}"
    );
    let record = std::fs::read_to_string(bundle.join("record.jsonl")).unwrap();
    assert!(record.contains("\"action\":\"replace\""), "the record keeps the readings");
    storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(0);
    let disclosure: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("disclosure.json")).unwrap()).unwrap();
    let disclosed: Vec<&str> =
        disclosure["targets"][0]["devices"].as_array().unwrap().iter().filter_map(|d| d.as_str()).collect();
    assert_eq!(disclosed.len(), 2, "{disclosed:?}");
    assert!(expected.iter().all(|d| disclosed.contains(d)), "{disclosed:?}");
}
