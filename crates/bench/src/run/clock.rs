//! The run driver's clock: where it reads the time and how it waits for an interval's end.
//! `SystemClock` is the machine's, the one every run uses; the driver's tests use
//! `TestClock`, which moves only when the driver waits, so that their boundaries are exact
//! and take no time whatever the machine's load.

use super::StopFlag;
use std::time::{Duration, Instant};

/// The time as the run driver sees it.
pub(crate) trait Clock {
    fn now(&self) -> Instant;

    /// Waits until `at`; false when a stop request came first (`now` is then about when it
    /// came).
    fn sleep_until(&mut self, at: Instant, stop: &StopFlag) -> bool;
}

/// The machine's clock.
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Sleeps in steps of at most 50 ms, so that a stop request is seen soon.
    fn sleep_until(&mut self, at: Instant, stop: &StopFlag) -> bool {
        loop {
            if stop.is_stopped() {
                return false;
            }
            let left = at.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
    }
}

/// A clock that stands still until the driver waits, then moves at once to the end of the
/// wait, or to a stop request planned before that end (which it then makes).
#[cfg(test)]
pub(crate) struct TestClock {
    now: Instant,
    stop_at: Option<Instant>,
    waits: u32,
}

/// More waits than any test's run has intervals: a driver that keeps waiting on a clock that
/// takes no time has lost its way, and its test fails instead of hanging.
#[cfg(test)]
const MAX_WAITS: u32 = 100_000;

#[cfg(test)]
impl TestClock {
    pub(crate) fn starting_at(now: Instant) -> Self {
        TestClock { now, stop_at: None, waits: 0 }
    }

    /// A stop request comes at `at`.
    pub(crate) fn stopping_at(self, at: Instant) -> Self {
        TestClock { stop_at: Some(at), ..self }
    }
}

#[cfg(test)]
impl Clock for TestClock {
    fn now(&self) -> Instant {
        self.now
    }

    fn sleep_until(&mut self, at: Instant, stop: &StopFlag) -> bool {
        self.waits += 1;
        assert!(self.waits <= MAX_WAITS, "the driver waited {MAX_WAITS} times without ending the run");
        if let Some(request) = self.stop_at.filter(|request| *request <= at) {
            self.stop_at = None;
            self.now = self.now.max(request);
            stop.stop();
        }
        if stop.is_stopped() {
            return false;
        }
        self.now = self.now.max(at);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_system_clock_wakes_no_earlier_than_asked_and_at_once_on_a_stop_request() {
        let (mut clock, stop) = (SystemClock, StopFlag::new());
        let at = Instant::now() + 5 * MS;
        assert!(clock.sleep_until(at, &stop));
        assert!(clock.now() >= at);
        stop.stop();
        assert!(!clock.sleep_until(Instant::now() + Duration::from_secs(3600), &stop));
    }

    #[test]
    fn the_test_clock_moves_only_when_waited_on_and_stops_at_the_planned_request() {
        let start = Instant::now();
        let stop = StopFlag::new();
        let mut clock = TestClock::starting_at(start).stopping_at(start + 25 * MS);
        assert_eq!(clock.now(), start);
        assert!(clock.sleep_until(start + 10 * MS, &stop));
        assert!(clock.sleep_until(start + 5 * MS, &stop), "a time already passed is reached");
        assert_eq!(clock.now(), start + 10 * MS, "and the clock never goes back");
        assert!(!stop.is_stopped());
        assert!(!clock.sleep_until(start + 30 * MS, &stop));
        assert_eq!(clock.now(), start + 25 * MS);
        assert!(stop.is_stopped());
        assert!(!clock.sleep_until(start + 40 * MS, &stop), "the request stands");
        assert_eq!(clock.now(), start + 25 * MS);
    }
}
