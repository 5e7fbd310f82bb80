//! The mailbox workload's summaries from their outcomes: the transactional one (performance
//! and stress tests) with Jetstress's rates and latencies per stream and per database, the
//! thresholds' verdict, errors and corruption, the verification; the backup's (stream
//! `backup`): MB/s per database and in all, pages checked, corruption; and soft recovery's:
//! its log generation's transactional figures (stream `mailbox`) with the replay's (stream
//! `recovery`): log files replayed, seconds per log file, corruption, the verification.

use crate::metrics::DirectionCounters;
use crate::run::record::{Facts, Recordable, Tally};
use crate::run::record::{RecordError, StoredRecord};
use crate::run::{Outcome, Parts};
use crate::workload::mailbox::{
    BackupDetail, BackupTally, Corruption, MailboxOutcome, MailboxRecorder, Manifest, RecoveryDetail,
    RecoveryTally, VerifyReport,
};
use serde::{Deserialize, Serialize};
use storbench_report::{
    CpuUsage, MailboxDbResult, MailboxResults, Mismatch, Phases, Results, StreamResult, Summary,
    ThresholdCheck,
};

/// What a mailbox run knows besides its intervals, as the record keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MailboxFacts {
    /// The thresholds' verdict over the measured phase.
    pub verdict_pass: bool,
    pub checks: Vec<ThresholdCheck>,
    /// Each database's id and size in bytes when the run started and ended, in the order of
    /// the outcome's parts.
    pub databases: Vec<DatabaseSize>,
    /// Corrupt pages and blocks the run found (the first few; the count is in the intervals).
    pub corruptions: Vec<Mismatch>,
    /// The verification after the run, when one ran.
    pub verified: Option<Verified>,
    /// What the test says of how it ran (the caches did not warm in time).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DatabaseSize {
    pub id: u32,
    pub initial_bytes: u64,
    pub final_bytes: u64,
}

/// What a verification found, as the summary shows it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Verified {
    pub ok: bool,
    pub pages_checked: u64,
    pub log_blocks_checked: u64,
    pub first: Vec<Mismatch>,
}

impl Verified {
    pub fn of(v: &VerifyReport) -> Verified {
        Verified {
            ok: v.ok(),
            pages_checked: v.pages_checked,
            log_blocks_checked: v.log_blocks_checked,
            first: v.first.iter().map(mismatch).collect(),
        }
    }
}

impl MailboxFacts {
    /// The facts of `out` on the databases of `manifest` (pages of `page_size` bytes).
    pub fn of(out: &MailboxOutcome, manifest: &Manifest, page_size: u32) -> MailboxFacts {
        let ps = u64::from(page_size);
        MailboxFacts {
            verdict_pass: out.detail.verdict.pass,
            checks: out.detail.verdict.checks.clone(),
            databases: manifest
                .databases
                .iter()
                .map(|m| DatabaseSize {
                    id: m.id,
                    initial_bytes: m.initial_pages * ps,
                    final_bytes: m.pages * ps,
                })
                .collect(),
            corruptions: out.totals.total.corruptions.iter().map(mismatch).collect(),
            verified: None,
            warnings: Vec::new(),
        }
    }
}

/// A corruption as the summary lists it.
pub fn mismatch(c: &Corruption) -> Mismatch {
    Mismatch { offset: c.offset, field: "checksum".into(), expected: c.file.clone(), found: c.what.clone() }
}

