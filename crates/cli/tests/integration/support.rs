//! Helpers shared by the integration tests.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use storbench_bench::db::BackendKind;
use storbench_bench::db::testing::{server_url, unique_db_name};
use storbench_bench::testing::wait_until;

/// The storbench binary with a clean, predictable environment.
pub fn storbench() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("storbench"));
    cmd.env("RUST_BACKTRACE", "1").env_remove("RUST_LIB_BACKTRACE");
    cmd
}

/// A temp dir on the real disk (not tmpfs), so O_DIRECT and disk counters are exercised.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = std::env::var_os("STORBENCH_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    tempfile::Builder::new().prefix("storbench-test-").tempdir_in(base).expect("temp dir")
}

/// The only bundle directory under `root` (for single-job runs).
pub fn only_bundle(root: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> =
        std::fs::read_dir(root).expect("results dir").map(|e| e.unwrap().path()).collect();
    assert_eq!(dirs.len(), 1, "expected one bundle in {}: {dirs:?}", root.display());
    dirs[0].clone()
}

pub fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

/// `storbench io --target DIR --output-dir DIR/results --ramp 0 ARGS`, expected to succeed.
pub fn io_in(dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    storbench()
        .args(["io", "--ramp", "0", "--target"])
        .arg(dir)
        .arg("--output-dir")
        .arg(dir.join("results"))
        .args(args)
        .assert()
        .success()
}

/// Standard output parsed as JSON.
pub fn stdout_json(a: &assert_cmd::assert::Assert) -> serde_json::Value {
    json(&a.get_output().stdout)
}

pub fn stderr_text(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// Runs `cmd` and asserts a refusal of bad input: exit code 2 and a message holding `needle`,
/// without a panic or backtrace. Returns the message.
pub fn refused(cmd: &mut Command, needle: &str) -> String {
    let err = stderr_text(&cmd.assert().code(2));
    assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    err
}

/// The summary.json of the only bundle under `root`.
pub fn bundle_summary(root: &Path) -> serde_json::Value {
    json(&std::fs::read(only_bundle(root).join("summary.json")).expect("summary.json"))
}

/// Starts `storbench ARGS --output-dir RESULTS`, sends SIGINT once `ready()` holds (asked every
/// 20 ms, for up to two minutes), and returns the summary of the only bundle under `results`
/// once it exited 130 within 3 s of the signal, marked incomplete.
pub fn interrupt_when(args: &[&str], results: &Path, ready: &dyn Fn() -> bool) -> serde_json::Value {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(storbench().get_program())
        .args(args)
        .arg("--output-dir")
        .arg(results)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the run to be ready to interrupt", Duration::from_secs(120), || {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("storbench ended ({status}) before it was interrupted");
        }
        ready()
    });
    let sent = Instant::now();
    std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let status = child.wait().unwrap();
    assert!(sent.elapsed() < Duration::from_secs(3), "stopped in {:?}", sent.elapsed());
    assert_eq!(status.code(), Some(130));
    let s = bundle_summary(results);
    assert_eq!(s["complete"], false);
    s
}

/// How many bundles under `results` have a measured second in their series yet: runs whose
/// measured phase has begun.
pub fn measuring(results: &Path) -> usize {
    let bundles = std::fs::read_dir(results).into_iter().flatten().flatten();
    let measured = |bundle: &std::fs::DirEntry| {
        std::fs::read_to_string(bundle.path().join("timeseries.csv"))
            .is_ok_and(|csv| csv.contains(",measure,"))
    };
    bundles.filter(measured).count()
}

