//! The integrity workload end to end on real files: a healthy run finds nothing and audits
//! every page; runs with injected faults report them by class.

use std::time::Duration;

use super::faults::{Fault, FaultPlan, When};
use super::layout::{Layout, Sizes};
use super::recorder::{Activity, CLASSES};
use super::run::{IntegrityOutcome, IntegritySpec, create, run};
use super::verdict::ErrorClass;
use crate::engine::EngineKind;
use crate::run::{HostSampler, StopFlag};

struct NoHost;
impl HostSampler for NoHost {
    fn sample(&mut self) -> storbench_report::SystemSample {
        Default::default()
    }
}

/// A small run: 4 MiB data growing to 6 MiB by 1 MiB, a 512 KiB log.
fn spec(dir: &std::path::Path, seconds: u64, faults: Option<FaultPlan>) -> IntegritySpec {
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
        let spec = spec(dir.path(), 2, Some(FaultPlan::default().with(fault, When::OneIn(40))));
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
    let plan = FaultPlan::default().with(Fault::Delay(Duration::from_millis(2500)), When::Requests(vec![3]));
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
