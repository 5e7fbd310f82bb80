//! Test support: the database servers the backend tests use.
//!
//! A test asks for a server URL; where the server is not reachable it skips by
//! [`crate::testing::skip`]: saying how to enable it, or failing where the environment is
//! required (CI).

use super::BackendKind;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The base URL of the test server of `kind` (its database `test`), from
/// `STORBENCH_TEST_PG_URL` / `STORBENCH_TEST_MYSQL_URL` or the local default. None (after a
/// message) when it is down and servers are not required.
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
    let missing = format!("no {} server answers at {url}", kind.as_str());
    crate::testing::skip(&missing, &format!("start one there, or set {var} to one's URL"));
    None
}

/// A database name no other test uses: `sbtest_<tag>_<pid>_<n>`.
pub fn unique_db_name(tag: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("sbtest_{tag}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Samples `sampler` every `every` (an interval of its own each time) until `done` holds of a
/// sample, and gives that sample; fails after 10 s. Counters a server publishes late
/// (PostgreSQL's, about once a second) are waited for, not slept for.
pub fn sample_until(
    sampler: &mut dyn super::CounterSampler,
    every: Duration,
    done: impl Fn(&[Option<f64>; 7]) -> bool,
) -> [Option<f64>; 7] {
    let mut last = [None; 7];
    crate::testing::wait_until("the server's counters to show the work", Duration::from_secs(10), || {
        std::thread::sleep(every);
        last = sampler.sample();
        done(&last)
    });
    last
}
