//! An oltp run's options as a user gives them, in a plan's workload table or as `storbench
//! oltp run`'s flags (the command line converts its flags into this type; writing DS3's CSV
//! lines or the calls to files, and reading DS3's parameter files, are the command line's
//! own). Each absent one takes DS3's default (`users::OltpSpec::default`).

use crate::db::BackendKind;
use crate::db::options::DbOptions;
use crate::run::Rule;
use crate::units::{Minutes, Seconds, YesNo};
use crate::workload::oltp::RowCounts;
use crate::workload::oltp::users::OltpSpec;
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

    /// The options checked into the driver's spec, over a database of `counts` rows.
    pub fn spec(&self, counts: RowCounts) -> Result<OltpSpec, String> {
        let d = OltpSpec::default();
        // DS3's run time 0 (until stopped) caps nothing.
        let cap = self.run_time.filter(|m| !m.0.is_zero()).map(|m| ("--run-time", m.0));
        let steady_state = Rule::checked_round(self.steady_state.map(|r| r.0), cap)?;
        let run_time = self.run_time_or_default();
        let spec = OltpSpec {
            n_threads: self.n_threads.unwrap_or(d.n_threads),
            ramp_rate: self.ramp_rate.unwrap_or(d.ramp_rate),
            run_time: if run_time.is_zero() { FOREVER } else { run_time },
            warmup_time: self.warmup_time_or_default(),
            think_time: self.think_time.map_or(d.think_time, |s| s.0),
            pct_newcustomers: self.pct_newcustomers.unwrap_or(d.pct_newcustomers),
            pct_newmember: self.pct_newmember.unwrap_or(d.pct_newmember),
            n_searches: self.n_searches.unwrap_or(d.n_searches),
            search_batch_size: self.search_batch_size.unwrap_or(d.search_batch_size),
            search_depth: self.search_depth.unwrap_or(d.search_depth),
            n_reviews: self.n_reviews.unwrap_or(d.n_reviews),
            pct_newreviews: self.pct_newreviews.unwrap_or(d.pct_newreviews),
            pct_newhelpfulness: self.pct_newhelpfulness.unwrap_or(d.pct_newhelpfulness),
            n_line_items: self.n_line_items.unwrap_or(d.n_line_items),
            ds2_mode: self.ds2_mode.is_some_and(|y| y.0),
            restock: self.restock.is_none_or(|y| y.0),
            max_customer: counts.customers,
            max_product: counts.products,
            seed: self.seed.unwrap_or(d.seed),
            steady_state,
            ..d
        };
        for (name, pct) in [
            ("pct-newcustomers", spec.pct_newcustomers),
            ("pct-newmember", spec.pct_newmember),
            ("pct-newreviews", spec.pct_newreviews),
            ("pct-newhelpfulness", spec.pct_newhelpfulness),
        ] {
            if !(0.0..=100.0).contains(&pct) {
                return Err(format!("--{name} {pct}: a percentage is between 0 and 100"));
            }
        }
        if spec.n_threads == 0 {
            return Err("--n-threads 0: it must be at least 1".into());
        }
        // Per order: the storage work of a customer's visit grows with each of these, and a
        // thousand is far past any DS3 setting (3, 5, 10, 3, 5 by default).
        for (name, n) in [
            ("n-searches", spec.n_searches),
            ("search-batch-size", spec.search_batch_size),
            ("search-depth", spec.search_depth),
            ("n-reviews", spec.n_reviews),
            ("n-line-items", spec.n_line_items),
        ] {
            if !(1..=MAX_PER_ORDER).contains(&n) {
                return Err(format!(
                    "--{name} {n}: it must be at least 1 and at most {MAX_PER_ORDER} per order"
                ));
            }
        }
        if !(spec.ramp_rate > 0.0 && spec.ramp_rate <= MAX_RAMP_RATE) {
            return Err(format!(
                "--ramp-rate {}: users per second is more than 0 and at most {MAX_RAMP_RATE}",
                spec.ramp_rate
            ));
        }
        Ok(spec)
    }
}

/// DS3 treats a run time of 0 as "until killed"; this is its stand-in (about 1,000,000 min).
const FOREVER: Duration = Duration::from_secs(60_000_000);
/// The most of each per-order count (searches, results, reviews, order lines).
const MAX_PER_ORDER: u32 = 1000;
/// The fastest ramp: a million users a second (DS3's default is 10).
const MAX_RAMP_RATE: f64 = 1e6;
