//! `storbench replay`: logs replayed against real databases (SQLite, PostgreSQL), each session
//! in its own order, the figures per type and per source, the bundle's rebuild, time-sync's
//! pacing, and the bad day (no database named, an unreadable log, a server that is not there).

use crate::private_pg::PrivatePostgres;
use crate::support::{ServerDb, bundle_summary, only_bundle, refused, storbench};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};
use storbench_bench::db::{BackendKind, Database, sql::Statement, sql::Value, sqlite::Sqlite};

/// A PostgreSQL csvlog (PG 15's columns) of `requests`: (seconds after the first, session, SQL
/// or, written as it is, a `disconnection: ...` message).
fn csvlog<S: AsRef<str>>(requests: &[(f64, S, String)]) -> String {
    let mut out = String::new();
    for (i, (at, session, sql)) in requests.iter().enumerate() {
        let session = session.as_ref();
        let message =
            if sql.starts_with("disconnection: ") { sql.clone() } else { format!("statement: {sql}") };
        let ms = (at * 1000.0).round() as u64;
        let time = format!("2026-11-26 05:{:02}:{:02}.{:03} UTC", ms / 60_000, ms / 1000 % 60, ms % 1000);
        out.push_str(&format!(
            "{time},\"app\",\"shop\",{pid},\"[local]\",{session},{n},\"idle\",2026-11-26 05:00:00 UTC,3/1,0,LOG,00000,\
             \"{message}\",,,,,,,,,\"psql\",\"client backend\",,0\n",
            pid = 1000 + session.len(),
            n = i + 1,
            message = message.replace('"', "\"\""),
        ));
    }
    out
}

/// Two sessions, each making its own table and filling it with `rows` rows in order, then
/// reading it: in any other order than the session's, an insert or the select fails.
fn two_sessions(tag: &str, rows: u32) -> Vec<(f64, &'static str, String)> {
    let mut out = Vec::new();
    for (s, session) in ["6b07bdf6.3e9", "6b07bdf6.3ea"].into_iter().enumerate() {
        let table = format!("sbreplay_{tag}_{s}");
        out.push((0.0, session, format!("CREATE TABLE {table} (n integer PRIMARY KEY, note text)")));
        for n in 1..=rows {
            out.push((
                f64::from(n) * 0.001,
                session,
                format!("INSERT INTO {table} VALUES ({n}, 'it''s {n}')"),
            ));
        }
        out.push((f64::from(rows + 1) * 0.001, session, format!("SELECT count(*) FROM {table}")));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

fn write_log(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// An empty SQLite database (an empty file is one) for logs that make their own tables.
fn empty_db(dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, b"").unwrap();
    path
}

fn count(db: &Sqlite, table: &str) -> i64 {
    let mut s = db.open_session().unwrap();
    let rows = s.query(Statement::Text(&format!("SELECT count(*) FROM {table}")), &[]).unwrap();
    match rows[0][0] {
        Value::Int(n) => n,
        ref v => panic!("count is {v:?}"),
    }
}

#[test]
fn a_sqlite_replay_runs_each_session_in_its_order_with_the_figures_per_type_and_source() {
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), "web1.csv", &csvlog(&two_sessions("lite", 40)));
    let db = empty_db(dir.path(), "shop.db");
    let results = dir.path().join("results");
    let out = storbench()
        .args(["replay", &log, "--path"])
        .arg(&db)
        .args(["--in-flight", "2", "--json", "--output-dir"])
        .arg(&results)
        .assert()
        .code(0);
    let said = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(said.contains("sends 84 requests: 80 INSERT, 2 CREATE, 2 SELECT to "), "{said}");
    let s = bundle_summary(&results);
    let r = &s["results"];
    assert_eq!((r["calls"].as_u64(), r["recorded_calls"].as_u64()), (Some(84), Some(84)));
    assert_eq!(r["errors"]["total"], 0, "{r}");
    assert_eq!(r["by_type"]["INSERT"]["calls"], 80);
    assert_eq!(r["by_type"]["CREATE"]["calls"], 2);
    assert!(r["by_type"]["INSERT"]["p99_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(r["by_source"][0]["name"], "web1.csv");
    assert_eq!(r["by_source"][0]["calls"], 84);
    assert_eq!(r["mode"], "fire-hose");
    let db = Sqlite::new(&db);
    assert_eq!((count(&db, "sbreplay_lite_0"), count(&db, "sbreplay_lite_1")), (40, 40));
    let bundle = only_bundle(&results);
    storbench().args(["summarize", "--check"]).arg(&bundle).assert().code(0);
}

#[test]
fn a_postgres_replay_leaves_the_rows_the_log_made_with_no_error() {
    let Some(server) = ServerDb::new(BackendKind::Postgres, "replay") else { return };
    server.sql(&format!("CREATE DATABASE {}", server.name));
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), "pg.csv", &csvlog(&two_sessions("pg", 30)));
    let results = dir.path().join("results");
    storbench().args(["replay", &log, "--url", &server.url(), "--output-dir"]).arg(&results).assert().code(0);
    let r = &bundle_summary(&results)["results"];
    assert_eq!((r["calls"].as_u64(), r["errors"]["total"].as_u64()), (Some(64), Some(0)), "{r}");
    let rows =
        server.sql_in("SELECT (SELECT count(*) FROM sbreplay_pg_0) + (SELECT count(*) FROM sbreplay_pg_1)");
    assert_eq!(rows.trim(), "60");
}

