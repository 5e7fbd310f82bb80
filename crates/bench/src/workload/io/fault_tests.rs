//! Verification against injected faults: an engine wrapper corrupts what the disk returns for
//! one block, as a failing device would, and the run must report it, not crash. The wrapper
//! also serves the steady-state tests as a device that keeps slowing down.

use super::*;
use crate::engine::{Capabilities, Completion, Dir, EngineKind, IoEngine, Request};
use crate::testing::NoHost;
use std::time::Duration;

/// What goes wrong, as a failing device or kernel would make it.
#[derive(Clone, Copy)]
pub(super) enum Fault {
    /// Every read of the block at this offset returns one flipped bit.
    CorruptReadsAt(u64),
    /// Every completion takes this long, like a device that stalls.
    Slow(Duration),
    /// The engine itself fails after this many calls.
    BreakAfter(u32),
    /// The n-th completion comes no earlier than n³ ns after this instant, so the rate falls
    /// like t^(-2/3) and never settles. Completions keep to that timetable whatever the
    /// machine's load (a late one is followed by ones that catch up): a round of the run
    /// differs from the timetable's only at its edges.
    SlowingFrom(Instant),
    /// Every write fails with this errno, as on a full or failing device.
    FailWrites(i32),
    /// No request completes until this instant, as on a device that stopped answering.
    HoldUntil(Instant),
}

/// Wraps a real engine and injects `fault`.
struct Faulty {
    inner: Box<dyn IoEngine>,
    fault: Fault,
    reads_in_flight: Vec<Option<u64>>,
    calls: u32,
    /// Completions handed out so far.
    completed: u64,
    /// Completions held back (`HoldUntil`).
    held: Vec<Completion>,
}

pub(super) fn faulty(inner: Box<dyn IoEngine>, fault: Fault) -> Box<dyn IoEngine> {
    Box::new(Faulty {
        inner,
        fault,
        reads_in_flight: vec![None; 256],
        calls: 0,
        completed: 0,
        held: Vec::new(),
    })
}

impl IoEngine for Faulty {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn start(&mut self) -> std::io::Result<()> {
        self.inner.start()
    }
    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.inner.buffer(slot)
    }
    fn replace_file(&mut self, index: u16, file: &std::fs::File) -> std::io::Result<()> {
        self.inner.replace_file(index, file)
    }
    fn queue(&mut self, req: Request) {
        self.reads_in_flight[req.slot as usize] = (req.dir == Dir::Read).then_some(req.offset);
        self.inner.queue(req);
    }
    fn submit_and_reap(
        &mut self,
        min: u32,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        self.calls += 1;
        if matches!(self.fault, Fault::BreakAfter(n) if self.calls > n) {
            return Err(std::io::Error::from_raw_os_error(libc::EBADF));
        }
        if let Fault::HoldUntil(until) = self.fault {
            if Instant::now() < until {
                self.inner.submit_and_reap(0, Some(Duration::ZERO), &mut self.held)?;
                std::thread::sleep(timeout.unwrap_or(Duration::MAX).min(until - Instant::now()));
                return Ok(());
            }
            out.append(&mut self.held);
        }
        let first = out.len();
        self.inner.submit_and_reap(min, timeout, out)?;
        self.completed += (out.len() - first) as u64;
        match self.fault {
            Fault::CorruptReadsAt(bad) => {
                for c in &out[first..] {
                    if self.reads_in_flight[c.slot as usize] == Some(bad) {
                        self.inner.buffer(c.slot)[100] ^= 0x01;
                    }
                }
            }
            Fault::Slow(d) => std::thread::sleep(d * (out.len() - first) as u32),
            Fault::SlowingFrom(t) => {
                let due = t + Duration::from_nanos(self.completed.saturating_pow(3));
                std::thread::sleep(due.saturating_duration_since(Instant::now()))
            }
            Fault::FailWrites(errno) => {
                for c in &mut out[first..] {
                    if self.reads_in_flight[c.slot as usize].is_none() {
                        c.result = -errno;
                    }
                }
            }
            Fault::BreakAfter(_) | Fault::HoldUntil(_) => {}
        }
        Ok(())
    }
}

/// Runs `spec` with `fault` injected into the first `faulty_workers` workers' engines.
fn run_faulty(spec: &IoSpec, file: Option<&std::fs::File>, fault: Fault, faulty_workers: usize) -> IoOutcome {
    let mut opened = open_engines(spec, file).unwrap();
    opened.engines = opened
        .engines
        .into_iter()
        .enumerate()
        .map(|(i, e)| if i < faulty_workers { faulty(e, fault) } else { e })
        .collect();
    run_on(spec, opened, &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap()
}

/// A host sampler that samples nothing.
fn spec(read_pct: u8) -> IoSpec {
    IoSpec {
        name: "fault".into(),
        pattern: Pattern::Random(Distribution::Uniform),
        reads: Share::percent(read_pct),
        random: Share::ALL,
        writes_per_flush: None,
        fsync: false,
        block_sizes: BlockSizeMix::single(4096),
        iodepth: 4,
        workers: 1,
        ramp: Duration::ZERO,
        end: End::Bytes(64 * 4096 * 8),
        rate_iops: None,
        rate_profile: None,
        seed: 3,
        verify: true,
        engine: EngineKind::Psync,
        region: Region { start: 0, len: 64 * 4096 },
        interval: Duration::from_secs(1),
        trace: None,
        steady_state: None,
    }
}

fn temp_file(len: u64) -> (tempfile::TempDir, std::fs::File) {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join("f"))
        .unwrap();
    f.set_len(len).unwrap();
    (dir, f)
}

