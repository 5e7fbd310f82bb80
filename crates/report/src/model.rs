//! The parts of a run's summary (`summary.json`, whose whole and wire format are
//! `crate::summary`): the host, the target and its device, the phases, latency percentiles,
//! failed I/Os, and the results of the workloads whose figures are still defined here (the
//! others' are in their folders under `crate::workloads`), with the background streams, the
//! search, steady state and shards that may surround them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub cpus: u32,
}

/// A block device and the layers under it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Kernel name, as in /proc/diskstats (`vda`, `nvme0n1p2`, `dm-0`, `md127`).
    pub name: String,
    /// `disk`, `partition`, `dm` or `md`.
    pub kind: String,
    /// `major:minor`.
    pub dev: String,
    /// For a partition, the whole disk it is on.
    pub parent: Option<String>,
    /// Devices this one is built from (device-mapper or md members), recursively resolved to
    /// whole disks.
    pub members: Vec<String>,
    pub logical_sector_size: Option<u32>,
    pub physical_sector_size: Option<u32>,
    pub rotational: Option<bool>,
    /// RAID level for md devices (`raid1`, `raid10`, ...).
    pub raid_level: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    pub path: String,
    /// `file`, `device`, or `none` (null engine).
    pub kind: String,
    pub size_bytes: u64,
    /// Whether I/O bypassed the page cache (O_DIRECT).
    pub direct: bool,
    /// The block device the data lives on; absent for tmpfs and the null engine.
    pub device: Option<DeviceInfo>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    pub ramp_s: f64,
    pub measured_s: f64,
}

/// Latency percentiles in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyNs {
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub p9999: u64,
    pub max: u64,
}

/// One direction (read or write) of an I/O workload over the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionResult {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    /// Absent when no I/O of this direction completed. Under a rate cap: from each I/O's
    /// intended start.
    pub lat_ns: Option<LatencyNs>,
    /// Under a rate cap only: from each I/O's actual issue to its completion (the service
    /// time), beside `lat_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_lat_ns: Option<LatencyNs>,
}

/// Failed I/Os, counted by kind; a failure is data, not the end of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorCounts {
    pub total: u64,
    /// errno name (`EIO`, `ENOSPC`, ...) or `short` for a short transfer, with its count.
    pub by_kind: std::collections::BTreeMap<String, u64>,
}

/// A data mismatch found by `--verify`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    pub offset: u64,
    /// What was wrong: `crc`, `offset`, `generation`, `magic`.
    pub field: String,
    pub expected: String,
    pub found: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    pub enabled: bool,
    /// Blocks read back and checked (during the run and in the verify pass).
    pub blocks_checked: u64,
    pub mismatches: u64,
    /// The first mismatches found, at most 100.
    pub first_mismatches: Vec<Mismatch>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoResults {
    pub read: DirectionResult,
    pub write: DirectionResult,
    /// Flushes (`--fdatasync`): how many, per second and their latency (bytes 0); absent
    /// when the job flushed nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<DirectionResult>,
    pub errors: ErrorCounts,
    /// See [`error_rate_pct`]; absent when nothing was attempted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate_pct: Option<f64>,
    /// Failed I/Os outside the window the figures cover (warm-up, verify pass, steady-state
    /// rounds before the window, a buffered run's final flush): not in `errors`, but they fail
    /// the run too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub errors_outside_window: u64,
    pub verify: VerifyResult,
    /// Under a rate cap: how late I/Os were issued against their intended starts; absent
    /// when unpaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag_ms: Option<LatenessMs>,
    /// A replay of a block trace (`replay-trace`): what it replayed and, with `--check`, how
    /// faithfully; absent for a job of drawn requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Box<crate::fingerprint::TraceReplay>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A run's error rate, the one definition every table, summary and report shows: failed I/Os
/// as a percentage of those attempted (failed + completed). None when nothing was attempted.
pub fn error_rate_pct(failed: u64, completed: u64) -> Option<f64> {
    let attempted = failed.saturating_add(completed);
    (attempted > 0).then(|| 100.0 * failed as f64 / attempted as f64)
}

/// An error rate as the user reads it: one decimal, but never rounded to 0 % or 100 % when
/// some I/Os failed or some completed.
pub fn rate_text(pct: f64) -> String {
    match pct {
        p if p > 0.0 && p < 0.05 => "under 0.1 %".into(),
        p if p > 99.95 && p < 100.0 => "over 99.9 %".into(),
        p => format!("{p:.1} %"),
    }
}

/// What every report of failed I/Os adds about the figures.
pub const ONLY_COMPLETED: &str = "IOPS, bandwidth and latency count completed I/Os only";

/// The failed I/Os of a run, against those attempted, as the user is told of them.
#[derive(Debug, Clone, PartialEq)]
pub struct IoErrors<'a> {
    /// In the window the figures cover.
    pub failed: u64,
    pub completed: u64,
    /// Outside that window.
    pub outside: u64,
    pub by_kind: &'a std::collections::BTreeMap<String, u64>,
}

