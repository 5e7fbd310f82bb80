//! Steady-state runs on the null engine, with short intervals so rounds take a fifth of a
//! second: a paced null engine is soon steady, and one that slows down as the run goes on
//! never is, so the cap ends it.
//!
//! The workers time their I/Os on the machine's clock, so a loaded machine moves a few I/Os
//! from one round to the next: the assertions hold whatever the rounds came to (the run ends
//! at the first steady window of the rounds it reports, the pacing is never exceeded), and
//! the slowing device keeps to a timetable its lateness cannot flatten.

use super::fault_tests::{Fault, faulty};
use super::*;
use crate::engine::EngineKind;
use crate::run::Rule;
use crate::run::steady::steady;
use crate::testing::NoHost;
use std::time::Duration;

const ROUND: Duration = Duration::from_millis(200);

/// Random reads on the null engine in rounds of 200 ms (two 100 ms intervals), capped at `cap`.
fn spec(cap: Duration, rate_iops: Option<f64>) -> IoSpec {
    IoSpec {
        name: "steady".into(),
        pattern: Pattern::Random(Distribution::Uniform),
        reads: Share::READS,
        random: Share::ALL,
        writes_per_flush: None,
        fsync: false,
        block_sizes: BlockSizeMix::single(4096),
        iodepth: 1,
        workers: 1,
        ramp: Duration::ZERO,
        end: End::Time(cap),
        rate_iops,
        rate_profile: None,
        seed: 7,
        verify: false,
        engine: EngineKind::Null,
        region: Region { start: 0, len: 1 << 20 },
        interval: Duration::from_millis(100),
        trace: None,
        steady_state: Some(ROUND),
    }
}

/// Runs `spec`; the outcome and where the last interval the run closed ended, in seconds.
fn run_with(spec: &IoSpec, slowing: bool) -> (IoOutcome, f64) {
    let mut engines = open_engines(spec, None).unwrap();
    if slowing {
        let fault = Fault::SlowingFrom(Instant::now());
        engines.engines = engines.engines.into_iter().map(|e| faulty(e, fault)).collect();
    }
    let mut last_end_s = 0.0;
    let out =
        run_on(spec, engines, &mut NoHost, &StopFlag::new(), &mut |i| last_end_s = i.interval.end_s).unwrap();
    (out, last_end_s)
}

#[test]
fn a_steady_device_ends_the_run_after_its_first_five_steady_rounds_and_the_results_cover_only_them() {
    let cap = Duration::from_secs(10);
    let (out, last_end_s) = run_with(&spec(cap, Some(2000.0)), false);
    let st = out.steady.as_ref().expect("steady-state outcome");
    assert!(st.reached, "{st:?}");
    // The rule first held after the last round run: the run ended there.
    let rounds = st.round_iops.len();
    assert_eq!(rounds as u64, st.rounds_run);
    let held_after = |n: usize| steady(&st.round_iops[..n], &Rule::SNIA_PTS).is_some_and(|c| c.steady);
    assert!(rounds >= 5 && held_after(rounds), "{st:?}");
    assert!((5..rounds).all(|n| !held_after(n)), "the run went on past a steady window: {st:?}");
    assert!(last_end_s < cap.as_secs_f64(), "the run ended early, not at its 10 s cap: {last_end_s} s");
    // A loaded machine may hold the worker back long enough to fall behind the rate: that
    // is a warning of its own; steady state has none.
    assert!(out.warnings.iter().all(|w| w.starts_with("the rate cap fell behind")), "{:?}", out.warnings);
    // The window is the last five whole rounds, and the totals are theirs alone.
    assert_eq!(st.round_s, 0.2);
    assert!((st.window_end_s - st.window_start_s - 1.0).abs() < 1e-9, "{st:?}");
    assert!((st.window_end_s - 0.2 * st.rounds_run as f64).abs() < 1e-9, "{st:?}");
    assert!((out.measured_s - 1.0).abs() < 1e-9);
    let window_ios: f64 = st.round_iops[st.rounds_run as usize - 5..].iter().map(|r| r * 0.2).sum();
    assert_eq!(out.totals.ios(), window_ios.round() as u64);
    assert!(st.range_pct.unwrap() <= 20.0 && st.slope_pct.unwrap() <= 10.0, "{st:?}");
    // Paced at 2000 IOPS: by the end of round r no more than the 400 (r + 1) + 1 I/Os due by
    // then were done (a worker that fell behind catches up, never runs ahead).
    let mut done = 0;
    for (r, iops) in st.round_iops.iter().enumerate() {
        done += (iops * 0.2).round() as usize;
        assert!(done <= 400 * (r + 1) + 1, "{done} I/Os by the end of round {r}: {st:?}");
    }
}

#[test]
fn a_device_that_keeps_slowing_runs_to_the_cap_and_reports_its_last_five_rounds() {
    let (out, _) = run_with(&spec(Duration::from_secs(2), None), true);
    let st = out.steady.as_ref().expect("steady-state outcome");
    assert!(!st.reached, "{st:?}");
    assert_eq!(st.rounds_run, 10, "2 s cap / 0.2 s rounds: {st:?}");
    assert_eq!((st.window_start_s, st.window_end_s), (1.0, 2.0));
    assert!(st.round_iops[0] > 2.0 * st.round_iops[9], "the rate fell: {:?}", st.round_iops);
    assert_eq!(
        out.warnings,
        vec!["steady state not reached in 10 rounds; the figures cover the last 5 rounds"]
    );
    let window_ios: f64 = st.round_iops[5..].iter().map(|r| r * 0.2).sum();
    assert_eq!(out.totals.ios(), window_ios.round() as u64);
}
