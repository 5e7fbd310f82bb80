//! Per searchable workload: a step whose run failed (its own check, its I/Os, or cut short) is
//! never a found load, however well its latencies held; the same step passed holds.

use super::{Searchable, judged};
use crate::measure::Measured;
use std::time::Duration;
use storbench_bench::run::search::LatencyLimit;
use storbench_report::testing::summary;
use storbench_report::workloads::wal::results::WalResults;
use storbench_report::{
    DirectionResult, ErrorCounts, IoResults, LatencyNs, MailboxDbResult, MailboxResults, OltpResults,
    ReplayResults, Results, StreamResult, Summary, ThresholdCheck,
};

/// 1 ms at every percentile.
fn ms() -> Option<LatencyNs> {
    let ns = 1_000_000;
    Some(LatencyNs { min: ns, mean: ns as f64, p50: ns, p90: ns, p99: ns, p999: ns, p9999: ns, max: ns })
}

/// Whether a step of `s` holds `p99 <= 10ms` on the workload's own types, and why it failed.
fn step<W: Searchable>(s: Summary) -> (bool, Option<String>) {
    let limits: Vec<LatencyLimit> = vec!["p99<=10ms".parse().unwrap()];
    let m = Measured { summary: s, bundle: "b".into(), active_watts: None };
    let st = judged::<W>(&m, &limits, 4.0, true, "b", Duration::ZERO);
    (st.held, st.failed)
}

/// The passed step holds (its latency is 1 ms); the failed one does not, and says why.
fn holds_only_passed<W: Searchable>(kind: &str, passed: Summary, failed: Summary) {
    assert_eq!(step::<W>(passed), (true, None), "{kind}: a passed step at 1 ms holds p99 <= 10 ms");
    let (held, why) = step::<W>(failed);
    assert!(!held, "{kind}: a failed step is never a found load");
    assert!(why.is_some_and(|w| !w.is_empty()), "{kind}: a failed step says why");
}

#[test]
fn io_a_step_whose_ios_failed_is_no_found_load() {
    let io = |errors: u64| {
        let read = DirectionResult { ios: 1000, iops: 100.0, lat_ns: ms(), ..DirectionResult::default() };
        let write = DirectionResult { ios: 1000, iops: 100.0, lat_ns: ms(), ..DirectionResult::default() };
        let errors = ErrorCounts { total: errors, ..ErrorCounts::default() };
        Results::Io(IoResults { read, write, errors, ..IoResults::default() })
    };
    holds_only_passed::<crate::subcommand::io::args::IoJob>(
        "io",
        summary("io", io(0), true),
        summary("io", io(10), true),
    );
}

#[test]
fn oltp_a_step_cut_short_is_no_found_load() {
    let oltp = || {
        Results::Oltp(OltpResults { opm: 600.0, orders: 100, order_rt_ns: ms(), ..OltpResults::default() })
    };
    holds_only_passed::<crate::args::oltp::OltpJob>(
        "oltp",
        summary("oltp", oltp(), true),
        summary("oltp", oltp(), false),
    );
}

#[test]
fn mailbox_a_step_failing_jetstresss_thresholds_is_no_found_load() {
    let mailbox = |pass: bool| {
        let stream = StreamResult {
            ios: 100,
            per_sec: 10.0,
            avg_ms: Some(1.0),
            lat_ns: ms(),
            ..StreamResult::default()
        };
        let db = MailboxDbResult {
            database: 1,
            db_reads: stream.clone(),
            db_writes: stream.clone(),
            log_writes: stream,
            ..MailboxDbResult::default()
        };
        let check = ThresholdCheck {
            name: "db_read_avg_ms".into(),
            database: Some(1),
            value: Some(31.0),
            limit: 20.0,
            pass,
        };
        Results::Mailbox(MailboxResults {
            pass,
            test: "performance".into(),
            transactional_iops: 20.0,
            checks: vec![check],
            databases: vec![db],
            ..MailboxResults::default()
        })
    };
    holds_only_passed::<crate::args::mailbox::MailboxJob>(
        "mailbox",
        summary("mailbox", mailbox(true), true),
        summary("mailbox", mailbox(false), true),
    );
}

#[test]
fn replay_a_step_over_its_error_share_is_no_found_load() {
    let replay = |failed: u64| {
        Results::Replay(ReplayResults {
            calls: 100,
            calls_per_sec: 50.0,
            errors: ErrorCounts { total: failed, ..ErrorCounts::default() },
            max_errors_pct: Some(1.0),
            lat_ns: ms(),
            ..ReplayResults::default()
        })
    };
    holds_only_passed::<crate::subcommand::replay::args::ReplayJob>(
        "replay",
        summary("replay", replay(0), true),
        summary("replay", replay(40), true),
    );
}

#[test]
fn wal_a_step_whose_commits_failed_is_no_found_load() {
    let wal = |errors: u64| {
        Results::Wal(WalResults {
            commits: 100,
            commits_per_sec: 50.0,
            commit_lat_ns: ms(),
            errors,
            ..WalResults::default()
        })
    };
    holds_only_passed::<crate::subcommand::wal::args::WalJob>(
        "wal",
        summary("wal", wal(0), true),
        summary("wal", wal(3), true),
    );
}
