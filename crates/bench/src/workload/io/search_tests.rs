//! The latency search (`run::search`) on a stalling engine with a known knee: the null engine
//! with every completion held back 10 ms per request reaped at once, so a worker at queue depth
//! d sees every request take about 10·d ms. Under `p90<=85ms` the highest depth that holds is
//! 8 (80 ms; 9 takes 90 ms); the search must end within one step of it. p90 rather than p99
//! and 5 ms each side: a loaded machine oversleeps now and then, and a test must not fail
//! for it.

use super::fault_tests::{Fault, faulty};
use super::*;
use crate::engine::EngineKind;
use crate::run::search::{Bounds, Figure, LatencyLimit, Next, Search, Statistic};
use crate::testing::NoHost;
use std::time::Duration;

fn spec(iodepth: u32, step: Duration) -> IoSpec {
    IoSpec {
        name: "search".into(),
        pattern: Pattern::Random(Distribution::Uniform),
        reads: Share::READS,
        random: Share::ALL,
        writes_per_flush: None,
        fsync: false,
        block_sizes: BlockSizeMix::single(4096),
        iodepth,
        workers: 1,
        ramp: Duration::from_millis(100),
        end: End::Time(step),
        rate_iops: None,
        rate_profile: None,
        seed: 1,
        verify: false,
        engine: EngineKind::Null,
        region: Region { start: 0, len: 1 << 20 },
        interval: Duration::from_secs(1),
        trace: None,
        steady_state: None,
    }
}

/// One measured step at queue depth `depth`: its read p90 as the limit judges it.
fn step(depth: u32, length: Duration) -> Vec<Figure> {
    let spec = spec(depth, length);
    let mut opened = open_engines(&spec, None).unwrap();
    opened.engines =
        opened.engines.into_iter().map(|e| faulty(e, Fault::Slow(Duration::from_millis(10)))).collect();
    let out = run_on(&spec, opened, &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap();
    let p90 = out.totals.read.latency.summary().expect("reads completed").p90;
    vec![Figure { request: "read".into(), statistic: Statistic::Percentile(90.0), ns: p90 as f64 }]
}

#[test]
fn the_search_finds_a_stalling_engines_known_queue_depth_within_one_step() {
    let limit: LatencyLimit = "p90<=85ms".parse().unwrap();
    let bounds = Bounds { start: 4.0, min: 1.0, max: 64.0, integer: true, resolution: 0.05, steps: 12 };
    let mut search = Search::new(bounds);
    let found = loop {
        match search.next() {
            Next::Step(d) => {
                search.record(limit.judge(&step(d as u32, Duration::from_millis(400)), &["read"]).held)
            }
            Next::Confirm(d) => {
                search.record(limit.judge(&step(d as u32, Duration::from_secs(1)), &["read"]).held)
            }
            Next::Done(found) => break found,
        }
    };
    let found = found.expect("a depth holds");
    assert!((7.0..=8.0).contains(&found), "found depth {found}, the knee is 8: {:?}", search.tried);
    assert!(search.steps_run() <= 12);
}
