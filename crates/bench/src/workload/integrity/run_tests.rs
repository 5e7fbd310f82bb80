//! The integrity workload end to end on real files: a healthy run finds nothing and audits
//! every page; runs with injected faults report them by class; damaged pages are counted
//! once, kept out of use and found again by a later audit (`integrity verify`).

use std::time::Duration;

use super::audit::audit;
use super::faults::{Fault, FaultRules, When};
use super::journal::Journal;
use super::layout::{Layout, Sizes};
use super::page::{PAGE, PageId};
use super::recorder::{Activity, CLASSES};
use super::run::{IntegrityInterval, IntegrityOutcome, IntegritySpec, create, run};
use super::suspects::{AuditFinding, SuspectPage};
use super::verdict::ErrorClass;
use crate::engine::EngineKind;
use crate::run::StopFlag;
use crate::testing::NoHost;

/// A small run: 4 MiB data growing to 6 MiB by 1 MiB, a 512 KiB log.
fn spec(dir: &std::path::Path, seconds: u64, faults: Option<FaultRules>) -> IntegritySpec {
    IntegritySpec {
        dir: dir.to_path_buf(),
        device: None,
        sizes: Sizes::from_bytes(4 << 20, 6 << 20, 1 << 20, 512 << 10),
        duration: Duration::from_secs(seconds),
        seed: 42,
        engine: EngineKind::IoUring,
        direct: false,
        write_through: false,
        users: 2,
        target_io: Duration::from_millis(100),
        delay_threshold: Duration::from_secs(15),
        sync_every: Duration::from_millis(200),
        shrink_every: Duration::from_millis(500),
        faults,
    }
}

fn run_on(spec: &IntegritySpec) -> IntegrityOutcome {
    let created = create(spec, &mut |_, _| {}).unwrap();
    let mut rows = 0;
    let out = run(spec, created, &mut NoHost, &StopFlag::new(), &mut |_| rows += 1, &mut |_, _| {}).unwrap();
    assert!(rows >= spec.duration.as_secs(), "one row a second");
    out
}

fn class_count(out: &IntegrityOutcome, class: ErrorClass) -> u64 {
    let in_run = out.totals.count_of(class);
    let audited = out.detail.audit.as_ref().and_then(|a| a.errors_by_class.get(&class).copied()).unwrap_or(0);
    in_run + audited
}

#[test]
fn a_healthy_run_drives_every_activity_grows_and_shrinks_and_finds_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), 3, None);
    let out = run_on(&spec);
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    for a in Activity::ALL {
        assert!(out.totals.activities[a.index()].ios() > 0, "{} did I/O", a.name());
    }
    assert_eq!(out.totals.errors_total(), 0, "{:?}", out.totals.records);
    let audit = out.detail.audit.as_ref().expect("audited");
    assert!(audit.ok(), "{:?}", audit.first_errors);
    let pages = (out.detail.data_final_bytes + (512 << 10)) / 8192;
    assert_eq!(audit.pages_checked, pages, "every page of both files");
    assert!(
        out.detail.grows >= 2 && out.detail.shrinks >= 1,
        "grew {} shrank {}",
        out.detail.grows,
        out.detail.shrinks
    );
    assert!(out.detail.acknowledged > 0);
    assert!(out.totals.activities[Activity::Random.index()].pages_checked > 0);
    let layout = Layout::new(dir.path());
    assert!(layout.load().unwrap().clean, "the manifest says the run ended cleanly");
}

#[test]
fn dropped_torn_and_misdirected_writes_and_eio_are_each_reported_in_their_class() {
    let cases = [
        (Fault::DropWrite, ErrorClass::LostWrites),
        (Fault::Tear { sectors: 3 }, ErrorClass::TornPages),
        (Fault::Misdirect, ErrorClass::MisplacedPages),
        (Fault::Eio, ErrorClass::WriteErrors),
    ];
    for (fault, class) in cases {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec(dir.path(), 2, Some(FaultRules::default().with(fault, When::OneIn(40))));
        let out = run_on(&spec);
        let injected: usize = out.detail.injections.iter().map(|l| l.all().len()).sum();
        assert!(injected > 0, "{fault:?} was injected");
        assert!(class_count(&out, class) > 0, "{fault:?} reported as {class:?}: {:?}", out.totals.errors);
        for other in CLASSES.iter().filter(|&&c| c != class && c != ErrorClass::LostWrites) {
            // A misdirected write lands on a page nobody marked busy, so a read of that page
            // in flight at the same moment may see it half written: a checksum error, which
            // is what the storage did. It stays a side effect, never the main finding.
            let side_effect = fault == Fault::Misdirect && *other == ErrorClass::Checksum;
            if side_effect {
                assert!(class_count(&out, *other) < class_count(&out, class), "{:?}", out.totals.errors);
            } else if fault != Fault::Eio {
                assert_eq!(class_count(&out, *other), 0, "{fault:?} reported as {other:?}");
            }
        }
    }
}

