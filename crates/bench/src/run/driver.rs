//! The one run driver every workload runs through: it keeps the schedule (a warm-up ended by
//! time or by the workload's own test, a measured phase ended by time, by the workload's work
//! running out or by a stop request, steady-state rounds), closes one interval per tick,
//! samples the host at each boundary, keeps storbench's own CPU time over the measured phase,
//! and returns one `Outcome`.
//!
//! A workload brings its workers (started before `drive` is called), the data an interval
//! carries, and its columns. It says how intervals close: on the driver's timer, taking what
//! the workers recorded so far (`Pace::Timer`), or when every worker has reported the
//! interval on its own clock (`Pace::Workers`, for engines that time each I/O themselves).
//! The driver's own time and waits are a `Clock`'s (clock.rs): the machine's for every run, a
//! test clock that moves only when the driver waits in its tests.
//!
//! The no-progress rule, the same for every workload: after each interval the workload says
//! whether its workers got work done (`Workload::progress`); when work was asked and nothing
//! completed (every I/O or call failed, or nothing came back) for `Workload::no_progress_limit`
//! (`NO_PROGRESS_LIMIT`, 5 s, unless the workload states its own), the run ends there as failed
//! with the reason, warm-up or not, and its figures are not complete.

use super::clock::{Clock, SystemClock};
use super::schedule::Schedule;
use super::steady::{Rounds, Rule};
use super::stream::{StreamInterval, values_of};
use super::{Beside, IntervalData, OwnCpuTime, StopFlag, process_cpu};
use std::time::{Duration, Instant};
use storbench_report::SteadyState;
use storbench_report::columns::Column;
use storbench_report::series::{Phase, SeriesRow};

/// How the warm-up ends; nothing it records counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warmup {
    For(Duration),
    /// When the workload's `warmed` test first holds after an interval, or after `max`.
    Until {
        max: Duration,
    },
}

/// How the measured phase ends (a stop request ends either).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    For(Duration),
    /// When the workload has no more intervals to give (`Take::Finished`).
    UntilDone,
}

/// The shape of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunShape {
    pub warmup: Warmup,
    pub length: Length,
    pub interval: Duration,
    /// Steady-state rounds of this length (SNIA PTS rule): the run ends once the rule holds
    /// and its figures are those of the last window of rounds.
    pub rounds: Option<Duration>,
}

impl RunShape {
    /// Interval boundaries and phases as they stand before the run (a warm-up that ends on
    /// the workload's test is planned at its longest).
    pub fn schedule(&self) -> Schedule {
        let ramp_ns = match self.warmup {
            Warmup::For(d) | Warmup::Until { max: d } => nanos(d),
        };
        let end_ns = match self.length {
            Length::For(d) => Some(ramp_ns.saturating_add(nanos(d))),
            Length::UntilDone => None,
        };
        Schedule { ramp_ns, end_ns, interval_ns: nanos(self.interval).max(1) }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Who decides when an interval ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// The driver sleeps until each boundary, then takes what the workers recorded.
    Timer,
    /// The workers close intervals on their own clocks; `take` waits for all of them.
    Workers,
}

/// How long work may be asked and nothing complete before a run ends as failed, unless the
/// workload states its own limit (`Workload::no_progress_limit`).
pub const NO_PROGRESS_LIMIT: Duration = Duration::from_secs(5);

/// What an interval shows of the workers' progress, for the no-progress rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Work completed.
    Working,
    /// Nothing was asked (a rate cap between requests, a pause): neither progress nor a stall.
    Idle,
    /// Work was asked and none completed: why, in a few words ("every I/O failed (EIO 812)",
    /// "8 I/Os outstanding, none completed").
    Stuck(String),
}

impl Progress {
    /// Working when any of the interval's requests completed; else stuck when some failed
    /// (`failed`: their kinds and counts) or were still outstanding at its end; else idle.
    pub fn of_requests<'a>(
        completed: u64,
        failed: impl IntoIterator<Item = (&'a str, u64)>,
        outstanding: u64,
    ) -> Progress {
        let failed: Vec<String> =
            failed.into_iter().filter(|(_, n)| *n > 0).map(|(kind, n)| format!("{kind} {n}")).collect();
        if completed > 0 {
            Progress::Working
        } else if !failed.is_empty() {
            Progress::Stuck(format!("every I/O failed ({})", failed.join(", ")))
        } else if outstanding > 0 {
            Progress::Stuck(format!("{outstanding} I/Os outstanding, none completed"))
        } else {
            Progress::Idle
        }
    }
}

