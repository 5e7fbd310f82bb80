//! `replay`'s options as a user gives them, in a plan's workload table or as `storbench
//! replay`'s flags (the command line converts its flags into this type). The command line
//! checks them against the logs and the database before a replay starts.

use super::log::Format;
use crate::db::BackendKind;
use crate::db::options::DbOptions;
use crate::units::Seconds;
use serde::Deserialize;
use std::path::PathBuf;

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
}