#[test]
fn an_io_held_past_the_delay_threshold_is_named_while_outstanding_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let plan = FaultRules::default().with(Fault::Delay(Duration::from_millis(2500)), When::Requests(vec![3]));
    let mut spec = spec(dir.path(), 3, Some(plan));
    spec.delay_threshold = Duration::from_millis(1200);
    let created = create(&spec, &mut |_, _| {}).unwrap();
    let mut notices = Vec::new();
    let out = run(
        &spec,
        created,
        &mut NoHost,
        &StopFlag::new(),
        &mut |iv| notices.extend(iv.interval.data.notices.iter().cloned()),
        &mut |_, _| {},
    )
    .unwrap();
    let delayed: u64 = out.totals.activities.iter().map(|a| a.delayed).sum();
    let throttled: u64 = out.totals.activities.iter().map(|a| a.throttled).sum();
    // Every activity's engine holds its request number 3.
    assert_eq!(delayed, Activity::ALL.len() as u64 + 1, "one per activity thread (two users)");
    assert!(throttled >= delayed, "a request over the target duration throttles its activity");
    assert!(!notices.is_empty() && notices[0].contains("I/O outstanding for"), "{notices:?}");
    assert_eq!(out.totals.errors_total(), 0, "a late I/O is no error");
    assert!(out.detail.audit.unwrap().ok());
}

/// The pages a fresh audit of the kept files finds damaged (what `integrity verify` reads).
fn verified(spec: &IntegritySpec) -> Vec<(PageId, ErrorClass)> {
    let layout = Layout::new(&spec.dir);
    let expected = Journal::load(&layout.journal()).unwrap();
    let report = audit(&layout.regions(&spec.sizes), &expected, &StopFlag::new(), &mut |_, _| {}).unwrap();
    assert!(report.complete);
    report.damaged
}

/// The suspect pages the audit found again, as the audit lists them.
fn found_again(out: &IntegrityOutcome) -> Vec<(PageId, ErrorClass)> {
    let found = out.detail.suspects.iter().filter(|p| p.audit == AuditFinding::Found);
    found.map(|p| (PageId { file: p.file, page: p.page }, p.class)).collect()
}

#[test]
fn pages_damaged_on_disk_during_a_run_are_counted_once_kept_as_found_and_verify_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), 4, None);
    let created = create(&spec, &mut |_, _| {}).unwrap();
    // Garbage over ten pages of the initial data, through the page cache the run reads from
    // (the run is buffered), at the run's first interval (a second in, however slow the
    // machine): as a failing disk or a stray writer.
    let damaged: Vec<u64> = (0..10).map(|i| 20 + i * 47).collect();
    let path = Layout::new(dir.path()).data();
    let mut corrupted = false;
    let mut corrupt_once = |_: &IntegrityInterval| {
        use std::os::unix::fs::FileExt;
        if std::mem::replace(&mut corrupted, true) {
            return;
        }
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        for &page in &damaged {
            file.write_all_at(&[0xA5u8; PAGE], page * PAGE as u64).unwrap();
        }
    };
    let out = run(&spec, created, &mut NoHost, &StopFlag::new(), &mut corrupt_once, &mut |_, _| {}).unwrap();
    assert!(corrupted, "the run had an interval");
    let suspects = &out.detail.suspects;
    assert!(!suspects.is_empty(), "the damage was found");
    for p in suspects {
        assert!(p.file == 0 && damaged.contains(&p.page), "only damaged pages are suspects: {p:?}");
        assert_eq!((p.class, p.offset), (ErrorClass::Checksum, p.page * PAGE as u64), "{p:?}");
        assert_eq!(p.audit, AuditFinding::Found, "taken out of use, it stayed damaged: {p:?}");
        assert!(p.count <= 2 && p.first_seen_s <= p.last_seen_s, "found by one read and the audit: {p:?}");
    }
    // Each page was counted once by the run, however often the activities came by it.
    let in_run: u64 = suspects.iter().map(|p| p.count - 1).sum();
    assert_eq!(out.totals.count_of(ErrorClass::Checksum), in_run, "{suspects:?}");
    assert!(in_run > 0, "the run's reads found damage, not only the audit: {suspects:?}");
    assert_eq!(verified(&spec), found_again(&out), "verify finds every damaged page, as the run left it");
}

