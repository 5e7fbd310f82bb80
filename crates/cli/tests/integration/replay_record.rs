//! A DVD Store run recorded (`oltp run --record`) and replayed on a copy of its database
//! (`replay --format storbench`): every recorded call sent again, by type, fire-hose and
//! time-sync, leaving the same orders and customers; and the record never over a user's file.

use crate::support::{bundle_summary, oltp_run, refused, storbench};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;
use storbench_bench::db::{Database, sql::Statement, sql::Value, sqlite::Sqlite};

fn count(db: &Path, table: &str) -> i64 {
    let mut s = Sqlite::new(db).open_session().unwrap();
    let rows = s.query(Statement::Text(&format!("SELECT count(*) FROM {table}")), &[]).unwrap();
    match rows[0][0] {
        Value::Int(n) => n,
        ref v => panic!("count is {v:?}"),
    }
}

/// The calls of a request log by type, and the seconds from its first call to its last.
fn calls_by_type(log: &Path) -> (BTreeMap<String, u64>, f64) {
    let text = std::fs::read_to_string(log).unwrap();
    let mut by_type = BTreeMap::new();
    let mut times = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        *by_type.entry(v["type"].as_str().unwrap().to_string()).or_default() += 1;
        times.push(v["time"].as_str().unwrap().parse::<jiff::Timestamp>().unwrap());
    }
    let span = times.iter().max().unwrap().duration_since(*times.iter().min().unwrap());
    (by_type, span.as_secs_f64())
}

fn replayed_by_type(results: &Path) -> BTreeMap<String, u64> {
    let s = bundle_summary(results);
    let r = &s["results"];
    assert_eq!(r["errors"]["total"], 0, "{r}");
    let types = r["by_type"].as_object().unwrap();
    types.iter().map(|(t, f)| (t.clone(), f["calls"].as_u64().unwrap())).collect()
}

fn replay(log: &Path, db: &Path, results: &Path, extra: &[&str]) -> f64 {
    let started = Instant::now();
    storbench()
        .arg("replay")
        .arg(log)
        .arg("--path")
        .arg(db)
        .args(extra)
        .arg("--output-dir")
        .arg(results)
        .assert()
        .code(0);
    started.elapsed().as_secs_f64()
}

#[test]
fn a_recorded_run_replays_every_call_by_type_and_leaves_the_same_orders() {
    let dir = tempfile::tempdir().unwrap();
    let (original, fire, paced) = (dir.path().join("a.db"), dir.path().join("b.db"), dir.path().join("c.db"));
    storbench().args(["oltp", "load", "--db-size", "1MB", "--path"]).arg(&original).assert().success();
    std::fs::copy(&original, &fire).unwrap();
    std::fs::copy(&original, &paced).unwrap();
    let log = dir.path().join("calls.jsonl");
    let orders_before = count(&original, "orders");

    let target = ["--path", original.to_str().unwrap()];
    let extra =
        ["--run-time", "2s", "--warmup-time", "0", "--n-threads", "3", "--record", log.to_str().unwrap()];
    let run = oltp_run(&target, &dir.path().join("run"), &extra).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let said = String::from_utf8_lossy(&run.stderr);
    let (recorded, span_s) = calls_by_type(&log);
    let total: u64 = recorded.values().sum();
    assert!(said.contains(&format!("recorded {total} DVD Store calls to ")), "{said}");
    for kind in ["login", "browse_by_category", "get_reviews", "prices", "purchase"] {
        assert!(recorded.get(kind).is_some_and(|&n| n > 0), "a 2 s run makes {kind} calls: {recorded:?}");
    }
    let new_orders = count(&original, "orders") - orders_before;
    assert!(new_orders > 0);

    replay(&log, &fire, &dir.path().join("fire"), &["--in-flight", "3"]);
    assert_eq!(replayed_by_type(&dir.path().join("fire")), recorded, "fire-hose sends every call once");
    assert_eq!(count(&fire, "orders"), count(&original, "orders"), "the same orders were placed");
    assert_eq!(count(&fire, "customers"), count(&original, "customers"), "the same customers registered");

    let took = replay(&log, &paced, &dir.path().join("paced"), &["--mode", "time-sync", "--speed", "2"]);
    assert_eq!(replayed_by_type(&dir.path().join("paced")), recorded, "time-sync sends every call once");
    assert!(
        took >= span_s / 2.0,
        "time-sync at speed 2 takes at least half the log's {span_s:.2} s: {took:.2} s"
    );
    assert_eq!(count(&paced, "orders"), count(&original, "orders"));
}

