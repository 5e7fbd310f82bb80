//! The one pacer every paced workload uses: a schedule of intended start times, each start's
//! schedule lag (actual start − intended start) recorded in an HDR histogram, the lag's columns
//! in the series, and the warning when a run fell behind (pgbench's schedule lag; fio has none).
//!
//! A schedule is a rate or a list of offsets:
//! - `Pacer`: one start every period from the run's start (io's `--rate-iops`, a worker's share
//!   of it; the mailbox's target transaction rate, which it retunes as the run goes with
//!   `set_rate`). It is one thread's: `due` and `start` on the hot path are integer compares
//!   and adds in nanoseconds, and `start` records the lag in the caller's histogram, the one
//!   of the interval it is in.
//! - `Offsets`: each start at its own offset divided by a speed (replay's time-sync: a log's
//!   times). Its starts come from a scheduler's queue of due requests on many threads, so it
//!   only says when each is intended; the replay records their lag as `Pacer::start` does.
//!
//! What a start late by more than a period does is the catch-up policy (`CatchUp`): io and
//! replay keep every intended start, so that a stall shows in the latency measured from the
//! intended start (no coordinated omission) and in the lag; the mailbox bounds how far behind
//! it may burst (1 s), dropping the starts older than that, so its lag never exceeds the bound.
//!
//! Latency under a schedule counts from the intended start. Lag is recorded only when a run is
//! paced: an unpaced run has no lag (not a lag of zero), and no lag columns' values. The
//! histogram's precision is `LatencyHistogram`'s (3 significant digits; a lag of 0 is kept as
//! its least value, 1 ns).

use super::{Interval, Parts, SeriesColumn, Workload};
use crate::metrics::LatencyHistogram;
use std::time::Duration;
use storbench_report::columns::{Column, pace as col};

/// How far behind its schedule a pacer may fall before it drops intended starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatchUp {
    /// Every intended start is kept, however late: after a stall the starts come at once until
    /// the schedule is met again, and each one's lag says how late it was.
    Every,
    /// At most this far behind: intended starts more than this before now are dropped, so a
    /// burst after a stall holds at most this long's starts, and no lag is longer.
    Within(Duration),
}

/// A schedule of intended starts at a rate, from the run's start (ns since it).
#[derive(Debug, Clone)]
pub struct Pacer {
    /// The intended start of the next start.
    next_ns: u64,
    period_ns: u64,
    /// The catch-up bound in ns; `u64::MAX` keeps every start.
    behind_ns: u64,
}

impl Pacer {
    /// `per_sec` starts a second (of one thread: a worker's share of a rate over several),
    /// the first at 0.
    pub fn at_rate(per_sec: f64, catch_up: CatchUp) -> Pacer {
        let behind_ns = match catch_up {
            CatchUp::Every => u64::MAX,
            CatchUp::Within(d) => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
        };
        Pacer { next_ns: 0, period_ns: period_ns(per_sec), behind_ns }
    }

    /// From now on `per_sec` starts a second: the next start keeps its time, those after it
    /// come at the new period.
    pub fn set_rate(&mut self, per_sec: f64) {
        self.period_ns = period_ns(per_sec);
    }

    /// No start before `ns` (a second of io's rate profile with nothing to start).
    pub fn skip_to(&mut self, ns: u64) {
        self.next_ns = self.next_ns.max(ns);
    }

    /// The next start's intended time (a wait for it ends there).
    pub fn next_ns(&self) -> u64 {
        self.next_ns
    }

    /// Whether a start is due at `now_ns`.
    #[inline]
    pub fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.next_ns
    }

    /// Starts at `now_ns` (when `due`): returns the start's intended time, the first kept by
    /// the catch-up policy, records its lag in `lag`, and moves the schedule on by a period.
    #[inline]
    pub fn start(&mut self, now_ns: u64, lag: &mut LatencyHistogram) -> u64 {
        let intended = self.next_ns.max(now_ns.saturating_sub(self.behind_ns));
        self.next_ns = intended.saturating_add(self.period_ns);
        lag.record(now_ns.saturating_sub(intended));
        intended
    }
}

/// One start every this many ns for `per_sec` a second (at least 1 ns; a rate of nothing
/// never starts again).
fn period_ns(per_sec: f64) -> u64 {
    ((1e9 / per_sec) as u64).max(1)
}