/// A login role of `server` that may hold at most `limit` connections at once, dropped at
/// the end; its URL to the test's database.
struct LimitedRole<'a>(&'a ServerDb);

impl<'a> LimitedRole<'a> {
    fn new(server: &'a ServerDb, limit: u32) -> (Self, String) {
        server.sql(&format!("CREATE ROLE {} LOGIN CONNECTION LIMIT {limit}", server.name));
        let url = server.url();
        let (scheme, rest) = url.split_once("://").unwrap();
        let host = rest.split_once('@').map_or(rest, |(_, host)| host);
        (LimitedRole(server), format!("{scheme}://{}@{host}", server.name))
    }
}

impl Drop for LimitedRole<'_> {
    fn drop(&mut self) {
        self.0.sql(&format!("DROP ROLE IF EXISTS {}", self.0.name));
    }
}

#[test]
fn sessions_close_at_their_disconnection_so_many_short_ones_fit_a_servers_connection_limit() {
    let Some(server) = ServerDb::new(BackendKind::Postgres, "replayend") else { return };
    server.sql(&format!("CREATE DATABASE {}", server.name));
    // 150 sessions of two statements each, one after another, as a client that connects per
    // unit of work: at most a few are open at any time in the original.
    let mut requests = Vec::new();
    for k in 0..150u32 {
        let (at, session) = (f64::from(k) * 0.004, format!("6b07bdf6.{k:x}"));
        requests.push((at, session.clone(), format!("SELECT {k}")));
        requests.push((at + 0.001, session.clone(), format!("SELECT {k} + 1")));
        let bye = "disconnection: session time: 0:00:00.002 user=app database=shop host=[local]";
        requests.push((at + 0.002, session, bye.to_string()));
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), "pg.csv", &csvlog(&requests));
    // The role may hold 5 connections: had the replay kept each session's, the sixth would be
    // refused ("too many connections for role").
    // Room for the 2 in flight and for closed sessions whose server processes are still
    // exiting (a busy machine keeps one counted for a moment); far below the 150 sessions.
    let (_role, url) = LimitedRole::new(&server, 8);
    let results = dir.path().join("results");
    storbench()
        .args(["replay", &log, "--url", &url, "--in-flight", "2", "--output-dir"])
        .arg(&results)
        .assert()
        .code(0);
    let r = &bundle_summary(&results)["results"];
    assert_eq!((r["calls"].as_u64(), r["errors"]["total"].as_u64()), (Some(300), Some(0)), "{r}");
    assert_eq!(r["recorded_calls"].as_u64(), Some(300), "a disconnection is no request: {r}");
}

/// `requests` requests of one session, `step_s` apart from `from_s` on, as csvlog lines.
fn paced_log(from: u32, requests: u32, step_s: f64) -> String {
    let requests: Vec<(f64, &str, String)> = (from..from + requests)
        .map(|i| (f64::from(i) * step_s, "6b07bdf6.3e9", format!("SELECT {i}")))
        .collect();
    csvlog(&requests)
}

#[test]
fn a_10_s_log_takes_10_s_at_speed_1_and_2_5_s_at_speed_4_and_a_log_still_written_ends_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    // 12,001 requests over 10 s of log, one session: far more than a replay reads ahead.
    let log = write_log(dir.path(), "paced.csv", &paced_log(0, 12_001, 1.0 / 1200.0));
    let growing = write_log(dir.path(), "growing.csv", &paced_log(0, 12_001, 1.0 / 1200.0));
    let replay = |log: &str, speed: &str, name: &str| {
        let db = empty_db(dir.path(), &format!("{name}.db"));
        std::process::Command::new(storbench().get_program())
            .args(["replay", log, "--mode", "time-sync", "--speed", speed, "--path"])
            .arg(&db)
            .arg("--output-dir")
            .arg(dir.path().join(name))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let started = Instant::now();
    let (mut fast, mut slow) = (replay(&log, "4", "fast"), replay(&growing, "1", "slow"));
    // The server goes on writing the log the replay reads (as it logs the replay's own
    // statements): what is added after the replay began is not replayed.
    std::thread::sleep(Duration::from_millis(1000));
    let more = paced_log(12_001, 3000, 1.0 / 1200.0);
    std::fs::OpenOptions::new().append(true).open(&growing).unwrap().write_all(more.as_bytes()).unwrap();
    let fast_took = fast.wait().unwrap().code().map(|c| (c, started.elapsed()));
    let slow_took = slow.wait().unwrap().code().map(|c| (c, started.elapsed()));
    for (name, took, want) in [("fast", fast_took, 2.5), ("slow", slow_took, 10.0)] {
        let (code, took) = took.unwrap();
        assert_eq!(code, 0, "{name}");
        let r = &bundle_summary(&dir.path().join(name))["results"];
        let elapsed = r["elapsed_s"].as_f64().unwrap();
        assert!((want * 0.97..want * 1.15).contains(&elapsed), "10 s of log ({name}) took {elapsed} s");
        assert!(took.as_secs_f64() >= want * 0.97, "{name}: the command returned after {took:?}");
        assert_eq!(r["mode"].as_str(), Some("time-sync"));
        assert!(r["lateness_ms"]["max"].as_f64().is_some(), "lateness recorded: {r}");
        let counts = (r["calls"].as_u64(), r["recorded_calls"].as_u64(), r["errors"]["total"].as_u64());
        assert_eq!(counts, (Some(12_001), Some(12_001), Some(0)), "{name}: {r}");
    }
}

