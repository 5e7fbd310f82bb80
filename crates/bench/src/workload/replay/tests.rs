//! The replay's run on fake databases (exact counts, session order, the in-flight bound,
//! time-sync's pace and lateness, unreadable lines, a lost connection, a stop request, a
//! database gone away), on SQLite, its summary rebuilt from its record, and its speed.

use super::testing::{Fake, entry, instant, source, web};
use super::*;
use crate::run::IntervalData;
use crate::run::record::{self, Recordable};
use crate::testing::NoHost;
use std::sync::Arc;
use std::time::{Duration, Instant};
use storbench_report::evaluation::{RunStatus, status, status_reason};

const MS: i128 = 1_000_000;

fn fire_hose(in_flight: u32) -> ReplaySpec {
    ReplaySpec { mode: Mode::FireHose { in_flight }, ..ReplaySpec::default() }
}

fn time_sync(speed: f64, in_flight: u32) -> ReplaySpec {
    ReplaySpec { mode: Mode::TimeSync { speed, in_flight }, ..ReplaySpec::default() }
}

/// Replays `sources`: the outcome, and its intervals merged.
/// The run's summary, as its bundle's would be.
fn summary_of(out: &ReplayOutcome) -> storbench_report::Summary {
    let at = "2026-12-07T00:00:00Z";
    let started = crate::run::measure::started_summary(
        "replay",
        at,
        storbench_report::Results::Replay(Default::default()),
    );
    super::summary::summary(started, out, at)
}

/// The run's one status, as every reader of its summary judges it.
fn status_of(out: &ReplayOutcome) -> RunStatus {
    status(&summary_of(out))
}

fn replay(spec: &ReplaySpec, sources: Vec<Source>, connect: Connect) -> (ReplayOutcome, ReplayData) {
    replay_until(spec, sources, connect, &StopFlag::new(), |_| {})
}

