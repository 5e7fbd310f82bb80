//! An oltp run's options as a user gives them, in a plan's workload table or as `storbench
//! oltp run`'s flags (the command line converts its flags into this type; writing DS3's CSV
//! lines or the calls to files, and reading DS3's parameter files, are the command line's
//! own). Each absent one takes DS3's default (`users::OltpSpec::default`).

use crate::db::BackendKind;
use crate::db::options::DbOptions;
use crate::units::{Minutes, Seconds, YesNo};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The keys of an oltp workload. Their help is `storbench oltp run --help`'s, one flag per
/// key (url, backend and password_file are a plan configuration's).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OltpOptions {
    /// The database: as [`DbOptions`] (`OltpOptions::db`).
    pub backend: Option<BackendKind>,
    pub path: Option<PathBuf>,
    pub url: Vec<String>,
    pub password_file: Option<PathBuf>,
    /// The size the database was loaded at (default 10MB).
    pub db_size: Option<String>,
    pub n_threads: Option<u32>,
    pub run_time: Option<Minutes>,
    /// Steady-state rounds of this length.
    pub steady_state: Option<Seconds>,
    pub warmup_time: Option<Minutes>,
    pub think_time: Option<Seconds>,
    pub ramp_rate: Option<f64>,
    pub pct_newcustomers: Option<f64>,
    pub pct_newmember: Option<f64>,
    pub n_searches: Option<u32>,
    pub search_batch_size: Option<u32>,
    pub search_depth: Option<u32>,
    pub n_reviews: Option<u32>,
    pub pct_newreviews: Option<f64>,
    pub pct_newhelpfulness: Option<f64>,
    pub n_line_items: Option<u32>,
    pub restock: Option<YesNo>,
    pub ds2_mode: Option<YesNo>,
    pub log_freq: Option<u32>,
    pub log_timestamp: Option<String>,
    pub detailed_view: Option<YesNo>,
    pub seed: Option<u64>,
    pub no_reset: bool,
    pub settle_time: Option<Seconds>,
}

impl OltpOptions {
    /// The defaults of the phases, each defined once: validation, the evaluation's ETA and
    /// the help text (held to them by a test) take them from here.
    pub const RUN_TIME: Duration = super::users::OltpSpec::RUN_TIME;
    pub const WARMUP_TIME: Duration = super::users::OltpSpec::WARMUP_TIME;
    /// The data set's size when none is given, for every oltp command and plan.
    pub const DB_SIZE: &'static str = "10MB";

    /// The database the run talks to.
    pub fn db(&self) -> DbOptions {
        DbOptions {
            backend: self.backend,
            path: self.path.clone(),
            url: self.url.clone(),
            password_file: self.password_file.clone(),
        }
    }

    /// The data set's size as given, or the default.
    pub fn db_size(&self) -> &str {
        self.db_size.as_deref().unwrap_or(Self::DB_SIZE)
    }

    /// The measured phase (under steady state its cap, by default 25 rounds); zero is DS3's
    /// "until stopped".
    pub fn run_time_or_default(&self) -> Duration {
        crate::run::Rule::measured_length(
            self.steady_state.map(|r| r.0),
            self.run_time.map(|m| m.0),
            Self::RUN_TIME,
        )
    }

    pub fn warmup_time_or_default(&self) -> Duration {
        self.warmup_time.map_or(Self::WARMUP_TIME, |m| m.0)
    }
}