#[test]
fn a_replay_is_refused_before_it_sends_anything_when_its_input_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), "ok.csv", &csvlog(&two_sessions("bad", 2)));
    let junk = write_log(dir.path(), "junk.txt", "hello\nworld\n");
    refused(storbench().args(["replay", "--path", "x.db"]), "give the request logs to replay");
    refused(storbench().args(["replay", &log]), "name the database to replay against");
    refused(storbench().args(["replay", &junk, "--path", "x.db"]), "cannot tell its format");
    refused(storbench().args(["replay", &log, "--path", "x.db", "--speed", "2"]), "use --mode time-sync");
    refused(storbench().args(["replay", &log, "--path", "x.db"]), "no such SQLite database");
    refused(
        storbench().args(["replay", &log, "--path", "x.db", "--mode", "time-sync", "--speed", "0"]),
        "--speed 0",
    );
    refused(storbench().args(["replay", "/nonexistent/web.csv", "--path", "x.db"]), "/nonexistent/web.csv");
    let results = dir.path().join("results");
    let err = refused(
        storbench()
            .args(["replay", &log, "--url", "postgres://nobody@127.0.0.1:1/none", "--output-dir"])
            .arg(&results),
        "127.0.0.1:1",
    );
    assert!(!results.exists() || std::fs::read_dir(&results).unwrap().next().is_none(), "{err}");
    assert!(!dir.path().join("x.db").exists(), "no database was made for a refused replay");
}

#[test]
fn unreadable_lines_are_counted_and_shown_and_strict_stops_at_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = csvlog(&two_sessions("lines", 3));
    text.insert_str(text.find('\n').unwrap() + 1, "not,a,csvlog,line\n");
    let log = write_log(dir.path(), "torn.csv", &text);
    let results = dir.path().join("results");
    storbench()
        .args(["replay", &log, "--path"])
        .arg(empty_db(dir.path(), "t.db"))
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .code(0);
    let r = &bundle_summary(&results)["results"];
    assert_eq!(r["unread_lines"], 1, "{r}");
    assert_eq!(r["first_unread"][0]["line"], 2);
    assert_eq!((r["calls"].as_u64(), r["errors"]["total"].as_u64()), (Some(10), Some(0)), "{r}");
    let err = refused(
        storbench().args(["replay", &log, "--strict", "--path"]).arg(empty_db(dir.path(), "s.db")),
        "line 2",
    );
    assert!(err.contains("torn.csv"), "{err}");
}

/// A MariaDB general query log of `requests` (connection id, SQL), all within one second, each
/// connection opened on database `shop` first.
fn general_log(requests: &[(u32, String)]) -> String {
    let mut out = String::from(
        "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n\
         Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n",
    );
    let mut seen = Vec::new();
    for (i, (id, sql)) in requests.iter().enumerate() {
        let time = if i == 0 { "261126  5:12:51" } else { "\t" };
        if !seen.contains(id) {
            seen.push(*id);
            out.push_str(&format!("{time}\t  {id} Connect\tapp@127.0.0.1 on shop using TCP/IP\n"));
            out.push_str(&format!("\t\t  {id} Query\t{sql}\n"));
        } else {
            out.push_str(&format!("{time}\t  {id} Query\t{sql}\n"));
        }
    }
    out
}

#[test]
fn a_mariadb_general_log_replays_each_connection_in_its_order() {
    let Some(server) = ServerDb::new(BackendKind::Mysql, "replay") else { return };
    server.sql(&format!("CREATE DATABASE {}", server.name));
    let mut requests = Vec::new();
    for id in [41, 42] {
        requests.push((id, format!("CREATE TABLE sbreplay_my_{id} (n int PRIMARY KEY)")));
    }
    for n in 1..=25 {
        for id in [41, 42] {
            requests.push((id, format!("INSERT INTO sbreplay_my_{id} VALUES ({n})")));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), "general.log", &general_log(&requests));
    let results = dir.path().join("results");
    storbench()
        .args(["replay", &log, "--url", &server.url(), "--database", "shop", "--output-dir"])
        .arg(&results)
        .assert()
        .code(0);
    let r = &bundle_summary(&results)["results"];
    assert_eq!((r["calls"].as_u64(), r["errors"]["total"].as_u64()), (Some(52), Some(0)), "{r}");
    assert_eq!(r["by_type"]["INSERT"]["calls"], 50);
    let rows =
        server.sql_in("SELECT (SELECT count(*) FROM sbreplay_my_41) + (SELECT count(*) FROM sbreplay_my_42)");
    assert_eq!(rows.trim(), "50");
    // Another database's sessions do not apply: with nothing left to send, the replay is
    // refused before it runs.
    let other = dir.path().join("other");
    let out = storbench()
        .args(["replay", &log, "--url", &server.url(), "--database", "crm", "--output-dir"])
        .arg(&other)
        .assert()
        .code(2);
    let said = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(said.contains("none of the 52 request(s) read from the logs applies: --database"), "{said}");
}

