//! Test support for every crate's tests: the one rule for a test its machine cannot run, and
//! waiting on a condition instead of a fixed pause.
//!
//! A test that lacks a piece of its environment (root, loop devices, a filesystem's tools,
//! FUSE, io_uring, a block device, a writable cgroup v2, a browser, a database server) calls
//! [`skip`]. On a user's machine that says on stderr what is missing and how to enable the
//! test, and the test returns. Where the environment is required it fails instead, so no test
//! passes by skipping: under `CI=true` (set by `.ci/run`, and by most CI systems), and under
//! the older `STORBENCH_REQUIRE_SERVERS=1` and `STORBENCH_REQUIRE_BROWSER=1`, which are aliases
//! of `CI=true`.

use std::time::{Duration, Instant};

/// A host sampler that samples nothing: a workload's tests on the run driver, where the
/// host's counters are not what is tested.
pub struct NoHost;

impl crate::run::Beside for NoHost {
    fn sample(&mut self) -> storbench_report::SystemSample {
        storbench_report::SystemSample::default()
    }
}

/// The variables that make every environment skip a failure, and the value each needs.
const REQUIRED_BY: [(&str, &str); 3] =
    [("CI", "true"), ("STORBENCH_REQUIRE_SERVERS", "1"), ("STORBENCH_REQUIRE_BROWSER", "1")];

/// Whether this environment must run every test (CI): see the module doc.
pub fn environment_required() -> bool {
    required_in(|var| std::env::var(var).ok())
}

/// Whether the environment `lookup` reads requires every test.
fn required_in(lookup: impl Fn(&str) -> Option<String>) -> bool {
    REQUIRED_BY.iter().any(|(var, value)| lookup(var).is_some_and(|v| v.eq_ignore_ascii_case(value)))
}

/// Skips the calling test, which lacks `missing` here: says so with `to_enable` (what a user
/// does to run it) on the terminal, or fails the test where the environment is required. A
/// test returns right after: `return skip(..)`.
///
/// The note is written to the process's stderr itself, not through `eprintln!`, which the
/// test harness captures and shows only for a failing test: a skipped test would look like
/// one that passed.
#[track_caller]
pub fn skip(missing: &str, to_enable: &str) {
    if environment_required() {
        let set: Vec<String> = REQUIRED_BY
            .iter()
            .filter_map(|(var, _)| std::env::var(var).ok().map(|v| format!("{var}={v}")))
            .collect();
        panic!("this test cannot be skipped here ({}): {missing}; {to_enable}", set.join(" "));
    }
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let note = format!("\nSKIPPED {test}: {missing}; to run this test: {to_enable}\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes());
}

/// Asks `condition` every 20 ms until it holds, for at most `limit`; fails the test saying
/// what it waited for when it never does. The limit is generous: a loaded machine is slow,
/// and a condition that holds ends the wait at once.
#[track_caller]
pub fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < limit, "waited {limit:?} for {what}; it did not happen");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_true_and_the_older_require_variables_each_require_the_environment() {
        let only =
            |set: &'static str, value: &'static str| move |var: &str| (var == set).then(|| value.to_owned());
        assert!(required_in(only("CI", "true")));
        assert!(required_in(only("STORBENCH_REQUIRE_SERVERS", "1")));
        assert!(required_in(only("STORBENCH_REQUIRE_BROWSER", "1")));
        assert!(!required_in(|_| None), "a user's machine");
        assert!(!required_in(only("CI", "false")));
        assert!(!required_in(only("STORBENCH_REQUIRE_SERVERS", "0")));
    }

    #[test]
    fn a_wait_ends_when_its_condition_holds_and_fails_naming_it_when_it_never_does() {
        let mut asked = 0;
        wait_until("the third question", Duration::from_secs(60), || {
            asked += 1;
            asked == 3
        });
        assert_eq!(asked, 3);
        let never = std::panic::catch_unwind(|| wait_until("nothing", Duration::from_millis(50), || false));
        let message = never.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains("waited 50ms for nothing"), "{message}");
    }
}
