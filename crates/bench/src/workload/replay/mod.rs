//! Replay: the requests of production logs run against a database, fire-hose or paced by the
//! logs' own times; `run` is the one entry point, `preview` counts what it will send. `log`
//! reads the logs; `options` are the workload's keys as a user gives them.
//!
//! # How a replay runs
//!
//! - The logs (`Source`s, one a log: 002's four web servers are four) are read as one
//!   timeline (`timeline`), merged by the logs' time, on one reader thread, which applies the
//!   filters (database, user, a window of the log, a limit) and hands each request to its
//!   source's scheduler. It reads ahead a bounded window per source, so a log of any size
//!   replays with flat memory; so too, in fire-hose, a source a whole window behind the others
//!   holds the reader, and the sources keep together in log time within a window. `preview`
//!   reads the same timeline to count.
//! - Each session of a log replays on a connection of its own, opened on its first request,
//!   its requests one at a time and in the log's order; different sessions are independent
//!   (no global order, unlike pgreplay's). A session the log has not named for five minutes
//!   of log time, with nothing left to run, is taken as ended and its connection closed.
//! - Each source has `in_flight` worker threads (`Mode`), so at most that many of its requests
//!   run at once. Sessions are not tied to a worker: a source's scheduler (`sched`) gives the
//!   next free worker the session whose next request is first in line (due first in time-sync,
//!   read first in fire-hose) among those with none running, with its connection. So a slow
//!   request delays only its own session, never one that happened to share its worker, and a
//!   late start in time-sync comes only from every worker being busy (it shows as lateness).
//!   Blocking database calls want a thread each; a worker per request in flight keeps that
//!   bounded and needs no async runtime.
//! - Fire-hose sends as fast as the database answers; latency is from each request's start.
//!   Time-sync starts each request at its time in the log (from the first request that
//!   applies) divided by the speed, after the run's start; its latency is from that intended
//!   start (a late start shows in it, free of coordinated omission), and how late it started
//!   is recorded in its own histogram. A p99 lateness over `FELL_BEHIND_P99` is a warning.
//! - A request's SQL runs as text (`SqlSession::batch`), a DS3 call as DS3 runs it (`conn`). A failed request is counted by its
//!   kind (`DbErrorKind`), per type and per source, and the replay goes on; a lost connection
//!   (`Connection`) is dropped and the session's next request opens a new one. While every
//!   request fails (a database gone away) the run driver's no-progress rule ends the run.
//! - The run is the one run driver's (`run::Lifecycle`): an interval a second, no warm-up,
//!   until the last request is answered (or a stop request: the run ends incomplete with what
//!   it measured, and the requests running then are let finish, uncounted). A line that cannot
//!   be read is counted (the first few kept with their line numbers) unless the replay is
//!   strict, when it ends the run as failed naming the line (or, before the first request, is
//!   `run`'s error).
//! - A statement that reaches beyond the database the replay was given (`reach`: another
//!   database, the server's settings, roles, files or programs) is not sent unless the user
//!   allowed its kind: the timeline withholds it and counts it by kind, in the preview too.
//!
//! Each interval has per request type (the entry's `kind`, found as the run goes; past
//! `MAX_TYPES` the rest are counted together as `OTHER_TYPES`) calls, errors and a latency
//! histogram, per source calls and errors, time-sync's lateness and the requests running at
//! its end (`ReplayData`; how the record keeps it is in `data`).

pub mod bundle;
mod conn;
mod data;
mod engine;
pub mod entry;
pub mod log;
pub mod options;
pub mod reach;
mod sched;
mod spec;
pub mod summary;
mod timeline;

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

pub use conn::Connect;
pub use data::{ReplayData, SourceFigures, TypeFigures};
pub use engine::{FELL_BEHIND_P99, ReplayDetail};
pub use reach::{Dialect, Statements};
pub use spec::{DEFAULT_IN_FLIGHT, DEFAULT_MAX_ERRORS_PCT, Filter, Mode, ReplaySpec, Source};
pub use timeline::{FIRST_UNREAD_KEPT, MAX_TYPES, OTHER_TYPES, Preview, Unread, preview};

use crate::run::{Beside, Closed, Lifecycle, Outcome, StopFlag};

/// One closed interval as the caller is handed it.
pub type ReplayInterval<'a> = Closed<'a, ReplayData>;

/// What a replay measured: the intervals merged (`totals`; `all` is the same, there is no
/// warm-up) and what only a replay has (`detail`).
pub type ReplayOutcome = Outcome<ReplayData, ReplayDetail>;

/// Why a replay could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// A line of a log could not be read, and the replay is strict.
    #[error("{log} line {line}: {why} (a strict replay stops at a line it cannot read)")]
    Unreadable { log: String, line: u64, why: String },
    #[error("stopped while reading the logs up to their first request")]
    Interrupted,
    #[error("starting a replay thread: {0}")]
    Thread(String),
}

/// Replays `sources` as `spec` says, each session on a connection `connect` opens, under the
/// run driver on this thread, which hands each interval to `on_interval` as it ends. Complete
/// unless `stop` or a failure cut it short.
pub fn run(
    spec: &ReplaySpec,
    sources: Vec<Source>,
    connect: Connect,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&ReplayInterval<'_>),
) -> Result<ReplayOutcome, ReplayError> {
    let mut out = engine::Replay::new(spec, sources, connect).run(sampler, stop, on_interval)?;
    // The last answer ends the driver as a stop request would; only the user's stop or a
    // failure makes the run incomplete.
    out.complete = !stop.is_stopped() && out.failures.is_empty();
    Ok(out)
}