#[test]
fn a_postgres_stderr_log_with_its_own_prefix_replays_and_a_wrong_prefix_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    // With %p in the prefix, a session is its server process.
    for (at, session, sql) in two_sessions("err", 5) {
        let ms = (at * 1000.0).round() as u64;
        let pid = if session.ends_with('a') { 1002 } else { 1001 };
        text.push_str(&format!(
            "2026-11-26 05:00:{:02}.{:03} UTC [{pid}] app@shop LOG:  statement: {sql}\n",
            ms / 1000,
            ms % 1000
        ));
    }
    let log = write_log(dir.path(), "postgresql.log", &text);
    let results = dir.path().join("results");
    storbench()
        .args(["replay", &log, "--format", "pg-stderr", "--log-line-prefix", "%m [%p] %u@%d ", "--path"])
        .arg(empty_db(dir.path(), "err.db"))
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .code(0);
    let r = &bundle_summary(&results)["results"];
    assert_eq!((r["calls"].as_u64(), r["errors"]["total"].as_u64()), (Some(14), Some(0)), "{r}");
    refused(
        storbench().args([
            "replay",
            &log,
            "--format",
            "pg-stderr",
            "--log-line-prefix",
            "%u",
            "--path",
            "x.db",
        ]),
        "--log-line-prefix",
    );
}

/// Statements of database `db` in a csvlog, counted apart from storbench's reader: records whose
/// database column is `db` and whose message is a statement (`log_statement = 'all'` with the
/// extended protocol writes `execute NAME: SQL`).
fn statements_in_csvlog(csvlog: &str, db: &str) -> u64 {
    let of_db = format!(",\"{db}\",");
    let logged = |l: &&str| l.contains(",LOG,00000,\"statement: ") || l.contains(",LOG,00000,\"execute ");
    csvlog.lines().filter(|l| l.contains(&of_db)).filter(logged).count() as u64
}

/// What a pgbench run leaves in `db`, times left out: every account's balance, the tellers' and
/// branches' balances, the history's rows.
fn pgbench_rows(pg: &PrivatePostgres, db: &str) -> [String; 4] {
    [
        "SELECT md5(string_agg(aid || ':' || abalance, ',' ORDER BY aid)), sum(abalance) FROM pgbench_accounts",
        "SELECT string_agg(tid || ':' || tbalance, ',' ORDER BY tid) FROM pgbench_tellers",
        "SELECT string_agg(bid || ':' || bbalance, ',' ORDER BY bid) FROM pgbench_branches",
        "SELECT count(*), md5(string_agg(concat_ws(':', tid, bid, aid, delta), ',' ORDER BY tid, bid, aid, delta)) \
         FROM pgbench_history",
    ]
    .map(|sql| pg.sql(db, sql).trim().to_string())
}

/// A private instance that logs every statement to a csvlog, as a DBA sets one up to capture.
fn logging_instance() -> Option<PrivatePostgres> {
    PrivatePostgres::start(&[
        ("logging_collector", "on"),
        ("log_destination", "'csvlog'"),
        ("log_directory", "'log'"),
        ("log_filename", "'postgresql.log'"),
        ("log_statement", "'all'"),
        ("lc_messages", "'C'"),
        ("fsync", "off"),
    ])
}

