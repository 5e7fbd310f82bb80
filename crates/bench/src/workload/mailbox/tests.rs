//! The transactional run on real files: what a user relies on from a short run.

use super::*;
use crate::engine::EngineKind;
use crate::run::StopFlag;
use crate::testing::NoHost;
use std::time::Duration;

/// Creates `dbs` databases of `pages` pages with `preset` in a fresh directory.
pub(super) fn created(preset: Preset, dbs: u32, pages: u64) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let p = preset.profile();
    let manifest = Manifest {
        version: layout::MANIFEST_VERSION,
        preset: preset.name().into(),
        page_size: p.page_size,
        log_file_size: p.log_file_size,
        log_dir: dir.path().to_path_buf(),
        log_block: 4096,
        seed: 7,
        databases: (1..=dbs)
            .map(|id| DbState {
                id,
                initial_pages: pages,
                pages,
                next_generation: 1,
                log_from: None,
                files: None,
            })
            .collect(),
        clean: true,
    };
    layout::create_all(dir.path(), &manifest, EngineKind::IoUring, &StopFlag::new(), &mut |_, _| {}).unwrap();
    (dir, manifest)
}

pub(super) fn spec(preset: Preset, threads: u32, secs: u64) -> MailboxSpec {
    let mut profile = preset.profile();
    profile.cache_max = 4 << 20;
    MailboxSpec {
        preset,
        test: TestType::Performance,
        profile,
        thresholds: preset.thresholds(TestType::Performance),
        threads,
        target_iops: None,
        duration: Duration::from_secs(secs),
        max_warmup: Duration::from_secs(1),
        steady_latency: false,
        sample_window: Duration::from_secs(15),
        seed: 7,
        engine: EngineKind::IoUring,
        keep_logs: false,
        log_files_limit: None,
        steady_state: None,
    }
}

#[test]
fn a_short_run_reads_writes_and_logs_at_the_presets_shape_and_records_the_growth() {
    let (dir, mut m) = created(Preset::V2007, 2, 8192);
    let mut rows = Vec::new();
    let out = run(&spec(Preset::V2007, 8, 3), dir.path(), &mut m, &mut NoHost, &StopFlag::new(), &mut |i| {
        rows.push(i.row.clone())
    })
    .unwrap();
    let t = &out.totals.total;
    eprintln!(
        "ops {} reads {} writes {} log {} bytes/log {} stalls {} lazy {} sync {} cpu {:?} measured {}",
        t.operations(),
        t.db_reads.ios,
        t.db_writes.ios,
        t.log_writes.ios,
        t.log_writes.bytes / t.log_writes.ios.max(1),
        t.page_fault_stalls,
        t.lazy_commits,
        t.sync_commits,
        out.cpu,
        out.measured_s
    );
    assert!(out.complete, "{:?}", out.failures);
    assert!(t.lag.is_empty(), "unpaced: no schedule lag");
    assert!(t.db_reads.ios > 100 && t.db_writes.ios > 10 && t.log_writes.ios > 10);
    assert_eq!(t.checksum_errors, 0, "{:?}", t.corruptions);
    assert_eq!(t.errors.total(), 0);
    let lazy = t.lazy_commits as f64 / (t.lazy_commits + t.sync_commits) as f64;
    assert!((0.45..0.65).contains(&lazy), "2007 commits 55 % lazily: {lazy}");
    assert!(m.clean && m.databases.iter().all(|d| d.pages >= 8192));
    assert!(rows.iter().any(|r| r.phase == storbench_report::series::Phase::Measure));
    let v = verify(dir.path(), &m, 2, &StopFlag::new(), &mut |_, _| {}).unwrap();
    assert!(v.ok(), "{:?}", v.first);
    assert!(v.pages_checked >= 2 * 8192 && v.log_blocks_checked > 0, "{v:?}");
}

