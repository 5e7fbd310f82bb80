//! Steady state as the SNIA Solid State Storage Performance Test Specification (PTS) defines
//! it: the measured phase runs in rounds, and the device is steady once, over the last five
//! rounds, the spread of the per-round figure (max − min) is at most 20 % of their mean and the
//! least-squares line through them moves by at most 10 % of the mean across the window.
//!
//! `steady` is the rule, a pure function; `Rounds` groups a workload's intervals into rounds,
//! keeps the data of the last window's rounds so the results can cover exactly that window,
//! and applies the rule after each round.

use super::OwnCpuTime;
use super::collector::IntervalData;
use std::collections::VecDeque;
use storbench_report::SteadyState;

/// The thresholds of the rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Rounds in the measurement window.
    pub window: usize,
    /// Largest allowed max − min over the window, percent of the window's mean.
    pub max_range_pct: f64,
    /// Largest allowed excursion of the least-squares line over the window (|slope| × (window
    /// − 1) rounds), percent of the window's mean.
    pub max_slope_pct: f64,
}

impl Rule {
    /// SNIA PTS: five rounds, 20 % data excursion, 10 % slope excursion.
    pub const SNIA_PTS: Rule = Rule { window: 5, max_range_pct: 20.0, max_slope_pct: 10.0 };
    /// SNIA PTS: steady state must be reached within this many rounds.
    pub const SNIA_PTS_MAX_ROUNDS: u32 = 25;

    /// A steady-state `round` checked: whole seconds (rounds are made of one-second intervals)
    /// and, where the measured phase is capped by `cap` (its flag and length), room for the
    /// rule's window of rounds within it. Messages name `--steady-state` and the cap's flag.
    pub fn checked_round(
        round: Option<std::time::Duration>,
        cap: Option<(&str, std::time::Duration)>,
    ) -> Result<Option<std::time::Duration>, String> {
        use crate::units::Seconds;
        let Some(round) = round else { return Ok(None) };
        if round.is_zero() || round.subsec_nanos() != 0 {
            return Err(format!(
                "--steady-state {}: a round is a whole number of seconds above 0, such as 60s",
                Seconds(round)
            ));
        }
        let window = Self::SNIA_PTS.window as u32;
        if let Some((flag, cap)) = cap
            && cap < round * window
        {
            return Err(format!(
                "{flag} {} leaves no room for the {window} rounds of {} that steady state is judged on; use {flag} {} or more, or drop {flag} (the cap is then {} rounds)",
                Seconds(cap),
                Seconds(round),
                Seconds(round * window),
                Self::SNIA_PTS_MAX_ROUNDS
            ));
        }
        Ok(Some(round))
    }

    /// A measured phase's length: `given`, else with steady-state rounds of `round` the
    /// rule's cap of rounds, else `default`.
    pub fn measured_length(
        round: Option<std::time::Duration>,
        given: Option<std::time::Duration>,
        default: std::time::Duration,
    ) -> std::time::Duration {
        given.unwrap_or_else(|| round.map_or(default, |r| r * Self::SNIA_PTS_MAX_ROUNDS))
    }
}

/// The rule applied to the last `rule.window` rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyCheck {
    /// Index of the window's first round.
    pub first: usize,
    pub mean: f64,
    /// (max − min) / mean, percent; None when the mean is not positive.
    pub range_pct: Option<f64>,
    /// |slope| × (window − 1) / mean, percent; None when the mean is not positive.
    pub slope_pct: Option<f64>,
    /// Both excursions are within their limits (never when the mean is not positive: a
    /// device that did nothing is not measured).
    pub steady: bool,
}

