//! Flushes and a rate profile on the null engine: `--fdatasync N` puts one flush after every
//! N writes (N may be fractional), exactly that share over the run, each counted apart from
//! the writes; `--rate-profile` gives each second of the measured phase its own rate; a
//! trace as recorded starts each request at its time, a trace fast at the job's depth.

use super::fault_tests::null_spec;
use super::*;
use crate::testing::NoHost;
use std::time::Duration;

/// Writes on the null engine (`fault_tests`'s), 1000 of 4 KiB, a flush after every
/// `writes_per_flush` hundredths of a write.
fn writes_with_flushes(writes_per_flush: u32, iodepth: u32) -> IoSpec {
    IoSpec {
        writes_per_flush: Some(writes_per_flush),
        fsync: false,
        iodepth,
        end: End::Bytes(1000 * 4096),
        region: Region { start: 0, len: 1 << 20 },
        interval: Duration::from_millis(100),
        ..null_spec(0, 1, 1)
    }
}

#[test]
fn a_flush_follows_every_nth_write_at_exactly_its_share_and_is_counted_apart() {
    for (per_flush, depth, want) in [(100, 1, 1000), (250, 4, 400), (1000, 8, 100)] {
        let spec = writes_with_flushes(per_flush, depth);
        let engines = open_engines(&spec, None).unwrap();
        let out = run_on(&spec, engines, &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap();
        let t = &out.totals;
        assert_eq!((t.write.ios, t.read.ios), (1000, 0), "writes per flush {per_flush}");
        assert!(t.flush.ios.abs_diff(want) <= 1, "{per_flush}: {} flushes, want {want}", t.flush.ios);
        assert_eq!((t.flush.bytes, t.flush.latency.count()), (0, t.flush.ios), "{per_flush}");
        assert_eq!(t.ios(), 1000, "IOPS counts reads and writes only");
    }
}

/// Random reads on the null engine under a rate profile of 2000, 0 and 500 I/Os a second.
#[test]
fn a_rate_profile_gives_each_second_its_own_rate_and_a_second_of_none_none() {
    let spec = IoSpec {
        reads: Share::READS,
        writes_per_flush: None,
        fsync: false,
        iodepth: 4,
        end: End::Time(Duration::from_secs(3)),
        rate_iops: Some(2500.0 / 3.0),
        rate_profile: Some(vec![2000.0, 0.0, 500.0].into()),
        interval: Duration::from_secs(1),
        ..writes_with_flushes(100, 1)
    };
    let engines = open_engines(&spec, None).unwrap();
    let mut per_second = Vec::new();
    run_on(&spec, engines, &mut NoHost, &StopFlag::new(), &mut |i| per_second.push(i.interval.data.read.ios))
        .unwrap();
    assert_eq!(per_second.len(), 3, "{per_second:?}");
    for (got, want) in per_second.iter().zip([2000u64, 0, 500]) {
        assert!(got.abs_diff(want) <= want / 50 + 2, "{per_second:?}");
    }
}

/// A trace's five requests (a discard among them) replayed on the null engine: what the job
/// measured and how long it took.
fn replayed(pace: crate::blocktrace::replay::Pace, depth: u32) -> (Recorder, Duration) {
    use crate::blocktrace::format::Op;
    use crate::blocktrace::replay::tests::{rec, trace};
    let dir = tempfile::tempdir().unwrap();
    let records = [
        rec(0, 0, 4, Op::Read),
        rec(100, 8, 4, Op::Write),
        rec(150, 0, 0, Op::Discard),
        rec(200, 16, 4, Op::Read),
        rec(200, 0, 0, Op::Flush),
    ];
    let path = trace(dir.path(), &records);
    let spec = IoSpec {
        trace: Some(crate::blocktrace::replay::TraceSource { path, pace, align: 512 }),
        end: End::Trace,
        iodepth: depth,
        block_sizes: BlockSizeMix::single(64 << 10),
        ramp: Duration::ZERO,
        ..writes_with_flushes(100, 1)
    };
    let began = std::time::Instant::now();
    let engines = open_engines(&spec, None).unwrap();
    let out = run_on(&spec, engines, &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap();
    assert!(out.complete && out.failures.is_empty(), "{:?}", out.failures);
    (out.totals, began.elapsed())
}

#[test]
fn a_trace_as_recorded_starts_each_request_at_its_time_scaled_and_fast_at_once() {
    use crate::blocktrace::replay::Pace;
    let (t, took) = replayed(Pace::AsRecorded { speed: 2.0 }, 8);
    assert_eq!((t.read.ios, t.write.ios, t.write.bytes, t.flush.ios), (2, 1, 4096, 1));
    assert_eq!(t.lag.count(), 4, "each replayed request's lag behind its time");
    assert!(took >= Duration::from_millis(100) && took < Duration::from_millis(600), "{took:?}");
    let (fast, took) = replayed(Pace::Fast, 4);
    assert_eq!((fast.read.ios, fast.write.ios, fast.flush.ios), (2, 1, 1));
    assert!(fast.lag.is_empty() && took < Duration::from_millis(90), "{took:?}");
}