/// One database run until it has filled `logs` log files, then stopped as by a crash (its
/// cache not written, the logs kept); returns it with the first generation to replay.
fn crashed_after(logs: u32) -> (tempfile::TempDir, Manifest, u32, MailboxOutcome) {
    let (dir, mut m) = created(Preset::V2013, 1, 2048);
    let first = m.databases[0].next_generation;
    let mut s = spec(Preset::V2013, 4, 60);
    s.max_warmup = Duration::ZERO;
    s.keep_logs = true;
    s.log_files_limit = Some(logs);
    let out = run(&s, dir.path(), &mut m, &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap();
    (dir, m, first, out)
}

/// The replay of one database's logs from generation `first` on, with a 4 MiB cache.
fn replayed(
    dir: &std::path::Path,
    m: &mut Manifest,
    first: u32,
    on_interval: &mut dyn FnMut(&RecoveryInterval),
) -> RecoveryOutcome {
    replay(dir, m, &[first], 4 << 20, EngineKind::IoUring, &mut NoHost, &StopFlag::new(), on_interval)
        .unwrap()
}

#[test]
fn an_unclean_stop_after_n_log_files_is_replayed_and_the_databases_verify() {
    let (dir, mut m, first, out) = crashed_after(3);
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    assert!(!m.clean, "a crash leaves the databases unclean");
    let files = m.files(dir.path());
    assert!(files[0].log_generations().len() >= 3, "the logs are kept: {:?}", files[0].log_generations());
    let mut seconds = crate::run::Parts::<RecoveryTally>::default();
    let r = replayed(dir.path(), &mut m, first, &mut |c| {
        crate::run::IntervalData::merge(&mut seconds, c.interval.data)
    });
    let t = &r.totals.total;
    assert!(t.logs >= 3 && t.records > 100 && t.pages_read > 0 && t.pages_written > 0, "{r:?}");
    assert_eq!(t.corruptions, 0, "{:?}", r.detail.first);
    assert_eq!(seconds.total, *t, "the replay's seconds add up to it");
    assert!(r.complete && m.clean);
    let per_log = crate::workload::mailbox::summary::seconds_per_log(t.logs, &r.detail.seconds);
    assert!(r.measured_s > 0.0 && per_log.unwrap() > 0.0, "{r:?}");
    let v = verify(dir.path(), &m, 2, &StopFlag::new(), &mut |_, _| {}).unwrap();
    assert!(v.ok(), "{:?}", v.first);
}

#[test]
fn replay_stops_at_a_damaged_log_block_and_never_redoes_what_follows() {
    use std::os::unix::fs::FileExt;
    let (dir, mut m, first, _) = crashed_after(4);
    let files = m.files(dir.path());
    assert!(files[0].log_generations().len() >= 4, "{:?}", files[0].log_generations());
    let size_before = std::fs::metadata(&files[0].db).unwrap().len();
    // Garbage in the middle of the second log file (a full one).
    let log = std::fs::OpenOptions::new().write(true).open(files[0].log_path(first + 1)).unwrap();
    log.write_all_at(&[0xAB; 4096], 512 << 10).unwrap();
    let r = replayed(dir.path(), &mut m, first, &mut |_| {});
    assert_eq!(r.totals.total.corruptions, 1, "{:?}", r.detail.first);
    let damaged = files[0].log_path(first + 1).file_name().unwrap().to_string_lossy().to_string();
    assert!(r.detail.first[0].file.ends_with(&damaged), "{:?}", r.detail.first);
    assert_eq!(r.totals.total.logs, 2, "the first file and the intact part of the second: {r:?}");
    let size_after = std::fs::metadata(&files[0].db).unwrap().len();
    assert!(
        size_after <= size_before + (16 << 20),
        "replay wrote beyond the database: {size_before} -> {size_after}"
    );
}

#[test]
fn a_target_rate_paces_the_run_to_the_transactional_iops_asked_for() {
    let (dir, mut m) = created(Preset::V2013, 1, 4096);
    let mut s = spec(Preset::V2013, 16, 4);
    s.target_iops = Some(1500.0);
    let out = run(&s, dir.path(), &mut m, &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap();
    let achieved = out.totals.total.transactional_ios() as f64 / out.measured_s;
    assert!((1275.0..1725.0).contains(&achieved), "asked 1500 transactional IOPS, got {achieved:.0}");
    let target = out.detail.verdict.checks.iter().find(|c| c.name == "target_iops").unwrap();
    assert!(target.pass && target.limit == 1500.0 * 0.95, "{target:?}");
    // Every operation begun was paced and its lag kept: those finished, give or take the 16
    // sessions' operations running at either end of the measured phase.
    let t = &out.totals.total;
    assert!(
        t.lag.count().abs_diff(t.operations()) <= 2 * 16,
        "{} lags, {} ops",
        t.lag.count(),
        t.operations()
    );
    let max = t.lag.quantile_ns(1.0);
    assert!(max <= 1_001_000_000, "never more than the 1 s the pacer catches up: {max} ns");
}

#[test]
fn a_low_target_rate_is_reached_too() {
    // 100 transactional IOPS: a few dozen operations a second, below what one second shows.
    let (dir, mut m) = created(Preset::V2013, 1, 4096);
    let mut s = spec(Preset::V2013, 4, 6);
    s.target_iops = Some(100.0);
    let out = run(&s, dir.path(), &mut m, &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap();
    let achieved = out.totals.total.transactional_ios() as f64 / out.measured_s;
    assert!((80.0..125.0).contains(&achieved), "asked 100 transactional IOPS, got {achieved:.0}");
}
