//! `replay`'s options as a user gives them, in a plan's workload table or as `storbench
//! replay`'s flags (the command line converts its flags into this type). The command line
//! checks them against the logs and the database before a replay starts.

use super::log::Format;
use super::{Filter, Mode, ReplaySpec, Statements};
use crate::db::BackendKind;
use crate::db::options::DbOptions;
use crate::run::Rule;
use crate::units::Seconds;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// How a replay paces its requests, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pacing {
    /// Every request as soon as the one before it in its session is answered.
    #[default]
    FireHose,
    /// Each request at its time in the log.
    TimeSync,
}

impl Pacing {
    /// Its name as `--mode` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Pacing::FireHose => "fire-hose",
            Pacing::TimeSync => "time-sync",
        }
    }
}

/// The keys of a replay workload. Their help is `storbench replay --help`'s, one flag per key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplayOptions {
    /// The request logs, one source each.
    pub logs: Vec<PathBuf>,
    /// Their format (default: detected from each log's first lines).
    pub format: Option<Format>,
    /// A web log's routes to DVD Store calls.
    pub mapping: Option<PathBuf>,
    /// A PostgreSQL stderr log's log_line_prefix.
    pub log_line_prefix: Option<String>,
    /// The database: as [`DbOptions`] (`ReplayOptions::db`).
    pub backend: Option<BackendKind>,
    pub path: Option<PathBuf>,
    pub url: Vec<String>,
    pub password_file: Option<PathBuf>,
    /// fire-hose (the default) or time-sync.
    pub mode: Option<Pacing>,
    pub in_flight: Option<u32>,
    /// time-sync: how much faster than the log (default 1).
    pub speed: Option<f64>,
    pub limit: Option<u64>,
    /// Steady-state rounds of this length (fire-hose).
    pub steady_state: Option<Seconds>,
    pub start: Option<Seconds>,
    pub end: Option<Seconds>,
    pub database: Option<String>,
    pub user: Option<String>,
    /// The share of failed requests, percent, over which the replay fails its check (default 1).
    pub max_errors: Option<f64>,
    pub allow_statement: Vec<String>,
    pub allow_all_statements: bool,
    pub strict: bool,
}

impl ReplayOptions {
    /// A time-sync replay's speed when none is given.
    pub const SPEED: f64 = 1.0;
    /// A PostgreSQL stderr log's prefix when none is given.
    pub const LOG_LINE_PREFIX: &str = super::log::postgres::DEFAULT_PREFIX;

    /// The database the replay is sent to.
    pub fn db(&self) -> DbOptions {
        DbOptions {
            backend: self.backend,
            path: self.path.clone(),
            url: self.url.clone(),
            password_file: self.password_file.clone(),
        }
    }

    /// The pacing asked for (fire-hose when none is).
    pub fn pacing(&self) -> Pacing {
        self.mode.unwrap_or_default()
    }

    /// The options checked into the replay's spec: its mode, its filters and its limits (the
    /// statements it may send are the caller's, who knows the database).
    pub fn spec(&self) -> Result<ReplaySpec, String> {
        spec_of(self)
    }
}

/// The largest --speed: a day of log in under a second.
const MAX_SPEED: f64 = 1e6;

/// `--speed` checked: above 0, at most [`MAX_SPEED`] (a request replay's and a trace's).
pub fn speed_factor(speed: f64) -> Result<f64, String> {
    if !(speed > 0.0 && speed <= MAX_SPEED) {
        return Err(format!(
            "--speed {speed}: give a factor above 0 and at most {MAX_SPEED} (2 is twice as fast as recorded)"
        ));
    }
    Ok(speed)
}

/// The mode and the filters.
fn spec_of(a: &ReplayOptions) -> Result<ReplaySpec, String> {
    let in_flight = a.in_flight.unwrap_or(super::DEFAULT_IN_FLIGHT);
    let mode = match (a.mode.unwrap_or_default(), a.speed) {
        (Pacing::FireHose, Some(x)) => {
            return Err(format!(
                "--speed {x}: a fire-hose replay goes as fast as the database answers; use --mode time-sync"
            ));
        }
        (Pacing::FireHose, None) => Mode::FireHose { in_flight },
        (Pacing::TimeSync, speed) => {
            Mode::TimeSync { speed: speed_factor(speed.unwrap_or(ReplayOptions::SPEED))?, in_flight }
        }
    };
    let start = a.start.map_or(Duration::ZERO, |s| s.0);
    let end = a.end.map(|e| e.0);
    if let Some(end) = end.filter(|&e| e <= start) {
        return Err(format!(
            "--end {end:?} is not after --start {start:?}; give the part of the log to replay"
        ));
    }
    if a.limit == Some(0) {
        return Err(
            "--limit 0 would replay nothing; give at least 1, or leave it out for the whole log".into()
        );
    }
    let filter = Filter { database: a.database.clone(), user: a.user.clone(), start, end, limit: a.limit };
    let steady_state = steady_round(a, mode)?;
    let max_errors = a.max_errors.map(max_errors_pct).transpose()?;
    Ok(ReplaySpec {
        mode,
        filter,
        strict: a.strict,
        steady_state,
        statements: Statements::default(),
        max_errors,
    })
}

/// `--max-errors` checked: a share in percent, 0 to 100.
fn max_errors_pct(pct: f64) -> Result<f64, String> {
    if !(0.0..=100.0).contains(&pct) {
        return Err(format!(
            "--max-errors {pct}: give the share of failed requests, in percent, from 0 to 100 (default 1)"
        ));
    }
    Ok(pct)
}

/// --steady-state: fire-hose only, where the calls per second are the database's; the logs'
/// end is the cap.
fn steady_round(a: &ReplayOptions, mode: Mode) -> Result<Option<Duration>, String> {
    if a.steady_state.is_some() && matches!(mode, Mode::TimeSync { .. }) {
        return Err("--steady-state judges the calls per second of each round, which in time-sync the log \
             sets, not the database; use it with --mode fire-hose"
            .into());
    }
    Rule::checked_round(a.steady_state.map(|r| r.0), None)
}