/// pgbench ARGS on `pg`, which must succeed; its statements logged only when `logged`. Its
/// output.
fn pgbench(pg: &PrivatePostgres, logged: bool, args: &[&str]) -> String {
    let mut cmd = std::process::Command::new(pg.program("pgbench"));
    if !logged {
        cmd.env("PGOPTIONS", "-c log_statement=none");
    }
    let out = cmd
        .args(["-h", "127.0.0.1", "-p", &pg.port.to_string(), "-U", "postgres"])
        .args(args)
        .output()
        .expect("pgbench runs");
    assert!(out.status.success(), "pgbench {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The csvlog's text once it holds everything logged so far: the collector writes what the
/// server's processes send it in order, so once a statement sent now is in the log, everything
/// sent before it is too. The marker is logged on database `postgres`.
fn settled_csvlog(pg: &PrivatePostgres) -> String {
    let marker = "SELECT 'storbench: the client has ended'";
    let out =
        std::process::Command::new("psql").args([&pg.url("postgres"), "-XAtqc", marker]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csvlog = pg.log_dir().join("postgresql.csv");
    let mut text = String::new();
    storbench_bench::testing::wait_until("the marker in the csvlog", Duration::from_secs(30), || {
        text = std::fs::read_to_string(&csvlog).unwrap_or_default();
        text.contains(marker)
    });
    text
}

#[test]
fn a_csvlog_captured_from_a_real_server_replays_on_a_copy_with_the_same_rows() {
    let Some(pg) = logging_instance() else { return };
    // The test's own statements are not logged (PrivatePostgres::sql): the log holds the client's.
    pg.sql("postgres", "CREATE DATABASE orig");
    pgbench(&pg, false, &["-i", "-q", "-s", "1", "orig"]);
    pg.sql("postgres", "CREATE DATABASE copy TEMPLATE orig");
    let before = pgbench_rows(&pg, "copy");
    // The client: tpcb-like (five statements a transaction between BEGIN and END, the branch's
    // row shared by every client) over the extended protocol with prepared statements, so the
    // log holds `execute` lines with their parameters apart.
    let said = pgbench(&pg, true, &["-n", "-M", "prepared", "-c", "4", "-j", "2", "-T", "3", "orig"]);
    let transactions = said
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|n| n.split(['/', ' ']).next()?.parse::<u64>().ok())
        .expect("pgbench says how many transactions it made");
    let original = pgbench_rows(&pg, "orig");
    assert_ne!(original, before, "the client changed the database");
    let text = settled_csvlog(&pg);
    let logged = statements_in_csvlog(&text, "orig");
    assert!(logged >= 7 * transactions, "{logged} statements logged for {transactions} transactions");

    // The log as captured, taken off the server as a DBA would: the server goes on logging
    // (the replay's own statements among them), and a replay reads its log as it streams.
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), "postgresql.csv", &text);
    let results = dir.path().join("results");
    // The log names the original database; --database keeps its sessions (not the marker's).
    let args = ["replay", &log, "--format", "pg-csvlog", "--url", &pg.url("copy"), "--database", "orig"];
    storbench().args(args).arg("--output-dir").arg(&results).assert().code(0);
    let r = &bundle_summary(&results)["results"];
    assert_eq!((r["errors"]["total"].as_u64(), r["unread_lines"].as_u64()), (Some(0), Some(0)), "{r}");
    assert_eq!((r["calls"].as_u64(), r["recorded_calls"].as_u64()), (Some(logged), Some(logged)), "{r}");
    assert!(r["by_type"]["BEGIN"]["calls"].as_u64() >= Some(transactions), "{r}");
    assert_eq!(pgbench_rows(&pg, "copy"), original, "the copy after the replay, against the original");
}

/// The MariaDB server's general log, on for the length of a test and written to `path`; put
/// back as it was at the end. It logs every session of the server (other tests' too): a
/// replay of it keeps one database's.
struct GeneralLogOn<'a> {
    server: &'a ServerDb,
    file_before: String,
}

impl<'a> GeneralLogOn<'a> {
    fn new(server: &'a ServerDb, path: &Path) -> Self {
        let file_before = server.sql("SELECT @@general_log_file").trim().to_string();
        server
            .sql(&format!("SET GLOBAL general_log_file = '{}'; SET GLOBAL general_log = ON", path.display()));
        GeneralLogOn { server, file_before }
    }
}

impl Drop for GeneralLogOn<'_> {
    fn drop(&mut self) {
        let before = &self.file_before;
        self.server.sql(&format!("SET GLOBAL general_log = OFF; SET GLOBAL general_log_file = '{before}'"));
    }
}

