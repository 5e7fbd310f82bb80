//! The simulated users' parameters: DS3's driver parameters, with DS3's defaults, in
//! storbench's units.

use std::time::Duration;

/// What `oltp::users::run` needs. Field names are DS3's parameter names.
#[derive(Debug, Clone, PartialEq)]
pub struct OltpSpec {
    /// Threads per target; each holds one connection.
    pub n_threads: u32,
    /// Users per second connecting at the start (each thread waits U[0, n_total/ramp_rate) s
    /// before connecting); the measured clock starts when every thread is connected.
    pub ramp_rate: f64,
    /// Measured phase, after the warm-up.
    pub run_time: Duration,
    /// Warm-up: runs like the measured phase, then every counter is reset.
    pub warmup_time: Duration,
    /// Mean think time between orders (each pause U[0, 2·think_time)); zero is a closed loop.
    pub think_time: Duration,
    pub pct_newcustomers: f64,
    pub pct_newmember: f64,
    /// Mean browses per order.
    pub n_searches: u32,
    /// Mean rows asked for per browse or review call.
    pub search_batch_size: u32,
    /// Inner row limit of review searches by actor or title (DS3.5's search_depth).
    pub search_depth: u32,
    /// Mean review browses, and mean review look-ups, per order.
    pub n_reviews: u32,
    pub pct_newreviews: f64,
    pub pct_newhelpfulness: f64,
    /// Mean items per purchase (at most 10 are bought).
    pub n_line_items: u32,
    /// Skip DS3's membership and review steps: DS2's workload.
    pub ds2_mode: bool,
    /// A sale that leaves fewer than 3 in stock restocks the product; false sells it out, as
    /// DS3's MySQL edition does.
    pub restock: bool,
    /// Customers and products of the loaded size (from --db-size).
    pub max_customer: u64,
    pub max_product: u64,
    pub seed: u64,
    /// Length of one row of the time series.
    pub interval: Duration,
    /// How long every thread may take to connect before the run is abandoned.
    pub connect_timeout: Duration,
    /// Steady-state rounds of this length (SNIA PTS rule on OPM per round): the run ends once
    /// the rule holds, `run_time` at the latest, and its figures cover the last window.
    pub steady_state: Option<Duration>,
}

impl OltpSpec {
    /// The measured phase unless told otherwise: three minutes, long enough for the order rate
    /// to settle on a database that fits in memory (DS3 itself runs until stopped).
    pub const RUN_TIME: Duration = Duration::from_secs(180);
    /// DS3's warm-up.
    pub const WARMUP_TIME: Duration = Duration::from_secs(60);
}

impl Default for OltpSpec {
    fn default() -> Self {
        OltpSpec {
            n_threads: 1,
            ramp_rate: 10.0,
            run_time: Self::RUN_TIME,
            warmup_time: Self::WARMUP_TIME,
            think_time: Duration::ZERO,
            pct_newcustomers: 20.0,
            pct_newmember: 1.0,
            n_searches: 3,
            search_batch_size: 5,
            search_depth: 500,
            n_reviews: 3,
            pct_newreviews: 5.0,
            pct_newhelpfulness: 10.0,
            n_line_items: 5,
            ds2_mode: false,
            restock: true,
            max_customer: 20_000,
            max_product: 10_000,
            seed: crate::rng::DEFAULT_SEED,
            interval: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(60),
            steady_state: None,
        }
    }
}
