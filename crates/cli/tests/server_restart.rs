//! A PostgreSQL restart in the middle of an OLTP run does not end it: the threads reconnect
//! with backoff, the orders the restart broke are counted by kind, and the run completes.
//!
//! It restarts the machine's PostgreSQL cluster (pg_ctlcluster, as root), so it runs only where
//! that is allowed: under STORBENCH_REQUIRE_SERVERS=1 (CI), or with STORBENCH_TEST_RESTART=1.

// Tests say why they skipped on std's stderr, which cargo captures.
#![allow(clippy::disallowed_macros)]

#[path = "integration/support.rs"]
#[allow(dead_code)]
mod support;

use std::process::Command;
use std::time::Duration;
use storbench_bench::db::BackendKind;
use storbench_bench::db::testing::{server_url, unique_db_name};
use support::{disk_tempdir, json, storbench};

/// The first PostgreSQL cluster version under /etc/postgresql, when this machine has one.
fn cluster() -> Option<String> {
    std::fs::read_dir("/etc/postgresql").ok()?.filter_map(|e| e.ok()?.file_name().into_string().ok()).min()
}

fn psql(base: &str, sql: &str) {
    let ok = Command::new("psql").args([base, "-XAtqc", sql]).status().is_ok_and(|s| s.success());
    assert!(ok, "psql: {sql}");
}

#[test]
fn a_postgres_restart_mid_run_is_survived_and_counted() {
    let allowed = ["STORBENCH_REQUIRE_SERVERS", "STORBENCH_TEST_RESTART"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|x| x == "1"));
    if !allowed {
        eprintln!("skipped: restarts the PostgreSQL server; set STORBENCH_TEST_RESTART=1 to run it");
        return;
    }
    let Some(base) = server_url(BackendKind::Postgres) else { return };
    let version = cluster().expect("pg_ctlcluster's cluster under /etc/postgresql");
    let name = unique_db_name("restart");
    let url = format!("{}/{name}", base.rsplit_once('/').unwrap().0);
    storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    let dir = disk_tempdir();
    let timing = ["--warmup-time", "0", "--run-time", "14s", "--n-threads", "4"];
    let child = support::spawn_oltp_run(&["--url", &url], &dir.path().join("results"), &timing);
    std::thread::sleep(Duration::from_secs(4));
    let restarted = Command::new("pg_ctlcluster")
        .args(["--skip-systemctl-redirect", &version, "main", "restart"])
        .status()
        .is_ok_and(|s| s.success());
    let out = child.wait_with_output().unwrap();
    psql(&base, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    psql(&base, &format!("DROP DATABASE IF EXISTS {name}_pristine"));
    assert!(restarted, "pg_ctlcluster restart failed");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = json(&out.stdout);
    let r = &s["results"];
    assert_eq!(s["complete"], true, "{}\n{r}", s["warnings"]);
    assert!(r["reconnects"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["errors"]["by_kind"]["connection"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["opm"].as_f64().unwrap() > 0.0);
}