impl IoErrors<'_> {
    /// Any failed I/O, in the window or outside it.
    pub fn any(&self) -> bool {
        self.failed.saturating_add(self.outside) > 0
    }

    pub fn rate_pct(&self) -> Option<f64> {
        error_rate_pct(self.failed, self.completed)
    }
}

/// "181678 of 182954 I/Os failed (99.3 %: ENOSPC 181678)", then those outside the window.
impl std::fmt::Display for IoErrors<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const OUTSIDE: &str = "outside the measured window (warm-up, verify pass, final flush)";
        if self.failed == 0 && self.outside > 0 {
            let done = self.completed;
            return write!(f, "{} I/Os failed {OUTSIDE}; all {done} in the window completed", self.outside);
        }
        let kinds: Vec<String> = self.by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        write!(f, "{} of {} I/Os failed", self.failed, self.failed.saturating_add(self.completed))?;
        match self.rate_pct().filter(|_| self.failed > 0) {
            // Integrity counts failed reads and writes by class, not by errno.
            Some(rate) if kinds.is_empty() => write!(f, " ({})", rate_text(rate))?,
            Some(rate) => write!(f, " ({}: {})", rate_text(rate), kinds.join(", "))?,
            None => {}
        }
        if self.outside > 0 {
            write!(f, ", and {} more {OUTSIDE}", self.outside)?;
        }
        Ok(())
    }
}

/// Calls of one OLTP transaction type over the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TxnResult {
    pub calls: u64,
    pub per_sec: f64,
    /// Exact mean (sum of call times / calls), ns.
    pub mean_ns: Option<f64>,
    /// Percentiles from the HDR histogram; absent when there were no calls.
    pub lat_ns: Option<LatencyNs>,
}

/// One target's share of an OLTP run (DS3's per-target detail).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OltpTargetResult {
    /// The database (path, or URL without password).
    pub target: String,
    pub opm: f64,
    pub orders: u64,
    pub rollbacks: u64,
    pub failed_orders: u64,
}

/// One request type of a replay (002's Table 8): its calls and response times in ms, from
/// the HDR histogram, measured from each request's intended start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayTypeResult {
    pub calls: u64,
    /// Requests of the type that failed (not counted in the times).
    pub errors: u64,
    pub per_sec: f64,
    pub mean_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
}

/// One source of a replay, one log (002's Table 7: a web server's calls).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplaySourceResult {
    /// The log it came from.
    pub name: String,
    pub calls: u64,
    pub errors: u64,
    pub calls_per_sec: f64,
}

/// Schedule lag: how late paced starts were against their intended times, ms (replay's
/// `lateness_ms`, io's and the mailbox's `schedule_lag_ms`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatenessMs {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// A line of a log that could not be read as a request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UnreadLine {
    pub source: String,
    pub line: u64,
    pub why: String,
}