impl Recordable for MailboxRecorder {
    fn tally(&self) -> Tally<'_> {
        let mut t = Tally::default();
        t.direction("db_reads", "db_read", &self.db_reads);
        t.direction("db_writes", "db_write", &self.db_writes);
        t.direction("log_writes", "log_write", &self.log_writes);
        t.direction_if_any("bdm_reads", "bdm_read", &self.bdm_reads);
        t.direction_if_any("log_creates", "log_create", &self.log_creates);
        for (name, n) in OPS.iter().zip(self.ops) {
            t.count(format!("ops.{name}"), n);
        }
        t.count("sync_commits", self.sync_commits);
        t.count("lazy_commits", self.lazy_commits);
        t.count("page_fault_stalls", self.page_fault_stalls);
        t.count("log_stalls", self.log_stalls);
        t.count("checksum_errors", self.checksum_errors);
        t.errors("errors", &self.errors);
        t.hist_if_any("lag", &self.lag);
        t
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        let mut r = MailboxRecorder {
            db_reads: t.direction_counters("db_reads", "db_read"),
            db_writes: t.direction_counters("db_writes", "db_write"),
            log_writes: t.direction_counters("log_writes", "log_write"),
            bdm_reads: t.direction_counters("bdm_reads", "bdm_read"),
            log_creates: t.direction_counters("log_creates", "log_create"),
            sync_commits: t.get("sync_commits"),
            lazy_commits: t.get("lazy_commits"),
            page_fault_stalls: t.get("page_fault_stalls"),
            log_stalls: t.get("log_stalls"),
            checksum_errors: t.get("checksum_errors"),
            errors: t.error_tally("errors"),
            lag: t.histogram("lag"),
            ..Default::default()
        };
        for (n, name) in r.ops.iter_mut().zip(OPS) {
            *n = t.get(&format!("ops.{name}"));
        }
        Ok(r)
    }
}

/// The operations in the order of `MailboxRecorder::ops`.
const OPS: [&str; 4] = ["insert", "delete", "replace", "read"];

/// The summary of a performance or stress test: `started` (whose results hold what was run)
/// with the outcome's figures.
pub fn summary(
    started: Summary,
    out: &Outcome<Parts<MailboxRecorder>, MailboxFacts>,
    ended_at: &str,
) -> Summary {
    let mut s = crate::run::record::summary::ended(started, ended_at);
    s.results = Results::Mailbox(results(what_was_run(&s), out));
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: out.measured_s };
    s.cpu = cpu(out);
    s.complete = out.complete;
    s.warnings.extend(out.detail.warnings.iter().cloned());
    s.warnings.extend(out.warnings.iter().cloned());
    s.warnings.extend(out.failures.iter().cloned());
    s.steady_state = out.steady.clone();
    s
}

/// A mailbox run's summary built again from its record (a [`crate::run::record::summary::Rebuild`]): a test, a
/// backup or a soft recovery.
pub fn rebuilt(
    record: &StoredRecord,
    started: Summary,
    window: Option<(f64, f64)>,
    at: &str,
) -> Result<Summary, RecordError> {
    if is_backup(&started) {
        let out = crate::run::record::summary::stream_outcome(record, BACKUP_STREAM, window)?;
        return Ok(backup_summary(started, &out, at));
    }
    if is_soft_recovery(&started) {
        return soft_recovery(record, started, window, at);
    }
    let mut out = crate::run::record::summary::outcome(record, window)?;
    faults_whenever(&mut out);
    Ok(summary(started, &out, at))
}

/// The results of a started summary: what was run.
fn what_was_run(started: &Summary) -> MailboxResults {
    match &started.results {
        Results::Mailbox(r) => r.clone(),
        _ => MailboxResults::default(),
    }
}

/// `base` (what was run) with the transactional figures and the verification.
pub fn results(base: MailboxResults, out: &Outcome<Parts<MailboxRecorder>, MailboxFacts>) -> MailboxResults {
    let mut r = base;
    transactional(&mut r, out);
    if let Some(v) = &out.detail.verified {
        verified(&mut r, v);
    }
    r
}

fn stream(c: &DirectionCounters, secs: f64, window_max_ms: Option<f64>) -> StreamResult {
    let any = c.ios > 0;
    StreamResult {
        ios: c.ios,
        per_sec: c.ios as f64 / secs,
        bytes_per_io: any.then(|| c.bytes as f64 / c.ios as f64),
        avg_ms: any.then(|| c.latency.mean_ns() / 1e6),
        window_max_ms,
        max_ms: any.then(|| c.latency.quantile_ns(1.0) as f64 / 1e6),
        lat_ns: c.latency.summary(),
    }
}

fn window_max(checks: &[ThresholdCheck], name: &str, db: Option<u32>) -> Option<f64> {
    checks
        .iter()
        .filter(|c| c.name == name && (db.is_none() || c.database == db))
        .filter_map(|c| c.value)
        .reduce(f64::max)
}

