//! Settling before a measured run: the writes of what came before (a load, a reset, the last
//! run) are flushed and the device has gone quiet, so a run does not pay for them.

use crate::monitor::SystemSampler;
use crate::run::StopFlag;
use std::time::{Duration, Instant};

/// Busy share under which a device counts as idle, percent of the interval.
const IDLE_BUSY_PCT: f64 = 10.0;
/// How long it must stay idle.
const IDLE_FOR: Duration = Duration::from_secs(2);
const STEP: Duration = Duration::from_millis(500);

/// How settling went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settled {
    pub waited: Duration,
    /// False when `max` ran out (or a stop came) before the device was idle.
    pub idle: bool,
}

/// Flushes every dirty page to storage (sync), then waits until `device` (a kernel name as in
/// /proc/diskstats) has been under 10 % busy for 2 s, or `max` has passed. Without a device it
/// only syncs. A `max` of zero does nothing.
pub fn settle(device: Option<&str>, max: Duration, stop: &StopFlag) -> Settled {
    let start = Instant::now();
    if max.is_zero() {
        return Settled { waited: Duration::ZERO, idle: false };
    }
    rustix::fs::sync();
    let Some(name) = device else { return Settled { waited: start.elapsed(), idle: true } };
    let mut sampler = SystemSampler::new(Some(name));
    let mut quiet = Duration::ZERO;
    while quiet < IDLE_FOR {
        if stop.is_stopped() || start.elapsed() >= max {
            return Settled { waited: start.elapsed(), idle: false };
        }
        std::thread::sleep(STEP);
        let busy = sampler.sample().disk.map_or(0.0, |d| d.busy_pct);
        quiet = if busy < IDLE_BUSY_PCT { quiet + STEP } else { Duration::ZERO };
    }
    Settled { waited: start.elapsed(), idle: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_does_nothing_and_no_device_only_syncs() {
        let stop = StopFlag::new();
        assert_eq!(
            settle(Some("vda"), Duration::ZERO, &stop),
            Settled { waited: Duration::ZERO, idle: false }
        );
        let s = settle(None, Duration::from_secs(5), &stop);
        assert!(s.idle && s.waited < Duration::from_secs(5), "{s:?}");
    }

    #[test]
    fn an_unknown_device_reads_as_idle_after_the_quiet_period() {
        let s = settle(Some("no-such-disk"), Duration::from_secs(10), &StopFlag::new());
        assert!(s.idle && s.waited >= IDLE_FOR, "{s:?}");
    }

    #[test]
    fn a_stop_ends_the_wait() {
        let stop = StopFlag::new();
        stop.stop();
        assert!(!settle(Some("no-such-disk"), Duration::from_secs(10), &stop).idle);
    }
}