/// What closing an interval gave.
pub enum Take<T> {
    /// The interval ended at `end_ns` (since the start) with `data`.
    Closed { end_ns: u64, data: T },
    /// Every worker has finished: there are no more intervals.
    Finished,
}

/// One closed interval as the workload's columns and the caller see it.
pub struct Interval<'a, T> {
    pub index: u64,
    pub phase: Phase,
    /// Seconds since the start at which the interval began and ended.
    pub start_s: f64,
    pub end_s: f64,
    /// The same in nanoseconds, as the record stores them.
    pub start_ns: u64,
    pub end_ns: u64,
    /// storbench's CPU time so far when the interval closed (the record keeps it, so that a
    /// window of the run has its own CPU per operation).
    pub cpu: OwnCpuTime,
    pub data: &'a T,
    /// Everything since the current phase began (the warm-up, or the measured phase).
    pub phase_total: &'a T,
    pub phase_elapsed_s: f64,
    /// The first interval of the measured phase.
    pub first_measured: bool,
}

impl<'a, T> Interval<'a, T> {
    /// Interval `index` from `start_ns` to `end_ns` with `data`, `phase_total` since its
    /// phase began; no CPU time, not the first measured.
    pub fn of(
        index: u64,
        phase: Phase,
        (start_ns, end_ns): (u64, u64),
        data: &'a T,
        phase_total: &'a T,
    ) -> Self {
        Interval {
            index,
            phase,
            start_s: start_ns as f64 / 1e9,
            end_s: end_ns as f64 / 1e9,
            start_ns,
            end_ns,
            cpu: OwnCpuTime::default(),
            data,
            phase_total,
            phase_elapsed_s: 0.0,
            first_measured: false,
        }
    }

    pub fn span_s(&self) -> f64 {
        (self.end_s - self.start_s).max(1e-9)
    }
}

/// A closed interval with its row of `timeseries.csv`: what the caller is handed.
pub struct Closed<'a, T> {
    pub row: SeriesRow,
    pub interval: Interval<'a, T>,
    /// The background streams' data over the same interval, for the record.
    pub streams: &'a [StreamInterval],
}

/// One column of a workload's time series: its definition (name, unit, kind) and how an
/// interval's value is computed from the interval and the workload.
pub struct SeriesColumn<W: Workload> {
    pub column: Column,
    pub value: fn(&W, &Interval<'_, W::Data>) -> Option<f64>,
}

/// What a workload brings to the driver besides its workers.
pub trait Workload: Sized + 'static {
    type Data: IntervalData;

    /// The workload's columns of `timeseries.csv`, in groups, in the file's order.
    const COLUMNS: &'static [&'static [SeriesColumn<Self>]];

    fn pace(&self) -> Pace;

    /// Closes interval `index`. Under `Pace::Timer` the driver calls it at `now_ns`, the
    /// interval's end; under `Pace::Workers` it blocks until every worker reported the
    /// interval (or finished), and `now_ns` is only the planned boundary.
    fn take(&mut self, index: u64, now_ns: u64) -> Take<Self::Data>;

    /// Asked after each warm-up interval when the warm-up ends on the workload's test.
    fn warmed(&mut self, _interval: &Interval<'_, Self::Data>) -> bool {
        true
    }

    /// Sees every closed interval (for figures the workload keeps per interval).
    fn observe(&mut self, _interval: &Interval<'_, Self::Data>) {}

    /// The workload ended on its own (a worker failed, a limit was reached): the run ends
    /// after this interval.
    fn ended(&self) -> bool {
        false
    }

    /// The run is over before its planned end (steady state reached, or no progress): the
    /// workers should finish.
    fn wind_down(&mut self) {}

    /// How the workers fared over the interval just closed (`data`), for the no-progress
    /// rule. The default never reports a stall.
    fn progress(&self, _data: &Self::Data) -> Progress {
        Progress::Working
    }

    /// How long the workers may be `Stuck` (with only `Idle` intervals between) before the
    /// run ends as failed.
    fn no_progress_limit(&self) -> Duration {
        NO_PROGRESS_LIMIT
    }
}