fn transactional(r: &mut MailboxResults, out: &Outcome<Parts<MailboxRecorder>, MailboxFacts>) {
    let secs = out.measured_s.max(1e-9);
    let t = &out.totals.total;
    let f = &out.detail;
    // A database that failed (engine error, no shutdown) fails the test whatever was judged.
    r.pass = f.verdict_pass && out.failures.is_empty();
    r.db_reads_per_sec = t.db_reads.ios as f64 / secs;
    r.db_writes_per_sec = t.db_writes.ios as f64 / secs;
    r.log_writes_per_sec = t.log_writes.ios as f64 / secs;
    r.transactional_iops = r.db_reads_per_sec + r.db_writes_per_sec;
    r.total_iops = r.transactional_iops + r.log_writes_per_sec;
    let reads = stream(&t.db_reads, secs, window_max(&f.checks, "db_read_max_ms", None));
    let writes = stream(&t.db_writes, secs, None);
    let logs = stream(&t.log_writes, secs, window_max(&f.checks, "log_write_max_ms", None));
    r.db_read_avg_ms = reads.avg_ms;
    r.db_read_max_ms = reads.window_max_ms;
    r.db_write_avg_ms = writes.avg_ms;
    r.db_write_max_ms = writes.max_ms;
    r.log_write_avg_ms = logs.avg_ms;
    r.log_write_max_ms = logs.window_max_ms;
    r.log_bytes_per_write = logs.bytes_per_io;
    r.bdm_reads_per_sec = t.bdm_reads.ios as f64 / secs;
    r.page_fault_stalls_per_sec = t.page_fault_stalls as f64 / secs;
    r.operations_per_sec = t.operations() as f64 / secs;
    r.checks = f.checks.clone();
    r.errors = crate::run::record::summary::error_counts(&t.errors);
    r.corruptions = f.corruptions.clone();
    r.databases = out
        .totals
        .parts
        .iter()
        .zip(&f.databases)
        .map(|(d, size)| db_result(d, size, secs, &f.checks))
        .collect();
    r.initial_db_size_bytes = r.databases.iter().map(|d| d.initial_size_bytes).sum();
    r.final_db_size_bytes = r.databases.iter().map(|d| d.final_size_bytes).sum();
    r.error_rate_pct = storbench_report::error_rate_pct(r.errors.total, r.completed_ios());
    r.schedule_lag_ms = crate::run::record::summary::schedule_lag_ms(&t.lag);
}

fn db_result(
    d: &MailboxRecorder,
    size: &DatabaseSize,
    secs: f64,
    checks: &[ThresholdCheck],
) -> MailboxDbResult {
    let id = size.id;
    MailboxDbResult {
        database: id,
        db_reads: stream(&d.db_reads, secs, window_max(checks, "db_read_max_ms", Some(id))),
        db_writes: stream(&d.db_writes, secs, None),
        log_writes: stream(&d.log_writes, secs, window_max(checks, "log_write_max_ms", Some(id))),
        bdm_reads: stream(&d.bdm_reads, secs, None),
        initial_size_bytes: size.initial_bytes,
        final_size_bytes: size.final_bytes,
    }
}

/// Adds a verification: every page and block checked; a corruption fails the test.
pub fn verified(r: &mut MailboxResults, v: &Verified) {
    r.checksum_ok = Some(v.ok);
    r.pages_verified = v.pages_checked;
    r.log_blocks_verified = v.log_blocks_checked;
    r.corruptions.extend(v.first.iter().cloned());
    r.pass &= v.ok;
}

/// storbench's CPU over the measured phase, per I/O of every stream.
pub fn cpu(out: &Outcome<Parts<MailboxRecorder>, MailboxFacts>) -> CpuUsage {
    let t = &out.totals.total;
    let ios = t.db_reads.ios + t.db_writes.ios + t.log_writes.ios + t.bdm_reads.ios + t.log_creates.ios;
    crate::run::record::summary::cpu_usage(out, ios)
}

/// A rebuilt outcome's totals with the errors and corruption counts of every interval, as
/// the run counts them (whenever they happened, warm-up included).
pub(super) fn faults_whenever(out: &mut Outcome<Parts<MailboxRecorder>, MailboxFacts>) {
    for (t, all) in out.totals.parts.iter_mut().zip(&out.all.parts) {
        t.take_faults_of(all);
    }
    out.totals.total.take_faults_of(&out.all.total);
}

/// The record's stream of a backup's intervals.
pub const BACKUP_STREAM: &str = "backup";

