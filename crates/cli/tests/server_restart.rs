//! A PostgreSQL restart in the middle of an OLTP run does not end it: the threads reconnect
//! with backoff, the orders the restart broke are counted by kind, and the run completes.
//!
//! It restarts the machine's PostgreSQL cluster (pg_ctlcluster, as root), so it runs only where
//! that is allowed: in CI (where `storbench_bench::testing::environment_required`), or with
//! STORBENCH_TEST_RESTART=1. It is a test binary of its own because cargo runs test binaries one
//! after another: no other test of the same `cargo test` uses the server while it restarts, and
//! the server is up again (this test waits for it) before the next binary starts.

#[path = "integration/support.rs"]
#[allow(dead_code)]
mod support;

use std::process::Command;
use std::time::Duration;
use storbench_bench::db::BackendKind;
use storbench_bench::testing::{environment_required, skip, wait_until};
use support::{ServerDb, json, running_on, storbench};

/// The first PostgreSQL cluster version under /etc/postgresql, when this machine has one.
fn cluster() -> Option<String> {
    std::fs::read_dir("/etc/postgresql").ok()?.filter_map(|e| e.ok()?.file_name().into_string().ok()).min()
}

fn pg_ctlcluster(version: &str, action: &str) -> bool {
    Command::new("pg_ctlcluster")
        .args(["--skip-systemctl-redirect", version, "main", action])
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the server answers a query at `base`.
fn answers(base: &str) -> bool {
    Command::new("psql").args([base, "-XAtqc", "SELECT 1"]).output().is_ok_and(|o| o.status.success())
}

/// Leaves the cluster running for the tests after this one, whatever happened to the restart:
/// started again if it is down, and waited for until it answers.
struct LeftRunning<'a> {
    version: &'a str,
    base: &'a str,
}

impl Drop for LeftRunning<'_> {
    fn drop(&mut self) {
        if !answers(self.base) {
            pg_ctlcluster(self.version, "start");
        }
        wait_until("PostgreSQL to answer again after its restart", Duration::from_secs(60), || {
            answers(self.base)
        });
    }
}

#[test]
fn a_postgres_restart_mid_run_is_survived_and_counted() {
    let opted_in = std::env::var("STORBENCH_TEST_RESTART").is_ok_and(|v| v == "1");
    if !opted_in && !environment_required() {
        return skip("it restarts this machine's PostgreSQL cluster", "set STORBENCH_TEST_RESTART=1");
    }
    // Dropped last: its database is dropped once the server is back.
    let Some(db) = ServerDb::new(BackendKind::Postgres, "restart") else { return };
    let version = cluster().expect("pg_ctlcluster's cluster under /etc/postgresql");
    let _left_running = LeftRunning { version: &version, base: &db.base };
    let url = db.url();
    storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    let (_dir, child) = running_on(&db, &url, "14s", 4);
    let restarted = pg_ctlcluster(&version, "restart");
    let out = child.wait_with_output().unwrap();
    assert!(restarted, "pg_ctlcluster restart failed");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = json(&out.stdout);
    let r = &s["results"];
    assert_eq!(s["complete"], true, "{}\n{r}", s["warnings"]);
    assert!(r["reconnects"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["errors"]["by_kind"]["connection"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["opm"].as_f64().unwrap() > 0.0);
}