/// A schedule given by offsets: each start at its own offset from the schedule's origin (a
/// log's time since its first request) divided by a speed (2 plays twice as fast). Every
/// start is kept, however late (`CatchUp::Every`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offsets {
    speed: f64,
}

impl Offsets {
    pub fn at_speed(speed: f64) -> Offsets {
        Offsets { speed: speed.max(1e-9) }
    }

    /// When a start `offset_ns` after the origin is intended, ns after the run's start (an
    /// offset before the origin at once).
    pub fn intended_ns(self, offset_ns: i128) -> u64 {
        (offset_ns.max(0) as f64 / self.speed) as u64
    }
}

/// A paced run fell behind its schedule when its starts' lag at p99 is over this.
pub const FELL_BEHIND_P99: Duration = Duration::from_millis(10);

/// How a workload speaks of falling behind: `schedule` ("time-sync fell behind the log"),
/// its `starts` ("requests") and what may help (`remedy`).
#[derive(Debug, Clone, Copy)]
pub struct Behind {
    pub schedule: &'static str,
    pub starts: &'static str,
    pub remedy: &'static str,
}

/// The warning for a paced run whose starts lagged by `lag`: None when it kept up (p99 lag
/// within `FELL_BEHIND_P99`) or nothing was paced.
pub fn fell_behind(lag: &LatencyHistogram, says: Behind) -> Option<String> {
    let ms = |q: f64| lag.quantile_ns(q) as f64 / 1e6;
    let limit = FELL_BEHIND_P99.as_nanos() as u64;
    (!lag.is_empty() && lag.quantile_ns(0.99) > limit).then(|| {
        format!(
            "{}: {} started {:.1} ms late at p99 ({:.1} ms at most), over the {} ms a paced run allows; {}",
            says.schedule,
            says.starts,
            ms(0.99),
            ms(1.0),
            FELL_BEHIND_P99.as_millis(),
            says.remedy
        )
    })
}

/// Interval data that holds its paced starts' lag.
pub trait Lagged {
    /// The lag of the starts paced in the interval (empty when none were).
    fn lag(&self) -> &LatencyHistogram;
}

impl<T: Lagged> Lagged for Parts<T> {
    fn lag(&self) -> &LatencyHistogram {
        self.total.lag()
    }
}

/// The lag's quantile `q` in ms, or None when no start was paced.
pub fn lag_ms(lag: &LatencyHistogram, q: f64) -> Option<f64> {
    (!lag.is_empty()).then(|| lag.quantile_ns(q) as f64 / 1e6)
}

fn p99_ms<W: Workload<Data: Lagged>>(_: &W, i: &Interval<'_, W::Data>) -> Option<f64> {
    lag_ms(i.data.lag(), 0.99)
}

fn max_ms<W: Workload<Data: Lagged>>(_: &W, i: &Interval<'_, W::Data>) -> Option<f64> {
    lag_ms(i.data.lag(), 1.0)
}

/// The schedule lag's columns of workload `W`'s series (`schedule_lag_p99_ms`,
/// `schedule_lag_max_ms`), empty in an interval without paced starts.
pub const fn lag_columns<W: Workload<Data: Lagged>>() -> [SeriesColumn<W>; 2] {
    [column(col::SCHEDULE_LAG_P99_MS, p99_ms::<W>), column(col::SCHEDULE_LAG_MAX_MS, max_ms::<W>)]
}