#[test]
fn a_corrupted_block_is_reported_with_its_offset_and_the_run_completes() {
    let (_dir, file) = temp_file(64 * 4096);
    let out = run_faulty(&spec(50), Some(&file), Fault::CorruptReadsAt(5 * 4096), 1);
    let v = &out.detail.verify;
    assert!(v.blocks_checked > 0);
    assert!(v.mismatches >= 1, "{v:?}");
    assert!(v.first_mismatches.iter().all(|m| m.offset == 5 * 4096 && m.field == "crc"), "{v:?}");
    assert!(out.complete);
    assert_eq!(out.totals.errors.total(), 0, "a mismatch is not an I/O error");
}

#[test]
fn without_faults_every_written_block_verifies() {
    let (_dir, file) = temp_file(64 * 4096);
    let out = run_faulty(&spec(0), Some(&file), Fault::CorruptReadsAt(u64::MAX), 1);
    assert_eq!(out.detail.verify.mismatches, 0);
    assert!(
        out.detail.verify.blocks_checked >= 32,
        "the read-back pass checks written blocks: {:?}",
        out.detail.verify
    );
}

/// A latency the histogram reports as `ns` or more: `ns` less its 0.1 % precision.
fn at_least(ns: u64) -> u64 {
    ns - ns / 1000
}

