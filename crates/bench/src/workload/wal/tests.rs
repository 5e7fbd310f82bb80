//! The commit path on real files: a disk's (every method, one and two writers), tmpfs's (where
//! O_DIRECT is refused and a sync is far too fast to be durable), and the rules a user relies
//! on: nothing measured counts from the warm-up, no file is left behind, and no file already
//! there is written.

use super::*;
use crate::testing::NoHost;
use std::time::Duration;

fn spec(dir: &std::path::Path, methods: &[SyncMethod], writers: &[u32]) -> WalSpec {
    WalSpec {
        dir: dir.to_path_buf(),
        methods: methods.to_vec(),
        layouts: vec![Layout::Preallocated, Layout::Growing],
        sizes: vec![4096],
        writers: writers.to_vec(),
        file_bytes: 1 << 20,
        warmup: Duration::from_millis(200),
        seconds: Duration::from_secs(1),
        seed: 7,
    }
}

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn every_method_commits_on_a_disk_and_each_point_counts_only_its_measured_commits() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let methods = [SyncMethod::Fdatasync, SyncMethod::OpenDatasync, SyncMethod::OpenDirectDatasync];
    let spec = spec(dir.path(), &methods, &[1, 2]);
    let mut seconds = std::collections::BTreeMap::<String, (u64, u64)>::new();
    let out = run(&spec, &mut NoHost, &StopFlag::new(), &mut |p, c| {
        let e = seconds.entry(p.to_string()).or_default();
        if c.row.phase == storbench_report::series::Phase::Measure {
            e.0 += 1;
            e.1 += c.interval.data.commits;
        }
    })
    .unwrap();
    assert_eq!(out.points.len(), 3 * 2 * 2);
    assert!(out.complete);
    for p in &out.points {
        let name = p.point.to_string();
        assert_eq!(p.not_offered, None, "{name}: ext4 takes O_DIRECT");
        assert!(p.commits > 0 && p.errors == 0 && p.complete, "{name}: {p:?}");
        // Every commit counted is in the histogram, and the rate is the count over the time.
        assert_eq!(p.latency.count(), p.commits, "{name}");
        assert!((p.commits_per_sec - p.commits as f64 / p.measured_s).abs() < 1e-6, "{name}");
        assert!((p.bytes_per_sec - 4096.0 * p.commits_per_sec).abs() < 1e-3, "{name}");
        assert!((p.measured_s - 1.0).abs() < 0.05, "{name}: measured {} s", p.measured_s);
        assert!(p.cpu_ns_per_commit.is_some_and(|ns| ns > 0.0), "{name}");
        // The measured seconds' rows add up to the point's commits: the warm-up's are apart.
        assert_eq!(seconds[&name].1, p.commits, "{name}: {:?}", seconds[&name]);
    }
    // One choice per layout and writer count, each among the methods measured.
    assert_eq!(out.fastest.len(), 2 * 2);
    assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "every log file is removed");
}

#[test]
fn on_tmpfs_o_direct_is_not_offered_and_a_sync_too_fast_to_be_durable_is_named() {
    let Ok(dir) = tempfile::tempdir_in("/dev/shm") else {
        return crate::testing::skip("a tmpfs at /dev/shm", "mount one: mount -t tmpfs tmpfs /dev/shm");
    };
    let methods = [SyncMethod::Fdatasync, SyncMethod::OpenDirectDatasync];
    let mut spec = spec(dir.path(), &methods, &[1]);
    spec.layouts = vec![Layout::Preallocated];
    let out = run(&spec, &mut NoHost, &StopFlag::new(), &mut |_, _| {}).unwrap();
    let [synced, direct] = &out.points[..] else { panic!("{:?}", out.points) };
    assert!(synced.commits > 0);
    let said = synced.implausible.as_deref().unwrap_or_default();
    assert!(said.contains("faster than any storage makes a write durable"), "{said}");
    // Before Linux 6.6 tmpfs refuses O_DIRECT: the point is not offered, saying so; since, it
    // is measured and as implausible as the other.
    match &direct.not_offered {
        Some(why) => assert!(why.contains("refuses O_DIRECT"), "{why}"),
        None => assert!(direct.implausible.is_some(), "{direct:?}"),
    }
    // No point is trusted, so no method is named the fastest safe one.
    assert_eq!(out.fastest.len(), 1);
    assert_eq!(out.fastest[0].method, None);
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

#[test]
fn a_file_already_at_a_log_files_name_is_never_written_and_a_stopped_run_measures_nothing() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let theirs = dir.path().join(format!("storbench-wal-{}-0.log", std::process::id()));
    std::fs::write(&theirs, b"not storbench's").unwrap();
    let spec = spec(dir.path(), &[SyncMethod::Fdatasync], &[1]);
    let e = run(&spec, &mut NoHost, &StopFlag::new(), &mut |_, _| {}).unwrap_err();
    assert!(e.contains(&theirs.display().to_string()), "{e}");
    assert_eq!(std::fs::read(&theirs).unwrap(), b"not storbench's");
    std::fs::remove_file(&theirs).unwrap();

    let stop = StopFlag::new();
    stop.stop();
    let out = run(&spec, &mut NoHost, &stop, &mut |_, _| {}).unwrap();
    assert!(out.points.is_empty() && !out.complete);
    let mut bad = spec.clone();
    bad.sizes = vec![100];
    assert!(run(&bad, &mut NoHost, &StopFlag::new(), &mut |_, _| {}).unwrap_err().contains("size 100 B"));
}