/// Whether the summary is a mailbox backup test's (whose intervals are `BACKUP_STREAM`'s).
pub fn is_backup(s: &Summary) -> bool {
    matches!(&s.results, Results::Mailbox(r) if r.test == "backup")
}

/// What a backup knows besides its intervals, as the record keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BackupFacts {
    /// Each database's reading time, seconds, in the order of the outcome's parts.
    pub seconds: Vec<f64>,
    /// The first corruptions found (the count is in the intervals).
    pub corruptions: Vec<Mismatch>,
}

impl BackupFacts {
    pub fn of(d: &BackupDetail) -> BackupFacts {
        BackupFacts { seconds: d.seconds.clone(), corruptions: d.first.iter().map(mismatch).collect() }
    }
}

impl Recordable for BackupTally {
    fn tally(&self) -> Tally<'_> {
        let mut t = Tally::default();
        t.count("reads", self.reads);
        t.count("bytes", self.bytes);
        t.count("pages", self.pages);
        t.count("corruptions", self.corruptions);
        t.count("failed_reads", self.failed_reads);
        t
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        Ok(BackupTally {
            reads: t.get("reads"),
            bytes: t.get("bytes"),
            pages: t.get("pages"),
            corruptions: t.get("corruptions"),
            failed_reads: t.get("failed_reads"),
        })
    }
}

/// The summary of a backup test: `started` (whose results hold what was run) with MB/s per
/// database (its bytes over its own reading time) and in all (every byte over the measured
/// phase), the pages checked and the corruption found; a backup cut short does not pass.
pub fn backup_summary(
    started: Summary,
    out: &Outcome<Parts<BackupTally>, BackupFacts>,
    ended_at: &str,
) -> Summary {
    let mut s = crate::run::record::summary::ended(started, ended_at);
    let mut r = what_was_run(&s);
    let t = &out.totals.total;
    let mb_per_sec = |bytes: u64, secs: f64| bytes as f64 / 1e6 / secs.max(1e-9);
    r.backup_mb_per_sec = out
        .totals
        .parts
        .iter()
        .zip(&out.detail.seconds)
        .map(|(p, &secs)| mb_per_sec(p.bytes, secs))
        .collect();
    r.backup_total_mb_per_sec = Some(mb_per_sec(t.bytes, out.measured_s));
    r.pages_verified = t.pages;
    r.pass = t.corruptions == 0 && out.complete;
    r.checksum_ok = Some(r.pass);
    r.corruptions.extend(out.detail.corruptions.iter().cloned());
    s.results = Results::Mailbox(r);
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: out.measured_s };
    s.cpu = crate::run::record::summary::cpu_usage(out, t.reads);
    s.complete = out.complete;
    s.warnings.extend(out.warnings.iter().cloned());
    s.warnings.extend(out.failures.iter().cloned());
    s
}

/// The record's stream of a soft recovery's replay (its log generation's is `mailbox`).
pub const RECOVERY_STREAM: &str = "recovery";

/// Whether the summary is a soft recovery test's.
pub fn is_soft_recovery(s: &Summary) -> bool {
    matches!(&s.results, Results::Mailbox(r) if r.test == "soft_recovery")
}

/// What a soft recovery knows besides its intervals, as the record keeps it (the end's facts
/// are the replay's).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RecoveryFacts {
    /// The log generation's run (stream `mailbox`): its facts and its own findings.
    pub generation: Facts,
    pub generated: MailboxFacts,
    /// The replay's own findings; None when the generation did not complete (nothing was
    /// replayed).
    pub replay: Option<ReplayFacts>,
}

/// What a replay knows besides its intervals.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ReplayFacts {
    /// Each database's replay time, seconds, in the order of the outcome's parts.
    pub seconds: Vec<f64>,
    /// The first corruptions found (the count is in the intervals).
    pub corruptions: Vec<Mismatch>,
    /// The verification after the replay, when one ran.
    pub verified: Option<Verified>,
}

impl ReplayFacts {
    pub fn of(d: &RecoveryDetail) -> ReplayFacts {
        ReplayFacts {
            seconds: d.seconds.clone(),
            corruptions: d.first.iter().map(mismatch).collect(),
            verified: None,
        }
    }
}