#[test]
fn under_a_rate_cap_a_stalled_device_shows_in_latency_from_the_intended_start() {
    // 200 I/Os per second asked, one at a time, of a device that takes 10 ms over each: I/O k
    // is due at 5k ms, is issued once I/O k-1 completed, no earlier than 10k ms, and completes
    // no earlier than 10(k+1) ms. So latency measured from the intended start grows by 5 ms
    // an I/O (a tool that timed from the actual submit would report a flat 10 ms). Every
    // bound below is a lower one: a loaded machine only makes an I/O later.
    const IOS: u64 = 60;
    const MS: u64 = 1_000_000;
    let mut spec = spec(100);
    spec.verify = false;
    spec.iodepth = 1;
    spec.engine = EngineKind::Null;
    spec.rate_iops = Some(200.0);
    spec.end = End::Bytes(IOS * 4096);
    let out = run_faulty(&spec, None, Fault::Slow(Duration::from_millis(10)), 1);
    let read = &out.totals.read;
    assert_eq!((read.ios, read.latency.count(), read.service.count()), (IOS, IOS, IOS));
    let lat = read.latency.summary().unwrap();
    assert!(lat.min >= at_least(10 * MS), "every I/O took at least the 10 ms of service: {lat:?}");
    assert!(lat.max >= (5 * (IOS - 1) + 10) * MS, "the backlog grows to 0.3 s by the last I/O: {lat:?}");
    // Beside it, the service time (issue to completion) leaves the wait to be issued out:
    // I/O k waited at least 5k ms, 147.5 ms on average (each mean within 0.1 % of itself).
    let service = read.service.summary().expect("service time under a rate cap");
    assert!(service.min >= at_least(10 * MS), "{service:?}");
    let waited = (lat.mean - service.mean) / MS as f64;
    let precision = (lat.mean + service.mean) / 1000.0 / MS as f64;
    let least = 2.5 * (IOS - 1) as f64;
    assert!(waited + precision >= least, "waited {waited:.2} ms on average, at least {least} expected");
    // The wait is the schedule lag, every I/O's kept: I/O k was issued at least 5k ms late.
    let lag = out.totals.lag.summary().expect("schedule lag under a rate cap");
    assert_eq!(out.totals.lag.count(), IOS);
    assert!(lag.max >= at_least(5 * (IOS - 1) * MS), "{lag:?}");
    assert!(
        out.warnings.iter().any(|w| w.starts_with("the rate cap fell behind: I/Os started")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn without_a_rate_cap_no_service_time_is_kept() {
    let mut spec = spec(100);
    spec.verify = false;
    spec.engine = EngineKind::Null;
    let out = run_faulty(&spec, None, Fault::Slow(Duration::ZERO), 1);
    assert_eq!(out.totals.read.ios, 64 * 8, "the spec's bytes in 4 KiB reads");
    assert!(out.totals.read.service.is_empty(), "latency and service time are the same thing then");
    assert!(out.totals.lag.is_empty(), "no schedule, no lag");
}

#[test]
fn a_failing_engine_ends_its_worker_and_is_reported_as_a_failure_not_a_panic() {
    let mut spec = spec(100);
    spec.verify = false;
    spec.engine = EngineKind::Null;
    spec.workers = 2;
    let out = run_faulty(&spec, None, Fault::BreakAfter(10), 1);
    assert_eq!(out.failures.len(), 1, "{:?}", out.failures);
    assert!(out.failures[0].contains("Bad file descriptor"), "{:?}", out.failures);
    let share = 64 * 8 / 2;
    assert!(
        out.totals.read.ios >= share,
        "the healthy worker did its {share} reads: {}",
        out.totals.read.ios
    );
}

#[test]
fn failed_writes_are_errors_and_never_iops_bytes_or_latency() {
    // Null engine, a fixed number of I/Os, every write failing: exactly the reads count.
    let mut spec = spec(50);
    spec.verify = false;
    spec.engine = EngineKind::Null;
    spec.end = End::Bytes(1000 * 4096);
    let out = run_faulty(&spec, None, Fault::FailWrites(libc::ENOSPC), 1);
    let t = &out.totals;
    assert_eq!(t.write.ios, 0);
    assert_eq!(t.write.bytes, 0);
    assert!(t.write.latency.is_empty(), "a failed write has no latency to report");
    assert!(t.read.ios > 300 && t.read.ios < 700, "about half are reads: {}", t.read.ios);
    assert_eq!(t.read.bytes, t.read.ios * 4096);
    assert_eq!(t.errors.by_kind.get("ENOSPC"), Some(&(1000 - t.read.ios)), "{:?}", t.errors);
    assert_eq!(t.errors.total(), 1000 - t.read.ios);
    assert_eq!(out.detail.errors_outside_window, 0);
}

#[test]
fn failed_ios_in_the_warm_up_are_counted_outside_the_window() {
    let mut spec = spec(0);
    spec.verify = false;
    spec.engine = EngineKind::Null;
    spec.ramp = Duration::from_millis(200);
    spec.end = End::Time(Duration::from_millis(200));
    spec.interval = Duration::from_millis(100);
    let out = run_faulty(&spec, None, Fault::FailWrites(libc::EIO), 1);
    assert_eq!(out.totals.write.ios, 0);
    assert!(out.totals.errors.total() > 0);
    assert!(out.detail.errors_outside_window > 0, "the warm-up's failures are not lost");
}

/// `spec(read_pct)` on the null engine, unverified, with `workers` workers for `secs` seconds.
pub(super) fn null_spec(read_pct: u8, workers: u32, secs: u64) -> IoSpec {
    IoSpec {
        verify: false,
        engine: EngineKind::Null,
        workers,
        end: End::Time(Duration::from_secs(secs)),
        ..spec(read_pct)
    }
}

#[test]
fn a_run_whose_every_io_fails_ends_as_failed_at_the_no_progress_limit_not_at_its_end() {
    let spec = null_spec(0, 2, 60);
    let began = Instant::now();
    let out = run_faulty(&spec, None, Fault::FailWrites(libc::EIO), 2);
    assert!(began.elapsed() < Duration::from_secs(15), "ended at the limit: {:?}", began.elapsed());
    assert!(!out.complete);
    assert_eq!(out.failures.len(), 1, "{:?}", out.failures);
    let why = &out.failures[0];
    assert!(
        why.starts_with("nothing completed for 5.0 s (the limit is 5 s): every I/O failed (EIO "),
        "{why}"
    );
    assert!(out.measured_s >= 5.0 && out.measured_s < 7.0, "{}", out.measured_s);
    assert_eq!(out.totals.write.ios, 0);
}

#[test]
fn a_device_that_stops_completing_ends_the_run_as_failed_with_its_ios_outstanding() {
    let spec = null_spec(100, 1, 60);
    // Nothing completes for 6.5 s: the rule fires at 5 s, and the workers end once their I/Os
    // come back (as on Ctrl-C, they wait for what they have in flight).
    let out = run_faulty(&spec, None, Fault::HoldUntil(Instant::now() + Duration::from_millis(6500)), 1);
    assert!(!out.complete);
    assert_eq!(out.failures.len(), 1, "{:?}", out.failures);
    assert!(out.failures[0].contains("4 I/Os outstanding, none completed"), "{:?}", out.failures);
    assert_eq!(out.totals.read.ios, 0);
}

#[test]
fn a_run_where_one_worker_still_completes_io_is_not_stuck() {
    let spec = null_spec(0, 2, 6);
    let out = run_faulty(&spec, None, Fault::FailWrites(libc::EIO), 1);
    assert!(out.complete && out.failures.is_empty(), "{:?}", out.failures);
    assert!(out.totals.write.ios > 0 && out.totals.errors.total() > 0);
}