/// A replay of production requests (`storbench replay`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayResults {
    /// `fire-hose` (as fast as the database answers, `in_flight` at most per source) or
    /// `time-sync` (paced by the log's times divided by `speed`).
    pub mode: String,
    pub speed: Option<f64>,
    pub in_flight: Option<u32>,
    /// Requests in the logs that apply (after the filters, window and limit).
    pub recorded_calls: u64,
    /// Requests sent and answered (failed ones included).
    pub calls: u64,
    pub calls_per_sec: f64,
    /// Seconds from the first request sent to the last answer.
    pub elapsed_s: f64,
    /// Failed requests by kind.
    pub errors: ErrorCounts,
    /// All requests together.
    pub lat_ns: Option<LatencyNs>,
    pub by_type: std::collections::BTreeMap<String, ReplayTypeResult>,
    pub by_source: Vec<ReplaySourceResult>,
    /// Time-sync only.
    pub lateness_ms: Option<LatenessMs>,
    /// The first seconds, until latency settled (the database waking up), excluded from
    /// nothing but marked.
    pub cold_start_s: Option<f64>,
    /// Lines that could not be read as requests, and the first few of them.
    pub unread_lines: u64,
    pub first_unread: Vec<UnreadLine>,
    /// A web log's requests that no route of its mapping takes, per path (pages that make no
    /// database call, images); absent for other logs.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub unmatched_paths: std::collections::BTreeMap<String, u64>,
    /// Requests not sent because they reach beyond the database the replay was given
    /// (another database, the server's settings, roles, files or programs), by kind.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub not_sent: std::collections::BTreeMap<String, u64>,
    /// The kinds beyond the database the user allowed to be sent (`all` for every kind).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_statements: Vec<String>,
    /// Requests not sent because the database gave their session no connection (refused, or
    /// lost and not regained): never calls, never in a rate; any fails the replay.
    #[serde(default)]
    pub not_connected: u64,
    /// Requests whose log time went back behind the one before them in their log: replayed in
    /// the log's order at the time of the one before.
    #[serde(default)]
    pub backwards: u64,
    /// The share of failed requests, in percent, over which the replay fails its check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_errors_pct: Option<f64>,
}

impl ReplayResults {
    /// "not sent: 2 DROP DATABASE, 1 COPY TO PROGRAM (they reach beyond the database ...)"
    /// (the most frequent first); None when every request that applied was sent.
    pub fn not_sent_said(kinds: &std::collections::BTreeMap<String, u64>) -> Option<String> {
        let mut by_count: Vec<(&String, &u64)> = kinds.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let said: Vec<String> = by_count.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
        (!said.is_empty()).then(|| {
            format!(
                "not sent: {} (they reach beyond the database the replay was given; \
                 --allow-statement KIND sends a kind)",
                said.join(", ")
            )
        })
    }

    /// "3 request(s) went back in time in their log: ..." where any did.
    pub fn backwards_said(&self) -> Option<String> {
        (self.backwards > 0).then(|| {
            format!(
                "{} request(s) had a log time before the one before them in their log: replayed in \
                 the log's order, at the time of the one before",
                self.backwards
            )
        })
    }

    /// "sent although beyond the database, as allowed: DROP DATABASE" where the user allowed
    /// any kind.
    pub fn allowed_said(allowed: &[String]) -> Option<String> {
        (!allowed.is_empty())
            .then(|| format!("sent although beyond the database, as allowed: {}", allowed.join(", ")))
    }

    /// "12 request(s) for paths no route takes: /ds3/index.html (10), /favicon.ico (2)" (the
    /// most frequent first, five at most); None when there are none.
    pub fn unmatched_said(paths: &std::collections::BTreeMap<String, u64>) -> Option<String> {
        const SHOWN: usize = 5;
        let mut by_count: Vec<(&String, &u64)> = paths.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let shown: Vec<String> = by_count.iter().take(SHOWN).map(|(p, n)| format!("{p} ({n})")).collect();
        let more = by_count.len().saturating_sub(SHOWN);
        let more = if more > 0 { format!(" and {more} more path(s)") } else { String::new() };
        let total: u64 = paths.values().sum();
        (total > 0)
            .then(|| format!("{total} request(s) for paths no route takes: {}{more}", shown.join(", ")))
    }
}

/// The DVD Store workload over the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OltpResults {
    /// Orders per minute: completed orders (rolled-back purchases included, as DS3 counts
    /// them) × 60 / measured seconds.
    pub opm: f64,
    pub orders: u64,
    pub purchases: u64,
    /// Purchases rolled back because an item was out of stock.
    pub rollbacks: u64,
    /// 100 × rollbacks / orders; absent when no order completed.
    pub rollback_pct: Option<f64>,
    /// Orders abandoned because a database call failed (after retries).
    pub failed_orders: u64,
    /// The order response time (sum of its timed calls, price query excluded), with the exact
    /// mean.
    pub order_rt_mean_ns: Option<f64>,
    pub order_rt_ns: Option<LatencyNs>,
    /// Per transaction type: `login`, `new_customer`, `new_member`, `browse`,
    /// `review_browse`, `get_reviews`, `new_review`, `new_helpfulness`, `purchase`,
    /// `price_query`.
    pub transactions: std::collections::BTreeMap<String, TxnResult>,
    /// Failed calls by kind, retried ones included.
    pub errors: ErrorCounts,
    pub reconnects: u64,
    /// Driver threads (per target × targets).
    pub threads: u64,
    pub targets: Vec<OltpTargetResult>,
    /// Since the clock started, warm-up included (DS3's n_purchase_from_start and
    /// n_rollbacks_from_start).
    pub purchases_from_start: u64,
    pub rollbacks_from_start: u64,
}