impl RecoveryFacts {
    /// The facts of a generation run `generated` and of the replay after it, where there was one.
    pub fn of(
        generated: &Outcome<Parts<MailboxRecorder>, MailboxFacts>,
        replay: Option<&ReplayFacts>,
    ) -> RecoveryFacts {
        RecoveryFacts {
            generation: Facts::of(generated),
            generated: generated.detail.clone(),
            replay: replay.cloned(),
        }
    }
}

impl Recordable for RecoveryTally {
    fn tally(&self) -> Tally<'_> {
        let mut t = Tally::default();
        t.count("logs", self.logs);
        t.count("records", self.records);
        t.count("pages_read", self.pages_read);
        t.count("pages_written", self.pages_written);
        t.count("corruptions", self.corruptions);
        t
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        Ok(RecoveryTally {
            logs: t.get("logs"),
            records: t.get("records"),
            pages_read: t.get("pages_read"),
            pages_written: t.get("pages_written"),
            corruptions: t.get("corruptions"),
        })
    }
}

/// The summary of a soft recovery test: `started` (whose results hold what was run) with its
/// log generation's transactional figures and CPU (not judged: its thresholds' checks are
/// left out once logs were replayed), then the replay's: log files replayed, seconds per log
/// file (the longest database's replay time over the log files each replayed), the corruption
/// found and the verification; its phases are the replay's. Without a replay (the generation
/// was cut short) the test does not pass and is not complete.
pub fn soft_recovery_summary(
    started: Summary,
    generated: &Outcome<Parts<MailboxRecorder>, MailboxFacts>,
    replayed: Option<&Outcome<Parts<RecoveryTally>, ReplayFacts>>,
    ended_at: &str,
) -> Summary {
    let mut s = crate::run::record::summary::ended(started, ended_at);
    let mut r = results(what_was_run(&s), generated);
    s.cpu = cpu(generated);
    s.warnings.extend(generated.detail.warnings.iter().cloned());
    s.warnings.extend(generated.warnings.iter().cloned());
    s.warnings.extend(generated.failures.iter().cloned());
    let Some(out) = replayed else {
        r.pass = false;
        s.results = Results::Mailbox(r);
        return s;
    };
    let t = &out.totals.total;
    let seconds = replay_seconds(&out.detail.seconds);
    r.checks.clear();
    r.logs_replayed = Some(t.logs);
    r.seconds_per_log = seconds_per_log(t.logs, &out.detail.seconds);
    r.corruptions.extend(out.detail.corruptions.iter().cloned());
    r.pass = t.corruptions == 0 && out.complete;
    if let Some(v) = &out.detail.verified {
        verified(&mut r, v);
    }
    s.warnings.extend(out.warnings.iter().cloned());
    s.warnings.extend(out.failures.iter().cloned());
    if t.logs == 0 {
        s.warnings.push("no log file was replayed".into());
        r.pass = false;
    }
    s.results = Results::Mailbox(r);
    s.phases = Phases { ramp_s: 0.0, measured_s: seconds };
    s.complete = out.complete;
    s
}

/// A replay's time: its longest database's (they replay in parallel).
pub fn replay_seconds(per_database: &[f64]) -> f64 {
    per_database.iter().copied().fold(0.0, f64::max)
}

/// Seconds to replay one log file, per database as Jetstress reports it: the replay's time
/// over the log files each database replayed (`logs` in all; `per_database` replay times).
pub fn seconds_per_log(logs: u64, per_database: &[f64]) -> Option<f64> {
    let per_db = logs as f64 / per_database.len().max(1) as f64;
    (per_db > 0.0).then(|| replay_seconds(per_database) / per_db)
}

/// A soft recovery's summary: the replay's outcome (over `window` where one is given) with the
/// facts of the log generation before it, whose outcome is its whole run.
fn soft_recovery(
    record: &StoredRecord,
    started: Summary,
    window: Option<(f64, f64)>,
    at: &str,
) -> Result<Summary, RecordError> {
    let out: Outcome<_, RecoveryFacts> =
        crate::run::record::summary::stream_outcome(record, RECOVERY_STREAM, window)?;
    let facts = &out.detail;
    let mut generated = record.stream_outcome_of("mailbox", &facts.generation, facts.generated.clone())?;
    faults_whenever(&mut generated);
    let replay = facts.replay.clone();
    let replayed = replay.map(|r| out.with(r));
    Ok(soft_recovery_summary(started, &generated, replayed.as_ref(), at))
}