/// A 1 MB DVD Store database loaded into a new SQLite file `ds3.db` in `dir`, then `oltp_run`
/// on it with `extra` into `results`, expected to succeed.
pub fn sqlite_oltp_run(dir: &Path, results: &Path, extra: &[&str]) {
    let db = dir.join("ds3.db");
    storbench().args(["oltp", "load", "--db-size", "1MB", "--path"]).arg(&db).assert().success();
    let out = oltp_run(&["--path", db.to_str().unwrap()], results, extra).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `storbench oltp run --db-size 1MB --json --output-dir RESULTS TARGET EXTRA` as a plain
/// command, to spawn (and interrupt or disturb) or to assert on.
pub fn oltp_run(target: &[&str], results: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(storbench().get_program());
    cmd.env("RUST_BACKTRACE", "1").env_remove("RUST_LIB_BACKTRACE");
    cmd.args(["oltp", "run", "--db-size", "1MB", "--json", "--settle-time", "0", "--output-dir"])
        .arg(results)
        .args(target)
        .args(extra);
    cmd
}

/// `oltp_run` spawned with its output captured, for a test to disturb while it runs.
pub fn spawn_oltp_run(target: &[&str], results: &Path, extra: &[&str]) -> std::process::Child {
    oltp_run(target, results, extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("storbench starts")
}

/// An `oltp run` of `run_time` with `threads` threads on `url` (database `db`, loaded),
/// spawned, once its measured phase has begun (a measured second in its series) with its
/// sessions on the server; its bundle goes under `results` in the directory returned.
pub fn running_on(
    db: &ServerDb,
    url: &str,
    run_time: &str,
    threads: u32,
) -> (tempfile::TempDir, std::process::Child) {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let timing = ["--warmup-time", "0", "--run-time", run_time, "--n-threads", &threads.to_string()];
    let mut child = spawn_oltp_run(&["--url", url], &results, &timing);
    let sql = match db.kind {
        BackendKind::Postgres => {
            format!("SELECT count(*) FROM pg_stat_activity WHERE datname = '{}'", db.name)
        }
        _ => format!("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE db = '{}'", db.name),
    };
    // Sessions alone are not enough: the checks and the reset before the run open and drop
    // sessions of their own (a kill then found none on a loaded machine).
    let sessions = || db.sql(&sql).trim().parse::<u32>().is_ok_and(|found| found >= threads);
    wait_until(
        "the run's measured phase with its sessions on the server",
        std::time::Duration::from_secs(120),
        || {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the run ended ({status}) before it was disturbed");
            }
            measuring(&results) > 0 && sessions()
        },
    );
    (dir, child)
}

/// A server database for one test, dropped (with its pristine copy) at the end.
pub struct ServerDb {
    pub kind: BackendKind,
    pub base: String,
    pub name: String,
}

impl ServerDb {
    pub fn new(kind: BackendKind, tag: &str) -> Option<Self> {
        let base = server_url(kind)?;
        Some(ServerDb { kind, base, name: unique_db_name(tag) })
    }

    /// The base URL with this test's database name.
    pub fn url(&self) -> String {
        let (server, _) = self.base.rsplit_once('/').expect("a URL with a database");
        format!("{server}/{}", self.name)
    }

    /// Runs SQL on the server's base database with the server's own client.
    pub fn sql(&self, sql: &str) -> String {
        self.sql_on(&self.base, None, sql)
    }

    /// Runs SQL in this test's database; panics when the server reports an error.
    pub fn sql_in(&self, sql: &str) -> String {
        self.sql_on(&self.url(), Some(&self.name), sql)
    }

    fn sql_on(&self, url: &str, db: Option<&str>, sql: &str) -> String {
        let out = match self.kind {
            BackendKind::Postgres => std::process::Command::new("psql").args([url, "-XAtc", sql]).output(),
            _ => std::process::Command::new("mariadb")
                .args(["-h", "127.0.0.1", "-u", "root", "-N", "-e", sql])
                .args(db.map(|d| format!("-D{d}")))
                .output(),
        }
        .expect("the server's client runs");
        if db.is_some() {
            assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for ServerDb {
    fn drop(&mut self) {
        let like = format!("{}%", self.name);
        match self.kind {
            BackendKind::Postgres => {
                let dbs = self.sql(&format!("SELECT datname FROM pg_database WHERE datname LIKE '{like}'"));
                for db in dbs.lines().filter(|l| !l.is_empty()) {
                    self.sql(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"));
                }
            }
            _ => {
                let dbs = self.sql(&format!(
                    "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE '{like}'"
                ));
                for db in dbs.lines().filter(|l| !l.is_empty()) {
                    self.sql(&format!("DROP DATABASE IF EXISTS `{db}`"));
                }
            }
        }
    }
}

/// The jobs of the sqlio profile set, by name.
pub const SQLIO: [&str; 6] = [
    "randread-8k-qd4",
    "randwrite-8k-qd4",
    "read-64k-qd4",
    "write-64k-qd4",
    "randread-8k-qd1",
    "randwrite-8k-qd1",
];