/// One stream of the mailbox workload (database reads, database writes, log writes, ...)
/// over the measured phase. Averages and maxima in milliseconds, as Jetstress reports them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    pub ios: u64,
    pub per_sec: f64,
    pub bytes_per_io: Option<f64>,
    pub avg_ms: Option<f64>,
    /// Highest average over any sample window (what the thresholds judge).
    pub window_max_ms: Option<f64>,
    /// The slowest single I/O, from the HDR histogram.
    pub max_ms: Option<f64>,
    pub lat_ns: Option<LatencyNs>,
}

/// One database's share of a mailbox run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MailboxDbResult {
    pub database: u32,
    pub db_reads: StreamResult,
    pub db_writes: StreamResult,
    pub log_writes: StreamResult,
    pub bdm_reads: StreamResult,
    pub initial_size_bytes: u64,
    pub final_size_bytes: u64,
}

/// One pass/fail check: `value` against `limit` (an upper limit, except `target_iops`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThresholdCheck {
    pub name: String,
    pub database: Option<u32>,
    pub value: Option<f64>,
    pub limit: f64,
    pub pass: bool,
}

/// The mailbox (Jetstress-class) workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MailboxResults {
    /// `performance`, `stress`, `backup` or `soft_recovery`.
    pub test: String,
    pub preset: String,
    /// Every threshold held, no I/O error, every checksum verified.
    pub pass: bool,
    /// DB reads/s + DB writes/s (Jetstress's "Achieved Transactional I/O per Second").
    pub transactional_iops: f64,
    /// Transactional plus log writes/s (the figure the 2009 report quotes).
    pub total_iops: f64,
    pub target_iops: Option<f64>,
    pub db_reads_per_sec: f64,
    pub db_writes_per_sec: f64,
    pub log_writes_per_sec: f64,
    pub db_read_avg_ms: Option<f64>,
    pub db_read_max_ms: Option<f64>,
    pub db_write_avg_ms: Option<f64>,
    pub db_write_max_ms: Option<f64>,
    pub log_write_avg_ms: Option<f64>,
    pub log_write_max_ms: Option<f64>,
    pub log_bytes_per_write: Option<f64>,
    pub bdm_reads_per_sec: f64,
    pub page_fault_stalls_per_sec: f64,
    pub operations_per_sec: f64,
    pub checks: Vec<ThresholdCheck>,
    /// Whether every page and log block verified after the run (None: not verified).
    pub checksum_ok: Option<bool>,
    pub pages_verified: u64,
    pub log_blocks_verified: u64,
    pub corruptions: Vec<Mismatch>,
    pub errors: ErrorCounts,
    /// See [`error_rate_pct`]; absent when nothing was attempted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate_pct: Option<f64>,
    pub initial_db_size_bytes: u64,
    pub final_db_size_bytes: u64,
    pub databases: Vec<MailboxDbResult>,
    pub mailboxes: u64,
    pub threads: u32,
    /// Operation mix in percent: insert, delete, replace, read; and lazy commits.
    pub mix: std::collections::BTreeMap<String, u32>,
    pub lazy_commit_pct: u32,
    /// Backup test: MB/s read per database and in all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backup_mb_per_sec: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup_total_mb_per_sec: Option<f64>,
    /// Soft recovery test: log files replayed and seconds per log file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs_replayed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_per_log: Option<f64>,
    /// Under a target: how late operations started against the paced schedule (never more
    /// than the 1 s the pacer catches up); absent when unpaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag_ms: Option<LatenessMs>,
}

/// Integrity errors by class (`storbench integrity`): what the checker found during the run
/// and in the final audit, together. As `IntegrityResults::errors`, each damaged page once
/// (a failed request at its first page); as `occurrences`, every time one was found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegrityErrors {
    /// An acknowledged write is not there: an older generation (or nothing) came back.
    pub lost_writes: u64,
    /// A read returned an older generation than one already read back.
    pub stale_reads: u64,
    /// Sectors of one page from different writes.
    pub torn_pages: u64,
    /// A page holding another page's id.
    pub misplaced_pages: u64,
    /// Anything else that does not check.
    pub checksum: u64,
    pub read_errors: u64,
    pub write_errors: u64,
}