/// Applies `rule` to the last `rule.window` values of `rounds`; None while there are fewer.
pub fn steady(rounds: &[f64], rule: &Rule) -> Option<SteadyCheck> {
    let n = rule.window;
    if n < 2 || rounds.len() < n {
        return None;
    }
    let first = rounds.len() - n;
    let w = &rounds[first..];
    let mean = w.iter().sum::<f64>() / n as f64;
    let range = w.iter().copied().fold(f64::MIN, f64::max) - w.iter().copied().fold(f64::MAX, f64::min);
    let excursion = slope(w).abs() * (n - 1) as f64;
    let positive = mean > 0.0;
    let pct = |x: f64| positive.then(|| x * 100.0 / mean);
    // Compared as x × 100 ≤ limit × mean, so a value exactly on the limit passes whatever the
    // rounding of a division would do.
    let within = |x: f64, limit: f64| x * 100.0 <= limit * mean;
    Some(SteadyCheck {
        first,
        mean,
        range_pct: pct(range),
        slope_pct: pct(excursion),
        steady: positive && within(range, rule.max_range_pct) && within(excursion, rule.max_slope_pct),
    })
}

/// Least-squares slope of `y` against x = 0, 1, 2, ... (per round).
fn slope(y: &[f64]) -> f64 {
    let n = y.len() as f64;
    let x_mean = (n - 1.0) / 2.0;
    let y_mean = y.iter().sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, v) in y.iter().enumerate() {
        let dx = i as f64 - x_mean;
        num += dx * (v - y_mean);
        den += dx * dx;
    }
    num / den
}

/// One finished round: its merged data and where it lies, in ns since the run's start.
struct Round<T> {
    data: T,
    start_ns: u64,
    end_ns: u64,
    /// Process CPU time when the round was found complete.
    cpu_end: OwnCpuTime,
}

/// Groups measured intervals into rounds of `intervals_per_round` and decides, after each
/// round, whether the run is steady. Only the last window's rounds keep their data.
pub struct Rounds<T> {
    rule: Rule,
    intervals_per_round: u64,
    round_ns: u64,
    current: T,
    current_start_ns: u64,
    current_ops: u64,
    in_current: u64,
    window: VecDeque<Round<T>>,
    /// CPU time at the start of the window's first round, once earlier rounds left it.
    cpu_before_window: Option<OwnCpuTime>,
    rates: Vec<f64>,
    check: Option<SteadyCheck>,
}

impl<T: IntervalData> Rounds<T> {
    pub fn new(rule: Rule, intervals_per_round: u64, interval_ns: u64) -> Self {
        let intervals_per_round = intervals_per_round.max(1);
        Rounds {
            rule,
            intervals_per_round,
            round_ns: intervals_per_round * interval_ns,
            current: T::default(),
            current_start_ns: 0,
            current_ops: 0,
            in_current: 0,
            window: VecDeque::new(),
            cpu_before_window: None,
            rates: Vec::new(),
            check: None,
        }
    }

    /// Whether the rule held after some round; the run should end then.
    pub fn reached(&self) -> bool {
        self.check.is_some_and(|c| c.steady)
    }

    /// Adds one measured interval with `ops` operations. Intervals after steady state was
    /// reached are not part of any round. Returns true when this interval made the run steady.
    pub fn add(
        &mut self,
        data: &T,
        ops: u64,
        start_ns: u64,
        end_ns: u64,
        cpu: impl FnOnce() -> OwnCpuTime,
    ) -> bool {
        if self.reached() {
            return false;
        }
        if self.in_current == 0 {
            self.current_start_ns = start_ns;
        }
        self.current.merge(data);
        self.current_ops += ops;
        self.in_current += 1;
        if self.in_current < self.intervals_per_round {
            return false;
        }
        if self.cut_short(end_ns) {
            // The run's last interval, ended early (by the work running out or a stop): no
            // round, as a round left unfinished is none.
            (self.current, self.current_ops, self.in_current) = (T::default(), 0, 0);
            return false;
        }
        self.close_round(end_ns, cpu());
        self.reached()
    }

    /// Whether the round ending at `end_ns` falls short of a round by more than a hundredth
    /// of an interval (intervals end on their boundaries, or just after them when workers
    /// close them; only the run's last can end early).
    fn cut_short(&self, end_ns: u64) -> bool {
        let interval_ns = self.round_ns / self.intervals_per_round;
        let span = end_ns.saturating_sub(self.current_start_ns);
        span.saturating_add(interval_ns / 100) < self.round_ns
    }