/// sysbench's TEST on MariaDB database `db` (one table of 1,000 rows), with `args`; its output.
fn sysbench(db: &str, test: &str, args: &[&str]) -> String {
    let out = std::process::Command::new("sysbench")
        .args([test, "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-user=root"])
        .arg(format!("--mysql-db={db}"))
        .args(["--tables=1", "--table-size=1000"])
        .args(args)
        .output()
        .expect("sysbench runs");
    assert!(out.status.success(), "sysbench {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What sysbench's table holds: its rows, their `k` summed, and a digest of every id and k.
fn sbtest_rows(server: &ServerDb, db: &str) -> String {
    server.sql(&format!(
        "SELECT count(*), sum(k), md5(group_concat(id, ':', k ORDER BY id SEPARATOR ',')) FROM {db}.sbtest1"
    ))
}

#[test]
fn a_general_log_captured_from_mariadb_replays_on_a_copy_with_the_same_rows() {
    let Some(server) = ServerDb::new(BackendKind::Mysql, "replaycap") else { return };
    if std::process::Command::new("sysbench").arg("--version").output().is_err() {
        return storbench_bench::testing::skip("sysbench is not installed", "apt-get install sysbench");
    }
    let (orig, copy) = (server.name.clone(), format!("{}_copy", server.name));
    server.sql(&format!("CREATE DATABASE {orig}; CREATE DATABASE {copy}"));
    sysbench(&orig, "oltp_update_index", &["prepare"]);
    let dump =
        std::process::Command::new("mariadb-dump").args(["-h", "127.0.0.1", "-u", "root", &orig]).output();
    let dump = dump.expect("mariadb-dump runs").stdout;
    let mut load = std::process::Command::new("mariadb")
        .args(["-h", "127.0.0.1", "-u", "root", &copy])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    load.stdin.take().unwrap().write_all(&dump).unwrap();
    assert!(load.wait().unwrap().success(), "the copy is loaded");
    let before = sbtest_rows(&server, &orig);
    assert_eq!(sbtest_rows(&server, &copy), before);

    // The client: four threads of UPDATE ... SET k = k + 1 as server-side prepared statements
    // (the log's `Execute` lines hold their parameters in place), each thread its connection.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let path = dir.path().join("general.log");
    let said = {
        let _on = GeneralLogOn::new(&server, &path);
        sysbench(&orig, "oltp_update_index", &["--threads=4", "--time=1", "run"])
    };
    let queries = said
        .lines()
        .find_map(|l| l.trim().strip_prefix("queries:"))
        .and_then(|n| n.split_whitespace().next()?.parse::<u64>().ok())
        .expect("sysbench says how many queries it made");
    let original = sbtest_rows(&server, &orig);
    assert_ne!(original, before, "the client changed the database");

    let text = std::fs::read_to_string(&path).unwrap();
    let log = write_log(dir.path(), "captured.log", &text);
    let results = dir.path().join("results");
    let url = format!("{}/{copy}", server.base.rsplit_once('/').unwrap().0);
    let args = ["replay", &log, "--url", &url, "--database", &orig];
    storbench().args(args).arg("--output-dir").arg(&results).assert().code(0);
    let r = &bundle_summary(&results)["results"];
    assert_eq!((r["errors"]["total"].as_u64(), r["unread_lines"].as_u64()), (Some(0), Some(0)), "{r}");
    assert_eq!(r["calls"].as_u64(), Some(queries), "every query sysbench made: {r}");
    assert_eq!(sbtest_rows(&server, &copy), original, "the copy after the replay, against the original");
}

/// `storbench replay LOG --url URL ARGS --output-dir RESULTS`, which must succeed: what it
/// said on stderr.
fn replayed(log: &str, url: &str, results: &Path, args: &[&str]) -> String {
    let out =
        storbench().args(["replay", log, "--url", url]).args(args).arg("--output-dir").arg(results).assert();
    String::from_utf8_lossy(&out.code(0).get_output().stderr).into_owned()
}

/// Issue 37: a log that drops another database, runs a program on the server, changes the
/// server's settings and reads its files, replayed against a database of the test's own:
/// only what stays inside that database is sent, the rest counted by kind before the run
/// and in the summary, and a kind the user allowed is sent and said to be.
#[test]
fn a_postgres_replay_sends_only_what_stays_inside_its_database_and_says_what_it_withheld() {
    let Some(server) = ServerDb::new(BackendKind::Postgres, "reach") else { return };
    server.sql(&format!("CREATE DATABASE {}", server.name));
    // Named with the test's prefix: dropped with it, whatever happens.
    let victim = format!("{}_victim", server.name);
    server.sql(&format!("CREATE DATABASE {victim}"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let ran = dir.path().join("ran");
    let session = "6b07bdf6.3e9";
    let requests: Vec<(f64, &str, String)> = [
        "CREATE TABLE sbreach (n int)".to_string(),
        "INSERT INTO sbreach VALUES (1)".into(),
        format!("DROP DATABASE {victim}"),
        format!("COPY (SELECT 1) TO PROGRAM 'touch {}'", ran.display()),
        "ALTER SYSTEM RESET work_mem".into(),
        "SELECT pg_read_file('/etc/hostname')".into(),
        "INSERT INTO sbreach VALUES (2)".into(),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, sql)| (i as f64 * 0.001, session, sql))
    .collect();
    let log = write_log(dir.path(), "pg.csv", &csvlog(&requests));
    let results = dir.path().join("results");
    let said = replayed(&log, &server.url(), &results, &[]);
    assert!(said.contains("sends 3 requests"), "{said}");
    assert!(
        said.contains("not sent: 1 ALTER SYSTEM, 1 COPY TO PROGRAM, 1 DROP DATABASE, 1 pg_read_file"),
        "{said}"
    );
    let r = &bundle_summary(&results)["results"];
    assert_eq!((r["calls"].as_u64(), r["errors"]["total"].as_u64()), (Some(3), Some(0)), "{r}");
    assert_eq!(r["not_sent"]["DROP DATABASE"], 1, "{r}");
    assert_eq!(r["not_sent"]["COPY TO PROGRAM"], 1, "{r}");
    let exists = |db: &str| server.sql(&format!("SELECT count(*) FROM pg_database WHERE datname = '{db}'"));
    assert_eq!(exists(&victim).trim(), "1", "the other database is still there");
    assert!(!ran.exists(), "no program ran on the database host");
    assert_eq!(server.sql_in("SELECT count(*) FROM sbreach").trim(), "2");
    storbench().args(["summarize", "--check"]).arg(only_bundle(&results)).assert().code(0);
    storbench().arg("report").arg(only_bundle(&results)).assert().code(0);
    let md = std::fs::read_to_string(only_bundle(&results).join("report.md")).unwrap();
    assert!(md.contains("Withheld: not sent: 1 ALTER SYSTEM"), "{md}");

    // Allowed by its kind, the drop is sent (on a database made for it), and said.
    server.sql_in("DROP TABLE sbreach");
    let allowed = dir.path().join("allowed");
    let said = replayed(&log, &server.url(), &allowed, &["--allow-statement", "drop database"]);
    assert!(said.contains("sent although beyond the database, as allowed: drop database"), "{said}");
    let r = &bundle_summary(&allowed)["results"];
    assert_eq!(r["allowed_statements"], serde_json::json!(["drop database"]), "{r}");
    assert!(r["not_sent"]["DROP DATABASE"].is_null(), "{r}");
    assert_eq!(exists(&victim).trim(), "0", "the drop the user allowed was sent");
    assert!(!ran.exists());
}

#[test]
fn a_mariadb_replay_sends_nothing_that_names_another_database_or_the_servers_settings() {
    let Some(server) = ServerDb::new(BackendKind::Mysql, "reach") else { return };
    server.sql(&format!("CREATE DATABASE {}", server.name));
    let victim = format!("{}_victim", server.name);
    server.sql(&format!("CREATE DATABASE {victim}"));
    server.sql(&format!("CREATE TABLE {victim}.t (n int)"));
    let requests = [
        "CREATE TABLE sbreach (n int)".to_string(),
        format!("INSERT INTO {victim}.t VALUES (1)"),
        format!("DELETE FROM sbreach WHERE n IN (SELECT n FROM {victim}.t)"),
        format!("DROP DATABASE {victim}"),
        "SET GLOBAL max_connections = 151".into(),
        "INSERT INTO sbreach VALUES (1)".into(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), "general.log", &general_log(&requests.map(|q| (41, q))));
    let results = dir.path().join("results");
    let said = replayed(&log, &server.url(), &results, &[]);
    assert!(said.contains("not sent: 2 another database, 1 DROP DATABASE, 1 SET GLOBAL"), "{said}");
    let r = &bundle_summary(&results)["results"];
    assert_eq!((r["calls"].as_u64(), r["errors"]["total"].as_u64()), (Some(2), Some(0)), "{r}");
    assert_eq!(server.sql(&format!("SELECT COUNT(*) FROM {victim}.t")).trim(), "0", "nothing written there");
    assert_eq!(server.sql_in("SELECT COUNT(*) FROM sbreach").trim(), "1");
}

/// A replay whose every request fails did not reproduce its log: failed (exit 1, complete
/// false, the reason in its summary), its summary still printed with --json; under
/// `--max-errors 100` the same run passes.
#[test]
fn a_replay_whose_requests_fail_over_the_stated_share_is_failed_and_still_prints_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let requests: Vec<(f64, &str, String)> = (0..10)
        .map(|n| (f64::from(n) * 0.001, "6b07bdf6.3e9", format!("INSERT INTO missing VALUES ({n})")))
        .collect();
    let log = write_log(dir.path(), "pg.csv", &csvlog(&requests));
    let db = empty_db(dir.path(), "shop.db");
    let results = dir.path().join("results");
    let out = storbench()
        .args(["replay", &log, "--json", "--path"])
        .arg(&db)
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .code(1);
    let s = crate::support::stdout_json(&out);
    // It ran to its end and failed its own check (exit 1): a finished run, not an interrupted one.
    assert_eq!(s["complete"], true, "{s}");
    let warnings = s["warnings"].to_string();
    assert!(
        warnings.contains("10 of 10 requests failed (100.00 %), more than the 1 % a replay allows"),
        "{warnings}"
    );
    assert!(crate::support::stderr_text(&out).contains("error: the replay failed: "));
    assert_eq!(bundle_summary(&results)["complete"], true);
    storbench()
        .args(["replay", &log, "--max-errors", "100", "--path"])
        .arg(&db)
        .arg("--output-dir")
        .arg(dir.path().join("tolerant"))
        .assert()
        .code(0);
    refused(storbench().args(["replay", &log, "--max-errors", "101", "--path"]).arg(&db), "--max-errors 101");
}

/// A database that will not give the log's sessions a connection: their requests are never
/// calls, and the replay is failed saying how many were not sent.
#[test]
fn requests_whose_session_the_database_refused_are_not_calls_and_fail_the_replay() {
    let Some(server) = ServerDb::new(BackendKind::Postgres, "refused") else { return };
    server.sql(&format!("CREATE DATABASE {}", server.name));
    // Four sessions at once, each holding its connection for a while; the role may hold two
    // (one of them storbench's own writer lock): the others are refused.
    let mut requests = Vec::new();
    for k in 0..4u32 {
        let session = format!("6b07bdf6.{k:x}");
        requests.push((0.0, session.clone(), "SELECT pg_sleep(0.5)".to_string()));
        requests.push((0.001, session, "SELECT 1".to_string()));
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), "pg.csv", &csvlog(&requests));
    let (_role, url) = LimitedRole::new(&server, 2);
    let results = dir.path().join("results");
    let out = storbench()
        .args(["replay", &log, "--url", &url, "--in-flight", "4", "--json", "--output-dir"])
        .arg(&results)
        .assert()
        .code(1);
    let s = crate::support::stdout_json(&out);
    let r = &s["results"];
    let not_connected = r["not_connected"].as_u64().unwrap();
    assert!(not_connected >= 2, "{r}");
    assert_eq!(r["calls"].as_u64().unwrap() + not_connected, 8, "a request not sent is no call: {r}");
    assert_eq!(s["complete"], true, "it ran to its end and failed its check (exit 1)");
    assert!(
        s["warnings"]
            .to_string()
            .contains("were not sent: the database did not give their session a connection"),
        "{s}"
    );
}

/// A log that holds no request storbench can read is refused before anything runs, naming
/// the format tried and the first line it could not read; a request whose log time goes back
/// is replayed in the log's order and counted.
#[test]
fn a_log_with_no_request_is_refused_and_one_whose_time_goes_back_is_replayed_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let junk = write_log(dir.path(), "junk.csv", "not,a,csvlog,line\nnor,this\n");
    let db = empty_db(dir.path(), "shop.db");
    let err =
        refused(storbench().args(["replay", &junk, "--format", "pg-csvlog", "--path"]).arg(&db), "pg-csvlog");
    assert!(err.contains("no request could be read") && err.contains("junk.csv line 1"), "{err}");
    let session = "6b07bdf6.3e9";
    let requests = [
        (0.0, session, "CREATE TABLE t (n int)".to_string()),
        (2.0, session, "INSERT INTO t VALUES (1)".to_string()),
        (1.0, session, "INSERT INTO t VALUES (2)".to_string()),
        (3.0, session, "SELECT count(*) FROM t".to_string()),
    ];
    let log = write_log(dir.path(), "back.csv", &csvlog(&requests));
    let results = dir.path().join("results");
    let out = storbench()
        .args(["replay", &log, "--mode", "time-sync", "--speed", "10", "--path"])
        .arg(&db)
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .code(0);
    assert!(
        crate::support::stderr_text(&out).contains("1 request(s) had a log time before the one before them")
    );
    let r = &bundle_summary(&results)["results"];
    assert_eq!(
        (r["calls"].as_u64(), r["errors"]["total"].as_u64(), r["backwards"].as_u64()),
        (Some(4), Some(0), Some(1)),
        "{r}"
    );
    assert_eq!(count(&Sqlite::new(&db), "t"), 2);
}