/// What a run measured, for every workload; `detail` holds what only one workload has.
#[derive(Debug)]
pub struct Outcome<T, D = ()> {
    /// The measured phase (under steady state: its window), every worker merged.
    pub totals: T,
    /// Every interval, the warm-up included (errors count whenever they happened).
    pub all: T,
    pub warmup_s: f64,
    pub measured_s: f64,
    /// storbench's CPU time over what `totals` covers.
    pub cpu: OwnCpuTime,
    /// False when a stop request or a failure cut the run short.
    pub complete: bool,
    /// Workers that failed as a whole (single failed operations are errors in the data).
    pub failures: Vec<String>,
    /// Things to tell the user about how the figures came about.
    pub warnings: Vec<String>,
    pub steady: Option<SteadyState>,
    pub detail: D,
}

impl<T, D> Outcome<T, D> {
    /// The same outcome with the workload's own part.
    pub fn with<E>(self, detail: E) -> Outcome<T, E> {
        let Outcome { totals, all, warmup_s, measured_s, cpu, complete, failures, warnings, steady, .. } =
            self;
        Outcome { totals, all, warmup_s, measured_s, cpu, complete, failures, warnings, steady, detail }
    }

    /// Seconds since the run's start at which what `totals` covers begins: the steady-state
    /// window's start, or the warm-up's end.
    pub fn counted_from_s(&self) -> f64 {
        self.steady.as_ref().map_or(self.warmup_s, |st| st.window_start_s)
    }

    /// Adds workers that failed; the run is then not complete.
    pub fn failed(&mut self, failures: impl IntoIterator<Item = String>) {
        self.failures.extend(failures);
        self.complete &= self.failures.is_empty();
    }
}

/// Runs the schedule of `plan` over `workload`, whose workers started at `start`. Calls
/// `on_interval` once per interval, in order.
pub fn drive<W: Workload>(
    plan: &RunShape,
    workload: &mut W,
    start: Instant,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&Closed<'_, W::Data>),
) -> Outcome<W::Data> {
    drive_on(&mut SystemClock, plan, workload, start, sampler, stop, on_interval)
}

/// `drive` on `clock`: the time the driver reads under `Pace::Timer` and the waits for each
/// boundary are the clock's (the workers and background streams keep their own).
pub(crate) fn drive_on<W: Workload>(
    clock: &mut dyn Clock,
    plan: &RunShape,
    workload: &mut W,
    start: Instant,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&Closed<'_, W::Data>),
) -> Outcome<W::Data> {
    let mut d = Driver::new(plan);
    let mut stall = Stall::new(workload.no_progress_limit());
    if let Some(streams) = sampler.streams() {
        streams.start(d.schedule, start, stop);
    }
    sampler.sample();
    let timer = workload.pace() == Pace::Timer;
    for index in 0.. {
        let boundary = d.schedule.boundary(index).min(d.schedule.end_ns.unwrap_or(u64::MAX));
        let reached = !timer || clock.sleep_until(start + Duration::from_nanos(boundary), stop);
        let now_ns = if reached { boundary } else { nanos(clock.now().saturating_duration_since(start)) };
        let Take::Closed { end_ns, data } = workload.take(index, now_ns) else { break };
        let progress = workload.progress(&data);
        d.close(index, end_ns, data, workload, sampler, on_interval);
        if let Some(why) = stall.after(progress, d.schedule.interval_start(index), end_ns) {
            d.failures.push(why);
            workload.wind_down();
            break;
        }
        let over = d.schedule.end_ns.is_some_and(|e| end_ns >= e) || d.steady_reached();
        if timer && (!reached || over) || workload.ended() {
            break;
        }
    }
    if let Some(streams) = sampler.streams() {
        streams.stop();
    }
    d.finish(stop)
}

/// The no-progress rule's state: since when the workers have been stuck.
struct Stall {
    limit_ns: u64,
    /// The start of the first `Stuck` interval since the last `Working` one.
    since_ns: Option<u64>,
}

impl Stall {
    fn new(limit: Duration) -> Stall {
        Stall { limit_ns: nanos(limit), since_ns: None }
    }

