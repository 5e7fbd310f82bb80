//! Phase timing: when the ramp ends, when the run ends, and where interval boundaries fall.

use storbench_report::series::Phase;

/// Times in ns since the run's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub ramp_ns: u64,
    /// End of the run for a time-based run; None for a run that ends when its work is done.
    pub end_ns: Option<u64>,
    pub interval_ns: u64,
}

impl Schedule {
    /// Intervals that end within the ramp (the last one may be shorter, so that the measured
    /// phase starts on a boundary).
    pub fn ramp_intervals(&self) -> u64 {
        self.ramp_ns.div_ceil(self.interval_ns)
    }

    /// End of interval `index`, before the run's end is applied.
    pub fn boundary(&self, index: u64) -> u64 {
        let ramp = self.ramp_intervals();
        if index < ramp {
            ((index + 1) * self.interval_ns).min(self.ramp_ns)
        } else {
            self.ramp_ns + (index - ramp + 1) * self.interval_ns
        }
    }

    pub fn phase(&self, index: u64) -> Phase {
        if index < self.ramp_intervals() { Phase::Ramp } else { Phase::Measure }
    }

    /// Start of interval `index`.
    pub fn interval_start(&self, index: u64) -> u64 {
        if index == 0 { 0 } else { self.boundary(index - 1) }
    }
}

/// A worker's position in the schedule: which interval it is recording into.
#[derive(Debug, Clone)]
pub struct IntervalClock {
    schedule: Schedule,
    index: u64,
    next_boundary: u64,
}

impl IntervalClock {
    pub fn new(schedule: Schedule) -> Self {
        IntervalClock { schedule, index: 0, next_boundary: schedule.boundary(0) }
    }

    pub fn index(&self) -> u64 {
        self.index
    }

    pub fn phase(&self) -> Phase {
        self.schedule.phase(self.index)
    }

    /// Whether `now_ns` is past the current interval's end.
    #[inline]
    pub fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.next_boundary
    }

    /// Moves to the next interval.
    pub fn advance(&mut self) {
        self.index += 1;
        self.next_boundary = self.schedule.boundary(self.index);
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_fractional_ramp_ends_on_a_boundary_and_measured_intervals_follow_in_whole_seconds() {
        let s = Schedule { ramp_ns: 2 * S + S / 2, end_ns: Some(5 * S), interval_ns: S };
        assert_eq!(s.ramp_intervals(), 3);
        let bounds: Vec<u64> = (0..5).map(|i| s.boundary(i)).collect();
        assert_eq!(bounds, vec![S, 2 * S, 2 * S + S / 2, 3 * S + S / 2, 4 * S + S / 2]);
        assert_eq!(s.phase(2), Phase::Ramp);
        assert_eq!(s.phase(3), Phase::Measure);
        assert_eq!(s.interval_start(3), 2 * S + S / 2);
    }

    #[test]
    fn without_a_ramp_the_first_interval_is_measured() {
        let s = Schedule { ramp_ns: 0, end_ns: None, interval_ns: S };
        assert_eq!(s.ramp_intervals(), 0);
        assert_eq!(s.phase(0), Phase::Measure);
        assert_eq!(s.boundary(0), S);
    }

    #[test]
    fn the_clock_advances_through_the_boundaries() {
        let mut c = IntervalClock::new(Schedule { ramp_ns: S, end_ns: None, interval_ns: S });
        assert!(!c.due(S - 1));
        assert!(c.due(S));
        c.advance();
        assert_eq!((c.index(), c.phase()), (1, Phase::Measure));
        assert!(c.due(2 * S));
    }
}