impl IntegrityErrors {
    /// Each class by its field name, in the summary's order.
    pub fn named(&self) -> [(&'static str, u64); 7] {
        [
            ("lost_writes", self.lost_writes),
            ("stale_reads", self.stale_reads),
            ("torn_pages", self.torn_pages),
            ("misplaced_pages", self.misplaced_pages),
            ("checksum", self.checksum),
            ("read_errors", self.read_errors),
            ("write_errors", self.write_errors),
        ]
    }

    pub fn total(&self) -> u64 {
        self.named().iter().map(|(_, n)| n).sum()
    }

    /// Adds `other`'s counts, class by class.
    pub fn add(&mut self, other: &IntegrityErrors) {
        self.lost_writes = self.lost_writes.saturating_add(other.lost_writes);
        self.stale_reads = self.stale_reads.saturating_add(other.stale_reads);
        self.torn_pages = self.torn_pages.saturating_add(other.torn_pages);
        self.misplaced_pages = self.misplaced_pages.saturating_add(other.misplaced_pages);
        self.checksum = self.checksum.saturating_add(other.checksum);
        self.read_errors = self.read_errors.saturating_add(other.read_errors);
        self.write_errors = self.write_errors.saturating_add(other.write_errors);
    }
}

/// One simulated activity of the integrity workload (random user I/O, read-ahead, bulk
/// update, lazy writer and checkpoint, log writer) over the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntegrityActivity {
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub bytes: u64,
    pub iops: f64,
    /// The sum of its I/Os' durations, seconds.
    pub io_time_s: f64,
    pub lat_ns: Option<LatencyNs>,
    /// Times it cut its outstanding I/O because an I/O took longer than the target duration.
    pub throttled_ios: u64,
    /// I/Os outstanding longer than the delay threshold.
    pub delayed_ios: u64,
}

/// The final audit: every page read back and checked against the journal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AuditResult {
    pub pages_checked: u64,
    pub seconds: f64,
    pub bytes_per_sec: f64,
    /// False when it was cut short.
    pub complete: bool,
}

/// Crash cycles: the writer killed (or the machine cut off) at a random point, then every
/// acknowledged write looked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrashResult {
    pub cycles: u32,
    /// Page writes the journal holds as acknowledged, over all cycles.
    pub writes_acknowledged: u64,
    /// Of those, the ones whose page holds that generation or a newer one.
    pub writes_found: u64,
    pub lost: u64,
}

/// An integrity run's verdict in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntegrityVerdict {
    Pass,
    /// An error was found, or the run failed (an activity, the journal, no progress).
    Fail,
    /// A stop request ended it before it could judge, and nothing was found until then.
    Interrupted,
}

impl IntegrityVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            IntegrityVerdict::Pass => "pass",
            IntegrityVerdict::Fail => "FAIL",
            IntegrityVerdict::Interrupted => "interrupted",
        }
    }
}

/// The integrity (SQLIOSim-class) workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntegrityResults {
    /// No error of any class, every page audited.
    pub pass: bool,
    /// A stop request (Ctrl-C, SIGTERM) ended the run.
    #[serde(default)]
    pub interrupted: bool,
    pub ios: u64,
    pub iops: f64,
    pub bytes: u64,
    /// The sum of every I/O's duration, seconds (SQLIOSim's total I/O time).
    pub total_io_time_s: f64,
    pub throttled_ios: u64,
    pub delayed_ios: u64,
    pub delay_threshold_s: f64,
    pub target_io_ms: f64,
    pub lat_ns: Option<LatencyNs>,
    /// Damaged pages by class, each page once (a failed request at its first page).
    pub errors: IntegrityErrors,
    /// Every time an error was found: each read during the run, and the audit.
    #[serde(default)]
    pub occurrences: IntegrityErrors,
    /// Of the pages in `errors`, those the final audit found damaged again: what
    /// `integrity verify` finds in the kept files. None without a complete audit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_found: Option<u64>,
    /// Pages checked on every read during the run.
    pub pages_checked: u64,
    pub activities: Vec<IntegrityActivity>,
    pub audit: Option<AuditResult>,
    pub data_initial_bytes: u64,
    pub data_final_bytes: u64,
    pub data_max_bytes: u64,
    pub log_bytes: u64,
    pub grows: u64,
    pub shrinks: u64,
    /// Shrinks that kept part or all of their increment because a damaged page lies in it.
    #[serde(default)]
    pub shrinks_held: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<CrashResult>,
}

