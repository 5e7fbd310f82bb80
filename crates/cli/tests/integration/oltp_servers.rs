//! `storbench oltp` on the database servers: load, a short run with DS3's Final line, the sales
//! check after many threads, a run that survives its connections being killed, and the errors
//! a wrong URL gives. Each test uses its own database and drops it. Without a server the tests
//! skip (saying how to enable them); in CI they fail (`storbench_bench::testing::skip`).

use crate::support::{ServerDb, disk_tempdir, stderr_text, stdout_json, storbench};
use std::time::Duration;
use storbench_bench::db::BackendKind;

fn load_and_run(kind: BackendKind, tag: &str) {
    let Some(db) = ServerDb::new(kind, tag) else { return };
    let url = db.url();
    let load = storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    assert!(String::from_utf8_lossy(&load.get_output().stdout).contains("loaded 1MB"));
    let dir = disk_tempdir();
    let a = storbench()
        .args([
            "oltp",
            "run",
            "--db-size",
            "1MB",
            "--warmup-time",
            "1s",
            "--run-time",
            "4s",
            "--n-threads",
            "8",
        ])
        .args(["--json", "--settle-time", "0", "--url", &url, "--output-dir"])
        .arg(dir.path().join("results"))
        .assert()
        .success();
    let s = stdout_json(&a);
    assert_eq!(s["engine"], kind.as_str());
    // The server runs here: its data directory's block device is found and sampled.
    assert!(s["target"]["device"]["name"].is_string(), "{}", s["target"]);
    let r = &s["results"];
    assert!(r["opm"].as_f64().unwrap() > 0.0, "{r}");
    assert_eq!(r["failed_orders"], 0, "{r}");
    assert!(r["transactions"]["purchase"]["calls"].as_u64().unwrap() > 0);
    let err = stderr_text(&a);
    assert!(err.lines().any(|l| l.starts_with("Final (")), "{err}");
    assert!(!url.contains(':') || !err.contains("password"), "no password is printed");
    disclosed(&db, &crate::support::only_bundle(&dir.path().join("results")));
    storbench().args(["oltp", "check", "--url", &url]).assert().success();
}

/// disclosure.json names the server's version and every setting its configuration file
/// changed, as the server itself lists them (whatever this machine's configuration is).
fn disclosed(db: &ServerDb, bundle: &std::path::Path) {
    let text = std::fs::read_to_string(bundle.join("disclosure.json")).unwrap();
    let d = &crate::support::json(text.as_bytes())["database"];
    assert_eq!(d["kind"], db.kind.as_str());
    assert!(d["version"].as_str().is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit())), "{d}");
    let configured = db.sql(match db.kind {
        BackendKind::Postgres => "SELECT name FROM pg_settings WHERE source = 'configuration file'",
        _ => "SELECT LOWER(variable_name) FROM information_schema.SYSTEM_VARIABLES WHERE global_value_origin = 'CONFIG'",
    });
    let names: Vec<&str> = configured.lines().filter(|n| !n.is_empty() && !n.contains("key")).collect();
    assert!(!names.is_empty(), "the test server has a configuration file");
    for name in names {
        assert!(d["non_default_settings"].get(name).is_some(), "{name} missing: {d}");
    }
    assert!(!text.contains("password="), "no secret is written");
    // The server's data directory and, for PostgreSQL, its WAL directory are the run's
    // targets: each one's device is disclosed and counted on its own.
    let targets = &crate::support::json(text.as_bytes())["targets"];
    let paths: Vec<&str> = targets.as_array().unwrap().iter().filter_map(|t| t["path"].as_str()).collect();
    let wal = paths.iter().any(|p| p.ends_with("/pg_wal"));
    assert_eq!(wal, db.kind == BackendKind::Postgres, "{paths:?}");
}

#[test]
fn postgres_loads_runs_and_keeps_every_sale() {
    load_and_run(BackendKind::Postgres, "clipg");
}

#[test]
fn mariadb_loads_runs_and_keeps_every_sale() {
    load_and_run(BackendKind::Mysql, "climy");
}