/// As `replay`, `each` seeing every interval, `stop` the run's stop request.
fn replay_until(
    spec: &ReplaySpec,
    sources: Vec<Source>,
    connect: Connect,
    stop: &StopFlag,
    mut each: impl FnMut(&ReplayInterval<'_>),
) -> (ReplayOutcome, ReplayData) {
    let mut merged = ReplayData::default();
    let out = run(spec, sources, connect, &mut NoHost, stop, &mut |i| {
        merged.merge(i.interval.data);
        each(i);
    })
    .unwrap();
    (out, merged)
}

#[test]
fn every_request_is_counted_once_per_type_and_per_source() {
    let sources = vec![web(0, 7, 30, MS), web(1, 3, 20, MS)];
    let (out, intervals) = replay(&fire_hose(4), sources, instant());
    assert!(out.complete && out.failures.is_empty(), "{out:?}");
    let t = &out.totals;
    assert_eq!((t.calls(), t.errors()), (270, 0));
    assert_eq!(
        t.by_source,
        [SourceFigures { calls: 210, errors: 0 }, SourceFigures { calls: 60, errors: 0 }]
    );
    let types: Vec<(&str, u64)> = t.by_type.iter().map(|(k, f)| (k.as_str(), f.calls)).collect();
    assert_eq!(types, [("INSERT", 70 + 20), ("SELECT", 70 + 20), ("UPDATE", 70 + 20)]);
    assert_eq!(t.latency.count(), 270);
    assert!(t.lateness.is_empty(), "no lateness in fire-hose");
    assert_eq!(
        (intervals.calls(), intervals.by_source.clone()),
        (270, t.by_source.clone()),
        "the intervals add up"
    );
    let d = &out.detail;
    assert_eq!(
        (d.recorded_calls, d.unread_lines, d.sources.clone()),
        (270, 0, vec!["web1".into(), "web2".into()])
    );
    assert_eq!((d.mode.as_str(), d.in_flight, d.speed, d.fell_behind), ("fire-hose", 4, None, false));
}

#[test]
fn each_session_sees_its_requests_in_log_order_on_a_connection_of_its_own() {
    let fake = Fake::new(Duration::from_micros(200));
    let (out, _) = replay(&fire_hose(5), vec![web(0, 12, 15, MS), web(1, 4, 10, MS)], fake.connect());
    assert_eq!(out.totals.calls(), 12 * 15 + 4 * 10);
    let sessions = fake.by_session();
    assert_eq!(sessions.len(), 16);
    for (session, seen) in &sessions {
        let numbers: Vec<u64> = seen.iter().map(|s| s.0).collect();
        assert_eq!(numbers, (0..numbers.len() as u64).collect::<Vec<_>>(), "{session}");
        assert!(seen.iter().all(|s| s.1 == seen[0].1), "{session} stayed on its connection: {seen:?}");
    }
    assert_eq!(fake.connects.load(std::sync::atomic::Ordering::Relaxed), 16, "one connection a session");
}

#[test]
fn a_fire_hose_never_runs_more_than_in_flight_requests_of_a_source_at_once() {
    let fake = Fake::new(Duration::from_millis(2));
    let (out, _) = replay(&fire_hose(3), vec![web(0, 10, 10, MS), web(1, 10, 10, MS)], fake.connect());
    assert_eq!(out.totals.calls(), 200);
    for s in ["s0", "s1"] {
        assert_eq!(fake.most_at_once(s), 3, "{s}: its three workers each ran one at a time, overlapping");
    }
}

/// A 2 s log: requests of four sessions every 100 ms.
fn two_seconds() -> Vec<Source> {
    vec![web(0, 4, 5, 100 * MS)]
}

#[test]
fn time_sync_keeps_the_logs_pace_divided_by_its_speed() {
    for (speed, at_least, at_most) in [(1.0, 1.9, 3.5), (4.0, 0.475, 1.5)] {
        let started = Instant::now();
        let (out, _) = replay(&time_sync(speed, 4), two_seconds(), instant());
        let took = started.elapsed().as_secs_f64();
        assert_eq!(out.totals.calls(), 20);
        assert!(
            out.measured_s >= at_least && took >= at_least,
            "speed {speed}: {} s, {took} s",
            out.measured_s
        );
        assert!(
            out.measured_s < at_most,
            "speed {speed}: {} s (a busy machine may be slow, not this slow)",
            out.measured_s
        );
        assert_eq!(out.totals.lateness.count(), 20, "every request's lateness is recorded");
        assert_eq!((out.detail.mode.as_str(), out.detail.speed), ("time-sync", Some(speed)));
    }
}

#[test]
fn a_late_start_shows_as_lateness_and_in_latency_and_is_a_warning() {
    // Five sessions' requests all due at once; one worker, 100 ms each: the k-th starts k
    // × 100 ms late.
    let fake = Fake::new(Duration::from_millis(100));
    let reads = (0..5).map(|i| Ok(entry(&format!("x{i}"), 0, &format!("SELECT s0 x{i} 0"))));
    let (out, _) = replay(&time_sync(1.0, 1), vec![source("web1", reads)], fake.connect());
    let t = &out.totals;
    assert_eq!(t.lateness.count(), 5);
    let late_ms = t.lateness.quantile_ns(1.0) as f64 / 1e6;
    let latency_ms = t.latency.quantile_ns(1.0) as f64 / 1e6;
    assert!(late_ms >= 399.0, "the last started after four others: {late_ms} ms");
    assert!(latency_ms >= late_ms + 99.0, "latency counts from the intended start: {latency_ms} ms");
    assert!(out.detail.fell_behind);
    assert!(
        out.warnings.iter().any(|w| w.starts_with("time-sync fell behind the log")),
        "{:?}",
        out.warnings
    );
}

/// Forty requests of one session, with a line that is no request at each of `bad` (the
/// log's line numbers, each the request's place plus one).
fn forty_with_bad(bad: &[u64]) -> Source {
    let mut reads: Vec<log::Read> =
        (0..40).map(|i| Ok(entry("a", i * MS, &format!("SELECT s0 a {i}")))).collect();
    for &line in bad {
        reads.insert(line as usize - 1, Err(log::LineError::new(line, "no request here")));
    }
    source("web1", reads.into_iter())
}

#[test]
fn unreadable_lines_are_counted_and_a_strict_replay_stops_naming_the_line() {
    let (out, _) = replay(&fire_hose(2), vec![forty_with_bad(&[1, 21])], instant());
    assert!(out.complete, "{out:?}");
    assert_eq!((out.totals.calls(), out.detail.unread_lines), (40, 2));
    assert_eq!(out.detail.first_unread.iter().map(|u| u.line).collect::<Vec<_>>(), [1, 21]);
    let strict = ReplaySpec { strict: true, ..fire_hose(2) };
    let first = vec![forty_with_bad(&[1, 21])];
    let err = run(&strict, first, instant(), &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap_err();
    assert_eq!(err, ReplayError::Unreadable { log: "web1".into(), line: 1, why: "no request here".into() });
    // Past the first request, the run ends there as failed.
    let (out, _) = replay(&strict, vec![forty_with_bad(&[21])], instant());
    assert!(!out.complete && out.totals.calls() <= 20, "{out:?}");
    let failures = &out.failures;
    assert!(failures.iter().any(|f| f.starts_with("web1 line 21: no request here")), "{failures:?}");
}

#[test]
fn a_lost_connection_is_an_error_and_the_sessions_next_request_reconnects() {
    let fake = Fake::new(Duration::ZERO);
    fake.lose_once.lock().unwrap().insert("SELECT s0 x1 1".into());
    // One of 8 requests failing is within a stated 20 %.
    let tolerant = ReplaySpec { max_errors: Some(20.0), ..fire_hose(2) };
    let (out, _) = replay(&tolerant, vec![web(0, 2, 4, MS)], fake.connect());
    let t = &out.totals;
    assert_eq!((t.calls(), t.errors(), t.refused), (8, 1, 0));
    assert_eq!(t.errors.by_kind.get("connection"), Some(&1));
    assert_eq!((t.by_type["SELECT"].errors, t.by_source[0].errors), (1, 1));
    assert!(out.complete, "a failed request within the stated share is data, not a failure: {out:?}");
    assert_eq!(status_of(&out), RunStatus::Done);
    let x1 = &fake.by_session()["s0 x1"];
    assert_eq!(x1.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_ne!(x1[1].1, x1[2].1, "the request after the lost one came on a new connection");
    assert_eq!(x1[2].1, x1[3].1);
    assert_eq!(fake.connects.load(std::sync::atomic::Ordering::Relaxed), 3);
    // At the default 1 %, the same run failed, saying why.
    let fake = Fake::new(Duration::ZERO);
    fake.lose_once.lock().unwrap().insert("SELECT s0 x1 1".into());
    let (out, _) = replay(&fire_hose(2), vec![web(0, 2, 4, MS)], fake.connect());
    // The replay ran to its end: its own check failed, by name and value, and it says why.
    assert!(out.complete && out.failures.is_empty(), "{out:?}");
    assert_eq!(status_of(&out), RunStatus::CheckFailed);
    let reason = status_reason(&summary_of(&out)).unwrap();
    assert_eq!(reason, "failed requests: 12.50 % (1 of 8) (at most 1 %)");
    assert!(
        out.warnings.iter().any(|w| w.starts_with("1 of 8 requests failed (12.50 %), more than the 1 %")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn a_stop_request_ends_the_run_with_what_was_measured() {
    let fake = Fake::new(Duration::from_millis(5));
    let stop = StopFlag::new();
    let started = Instant::now();
    let (out, intervals) =
        replay_until(&fire_hose(2), vec![web(0, 4, 10_000, MS)], fake.connect(), &stop, |_| stop.stop());
    assert!(started.elapsed() < Duration::from_secs(20), "it ended soon after the stop");
    assert!(!out.complete && out.failures.is_empty(), "{out:?}");
    let calls = out.totals.calls();
    assert!(calls > 0 && calls < 40_000, "{calls}");
    assert_eq!(intervals.calls(), calls);
    assert!(out.detail.recorded_calls >= calls && out.detail.recorded_calls < 40_000);
}

#[test]
fn a_database_gone_away_ends_the_run_as_failed_after_the_no_progress_limit() {
    let refused: Connect = Connect::sql(|| {
        Err(crate::db::DbError::new(crate::db::DbErrorKind::Connection, "connection refused"))
    });
    let (out, _) = replay(&time_sync(1.0, 2), vec![web(0, 2, 100, 100 * MS)], refused);
    assert!(!out.complete);
    let why = out.failures.first().expect("a failure");
    assert!(
        why.contains("every request failed (no connection") && why.contains("connection refused"),
        "{why}"
    );
    // A request its session got no connection for was never sent: no call, and said.
    assert_eq!(out.totals.calls(), 0, "{out:?}");
    assert!(out.totals.refused > 0 && out.totals.refused < 200, "ended before the log's 20 s");
    let said =
        format!("{} request(s) were not sent: the database did not give their session", out.totals.refused);
    assert!(out.warnings.iter().any(|f| f.starts_with(&said)), "{:?}", out.warnings);
    assert_ne!(status_of(&out), RunStatus::Done);
}

#[test]
fn two_sessions_replayed_on_sqlite_leave_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay.db");
    std::fs::File::create(&path).unwrap();
    let db = Arc::new(crate::db::sqlite::Sqlite::new(&path));
    let a = [
        "CREATE TABLE a (x INTEGER)",
        "INSERT INTO a VALUES (1)",
        "INSERT INTO a VALUES (2)",
        "SELECT x FROM a",
    ];
    let b = ["CREATE TABLE b (x INTEGER)", "INSERT INTO b VALUES (10)", "SELECT x FROM b"];
    let reads = |session: &'static str, sqls: &[&str]| {
        sqls.iter().enumerate().map(|(i, sql)| Ok(entry(session, i as i128 * MS, sql))).collect::<Vec<_>>()
    };
    let both: Vec<log::Read> = [reads("a", &a), reads("b", &b)].concat();
    let connect: Connect = {
        let db = db.clone();
        Connect::sql(move || crate::db::Database::open_session(db.as_ref()))
    };
    let (out, _) = replay(&fire_hose(2), vec![source("app", both.into_iter())], connect);
    assert_eq!(out.totals.errors(), 0, "{:?}", out.totals.errors);
    let types: Vec<(&str, u64)> = out.totals.by_type.iter().map(|(k, f)| (k.as_str(), f.calls)).collect();
    assert_eq!(types, [("CREATE", 2), ("INSERT", 3), ("SELECT", 2)]);
    let mut check = crate::db::Database::open_session(db.as_ref()).unwrap();
    use crate::db::sql::{Statement, Value};
    let rows =
        check.query(Statement::Text("SELECT (SELECT sum(x) FROM a), (SELECT sum(x) FROM b)"), &[]).unwrap();
    assert_eq!(rows, [vec![Value::Int(3), Value::Int(10)]]);
}

#[test]
fn the_summary_rebuilt_from_the_record_is_the_runs_own() {
    let dir = tempfile::tempdir().unwrap();
    let (mut lines, mut hlog) = (Vec::new(), crate::metrics::HlogWriter::new(Vec::new(), 0.0).unwrap());
    let bad = std::iter::once(Err(log::LineError::new(3, "torn")));
    let sources = vec![source("web1", bad.chain(web(0, 3, 6, 80 * MS).reads)), web(1, 2, 5, 150 * MS)];
    let out = run(&time_sync(1.0, 2), sources, instant(), &mut NoHost, &StopFlag::new(), &mut |c| {
        let tally = c.interval.data.tally();
        for (tag, h) in &tally.hists {
            hlog.write(tag, c.interval.start_s, c.interval.span_s(), h).unwrap();
        }
        lines.push(record::Line::Interval(record::interval_line("replay", &c.interval, &tally, None)));
    })
    .unwrap();
    assert!(out.totals.by_type.len() == 3 && out.measured_s > 1.0, "{out:?}");
    let started = record::test_summary("replay");
    let start = record::Start {
        version: record::RECORD_VERSION,
        workload: "replay".into(),
        epoch_ns: 0,
        summary: started.clone(),
        streams: Vec::new(),
    };
    lines.insert(0, record::Line::Start(Box::new(start)));
    lines.push(record::Line::End(record::End::of("then", &out, &out.detail)));
    let text: Vec<String> = lines.iter().map(|l| serde_json::to_string(l).unwrap()).collect();
    std::fs::write(dir.path().join(record::RECORD_FILE), text.join("\n") + "\n").unwrap();
    std::fs::write(dir.path().join(record::HLOG_FILE), hlog.into_inner()).unwrap();
    let stored = record::StoredRecord::read(dir.path()).unwrap();
    let ran = summary::summary(started.clone(), &out, "then");
    let rebuilt = summary::rebuilt(&stored, started, None, "then").unwrap();
    let (a, b) = (serde_json::to_value(&ran).unwrap(), serde_json::to_value(&rebuilt).unwrap());
    assert_eq!(record::summary::first_difference(&a, &b), None);
    let storbench_report::Results::Replay(r) = &ran.results else { panic!("a replay's results") };
    assert_eq!((r.calls, r.recorded_calls, r.unread_lines), (28, 28, 1));
    assert_eq!(
        r.by_source.iter().map(|s| (s.name.as_str(), s.calls)).collect::<Vec<_>>(),
        [("web1", 18), ("web2", 10)]
    );
    assert_eq!(r.by_type.values().map(|t| t.calls).sum::<u64>(), 28);
    assert!(r.lateness_ms.is_some() && r.lat_ns.is_some() && r.mode == "time-sync");
}

/// Requests per second and storbench's CPU per request of a fire-hose on a database that
/// answers at once: the replay's own cost. Run it with
/// `cargo test --release -p storbench-bench replay -- --ignored --nocapture`.
#[test]
#[ignore]
fn speed_of_a_fire_hose_on_a_database_that_answers_at_once() {
    const N: usize = 1_000_000;
    for (sessions, in_flight) in [(200, 20), (20, 4)] {
        let cpu = crate::run::process_cpu();
        let started = Instant::now();
        let (out, _) = replay(&fire_hose(in_flight), vec![web(0, sessions, N / sessions, MS)], instant());
        let wall = started.elapsed().as_secs_f64();
        let cpu_s = crate::run::process_cpu().since(&cpu).total().as_secs_f64();
        assert_eq!(out.totals.calls(), N as u64);
        println!(
            "{sessions} sessions, in flight {in_flight}: {:.0} requests/s, {:.2} µs CPU a request ({:.0} requests per CPU second)",
            N as f64 / wall,
            cpu_s * 1e6 / N as f64,
            N as f64 / cpu_s
        );
    }
}

/// Lines per CPU second of the readers that parse the most per line: storbench's request log
/// (JSON) and a web server's log through the example DS3 mapping (a regular expression per
/// route, the query string decoded). Run it with
/// `cargo test --release -p storbench-bench --lib speed_of_reading -- --ignored --nocapture`.
#[test]
#[ignore]
fn speed_of_reading_request_and_web_logs() {
    use crate::workload::replay::log::{storbench::RequestLog, web};
    const N: usize = 300_000;
    let request = |i: usize| {
        format!(
            r#"{{"time":"2026-11-26T10:51:{:02}.{:09}Z","source":"vm","session":"{}","type":"browse_by_title","params":{{"title":"REZOTO PUGUGO","batch":6}}}}"#,
            i / 1_000_000 % 60,
            i % 1_000_000 * 1000,
            i % 50
        ) + "\n"
    };
    let access = |i: usize| {
        format!(
            "10.0.0.{} - - [26/Nov/2026:10:{:02}:{:02} +0000] \"GET /ds3/dsbrowse.php?browsetype=title&browse_category=&browse_actor=&browse_title=REZOTO+PUGUGO&limit_num=6&customerid={i} HTTP/1.1\" 200 900 \"-\" \"ds3\"\n",
            i % 200,
            i / 60_000 % 60,
            i / 1000 % 60
        )
    };
    let mapping = || {
        let text = include_str!("../../../../../examples/ds3-web.toml");
        web::Mapping::new(toml::from_str(text).unwrap()).unwrap()
    };
    let logs: [(&str, String); 2] =
        [("storbench", (0..N).map(request).collect()), ("combined", (0..N).map(access).collect())];
    for (name, text) in &logs {
        let cpu = crate::run::process_cpu();
        let read: usize = match *name {
            "storbench" => RequestLog::new(text.as_bytes()).filter(Result::is_ok).count(),
            _ => web::WebLog::new(text.as_bytes(), mapping()).filter(Result::is_ok).count(),
        };
        let cpu_s = crate::run::process_cpu().since(&cpu).total().as_secs_f64();
        assert_eq!(read, N, "{name}: every line read");
        println!(
            "{name}: {:.0} lines per CPU second, {:.2} µs a line",
            N as f64 / cpu_s,
            cpu_s * 1e6 / N as f64
        );
    }
}