#[test]
fn a_record_never_goes_over_a_file_and_a_request_log_takes_no_database_filter() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    let precious = dir.path().join("notes.txt");
    std::fs::write(&precious, "mine").unwrap();
    let mut cmd = storbench();
    cmd.args(["oltp", "run", "--db-size", "1MB", "--path"]).arg(&db).arg("--record").arg(&precious);
    refused(&mut cmd, "--record");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "mine", "left as it was");
    assert!(!db.exists(), "refused before anything was opened");

    let log = dir.path().join("calls.jsonl");
    let line = r#"{"time":"2026-11-26T10:00:00Z","source":"h","session":"1","type":"login","params":{"username":"user1","password":"password"}}"#;
    std::fs::write(&log, format!("{line}\n")).unwrap();
    std::fs::write(&db, b"").unwrap();
    let mut cmd = storbench();
    cmd.arg("replay").arg(&log).arg("--path").arg(&db).args(["--database", "shop"]);
    let said = refused(&mut cmd, "a storbench log names no database");
    assert!(said.contains("leave out --database"), "{said}");
}

/// A web server's access log line of a GET of `target`, `s` seconds after 10:00.
fn access(s: u32, target: &str) -> String {
    format!(
        "10.1.1.{} - - [26/Nov/2026:10:00:{s:02} +0000] \"GET {target} HTTP/1.1\" 200 900 \"-\" \"ds3\"\n",
        s % 4
    )
}

#[test]
fn a_web_servers_log_replays_as_dvd_store_calls_through_the_example_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shop.db");
    storbench().args(["oltp", "load", "--db-size", "1MB", "--path"]).arg(&db).assert().success();
    let orders = count(&db, "orders");
    let mut log = String::new();
    for i in 0..6 {
        log += &access(i * 3, "/ds3/index.html");
        log += &access(i * 3, &format!("/ds3/dslogin.php?username=user{}&password=password", i + 1));
        log += &access(
            i * 3 + 1,
            "/ds3/dsbrowse.php?browsetype=category&browse_category=3&browse_actor=&browse_title=&limit_num=5&customerid=1",
        );
        log += &access(
            i * 3 + 2,
            &format!(
                "/ds3/dspurchase.php?confirmpurchase=yes&customerid={}&item%5B%5D=7&quan%5B%5D=1&item%5B%5D=9&quan%5B%5D=2",
                i + 1
            ),
        );
    }
    log += &access(59, "/favicon.ico");
    let path = dir.path().join("access.log");
    std::fs::write(&path, log).unwrap();
    let mapping = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/ds3-web.toml");
    let results = dir.path().join("results");
    let out = storbench()
        .arg("replay")
        .arg(&path)
        .args(["--mapping", mapping, "--path"])
        .arg(&db)
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .code(0);
    let said = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        said.contains("7 request(s) for paths no route takes: /ds3/index.html (6), /favicon.ico (1)"),
        "{said}"
    );
    assert_eq!(
        replayed_by_type(&results),
        BTreeMap::from([("browse_by_category".into(), 6), ("login".into(), 6), ("purchase".into(), 6)])
    );
    let s = bundle_summary(&results);
    assert_eq!(s["results"]["unmatched_paths"]["/ds3/index.html"], 6);
    assert_eq!(s["parameters"]["formats"][0], "combined");
    assert_eq!(
        count(&db, "orders"),
        orders + 6,
        "each confirmed purchase placed an order, priced by the replay"
    );

    let mut cmd = storbench();
    cmd.arg("replay").arg(&path).arg("--path").arg(&db);
    refused(&mut cmd, "needs --mapping FILE");
}

#[test]
fn a_run_recorded_on_postgres_replays_on_a_copy_with_the_same_orders_customers_and_sales() {
    let Some(server) = crate::support::ServerDb::new(storbench_bench::db::BackendKind::Postgres, "record")
    else {
        return;
    };
    let url = server.url();
    storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    let copy = format!("{}_copy", server.name);
    server.sql(&format!("CREATE DATABASE \"{copy}\" TEMPLATE \"{}\"", server.name));
    let copy_url = format!("{}/{copy}", url.rsplit_once('/').unwrap().0);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let extra =
        ["--run-time", "2s", "--warmup-time", "0", "--n-threads", "4", "--record", log.to_str().unwrap()];
    let run = oltp_run(&["--url", &url], &dir.path().join("run"), &extra).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let (recorded, _) = calls_by_type(&log);

    let results = dir.path().join("replay");
    storbench()
        .args(["replay", log.to_str().unwrap(), "--url", &copy_url, "--output-dir"])
        .arg(&results)
        .assert()
        .code(0);
    assert_eq!(replayed_by_type(&results), recorded);
    let facts = "SELECT (SELECT count(*) FROM orders), (SELECT sum(totalamount) FROM orders), \
                 (SELECT count(*) FROM customers), (SELECT sum(sales) FROM inventory)";
    let psql = |db_url: &str| {
        let out = std::process::Command::new("psql").args([db_url, "-XAtc", facts]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (original, replayed) = (psql(&url), psql(&copy_url));
    assert!(original.contains('|'), "{original}");
    assert_eq!(replayed, original, "orders, their total, customers and sales as the run left them");
}