const fn column<W: Workload>(
    column: Column,
    value: fn(&W, &Interval<'_, W::Data>) -> Option<f64>,
) -> SeriesColumn<W> {
    SeriesColumn { column, value }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000 * MS;

    /// Starts `pacer` at each of `nows` that is due; the intended starts it gave.
    fn run(pacer: &mut Pacer, nows: &[u64], lag: &mut LatencyHistogram) -> Vec<u64> {
        let mut intended = Vec::new();
        for &now in nows {
            if pacer.due(now) {
                intended.push(pacer.start(now, lag));
            }
        }
        intended
    }

    /// A histogram of exactly these lags.
    fn lags(ns: impl IntoIterator<Item = u64>) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        ns.into_iter().for_each(|n| h.record(n));
        h
    }

    #[test]
    fn a_fixed_rate_intends_a_start_every_period_from_zero_and_records_each_ones_lag() {
        let mut p = Pacer::at_rate(1_000.0, CatchUp::Every);
        let mut lag = LatencyHistogram::new();
        assert!(p.due(0));
        assert_eq!(p.start(0, &mut lag), 0);
        assert_eq!(p.next_ns(), MS);
        assert!(!p.due(MS - 1), "not before its time");
        assert_eq!(p.start(MS + 250_000, &mut lag), MS, "late by 250 µs: still intended at 1 ms");
        assert_eq!(p.next_ns(), 2 * MS, "the schedule does not slip with a late start");
        assert_eq!(lag.summary(), lags([0, 250_000]).summary());
    }

    #[test]
    fn keeping_every_start_bursts_after_a_stall_with_each_ones_full_lag() {
        let mut p = Pacer::at_rate(100.0, CatchUp::Every);
        let mut lag = LatencyHistogram::new();
        // Stalled until 50 ms: the starts intended at 0, 10, ..., 50 ms all come then.
        let intended = run(&mut p, &[50 * MS; 8], &mut lag);
        assert_eq!(intended, [0, 10 * MS, 20 * MS, 30 * MS, 40 * MS, 50 * MS]);
        assert_eq!(p.next_ns(), 60 * MS);
        assert_eq!(lag.summary(), lags((0..=5).map(|k| k * 10 * MS)).summary());
    }

    #[test]
    fn a_catch_up_bound_drops_the_starts_older_than_it_and_bounds_the_lag() {
        let mut p = Pacer::at_rate(10.0, CatchUp::Within(Duration::from_secs(1)));
        let mut lag = LatencyHistogram::new();
        assert_eq!(p.start(0, &mut lag), 0);
        // Nothing started from 0.1 s to 5 s: the starts before 4 s are dropped, those of the
        // last second (4.0 .. 5.0 s) burst.
        let intended = run(&mut p, &[5 * S; 20], &mut lag);
        let want: Vec<u64> = (0..=10).map(|k| 4 * S + k * S / 10).collect();
        assert_eq!(intended, want);
        assert_eq!(p.next_ns(), 5 * S + S / 10);
        let bounded = lags([0].into_iter().chain((0..=10).map(|k| S - k * S / 10)));
        assert_eq!(lag.summary(), bounded.summary(), "no lag beyond the bound");
    }

    #[test]
    fn a_rate_change_keeps_the_next_start_and_spaces_the_later_ones_anew() {
        let mut p = Pacer::at_rate(10.0, CatchUp::Every);
        let mut lag = LatencyHistogram::new();
        assert_eq!(run(&mut p, &[0, 100 * MS], &mut lag), [0, 100 * MS]);
        p.set_rate(1_000.0);
        assert_eq!(p.next_ns(), 200 * MS, "the start already due keeps its time");
        assert_eq!(run(&mut p, &[200 * MS, 201 * MS, 202 * MS], &mut lag), [200 * MS, 201 * MS, 202 * MS]);
        p.set_rate(0.5);
        assert_eq!(p.start(203 * MS, &mut lag), 203 * MS);
        assert_eq!(p.next_ns(), 2_203 * MS, "two seconds on at half a start a second");
        assert_eq!(lag.summary(), lags([0; 6]).summary());
    }

    #[test]
    fn offsets_are_intended_at_their_time_divided_by_the_speed() {
        assert_eq!(Offsets::at_speed(1.0).intended_ns(1_500 * MS as i128), 1_500 * MS);
        assert_eq!(Offsets::at_speed(4.0).intended_ns(10 * S as i128), 2_500 * MS);
        assert_eq!(Offsets::at_speed(0.5).intended_ns(S as i128), 2 * S);
        assert_eq!(Offsets::at_speed(2.0).intended_ns(-5), 0, "before the origin: at once");
    }

    #[test]
    fn falling_behind_is_a_p99_lag_over_the_limit_and_says_by_how_much() {
        let says = Behind { schedule: "the rate cap fell behind", starts: "I/Os", remedy: "go slower" };
        let mut lag = LatencyHistogram::new();
        assert_eq!(fell_behind(&lag, says), None, "nothing paced, nothing to say");
        (0..99).for_each(|_| lag.record(MS));
        lag.record(40 * MS);
        assert_eq!(fell_behind(&lag, says), None, "1 % late is within p99");
        (0..2).for_each(|_| lag.record(40 * MS));
        let w = fell_behind(&lag, says).expect("a p99 of 40 ms is behind");
        let want =
            "the rate cap fell behind: I/Os started 40.0 ms late at p99 (40.0 ms at most), over the 10 ms";
        assert!(w.starts_with(want) && w.ends_with("a paced run allows; go slower"), "{w}");
    }
}