    fn close_round(&mut self, end_ns: u64, cpu_end: OwnCpuTime) {
        let secs = (end_ns.saturating_sub(self.current_start_ns) as f64 / 1e9).max(1e-9);
        self.rates.push(self.current_ops as f64 / secs * T::HEADLINE.per_op_per_s);
        self.window.push_back(Round {
            data: std::mem::take(&mut self.current),
            start_ns: self.current_start_ns,
            end_ns,
            cpu_end,
        });
        if self.window.len() > self.rule.window
            && let Some(gone) = self.window.pop_front()
        {
            self.cpu_before_window = Some(gone.cpu_end);
        }
        (self.current_ops, self.in_current) = (0, 0);
        self.check = steady(&self.rates, &self.rule);
    }

    /// The window's data merged (None before the first whole round), the CPU time it took
    /// (from `cpu_at_first` when the window starts with the first round), and what the rounds
    /// came to (`round_iops` holds each round's headline figure, `T::HEADLINE`).
    pub fn finish(self, cpu_at_first: Option<OwnCpuTime>) -> Option<(T, Option<OwnCpuTime>, SteadyState)> {
        let (first, last) = (self.window.front()?, self.window.back()?);
        let cpu = self.cpu_before_window.or(cpu_at_first).map(|start| last.cpu_end.since(&start));
        let outcome = SteadyState {
            figure: T::HEADLINE.name.into(),
            round_s: self.round_ns as f64 / 1e9,
            rounds_run: self.rates.len() as u64,
            reached: self.reached(),
            window_start_s: first.start_ns as f64 / 1e9,
            window_end_s: last.end_ns as f64 / 1e9,
            round_iops: self.rates.clone(),
            range_pct: self.check.and_then(|c| c.range_pct),
            slope_pct: self.check.and_then(|c| c.slope_pct),
        };
        let mut data = T::default();
        for r in &self.window {
            data.merge(&r.data);
        }
        Some((data, cpu, outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(rounds: &[f64]) -> SteadyCheck {
        steady(rounds, &Rule::SNIA_PTS).expect("enough rounds")
    }

    #[test]
    fn a_flat_series_is_steady() {
        let c = check(&[1000.0; 5]);
        assert!(c.steady);
        assert_eq!((c.first, c.range_pct, c.slope_pct), (0, Some(0.0), Some(0.0)));
    }

    #[test]
    fn fewer_rounds_than_the_window_give_no_verdict() {
        assert_eq!(steady(&[1.0; 4], &Rule::SNIA_PTS), None);
    }

    #[test]
    fn a_ramp_whose_line_moves_15_pct_is_not_steady_though_its_range_is_within_20_pct() {
        let c = check(&[92.5, 96.25, 100.0, 103.75, 107.5]);
        assert_eq!((c.range_pct, c.slope_pct), (Some(15.0), Some(15.0)));
        assert!(!c.steady);
    }

    #[test]
    fn a_25_pct_excursion_is_not_steady_though_the_slope_is_small() {
        let c = check(&[100.0, 100.0, 87.5, 112.5, 100.0]);
        assert_eq!((c.range_pct, c.slope_pct), (Some(25.0), Some(5.0)));
        assert!(!c.steady);
    }

    #[test]
    fn values_exactly_on_the_limits_pass_and_just_over_them_fail() {
        // Range exactly 20 % of the mean, no slope.
        assert!(check(&[90.0, 110.0, 100.0, 100.0, 100.0]).steady);
        assert!(!check(&[90.0, 110.01, 100.0, 100.0, 100.0]).steady);
        // Slope: 2.5 a round × 4 rounds = 10 % of the mean 100.
        let on = check(&[95.0, 97.5, 100.0, 102.5, 105.0]);
        assert_eq!(on.slope_pct, Some(10.0));
        assert!(on.steady);
        assert!(!check(&[95.0, 97.5, 100.0, 102.5, 105.02]).steady);
    }

    #[test]
    fn only_the_last_window_counts() {
        let c = check(&[10.0, 50.0, 100.0, 100.0, 100.0, 100.0, 100.0]);
        assert!(c.steady);
        assert_eq!(c.first, 2);
    }

    #[test]
    fn a_window_without_any_operation_is_not_steady() {
        let c = check(&[0.0; 5]);
        assert!(!c.steady);
        assert_eq!(c.range_pct, None);
    }

    use crate::run::Count;

    const S: u64 = 1_000_000_000;

    /// Feeds `per_second` ops a second into rounds of 2 one-second intervals.
    fn feed(rounds: &mut Rounds<Count>, per_second: &[u64]) -> Option<usize> {
        for (i, &ops) in per_second.iter().enumerate() {
            let t = i as u64 * S;
            if rounds.add(&Count(ops), ops, t, t + S, OwnCpuTime::default) {
                return Some(i);
            }
        }
        None
    }

    #[test]
    fn rounds_end_at_the_first_steady_window_and_keep_only_its_data() {
        let mut r = Rounds::new(Rule::SNIA_PTS, 2, S);
        let mut ops = vec![10, 10, 50, 50];
        ops.extend([100; 20]);
        // Rounds: 10, 50, then 100s: steady once rounds 3..7 are all 100, after second 13.
        assert_eq!(feed(&mut r, &ops), Some(13));
        assert!(!r.add(&Count(7), 7, 14 * S, 15 * S, OwnCpuTime::default));
        let (data, _, out) = r.finish(None).unwrap();
        assert_eq!(data.0, 1000);
        assert_eq!(out.round_iops, vec![10.0, 50.0, 100.0, 100.0, 100.0, 100.0, 100.0]);
        assert_eq!((out.rounds_run, out.reached), (7, true));
        assert_eq!((out.window_start_s, out.window_end_s, out.round_s), (4.0, 14.0, 2.0));
    }

    /// Orders, whose headline is a figure per minute.
    #[derive(Default)]
    struct Orders(u64);

    impl IntervalData for Orders {
        const HEADLINE: crate::run::Headline = crate::run::Headline { name: "OPM", per_op_per_s: 60.0 };
        fn merge(&mut self, other: &Self) {
            self.0 += other.0;
        }
        fn ops(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn rounds_are_judged_and_reported_in_the_workloads_headline() {
        let mut r = Rounds::<Orders>::new(Rule::SNIA_PTS, 2, S);
        for i in 0..10 {
            r.add(&Orders(5), 5, i * S, (i + 1) * S, OwnCpuTime::default);
        }
        let (data, _, out) = r.finish(None).unwrap();
        assert_eq!((out.figure.as_str(), out.reached, data.0), ("OPM", true, 50));
        assert_eq!(out.round_iops, vec![300.0; 5], "5 orders a second are 300 OPM");
    }

    #[test]
    fn without_steady_state_the_last_window_is_kept_and_a_partial_round_is_left_out() {
        let mut r = Rounds::new(Rule::SNIA_PTS, 1, S);
        assert_eq!(feed(&mut r, &[100, 200, 100, 200, 100, 200, 100]), None);
        let (data, _, out) = r.finish(None).unwrap();
        assert_eq!((data.0, out.rounds_run, out.reached), (700, 7, false));
        assert_eq!((out.window_start_s, out.window_end_s), (2.0, 7.0));
        let mut partial = Rounds::new(Rule::SNIA_PTS, 3, S);
        feed(&mut partial, &[5, 5]);
        assert!(partial.finish(None).is_none());
    }

    #[test]
    fn a_last_interval_cut_short_is_no_round() {
        let mut r = Rounds::new(Rule::SNIA_PTS, 1, S);
        assert_eq!(feed(&mut r, &[100, 200, 100, 200, 100, 200]), None);
        // The work ran out 0.9 s into the seventh second.
        assert!(!r.add(&Count(90), 90, 6 * S, 6 * S + S * 9 / 10, OwnCpuTime::default));
        let (data, _, out) = r.finish(None).unwrap();
        assert_eq!((out.rounds_run, out.window_end_s, data.0), (6, 6.0, 800));
    }
}
