//! The power monitor: one source sampled on a thread of its own, the latest reading kept for
//! the per-second rows, and the stretches without a reading kept for the summary's warning.

use super::{MeterProcess, PowerSampler};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A meter silent this long is worth a warning: its column has a hole a reader must know of.
pub const SILENCE_WARNING: Duration = Duration::from_secs(10);

/// Samples a power source once a second on its own thread (a reading may block for up to
/// [`IO_TIMEOUT`](super::IO_TIMEOUT)), keeping the latest watts for the run's per-second rows
/// to pick up. Stopping it (or dropping it) ends a meter command still running.
#[derive(Debug)]
pub struct PowerMonitor {
    shared: Arc<MonitorState>,
    process: Arc<MeterProcess>,
    describe: String,
}

#[derive(Debug)]
struct MonitorState {
    /// The latest watts as f64 bits; NaN while there is none.
    watts: AtomicU64,
    error: Mutex<Option<String>>,
    silences: Mutex<Silences>,
    stop: AtomicBool,
}

impl PowerMonitor {
    /// Starts sampling `sampler` every `every`.
    pub fn start(mut sampler: PowerSampler, every: Duration) -> Self {
        let shared = Arc::new(MonitorState {
            watts: AtomicU64::new(f64::NAN.to_bits()),
            error: Mutex::new(None),
            silences: Mutex::new(Silences::new(Instant::now())),
            stop: AtomicBool::new(false),
        });
        let (describe, process) = (sampler.describe(), sampler.process());
        let s = shared.clone();
        let spawned = std::thread::Builder::new().name("power".into()).spawn(move || {
            while !s.stop.load(Relaxed) {
                let next = Instant::now() + every;
                s.record(sampler.sample());
                while Instant::now() < next && !s.stop.load(Relaxed) {
                    std::thread::sleep(Duration::from_millis(20).min(every));
                }
            }
        });
        if let Err(e) = spawned {
            *lock(&shared.error) = Some(format!("starting the power thread: {e}"));
        }
        PowerMonitor { shared, process, describe }
    }

    /// The latest reading in watts; None before the first or after a failed one.
    pub fn latest(&self) -> Option<f64> {
        let w = f64::from_bits(self.shared.watts.load(Relaxed));
        w.is_finite().then_some(w)
    }

    /// The last error, if a reading failed.
    pub fn error(&self) -> Option<String> {
        lock(&self.shared.error).clone()
    }

    /// The longest stretch without a reading between `since` and now (the time before the
    /// first reading counts, from when the monitor started).
    pub fn longest_silence_since(&self, since: Instant) -> Duration {
        lock(&self.shared.silences).longest_since(since, Instant::now())
    }

    /// Whether a reading came at or after `since`.
    pub fn read_since(&self, since: Instant) -> bool {
        lock(&self.shared.silences).last.is_some_and(|t| t >= since)
    }

    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// Stops sampling and ends a meter command still running, with whatever it started.
    pub fn stop(&self) {
        self.shared.stop.store(true, Relaxed);
        self.process.end();
    }
}

impl MonitorState {
    fn record(&self, sample: Result<Option<f64>, super::PowerError>) {
        match sample {
            Ok(Some(w)) => {
                self.watts.store(w.to_bits(), Relaxed);
                lock(&self.silences).reading(Instant::now());
            }
            Ok(None) => {}
            Err(e) => {
                self.watts.store(f64::NAN.to_bits(), Relaxed);
                *lock(&self.error) = Some(e.to_string());
            }
        }
    }
}

impl Drop for PowerMonitor {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// When readings came: the last one, and every gap of at least [`SILENCE_WARNING`] (a few
/// per hour at most, even for a flapping meter).
#[derive(Debug)]
struct Silences {
    started: Instant,
    last: Option<Instant>,
    long: Vec<(Instant, Instant)>,
}

impl Silences {
    fn new(started: Instant) -> Self {
        Silences { started, last: None, long: Vec::new() }
    }

    fn reading(&mut self, at: Instant) {
        let from = self.last.unwrap_or(self.started);
        if at.saturating_duration_since(from) >= SILENCE_WARNING {
            self.long.push((from, at));
        }
        self.last = Some(at);
    }

    /// The longest gap, clipped to `since..now`, the one still open included.
    fn longest_since(&self, since: Instant, now: Instant) -> Duration {
        let open = (self.last.unwrap_or(self.started), now);
        self.long
            .iter()
            .chain([&open])
            .map(|&(from, to)| to.min(now).saturating_duration_since(from.max(since)))
            .max()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::PowerSource;
    use super::*;
    use crate::testing::wait_until;

    #[test]
    fn the_monitor_keeps_the_latest_reading_and_reports_a_failing_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watts");
        std::fs::write(&path, "250.5\n").unwrap();
        let started = Instant::now();
        let m = PowerMonitor::start(
            PowerSampler::new(PowerSource::File { path: path.clone() }).unwrap(),
            Duration::from_millis(20),
        );
        wait_until("a reading", Duration::from_secs(30), || m.latest().is_some());
        assert_eq!(m.latest(), Some(250.5));
        assert!(m.read_since(started));
        std::fs::remove_file(&path).unwrap();
        wait_until("the failing source's error", Duration::from_secs(30), || m.error().is_some());
        assert!(m.error().is_some_and(|e| e.contains("watts")), "{:?}", m.error());
        assert_eq!(m.latest(), None, "a failed reading is not carried forward");
        assert!(!m.read_since(Instant::now()));
    }

    #[test]
    fn silences_are_the_gaps_between_readings_clipped_to_the_window_asked_about() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut s = Silences::new(t0);
        assert_eq!(s.longest_since(t0, at(12)), Duration::from_secs(12), "nothing read yet");
        s.reading(at(12));
        s.reading(at(13));
        s.reading(at(40));
        assert_eq!(s.longest_since(t0, at(41)), Duration::from_secs(27));
        assert_eq!(s.longest_since(at(30), at(41)), Duration::from_secs(10));
        assert_eq!(s.longest_since(at(40), at(43)), Duration::from_secs(3), "the open gap");
        assert_eq!(s.long.len(), 2, "short gaps are not kept");
    }

    #[test]
    fn stopping_the_monitor_ends_a_meter_command_that_hangs() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let argv = vec!["sh".into(), "-c".into(), script];
        let m = PowerMonitor::start(
            PowerSampler::new(PowerSource::Command { argv }).unwrap(),
            Duration::from_secs(1),
        );
        let written = || std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'));
        wait_until("the meter's child's pid", Duration::from_secs(30), written);
        let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
        assert!(alive(&pid), "the meter's child runs");
        m.stop();
        wait_until("the meter's child to end with the monitor", Duration::from_secs(30), || !alive(&pid));
    }

    /// Whether process `pid` exists and is not a zombie.
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    }
}