    /// Takes the progress of the interval from `start_ns` to `end_ns`; the run's failure when
    /// the workers have now been stuck for the limit.
    fn after(&mut self, progress: Progress, start_ns: u64, end_ns: u64) -> Option<String> {
        let why = match progress {
            Progress::Working => {
                self.since_ns = None;
                return None;
            }
            Progress::Idle => return None,
            Progress::Stuck(why) => why,
        };
        let since = *self.since_ns.get_or_insert(start_ns);
        let stuck_ns = end_ns.saturating_sub(since);
        (stuck_ns >= self.limit_ns).then(|| {
            format!(
                "nothing completed for {:.1} s (the limit is {} s): {why}; the run was ended there as failed",
                stuck_ns as f64 / 1e9,
                self.limit_ns as f64 / 1e9
            )
        })
    }
}

/// The driver's state between intervals.
struct Driver<T> {
    schedule: Schedule,
    /// The warm-up ends on the workload's test (and has not yet).
    warm_by_test: bool,
    measured_len_ns: Option<u64>,
    all: T,
    phase_total: T,
    measuring: bool,
    end_ns: u64,
    rounds: Option<Rounds<T>>,
    cpu_at_measure: Option<OwnCpuTime>,
    /// Why the driver ended the run as failed (the no-progress rule).
    failures: Vec<String>,
}

impl<T: IntervalData> Driver<T> {
    fn new(plan: &RunShape) -> Self {
        let schedule = plan.schedule();
        Driver {
            schedule,
            warm_by_test: matches!(plan.warmup, Warmup::Until { .. }),
            measured_len_ns: match plan.length {
                Length::For(d) => Some(nanos(d)),
                Length::UntilDone => None,
            },
            all: T::default(),
            phase_total: T::default(),
            measuring: false,
            end_ns: 0,
            rounds: plan.rounds.map(|round| {
                let per_round = (nanos(round) / schedule.interval_ns).max(1);
                Rounds::new(Rule::SNIA_PTS, per_round, schedule.interval_ns)
            }),
            cpu_at_measure: (schedule.ramp_ns == 0).then(process_cpu),
            failures: Vec::new(),
        }
    }

    fn steady_reached(&self) -> bool {
        self.rounds.as_ref().is_some_and(Rounds::reached)
    }

