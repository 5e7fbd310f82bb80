//! The summary of one run (`summary.json`), schema version 1: [`Summary`].
//!
//! Wire format, stable within a schema version (fields may be added, never renamed or removed;
//! anything else bumps `SCHEMA_VERSION`):
//!
//! - `schema_version` (integer), `tool` {`name`, `version`}, `workload` ("io", ...), `name`.
//! - `complete`: false while the run is going and when it was interrupted; the results then
//!   cover the part that was measured.
//! - `started_at`, `ended_at`: RFC 3339 timestamps; `seed`: the seed every RNG was fed from.
//! - `host` {`hostname`, `kernel`, `cpus`}.
//! - `parameters`: the workload's validated parameters, keys as the plan file spells them.
//! - `target` {`path`, `kind`, `size_bytes`, `direct`, `device`}: where the I/O went and the block
//!   device the filesystem sits on, with its layers (partition, device-mapper, md).
//! - `phases` {`ramp_s`, `measured_s`}: seconds actually spent in each phase.
//! - `results`: the workload's figures over the measured phase; for `io`, `read` and `write`
//!   each {`ios`, `bytes`, `iops`, `bytes_per_sec`, `lat_ns` {`min`, `mean`, `p50`, `p90`,
//!   `p99`, `p999`, `p9999`, `max`}, and under a rate cap `service_lat_ns` (issue to
//!   completion) beside it}, plus `errors`, `error_rate_pct`, `errors_outside_window`,
//!   `verify` and under a rate cap `schedule_lag_ms` {`p50`, `p99`, `max`} (how late I/Os were
//!   issued against their intended starts; absent when unpaced). The figures count completed I/Os only; a failed or short one is an error.
//!   `error_rate_pct` (present when any I/O was attempted) is failed I/Os as a percentage of
//!   those attempted in the window the figures cover; `errors_outside_window` (present when
//!   not 0) counts failed I/Os outside it (warm-up, the verify pass, steady-state rounds before
//!   the window, and a failed flush of a buffered run's writes at its end). Any failed I/O fails the run (exit 1) unless `parameters.continue_on_error`.
//!   For `oltp`: `opm`, `orders`, `purchases`, `rollbacks`, `rollback_pct`,
//!   `failed_orders`, `order_rt_mean_ns`, `order_rt_ns` {percentiles as above},
//!   `transactions` {type: {`calls`, `per_sec`, `mean_ns`, `lat_ns`}}, `errors`,
//!   `reconnects`, `threads`, `targets` [{`target`, `opm`, `orders`, `rollbacks`,
//!   `failed_orders`}], `purchases_from_start`, `rollbacks_from_start`.
//!   For `mailbox`: `test`, `preset`, `pass`, `transactional_iops` (DB reads/s + DB
//!   writes/s), `total_iops` (plus log writes/s), `target_iops`, `db_reads_per_sec`,
//!   `db_writes_per_sec`, `log_writes_per_sec`, `db_read_avg_ms`, `db_read_max_ms`,
//!   `db_write_avg_ms`, `db_write_max_ms`, `log_write_avg_ms`, `log_write_max_ms` (maxima:
//!   the highest average over a sample window), `log_bytes_per_write`, `bdm_reads_per_sec`,
//!   `page_fault_stalls_per_sec`, `operations_per_sec`, `checks` [{`name`, `database`,
//!   `value`, `limit`, `pass`}], `checksum_ok`, `pages_verified`, `log_blocks_verified`,
//!   `corruptions`, `errors`, `error_rate_pct` (as for io), `initial_db_size_bytes`, `final_db_size_bytes`, `databases`
//!   [per database: `db_reads`, `db_writes`, `log_writes`, `bdm_reads` each {`ios`,
//!   `per_sec`, `bytes_per_io`, `avg_ms`, `window_max_ms`, `max_ms`, `lat_ns`}, sizes],
//!   `mailboxes`, `threads`, `mix`, `lazy_commit_pct`, under a target `schedule_lag_ms` (as
//!   for io, of the operations' starts); backup: `backup_mb_per_sec`,
//!   `backup_total_mb_per_sec`; soft recovery: `logs_replayed`, `seconds_per_log`.
//!   For `integrity`: `pass`, `interrupted` (a stop request ended it), `ios`, `iops`, `bytes`,
//!   `total_io_time_s`, `throttled_ios`, `delayed_ios`, `delay_threshold_s`, `target_io_ms`,
//!   `lat_ns`, `errors` {`lost_writes`, `stale_reads`, `torn_pages`, `misplaced_pages`,
//!   `checksum`, `read_errors`, `write_errors`} (damaged pages, each once, by its class: the
//!   rows of the bundle's `suspect_pages.csv`), `occurrences` (the same classes: every time
//!   one was found, by the run's reads and the audit), `audit_found` (of those pages, the ones
//!   the final audit found damaged again), `pages_checked`, `activities` [{`name`, `reads`,
//!   `writes`, `bytes`, `iops`, `io_time_s`, `lat_ns`, `throttled_ios`, `delayed_ios`}],
//!   `audit` {`pages_checked`, `seconds`, `bytes_per_sec`, `complete`}, data file sizes,
//!   `grows`, `shrinks`, `shrinks_held` (shrinks that kept a damaged page), and for crash
//!   cycles `crash` {`cycles`, `writes_acknowledged`, `writes_found`, `lost`}.
//! - `cpu` {`user_s`, `sys_s`}: storbench's own CPU time during the measured phase, and
//!   `ns_per_io` where the workload counts I/Os.
//! - `warnings`: what the user should know about how the figures were measured.
//! - `steady_state` (only for a run with `--steady-state`: io, oltp, a mailbox performance or
//!   stress test, a fire-hose replay): {`figure` (the headline each round is judged on: `IOPS`
//!   for io, reads + writes per second; `OPM` for oltp; `transactional IOPS` for the mailbox;
//!   `calls/s` for replay; absent in summaries written before it existed, which are io's
//!   IOPS), `round_s`, `rounds_run`
//!   (whole rounds completed), `reached` (whether the SNIA PTS rule held), `window_start_s`,
//!   `window_end_s` (seconds since the run's start: the `results`, `phases.measured_s` and
//!   `cpu` cover exactly this window, the last 5 rounds), `round_iops` [every round's
//!   `figure`; named for io, where it began], `range_pct` ((max − min) / mean of the window's
//!   rounds), `slope_pct` (|least-squares slope| × 4 rounds / mean); both percentages absent
//!   when the mean was 0 or fewer than 5 rounds ran}. `timeseries.csv` is written as the run goes, so
//!   its `measure` rows before `window_start_s` and after `window_end_s` are logged but do
//!   not count.
//! - `search` (only for a run with `--search`): the search for the highest load under
//!   `--latency-limit`s that confirmed this run: {`parameter` (threads, iodepth or rate),
//!   `limits` [as given, e.g. "order:p99<=50ms"], `throughput` (the figure's name, e.g.
//!   "IOPS"), `step_budget`, `step_s` (each short step's measured length), `chosen` (the load
//!   confirmed to hold; null when none did), `steps` [{`load`, `confirm` (a full-length
//!   confirmation), `throughput`, `latencies` [{`limit`, `ms` (the worst figure the limit
//!   covers; null when no request of it completed), `held`}], `held`, `measured_s`,
//!   `seconds` (wall time, warm-up and preparation included), `bundle` (its directory,
//!   relative to this one)}], `elapsed_s` (the whole search), `measured_s` (its steps'
//!   measured phases) and `overhead_s` (the rest: warm-ups, preparation, writing bundles)}.
//!
//! Latency comes from HDR histograms with 3 significant digits (relative error under 0.1 %),
//! recorded in nanoseconds. Under a rate target it is measured from each I/O's intended start.

use crate::model::{BackgroundResult, Host, Phases, SearchResult, ShardInfo, SteadyState, TargetInfo, Tool};
use crate::workloads::Results;
use serde::{Deserialize, Serialize};

/// Version of the `summary.json` layout; bump on any change that is not an addition.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) / I/Os completed, in ns; absent when nothing completed.
    pub ns_per_io: Option<f64>,
}

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub schema_version: u32,
    pub tool: Tool,
    pub workload: String,
    pub name: String,
    pub complete: bool,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub seed: u64,
    pub host: Host,
    pub parameters: serde_json::Value,
    pub target: TargetInfo,
    pub engine: String,
    pub phases: Phases,
    pub results: Results,
    pub cpu: CpuUsage,
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
    /// The background streams that ran beside the workload (`--background`), each over the
    /// whole measured phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<BackgroundResult>,
    /// The search that chose this run's load (`--search`); absent otherwise and in summaries
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchResult>,
    /// The run as one of several shards started together (`--shard I/N`, `--start-at`);
    /// absent for a run on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
}
