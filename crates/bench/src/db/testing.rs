//! Test support: the database servers the backend tests use.
//!
//! A test asks for a server URL; where the server is not reachable it skips with a message
//! saying how to enable it, unless servers are required (`STORBENCH_REQUIRE_SERVERS=1`, or
//! `CI=true` as CI services set it), where a missing server fails the test.

use super::BackendKind;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The base URL of the test server of `kind` (its database `test`), from
/// `STORBENCH_TEST_PG_URL` / `STORBENCH_TEST_MYSQL_URL` or the local default. None (after a
/// message) when it is down and servers are not required.
#[allow(clippy::disallowed_macros)] // test support: the skip message goes to the test's output
pub fn server_url(kind: BackendKind) -> Option<String> {
    let (var, default, port) = match kind {
        BackendKind::Postgres => ("STORBENCH_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/test", 5432),
        BackendKind::Mysql => ("STORBENCH_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test", 3306),
        BackendKind::Sqlite => return Some(String::new()),
    };
    let url = std::env::var(var).unwrap_or_else(|_| default.to_owned());
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let up =
        std::env::var_os(var).is_some() || TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok();
    if up {
        return Some(url);
    }
    assert!(
        !servers_required(),
        "servers are required (STORBENCH_REQUIRE_SERVERS=1 or CI=true) but no {} server answers at {url}",
        kind.as_str()
    );
    eprintln!("skipped: no {} server at {url}; start one or set {var} to enable this test", kind.as_str());
    None
}

/// Whether a missing server fails a test instead of skipping it: under
/// `STORBENCH_REQUIRE_SERVERS=1`, and in CI (`CI=true`), where a skip would pass unseen.
fn servers_required() -> bool {
    let set = |var: &str, value: &str| std::env::var(var).is_ok_and(|v| v.eq_ignore_ascii_case(value));
    set("STORBENCH_REQUIRE_SERVERS", "1") || set("CI", "true")
}

/// A database name no other test uses: `sbtest_<tag>_<pid>_<n>`.
pub fn unique_db_name(tag: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("sbtest_{tag}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Samples `sampler` every `every` until `done` holds of a sample, and gives that sample; after
/// 10 s gives the last one, for the test's own assertion to fail on. Counters a server
/// publishes late (PostgreSQL's, about once a second) are waited for, not slept for.
pub fn sample_until(
    sampler: &mut dyn super::CounterSampler,
    every: Duration,
    done: impl Fn(&[Option<f64>; 7]) -> bool,
) -> [Option<f64>; 7] {
    let started = std::time::Instant::now();
    loop {
        std::thread::sleep(every);
        let values = sampler.sample();
        if done(&values) || started.elapsed() > Duration::from_secs(10) {
            return values;
        }
    }
}