    fn close<W: Workload<Data = T>>(
        &mut self,
        index: u64,
        end_ns: u64,
        data: T,
        workload: &mut W,
        sampler: &mut dyn Beside,
        on_interval: &mut dyn FnMut(&Closed<'_, T>),
    ) {
        let phase = self.schedule.phase(index);
        let first_measured = phase == Phase::Measure && !self.measuring;
        if first_measured {
            self.measuring = true;
            self.phase_total = T::default();
        }
        let start_ns = self.schedule.interval_start(index);
        self.end_ns = end_ns;
        self.all.merge(&data);
        self.phase_total.merge(&data);
        if phase == Phase::Measure
            && let Some(r) = &mut self.rounds
            && r.add(&data, data.ops(), start_ns, end_ns, process_cpu)
        {
            workload.wind_down();
        }
        let phase_start = if phase == Phase::Measure { self.schedule.ramp_ns } else { 0 };
        let interval = Interval {
            cpu: process_cpu(),
            phase_elapsed_s: end_ns.saturating_sub(phase_start) as f64 / 1e9,
            first_measured,
            ..Interval::of(index, phase, (start_ns, end_ns), &data, &self.phase_total)
        };
        workload.observe(&interval);
        let (streams, tallies) =
            sampler.streams().map(|s| s.take(index, phase, start_ns, end_ns)).unwrap_or_default();
        let row = SeriesRow {
            t_s: interval.end_s,
            phase,
            workload: values_of(workload, &interval),
            streams,
            system: sampler.sample(),
        };
        let warmed = phase == Phase::Ramp && self.warm_by_test && workload.warmed(&interval);
        on_interval(&Closed { row, interval, streams: &tallies });
        if warmed {
            self.end_warmup_at(index);
        }
        if self.schedule.phase(index + 1) == Phase::Measure && self.cpu_at_measure.is_none() {
            self.cpu_at_measure = Some(process_cpu());
        }
    }

    /// The workload's test held after interval `index`: measuring starts at its end.
    fn end_warmup_at(&mut self, index: u64) {
        let ramp_ns = self.schedule.boundary(index);
        self.schedule.ramp_ns = ramp_ns;
        self.schedule.end_ns = self.measured_len_ns.map(|len| ramp_ns.saturating_add(len));
        self.warm_by_test = false;
    }

    fn finish(self, stop: &StopFlag) -> Outcome<T> {
        let cpu_end = process_cpu();
        let ramp_ns = self.schedule.ramp_ns.min(self.end_ns);
        let mut out = Outcome {
            totals: if self.measuring { self.phase_total } else { T::default() },
            all: self.all,
            warmup_s: ramp_ns as f64 / 1e9,
            measured_s: self.end_ns.saturating_sub(ramp_ns) as f64 / 1e9,
            cpu: self.cpu_at_measure.map(|m| cpu_end.since(&m)).unwrap_or_default(),
            complete: !stop.is_stopped() && self.failures.is_empty(),
            failures: self.failures,
            warnings: Vec::new(),
            steady: None,
            detail: (),
        };
        if let Some(rounds) = self.rounds {
            steady_window(&mut out, rounds, self.cpu_at_measure);
        }
        out
    }
}

/// Narrows a finished run's figures to the steady-state window. A run that ended before its
/// first whole round keeps every measured interval, and says so.
fn steady_window<T: IntervalData>(
    out: &mut Outcome<T>,
    rounds: Rounds<T>,
    cpu_at_measure: Option<OwnCpuTime>,
) {
    let Some((totals, cpu, steady)) = rounds.finish(cpu_at_measure) else {
        out.warnings.push(
            "steady state: the run ended before its first whole round; the figures cover the whole measured phase"
                .into(),
        );
        return;
    };
    if !steady.reached {
        out.warnings.push(format!(
            "steady state not reached in {} rounds; the figures cover the last {} rounds",
            steady.rounds_run,
            steady.rounds_run.min(Rule::SNIA_PTS.window as u64)
        ));
    }
    out.totals = totals;
    out.cpu = cpu.unwrap_or_default();
    out.measured_s = steady.window_end_s - steady.window_start_s;
    out.steady = Some(steady);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Count;
    use crate::run::clock::TestClock;
    use crate::testing::NoHost;
    use storbench_report::columns::io;

    /// A workload whose workers did `per_interval` operations in every interval.
    struct Fake {
        pace: Pace,
        per_interval: u64,
        /// Workers-paced: intervals the workers have before they finish.
        intervals: u64,
        warm_after: Option<u64>,
        wound_down: bool,
        observed: Vec<(u64, Phase)>,
        /// The progress each interval reports, by index (Working past the end).
        progress: Vec<Progress>,
    }

    impl Fake {
        fn new(pace: Pace) -> Self {
            Fake {
                pace,
                per_interval: 10,
                intervals: u64::MAX,
                warm_after: None,
                wound_down: false,
                observed: vec![],
                progress: vec![],
            }
        }
    }

    impl Workload for Fake {
        type Data = Count;
        const COLUMNS: &'static [&'static [SeriesColumn<Self>]] =
            &[&[SeriesColumn { column: io::READ_IOPS, value: |_, i| Some(i.data.0 as f64 / i.span_s()) }]];
        fn pace(&self) -> Pace {
            self.pace
        }
        fn take(&mut self, index: u64, now_ns: u64) -> Take<Count> {
            if index >= self.intervals || self.wound_down {
                return Take::Finished;
            }
            Take::Closed { end_ns: now_ns, data: Count(self.per_interval) }
        }
        fn warmed(&mut self, i: &Interval<'_, Count>) -> bool {
            self.warm_after.is_some_and(|n| i.index + 1 >= n)
        }
        fn observe(&mut self, i: &Interval<'_, Count>) {
            self.observed.push((i.index, i.phase));
        }
        fn wind_down(&mut self) {
            self.wound_down = true;
        }
        fn progress(&self, _data: &Count) -> Progress {
            self.progress.get(self.observed.len()).cloned().unwrap_or(Progress::Working)
        }
        fn no_progress_limit(&self) -> Duration {
            30 * MS
        }
    }

    const MS: Duration = Duration::from_millis(1);

    fn plan(warmup: Warmup, length: Length) -> RunShape {
        RunShape { warmup, length, interval: 10 * MS, rounds: None }
    }

    type Rows = Vec<(u64, Phase, u64)>;