#[test]
fn a_plans_replay_runs_on_the_sqlite_database_an_oltp_workload_before_it_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("a");
    std::fs::create_dir(&target).unwrap();
    let reads: Vec<(f64, &str, String)> = (0..20)
        .map(|n| (f64::from(n) * 0.001, "6b07bdf6.3e9", "SELECT count(*) FROM customers".into()))
        .collect();
    let log = write_log(dir.path(), "web.csv", &csvlog(&reads));
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[method]\nrepetitions = 1\nidle_settle = 0\npower = \"none\"\n\
             [[configuration]]\nname = \"a\"\ntarget = \"{}\"\n\
             [[workload]]\nkind = \"oltp\"\ndb_size = \"1MB\"\nrun_time = \"1s\"\nwarmup_time = \"0s\"\nsettle_time = 0\n\
             [[workload]]\nkind = \"replay\"\nlogs = [\"{log}\"]\npath = \"storbench-ds3.db\"\n",
            target.display()
        ),
    )
    .unwrap();
    // The database is not there yet, and neither the check nor the run refuses the replay.
    assert!(!target.join("storbench-ds3.db").exists());
    storbench().args(["plan", "check"]).arg(&plan).assert().success();
    // Without the oltp workload before it, the same replay is refused, naming the remedy.
    let text = std::fs::read_to_string(&plan).unwrap();
    let alone = dir.path().join("alone.toml");
    let oltp = text.find("[[workload]]\nkind = \"oltp\"").unwrap();
    let replay = text.find("[[workload]]\nkind = \"replay\"").unwrap();
    std::fs::write(&alone, format!("{}{}", &text[..oltp], &text[replay..])).unwrap();
    refused(
        storbench().args(["plan", "check"]).arg(&alone),
        "let an oltp workload before it in the plan load one",
    );
    assert!(!target.join("storbench-ds3.db").exists(), "the check made no database");
    let results = dir.path().join("results");
    storbench().arg("run").arg(&plan).arg("--output-dir").arg(&results).assert().success();
    let eval = std::fs::read_dir(&results).unwrap().next().unwrap().unwrap().path();
    let e: serde_json::Value =
        serde_json::from_slice(&std::fs::read(eval.join("evaluation.json")).unwrap()).unwrap();
    let replayed = e["runs"].as_array().unwrap().iter().find(|r| r["kind"] == "replay").unwrap();
    assert_eq!(replayed["status"], "done", "{replayed}");
    let s: serde_json::Value = serde_json::from_slice(
        &std::fs::read(eval.join(replayed["bundle"].as_str().unwrap()).join("summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        (s["results"]["calls"].as_u64(), s["results"]["errors"]["total"].as_u64()),
        (Some(20), Some(0))
    );
}