impl IntegrityResults {
    /// Found damage fails the run even when it was interrupted; an interrupted run with none
    /// found is neither pass nor fail.
    pub fn verdict(&self) -> IntegrityVerdict {
        if self.pass {
            IntegrityVerdict::Pass
        } else if self.interrupted && self.errors.total() == 0 {
            IntegrityVerdict::Interrupted
        } else {
            IntegrityVerdict::Fail
        }
    }
}

/// A run as one shard of several (issue: scale-out), what a merge of the shards needs to
/// know of it: which one it is, where it ran, when it was told to start and how late it was,
/// and whether its clock could be trusted to line up with the others'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 1-based.
    pub index: u32,
    pub count: u32,
    pub host: String,
    /// Where the identity came from: `--shard`, `slurm`, `mpi`, `kubernetes`.
    pub from: String,
    /// The instant every shard was to start (`--start-at`), RFC 3339; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// Seconds after `start_at` this shard was ready to start (0 when it waited for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_s: Option<f64>,
    /// Ready more than [`LATE_S`] after `start_at`: its window starts after the others'.
    #[serde(default)]
    pub late: bool,
    pub clock: ClockState,
}

/// A shard counts as late when it was ready this long after the start time.
pub const LATE_S: f64 = 0.25;

/// The host clock's discipline as the kernel reports it (`adjtimex`): whether an NTP client
/// (chrony, timesyncd, ntpd) keeps it synchronised, and the error bounds it reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockState {
    pub synchronized: Option<bool>,
    /// The kernel's maximum and estimated error, microseconds.
    pub max_error_us: Option<i64>,
    pub est_error_us: Option<i64>,
}

/// What a background stream did over the measured phase: its rates over the seconds it ran
/// in that phase, its latency and its failed requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackgroundResult {
    /// Its name in the series and the record (`bg1`).
    pub name: String,
    /// What the stream is (`io`).
    pub kind: String,
    /// The stream as it was asked for (`--background`).
    pub spec: String,
    pub measured_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
    /// Bytes moved per second, reads and writes.
    pub bytes_per_sec: f64,
    pub read_lat_p99_us: Option<f64>,
    pub write_lat_p99_us: Option<f64>,
    pub errors: u64,
    /// Under a rate: how late its I/Os were issued against their intended starts; absent
    /// when unpaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag_ms: Option<LatenessMs>,
    /// A command's run (kind `cmd`): its fields sit beside the others; absent for a stream of
    /// storbench's own I/O.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandRun>,
    /// A capture of the run's block requests (kind `capture`): its trace, its cost and the
    /// trace's fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<Box<crate::fingerprint::CaptureResult>>,
}

/// What a background command (`cmd:COMMAND`) did: it starts with the measured phase and is
/// stopped when the run ends (unless the run waited for it, `--background-wait`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandRun {
    /// The command as given (run by `sh -c`).
    pub command: String,
    /// Its exit status; null when it did not exit by itself (storbench stopped it) or was
    /// ended by a signal.
    pub exit_code: Option<i32>,
    /// From its start to its end.
    pub seconds: f64,
    /// Whether storbench ended it (the run ended first, or was stopped).
    pub stopped: bool,
}

impl MailboxResults {
    /// Completed I/Os of every database and stream: what failed ones are measured against.
    pub fn completed_ios(&self) -> u64 {
        self.databases
            .iter()
            .flat_map(|d| [d.db_reads.ios, d.db_writes.ios, d.log_writes.ios, d.bdm_reads.ios])
            .fold(0, u64::saturating_add)
    }
}