    /// Drives `w` on a test clock (the run takes no time and its boundaries are exact) and
    /// returns the outcome with each row's (end in ms, phase, phase total). A stop request
    /// comes as interval `stop_after` is handed over.
    fn run(plan: &RunShape, w: &mut Fake, stop_after: Option<u64>) -> (Outcome<Count>, Rows) {
        let start = Instant::now();
        run_on(TestClock::starting_at(start), start, plan, w, stop_after)
    }

    /// `run` on `clock`, the workers having started at `start`.
    fn run_on(
        mut clock: TestClock,
        start: Instant,
        plan: &RunShape,
        w: &mut Fake,
        stop_after: Option<u64>,
    ) -> (Outcome<Count>, Rows) {
        let stop = StopFlag::new();
        let mut rows = Vec::new();
        let out = drive_on(&mut clock, plan, w, start, &mut NoHost, &stop, &mut |c| {
            let ms = (c.interval.end_s * 1e3).round() as u64;
            rows.push((ms, c.row.phase, c.interval.phase_total.0));
            if Some(c.interval.index) == stop_after {
                stop.stop();
            }
        });
        (out, rows)
    }

    #[test]
    fn a_fractional_warm_up_ends_on_its_own_boundary_and_only_the_measured_intervals_count() {
        let mut w = Fake::new(Pace::Workers);
        w.intervals = 6;
        let (out, rows) = run(&plan(Warmup::For(25 * MS), Length::UntilDone), &mut w, None);
        use Phase::{Measure as M, Ramp as R};
        // Warm-up closes at 10, 20 and 25 ms; then whole intervals; the phase total restarts.
        assert_eq!(rows, [(10, R, 10), (20, R, 20), (25, R, 30), (35, M, 10), (45, M, 20), (55, M, 30)]);
        assert_eq!((out.totals.0, out.all.0), (30, 60));
        assert!((out.warmup_s - 0.025).abs() < 1e-9 && (out.measured_s - 0.030).abs() < 1e-9, "{out:?}");
        assert!(out.complete && out.steady.is_none());
        assert_eq!(w.observed.len(), 6);
    }

    #[test]
    fn a_timed_run_closes_exact_boundaries_on_the_drivers_timer_and_ends_at_its_length() {
        let mut w = Fake::new(Pace::Timer);
        let (out, rows) = run(&plan(Warmup::For(20 * MS), Length::For(30 * MS)), &mut w, None);
        let ends: Vec<u64> = rows.iter().map(|r| r.0).collect();
        assert_eq!(ends, [10, 20, 30, 40, 50]);
        assert_eq!((out.totals.0, out.all.0), (30, 50));
        assert!((out.measured_s - 0.030).abs() < 1e-9);
    }

    #[test]
    fn a_warm_up_by_the_workloads_test_ends_when_the_test_first_holds() {
        let mut w = Fake::new(Pace::Timer);
        w.warm_after = Some(3);
        let (out, rows) =
            run(&plan(Warmup::Until { max: Duration::from_secs(60) }, Length::For(20 * MS)), &mut w, None);
        use Phase::{Measure as M, Ramp as R};
        let phases: Vec<(u64, Phase)> = rows.iter().map(|r| (r.0, r.1)).collect();
        assert_eq!(phases, [(10, R), (20, R), (30, R), (40, M), (50, M)]);
        assert!((out.warmup_s - 0.030).abs() < 1e-9 && (out.measured_s - 0.020).abs() < 1e-9, "{out:?}");
        assert_eq!(out.totals.0, 20);
    }

