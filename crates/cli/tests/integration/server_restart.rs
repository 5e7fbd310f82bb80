//! A PostgreSQL restart in the middle of an OLTP run does not end it: the threads reconnect
//! with backoff, the orders the restart broke are counted by kind, and the run completes.
//!
//! The server restarted is a private instance of the test's own (`private_pg`), never the
//! machine's shared PostgreSQL, which other tests and other work on the machine use.

use crate::private_pg::PrivatePostgres;
use crate::support::{ServerDb, json, running_on, storbench};
use storbench_bench::db::BackendKind;

#[test]
fn a_postgres_restart_mid_run_is_survived_and_counted() {
    let Some(pg) = PrivatePostgres::start(&[]) else { return };
    // Dropped before the instance: its database goes while the server still runs.
    let db = ServerDb { kind: BackendKind::Postgres, base: pg.url("postgres"), name: "restart".into() };
    let url = db.url();
    storbench().args(["oltp", "load", "--db-size", "1MB", "--url", &url]).assert().success();
    let (_dir, child) = running_on(&db, &url, "14s", 4);
    pg.restart();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = json(&out.stdout);
    let r = &s["results"];
    assert_eq!(s["complete"], true, "{}\n{r}", s["warnings"]);
    assert!(r["reconnects"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["errors"]["by_kind"]["connection"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["opm"].as_f64().unwrap() > 0.0);
}