#[test]
fn injected_faults_leave_each_page_once_and_verify_finds_the_damage_on_the_medium_only() {
    // A torn write stays torn on disk; a failed request (listed at its first page) never
    // reached the disk, which reads intact.
    let cases = [
        (Fault::Tear { sectors: 3 }, ErrorClass::TornPages, true),
        (Fault::Eio, ErrorClass::WriteErrors, false),
    ];
    for (fault, class, on_disk) in cases {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec(dir.path(), 2, Some(FaultRules::default().with(fault, When::OneIn(40))));
        let out = run_on(&spec);
        let of_class: Vec<_> = out.detail.suspects.iter().filter(|p| p.class == class).collect();
        assert!(!of_class.is_empty(), "{fault:?}: {:?}", out.detail.suspects);
        let mut places: Vec<(u16, u64)> = out.detail.suspects.iter().map(|p| (p.file, p.page)).collect();
        places.dedup();
        assert_eq!(places.len(), out.detail.suspects.len(), "{fault:?}: each page once");
        let occurrences: u64 = out.detail.suspects.iter().map(|p| p.count).sum();
        let audited = out.detail.audit.as_ref().unwrap().errors();
        assert_eq!(occurrences, out.totals.errors_total() + audited, "{fault:?}: every finding counted");
        let audit = |p: &&SuspectPage| p.audit;
        let want = if on_disk { AuditFinding::Found } else { AuditFinding::Intact };
        assert!(of_class.iter().map(audit).all(|a| a == want), "{fault:?}: {of_class:?}");
        assert_eq!(verified(&spec), found_again(&out), "{fault:?}");
    }
}

#[test]
fn a_shrink_stops_above_a_damaged_page_so_the_audit_still_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(dir.path(), 1, None);
    spec.shrink_every = Duration::ZERO;
    let shared = super::run::shared_of(&spec, create(&spec, &mut |_, _| {}).unwrap());
    let max = spec.sizes.data_max_pages;
    let file_pages = || std::fs::metadata(Layout::new(dir.path()).data()).unwrap().len() / PAGE as u64;
    while shared.data_pages.load(std::sync::atomic::Ordering::SeqCst) < max {
        shared.resize(max).unwrap();
    }
    assert_eq!((file_pages(), max), (768, 768));
    // Page 700 lies in the last increment (640-767): found damaged, taken out of use.
    shared.data.try_take(700).unwrap();
    shared.data.quarantine(700);
    shared.resize(max).unwrap();
    assert_eq!(file_pages(), 701, "cut to just above the damaged page");
    assert_eq!(shared.shrinks_held.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert!(shared.data.is_suspect(700));
    let below = shared.data.try_take(650).expect("the pages below it were given back");
    shared.data.release(650, below);
    // At the file's last page, no cut at all.
    while shared.data_pages.load(std::sync::atomic::Ordering::SeqCst) < max {
        shared.resize(max).unwrap();
    }
    shared.data.try_take(767).unwrap();
    shared.data.quarantine(767);
    let shrinks = shared.shrinks.load(std::sync::atomic::Ordering::Relaxed);
    shared.resize(max).unwrap();
    assert_eq!(file_pages(), 768);
    assert_eq!(shared.shrinks.load(std::sync::atomic::Ordering::Relaxed), shrinks, "no shrink");
    assert_eq!(shared.shrinks_held.load(std::sync::atomic::Ordering::Relaxed), 2);
    let journal = Journal::load(&Layout::new(dir.path()).journal()).unwrap();
    assert!(journal.run_id.is_some());
}