/// Kills every connection of the run's database while it runs: the run goes on, reconnects,
/// and counts the lost orders by kind.
fn survives_killed_connections(kind: BackendKind, tag: &str) {
    let Some(db) = ServerDb::new(kind, tag) else { return };
    let url = db.url();
    storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    let (_dir, child) = crate::support::running_on(&db, &url, "8s", 4);
    let killed = match kind {
        BackendKind::Postgres => db.sql(&format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid()",
            db.name
        )),
        _ => {
            let ids = db.sql(&format!("SELECT id FROM information_schema.processlist WHERE db = '{}'", db.name));
            for id in ids.lines().filter(|l| !l.is_empty()) {
                db.sql(&format!("KILL CONNECTION {id}"));
            }
            ids.lines().count().to_string()
        }
    };
    assert!(killed.trim().parse::<u32>().unwrap() >= 4, "killed {killed}");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = crate::support::json(&out.stdout);
    let r = &s["results"];
    assert!(r["reconnects"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["errors"]["by_kind"]["connection"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["orders"].as_u64().unwrap() > r["failed_orders"].as_u64().unwrap(), "orders went on: {r}");
}

#[test]
fn a_postgres_run_survives_its_connections_being_killed() {
    survives_killed_connections(BackendKind::Postgres, "clipgkill");
}

#[test]
fn a_mariadb_run_survives_its_connections_being_killed() {
    survives_killed_connections(BackendKind::Mysql, "climykill");
}

/// `storbench oltp ARGS` exits 2 with `needle` in its message.
fn refused(args: &[&str], needle: &str) {
    let a = storbench().arg("oltp").args(args).assert().code(2);
    let err = stderr_text(&a);
    assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn server_errors_name_the_problem_before_a_run() {
    if let Some(db) = ServerDb::new(BackendKind::Postgres, "clipgerr") {
        let url = db.url();
        refused(&["run", "--db-size", "1MB", "--url", &url], &db.name);
        refused(&["run", "--db-size", "1MB", "--url", "postgres://postgres@127.0.0.1:1/x"], "127.0.0.1:1");
        refused(
            &["load", "--db-size", "1MB", "--url", "postgres://nosuchrole@127.0.0.1:5432/x"],
            "nosuchrole",
        );
    }
    if let Some(db) = ServerDb::new(BackendKind::Mysql, "climyerr") {
        let url = db.url();
        refused(&["run", "--db-size", "1MB", "--url", &url], &db.name);
        refused(&["run", "--db-size", "1MB", "--url", "mysql://root:wrongpw@127.0.0.1:3306/test"], "root");
    }
}

/// A run of 30 s on `url` (database `db`) whose database `go_away` (SQL on the server) makes
/// refuse every connection once the run is going: the run ends as failed about 5 s later,
/// saying why, its bundle marked incomplete; it does not run on to report the dead window as
/// a complete run.
fn a_run_whose_database_goes_away_ends_failed(db: &ServerDb, url: &str, go_away: &dyn Fn()) {
    let (dir, child) = crate::support::running_on(db, url, "30s", 2);
    let began = std::time::Instant::now();
    go_away();
    let out = child.wait_with_output().unwrap();
    let took = began.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(took < Duration::from_secs(12), "the run went on for {took:?} after its database went away");
    assert!(err.contains("every connection to") && err.contains("(the limit is 5 s)"), "{err}");
    let s = crate::support::bundle_summary(&dir.path().join("results"));
    assert_eq!(s["complete"], false, "{s}");
    let warned =
        s["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("is failing, since"));
    assert!(warned, "the summary does not say why: {}", s["warnings"]);
}

#[test]
fn a_postgres_run_whose_database_refuses_every_connection_ends_failed_after_5_s() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "clipggone") else { return };
    let url = db.url();
    storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    a_run_whose_database_goes_away_ends_failed(&db, &url, &|| {
        db.sql(&format!("ALTER DATABASE \"{}\" ALLOW_CONNECTIONS false", db.name));
        db.sql(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'",
            db.name
        ));
    });
}

#[test]
fn a_mariadb_run_whose_user_is_locked_out_mid_run_ends_failed_after_5_s() {
    let Some(db) = ServerDb::new(BackendKind::Mysql, "climygone") else { return };
    let user = db.name.clone();
    db.sql(&format!("CREATE USER '{user}'@'%' IDENTIFIED BY 'Pw-{user}'"));
    db.sql(&format!("GRANT ALL ON `{}`.* TO '{user}'@'%'", db.name));
    let url = format!("mysql://{user}:Pw-{user}@127.0.0.1:3306/{}", db.name);
    storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    a_run_whose_database_goes_away_ends_failed(&db, &url, &|| {
        db.sql(&format!("ALTER USER '{user}'@'%' ACCOUNT LOCK"));
        let ids = db.sql(&format!("SELECT id FROM information_schema.PROCESSLIST WHERE db = '{}'", db.name));
        for id in ids.lines().filter(|l| !l.is_empty()) {
            db.sql(&format!("KILL CONNECTION {id}"));
        }
    });
    db.sql(&format!("DROP USER '{user}'@'%'"));
}

#[test]
fn a_postgres_run_rides_out_an_outage_of_2_s_and_completes() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "clipgblip") else { return };
    let url = db.url();
    storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    let (_dir, child) = crate::support::running_on(&db, &url, "10s", 2);
    db.sql(&format!("ALTER DATABASE \"{}\" ALLOW_CONNECTIONS false", db.name));
    db.sql(&format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'", db.name));
    std::thread::sleep(Duration::from_secs(2));
    db.sql(&format!("ALTER DATABASE \"{}\" ALLOW_CONNECTIONS true", db.name));
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = crate::support::json(&out.stdout);
    assert_eq!(s["complete"], true, "{}", s["warnings"]);
    assert!(s["results"]["reconnects"].as_u64().unwrap() >= 1, "{}", s["results"]);
}
