//! Puts a finished mailbox test into the report model.

use super::validate::MailboxPlan;
use storbench_bench::metrics::DirectionCounters;
use storbench_bench::workload::mailbox::{MailboxOutcome, MailboxRecorder, Manifest, Verdict, VerifyReport};
use storbench_report::{
    CpuUsage, DeviceInfo, ErrorCounts, MailboxDbResult, MailboxResults, Mismatch, Phases, Results,
    StreamResult, Summary, TargetInfo,
};

pub fn started(plan: &MailboxPlan, name: &str, device: Option<DeviceInfo>, started_at: &str) -> Summary {
    Summary {
        name: name.into(),
        seed: plan.seed,
        parameters: parameters(plan),
        target: TargetInfo {
            path: plan.db_dir.display().to_string(),
            kind: "files".into(),
            size_bytes: plan.db_bytes() * u64::from(plan.databases),
            direct: true,
            device,
        },
        engine: plan.engine.name().into(),
        ..crate::measure::started_summary("mailbox", started_at, Results::Mailbox(base_results(plan)))
    }
}

/// The results every test type shares: what was run.
pub fn base_results(plan: &MailboxPlan) -> MailboxResults {
    let m = plan.profile.mix;
    MailboxResults {
        test: serde_json::to_value(plan.test)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        preset: plan.preset.name().into(),
        target_iops: plan.target_iops,
        mailboxes: plan.mailboxes,
        threads: plan.threads,
        mix: [("insert", m.insert), ("delete", m.delete), ("replace", m.replace), ("read", m.read)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        lazy_commit_pct: plan.profile.lazy_commit_pct,
        ..Default::default()
    }
}

fn parameters(plan: &MailboxPlan) -> serde_json::Value {
    serde_json::json!({
        "target": plan.db_dir.display().to_string(),
        "log_target": plan.log_dir.display().to_string(),
        "preset": plan.preset.name(),
        "test": plan.test,
        "mailboxes": plan.mailboxes,
        "mailbox_size": plan.mailbox_bytes,
        "databases": plan.databases,
        "threads": plan.threads,
        "target_iops": plan.target_iops,
        "duration_s": plan.duration.as_secs_f64(),
        "max_warmup_s": plan.max_warmup.as_secs_f64(),
        "sample_window_s": plan.sample_window.as_secs_f64(),
        "profile": plan.profile,
        "thresholds": plan.thresholds,
        "engine": plan.engine.name(),
        "seed": plan.seed,
    })
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

fn window_max(v: &Verdict, name: &str, db: Option<u32>) -> Option<f64> {
    v.checks
        .iter()
        .filter(|c| c.name == name && (db.is_none() || c.database == db))
        .filter_map(|c| c.value)
        .reduce(f64::max)
}

/// Fills in a transactional test's figures.
pub fn transactional(r: &mut MailboxResults, out: &MailboxOutcome, manifest: &Manifest, page_size: u32) {
    let secs = out.measured_s.max(1e-9);
    let t = &out.totals.total;
    let v = &out.detail.verdict;
    // A database that failed (engine error, no shutdown) fails the test whatever was judged.
    r.pass = v.pass && out.failures.is_empty();
    r.db_reads_per_sec = t.db_reads.ios as f64 / secs;
    r.db_writes_per_sec = t.db_writes.ios as f64 / secs;
    r.log_writes_per_sec = t.log_writes.ios as f64 / secs;
    r.transactional_iops = r.db_reads_per_sec + r.db_writes_per_sec;
    r.total_iops = r.transactional_iops + r.log_writes_per_sec;
    let all = |c: &DirectionCounters, w| stream(c, secs, w);
    let reads = all(&t.db_reads, window_max(v, "db_read_max_ms", None));
    let writes = all(&t.db_writes, None);
    let logs = all(&t.log_writes, window_max(v, "log_write_max_ms", None));
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
    r.checks = v.checks.clone();
    r.errors = errors(t);
    r.corruptions = t.corruptions.iter().map(|c| mismatch(&c.file, c.offset, &c.what)).collect();
    let ps = u64::from(page_size);
    r.databases = out
        .totals
        .parts
        .iter()
        .zip(&manifest.databases)
        .map(|(d, m)| db_result(d, m.id, secs, v, m.initial_pages * ps, m.pages * ps))
        .collect();
    r.initial_db_size_bytes = r.databases.iter().map(|d| d.initial_size_bytes).sum();
    r.final_db_size_bytes = r.databases.iter().map(|d| d.final_size_bytes).sum();
    r.error_rate_pct = storbench_report::error_rate_pct(r.errors.total, r.completed_ios());
}

fn db_result(
    d: &MailboxRecorder,
    id: u32,
    secs: f64,
    v: &Verdict,
    initial: u64,
    now: u64,
) -> MailboxDbResult {
    MailboxDbResult {
        database: id,
        db_reads: stream(&d.db_reads, secs, window_max(v, "db_read_max_ms", Some(id))),
        db_writes: stream(&d.db_writes, secs, None),
        log_writes: stream(&d.log_writes, secs, window_max(v, "log_write_max_ms", Some(id))),
        bdm_reads: stream(&d.bdm_reads, secs, None),
        initial_size_bytes: initial,
        final_size_bytes: now,
    }
}

fn errors(t: &MailboxRecorder) -> ErrorCounts {
    ErrorCounts {
        total: t.errors.total(),
        by_kind: t.errors.by_kind.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

fn mismatch(file: &str, offset: u64, what: &str) -> Mismatch {
    Mismatch { offset, field: "checksum".into(), expected: file.to_string(), found: what.to_string() }
}

/// Adds corruptions found by a backup or a replay.
pub fn corrupt(r: &mut MailboxResults, found: &[storbench_bench::workload::mailbox::Corruption]) {
    r.corruptions.extend(found.iter().map(|c| mismatch(&c.file, c.offset, &c.what)));
}

/// Adds the verification: every page and block checked; a corruption fails the test.
pub fn verified(r: &mut MailboxResults, v: &VerifyReport) {
    r.checksum_ok = Some(v.ok());
    r.pages_verified = v.pages_checked;
    r.log_blocks_verified = v.log_blocks_checked;
    r.corruptions.extend(v.first.iter().map(|c| mismatch(&c.file, c.offset, &c.what)));
    r.pass &= v.ok();
}

pub fn finish(
    mut s: Summary,
    r: MailboxResults,
    phases: Phases,
    cpu: CpuUsage,
    complete: bool,
    ended_at: &str,
) -> Summary {
    s.results = Results::Mailbox(r);
    s.phases = phases;
    s.cpu = cpu;
    s.complete = complete;
    s.ended_at = Some(ended_at.into());
    s
}

/// storbench's CPU over the measured phase, per I/O of every stream.
pub fn cpu(out: &MailboxOutcome) -> CpuUsage {
    let t = &out.totals.total;
    let ios = t.db_reads.ios + t.db_writes.ios + t.log_writes.ios + t.bdm_reads.ios + t.log_creates.ios;
    CpuUsage {
        user_s: out.cpu.user.as_secs_f64(),
        sys_s: out.cpu.sys.as_secs_f64(),
        ns_per_io: (ios > 0).then(|| out.cpu.total().as_secs_f64() * 1e9 / ios as f64),
    }
}