    #[test]
    fn a_warm_up_whose_test_never_holds_ends_at_its_limit() {
        let mut w = Fake::new(Pace::Timer);
        w.warm_after = None;
        let (out, rows) = run(&plan(Warmup::Until { max: 20 * MS }, Length::For(10 * MS)), &mut w, None);
        assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), [Phase::Ramp, Phase::Ramp, Phase::Measure]);
        assert_eq!(out.totals.0, 10);
    }

    #[test]
    fn a_stop_request_closes_the_interval_in_progress_and_keeps_what_was_measured() {
        let mut w = Fake::new(Pace::Timer);
        let (out, rows) =
            run(&plan(Warmup::For(10 * MS), Length::For(Duration::from_secs(60))), &mut w, Some(2));
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert!(rows[3].0 < 40, "the last interval is cut short at the stop: {rows:?}");
        assert!(!out.complete);
        assert_eq!(out.totals.0, 30, "three measured intervals");
    }

    #[test]
    fn a_stop_request_mid_interval_closes_that_interval_at_the_stop_time_exactly() {
        let mut w = Fake::new(Pace::Timer);
        let start = Instant::now();
        let clock = TestClock::starting_at(start).stopping_at(start + Duration::from_micros(35_250));
        let p = plan(Warmup::For(10 * MS), Length::For(Duration::from_secs(60)));
        let (out, rows) = run_on(clock, start, &p, &mut w, None);
        use Phase::{Measure as M, Ramp as R};
        assert_eq!(rows, [(10, R, 10), (20, M, 10), (30, M, 20), (35, M, 30)]);
        assert_eq!(out.measured_s, 0.02525, "from the 10 ms warm-up to the stop at 35.25 ms");
        assert_eq!(out.warmup_s, 0.010);
        assert!(!out.complete && out.failures.is_empty(), "{out:?}");
        assert_eq!(out.totals.0, 30);
    }

    #[test]
    fn steady_rounds_wind_the_workers_down_and_keep_only_the_window() {
        let mut w = Fake::new(Pace::Workers);
        let mut p = plan(Warmup::For(Duration::ZERO), Length::For(Duration::from_secs(60)));
        p.rounds = Some(20 * MS);
        let (out, rows) = run(&p, &mut w, None);
        let steady = out.steady.expect("steady state");
        assert!(steady.reached && w.wound_down);
        assert_eq!(rows.len(), 2 * Rule::SNIA_PTS.window, "two intervals a round until the rule held");
        assert_eq!(out.totals.0, 10 * 2 * Rule::SNIA_PTS.window as u64);
    }

    #[test]
    fn requests_make_progress_when_any_completed_and_are_stuck_when_all_failed_or_waited() {
        assert_eq!(Progress::of_requests(1, [("EIO", 9)], 4), Progress::Working);
        let failed = Progress::of_requests(0, [("EIO", 9), ("ENOSPC", 0), ("short", 2)], 4);
        assert_eq!(failed, Progress::Stuck("every I/O failed (EIO 9, short 2)".into()));
        let waiting = Progress::of_requests(0, [("EIO", 0)], 4);
        assert_eq!(waiting, Progress::Stuck("4 I/Os outstanding, none completed".into()));
        assert_eq!(Progress::of_requests(0, [], 0), Progress::Idle);
    }

    fn stuck() -> Progress {
        Progress::Stuck("every I/O failed (EIO 4)".into())
    }

    #[test]
    fn a_run_stuck_for_the_limit_ends_there_as_failed_with_the_reason_warm_up_or_not() {
        use Progress::{Idle, Working};
        let long = Length::For(Duration::from_secs(60));
        // Stuck from the second interval: 10-40 ms is the limit's 30 ms, in the warm-up.
        let mut w = Fake::new(Pace::Timer);
        w.progress = vec![Working, stuck(), stuck(), stuck(), Working];
        let (out, rows) = run(&plan(Warmup::For(Duration::from_secs(1)), long), &mut w, None);
        assert_eq!(rows.len(), 4, "ended after the third stuck interval: {rows:?}");
        assert!(!out.complete && w.wound_down, "{out:?}");
        assert_eq!(out.failures.len(), 1, "{:?}", out.failures);
        let why = &out.failures[0];
        assert!(
            why.starts_with("nothing completed for 0.0") && why.contains("every I/O failed (EIO 4)"),
            "{why}"
        );
        // Idle intervals between stuck ones neither break the stall nor start one.
        let mut w = Fake::new(Pace::Workers);
        w.progress = vec![Idle, Idle, stuck(), Idle, stuck(), Working];
        let (out, rows) = run(&plan(Warmup::For(Duration::ZERO), long), &mut w, None);
        assert_eq!((rows.len(), out.failures.len()), (5, 1), "20-50 ms stuck: {rows:?}");
        // Working resets the count: stuck 20 ms twice is no stall.
        let mut w = Fake::new(Pace::Timer);
        w.progress = vec![stuck(), stuck(), Working, stuck(), stuck(), Working];
        let (out, rows) = run(&plan(Warmup::For(Duration::ZERO), Length::For(60 * MS)), &mut w, None);
        assert_eq!(rows.len(), 6);
        assert!(out.complete && out.failures.is_empty() && !w.wound_down, "{out:?}");
    }
}