/// How a run with steady-state rounds ended, and which of its seconds the results cover.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// The headline figure each round is judged on (`IOPS`, `OPM`, `transactional IOPS`,
    /// `calls/s`).
    #[serde(default = "io_figure")]
    pub figure: String,
    pub round_s: f64,
    /// Whole rounds completed; a round cut off by the run's end is not one.
    pub rounds_run: u64,
    pub reached: bool,
    /// Seconds since the run's start; the results cover exactly this span.
    pub window_start_s: f64,
    pub window_end_s: f64,
    /// Every round's `figure` (the name is io's, where steady state began).
    pub round_iops: Vec<f64>,
    /// (max − min) / mean over the window, percent.
    pub range_pct: Option<f64>,
    /// |least-squares slope| × (rounds in the window − 1) / mean, percent.
    pub slope_pct: Option<f64>,
}

/// What a summary from before `SteadyState::figure` judged its rounds on: io's IOPS.
fn io_figure() -> String {
    "IOPS".into()
}

/// The search for the highest load under latency limits (`--search`), kept in the summary of
/// the run that confirmed it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// `threads`, `iodepth` or `rate`.
    pub parameter: String,
    /// The limits as given; every one must hold.
    pub limits: Vec<String>,
    /// What `throughput` counts: `IOPS`, `OPM`, `transactional IOPS`, `calls/s`.
    pub throughput: String,
    pub step_budget: u32,
    pub step_s: f64,
    /// The load confirmed to hold; None when none did.
    pub chosen: Option<f64>,
    pub steps: Vec<SearchStep>,
    pub elapsed_s: f64,
    pub measured_s: f64,
    pub overhead_s: f64,
}

/// One step of a search: a short measured run, or a full-length confirmation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    pub load: f64,
    pub confirm: bool,
    pub throughput: f64,
    pub latencies: Vec<LimitedLatency>,
    /// Every limit held on a run that is done.
    pub held: bool,
    /// Why the step's run is not done, where it is not (its failed I/Os, the own checks that
    /// failed, or its status): such a step holds nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    pub measured_s: f64,
    /// Wall time, warm-up and preparation included.
    pub seconds: f64,
    /// The step's bundle, relative to the run's.
    pub bundle: String,
}

/// One limit at one step: the worst figure it covers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LimitedLatency {
    pub limit: String,
    pub ms: Option<f64>,
    pub held: bool,
}

/// `shards.json` of a merged bundle (`storbench merge`): what each shard contributed and
/// whether every shard's bundle was whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardsFile {
    /// Every shard complete and none failed.
    pub complete: bool,
    /// The shards that were incomplete or failed, by name, each with why.
    pub missing: Vec<String>,
    /// The common measured window on the merged run's clock, seconds since its start.
    pub window_s: (f64, f64),
    pub shards: Vec<ShardEntry>,
}

/// One shard of a merged bundle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardEntry {
    /// The shard's name: its identity as its run knew it (`2/4 (host)`), else its bundle
    /// directory's name.
    pub name: String,
    /// Its bundle as given to the merge.
    pub bundle: String,
    /// Its own headline figure (from its summary), where it has one.
    pub headline: Option<String>,
    /// Its measured phase on the merged run's clock, seconds since the merged start.
    pub measured_s: (f64, f64),
    /// Its measured intervals inside the common window.
    pub intervals: usize,
    /// Its measured start was later than the earliest shard's by more than one interval.
    pub late: bool,
    /// Failed operations in the common window.
    pub errors: u64,
    pub complete: bool,
    /// Its failures, and why it is incomplete where it is.
    pub problems: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_rate_is_failed_over_attempted_and_never_rounds_to_0_or_100_percent() {
        assert_eq!(error_rate_pct(0, 0), None);
        assert_eq!(error_rate_pct(1, 3), Some(25.0));
        assert_eq!(rate_text(99.99), "over 99.9 %");
        assert_eq!(rate_text(0.01), "under 0.1 %");
        assert_eq!(rate_text(100.0), "100.0 %");
        let kinds = std::collections::BTreeMap::from([("ENOSPC".to_string(), 3)]);
        let e = IoErrors { failed: 3, completed: 1, outside: 0, by_kind: &kinds };
        assert_eq!(e.to_string(), "3 of 4 I/Os failed (75.0 %: ENOSPC 3)");
        let flush = IoErrors { failed: 0, completed: 9, outside: 1, by_kind: &Default::default() };
        assert!(flush.any() && flush.to_string().starts_with("1 I/Os failed outside"), "{flush}");
        let unnamed = IoErrors { failed: 1, completed: 3, outside: 0, by_kind: &Default::default() };
        assert_eq!(unnamed.to_string(), "1 of 4 I/Os failed (25.0 %)");
    }
}
