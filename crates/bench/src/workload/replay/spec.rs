//! What a replay is asked to do, as validated values (no flags): how its requests are sent
//! (`Mode`), which requests of the logs apply (`Filter`), whether a line that cannot be read
//! stops it (`strict`); the logs it reads (`Source`).

use super::log;
use crate::run::pace::Offsets;
use std::time::Duration;

/// Requests of one source running at once when none is said (fire-hose and time-sync).
pub const DEFAULT_IN_FLIGHT: u32 = 20;

/// The share of failed requests, in percent, over which a replay failed, when none is said.
pub const DEFAULT_MAX_ERRORS_PCT: f64 = 1.0;

/// How requests are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// As fast as the database answers, at most `in_flight` requests of a source at once.
    FireHose { in_flight: u32 },
    /// Each request at its time in the log (from the first request that applies) divided by
    /// `speed` (2 is twice as fast as the log), at most `in_flight` of a source at once.
    /// Latency counts from that time, so a request started late shows it.
    TimeSync { speed: f64, in_flight: u32 },
}

impl Default for Mode {
    fn default() -> Self {
        Mode::FireHose { in_flight: DEFAULT_IN_FLIGHT }
    }
}

impl Mode {
    /// Its name in the report (`fire-hose`, `time-sync`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::FireHose { .. } => "fire-hose",
            Mode::TimeSync { .. } => "time-sync",
        }
    }

    /// Requests of one source running at once, at the most (at least 1).
    pub fn in_flight(self) -> u32 {
        match self {
            Mode::FireHose { in_flight } | Mode::TimeSync { in_flight, .. } => in_flight.max(1),
        }
    }

    /// Time-sync's speed.
    pub fn speed(self) -> Option<f64> {
        match self {
            Mode::FireHose { .. } => None,
            Mode::TimeSync { speed, .. } => Some(speed),
        }
    }

    /// When a request `log_ns` after the first one that applies is due, ns after the run's
    /// start: at once in fire-hose, at its offset in the log over the speed in time-sync (the
    /// run's pacer, `run::pace::Offsets`).
    pub(super) fn due_ns(self, log_ns: i128) -> u64 {
        match self {
            Mode::FireHose { .. } => 0,
            Mode::TimeSync { speed, .. } => Offsets::at_speed(speed).intended_ns(log_ns),
        }
    }
}

/// Which requests of the logs apply. Offsets count from the logs' first request (the earliest
/// of every source, whatever its user or database).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only requests to this database.
    pub database: Option<String>,
    /// Only requests of this user.
    pub user: Option<String>,
    /// Only requests this long after the logs' first request, or later.
    pub start: Duration,
    /// Only requests up to this long after the logs' first request.
    pub end: Option<Duration>,
    /// At most this many requests: the first that apply, in the logs' time order.
    pub limit: Option<u64>,
}

/// A replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplaySpec {
    pub mode: Mode,
    pub filter: Filter,
    /// A line that cannot be read stops the replay with an error naming it; otherwise it is
    /// counted, the first few are kept, and the replay goes on.
    pub strict: bool,
    /// Which statements are sent: those that stay inside the database given, and the kinds
    /// beyond it the user allowed.
    pub statements: super::Statements,
    /// The share of failed requests, in percent, over which the replay fails its check; None:
    /// [`DEFAULT_MAX_ERRORS_PCT`].
    pub max_errors: Option<f64>,
    /// Steady-state rounds of this length (SNIA PTS rule on calls/s per round; fire-hose):
    /// the replay ends once the rule holds, the logs' end at the latest, and its figures
    /// cover the last window.
    pub steady_state: Option<Duration>,
}

/// One log: its name (in the report, per source) and its requests in the log's order, read
/// as the replay goes (a log of any size replays with flat memory).
pub struct Source {
    pub name: String,
    pub reads: Box<dyn Iterator<Item = log::Read> + Send>,
}

impl ReplaySpec {
    /// The share of failed requests, in percent, over which the replay fails its check.
    pub fn max_errors_pct(&self) -> f64 {
        self.max_errors.unwrap_or(DEFAULT_MAX_ERRORS_PCT)
    }
}

impl Source {
    pub fn new(name: impl Into<String>, reads: impl Iterator<Item = log::Read> + Send + 'static) -> Self {
        Source { name: name.into(), reads: Box::new(reads) }
    }
}
