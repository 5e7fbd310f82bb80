//! A private PostgreSQL instance, for a test that needs a server configured its own way
//! (statement logging, to capture a real client's log): initdb into a temp dir as the postgres
//! user, a free port of its own, its socket in that dir. Dropping it stops the server and
//! removes the dir, also when the test fails. The shared test server (127.0.0.1:5432) is never
//! reconfigured or restarted: other tests use it.

use crate::support::disk_tempdir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use storbench_bench::testing::skip;

/// How to get what a private instance needs.
const TO_ENABLE: &str =
    "run the tests as root with PostgreSQL's server programs installed (apt-get install postgresql)";

pub struct PrivatePostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
}

impl PrivatePostgres {
    /// A running instance with `settings` (name, value as postgresql.conf writes it) after
    /// initdb's; None, after saying what is missing, where it cannot be had (see `skip`).
    pub fn start(settings: &[(&str, &str)]) -> Option<Self> {
        Self::start_with(disk_tempdir(), settings)
    }

    /// [`PrivatePostgres::start`] with its data in a new directory under `parent` (a
    /// filesystem of the test's own).
    pub fn start_in(parent: &Path, settings: &[(&str, &str)]) -> Option<Self> {
        Self::start_with(tempfile::tempdir_in(parent).unwrap(), settings)
    }

    fn start_with(dir: tempfile::TempDir, settings: &[(&str, &str)]) -> Option<Self> {
        let bin = server_programs()?;
        owned_by_postgres(dir.path());
        let data = dir.path().join("data");
        as_postgres(&bin.join("initdb"), |c| {
            c.args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync", "-D"])
                .arg(&data)
        });
        let mut conf = std::fs::OpenOptions::new().append(true).open(data.join("postgresql.conf")).unwrap();
        std::io::Write::write_all(&mut conf, b"include = 'test.conf'\n").unwrap();
        // A port that was free a moment ago can be taken before the server binds it: try again.
        for _ in 0..3 {
            let port = free_port();
            let mut conf = format!(
                "port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n",
                dir.path().display()
            );
            for (name, value) in settings {
                conf.push_str(&format!("{name} = {value}\n"));
            }
            std::fs::write(data.join("test.conf"), conf).unwrap();
            let started = start_server(&bin, dir.path());
            if started.status.success() {
                return Some(PrivatePostgres { dir, bin, port });
            }
        }
        let log = std::fs::read_to_string(dir.path().join("pg_ctl.log")).unwrap_or_default();
        panic!("the private PostgreSQL instance did not start:\n{log}");
    }

    /// Stops the server (fast: every session is ended, as a restart ends them) and starts it
    /// again on the same port; panics, with its log, when it does not come back.
    pub fn restart(&self) {
        as_postgres(&self.bin.join("pg_ctl"), |c| {
            c.args(["-w", "-m", "fast", "-D"]).arg(self.dir.path().join("data")).arg("stop")
        });
        let started = start_server(&self.bin, self.dir.path());
        let log = std::fs::read_to_string(self.dir.path().join("pg_ctl.log")).unwrap_or_default();
        assert!(started.status.success(), "the private PostgreSQL instance did not start again:\n{log}");
    }

    /// `postgres://postgres@127.0.0.1:PORT/db`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// One of the server's programs (pgbench, ...) from the same installation.
    pub fn program(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }

    /// Runs `sql` in `db` with psql, its statements not logged (the test's own queries are no
    /// part of a captured log); panics on an error. Its output, rows a line, fields by `|`.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        let out = Command::new("psql")
            .env("PGOPTIONS", "-c log_statement=none")
            .args([&self.url(db), "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The directory the server's logging collector writes to (log_directory = 'log').
    pub fn log_dir(&self) -> PathBuf {
        self.dir.path().join("data/log")
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        // Immediate: nothing in it is kept; the temp dir goes right after.
        let _ = run_as_postgres(&self.bin.join("pg_ctl"), |c| {
            c.args(["-w", "-m", "immediate", "-D"]).arg(self.dir.path().join("data")).arg("stop")
        });
    }
}

/// Starts the instance whose data is `dir/data`, waiting until it accepts connections (60 s
/// at most), its log in `dir/pg_ctl.log`.
fn start_server(bin: &Path, dir: &Path) -> Output {
    run_as_postgres(&bin.join("pg_ctl"), |c| {
        c.args(["-w", "-t", "60", "-l"])
            .arg(dir.join("pg_ctl.log"))
            .arg("-D")
            .arg(dir.join("data"))
            .arg("start")
    })
}

/// The newest installed server's programs, or None after `skip` when this machine cannot start
/// a private instance (not root, no postgres user, no server programs, no psql).
fn server_programs() -> Option<PathBuf> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip(
            "a private PostgreSQL instance is started as the postgres user with runuser, which needs root",
            TO_ENABLE,
        );
        return None;
    }
    let has_user = Command::new("id").args(["-u", "postgres"]).output().is_ok_and(|o| o.status.success());
    let psql = Command::new("psql").arg("--version").output().is_ok_and(|o| o.status.success());
    let mut bins: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| ["initdb", "pg_ctl", "pgbench"].iter().all(|p| b.join(p).is_file()))
        .collect();
    // Newest by major version (numbers, so 17 after 9.6).
    bins.sort_by_key(|b| {
        let version = b.parent().and_then(Path::file_name).map(|v| v.to_string_lossy().into_owned());
        version.unwrap_or_default().split('.').map(|n| n.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>()
    });
    match bins.pop() {
        Some(bin) if has_user && psql => Some(bin),
        _ => {
            skip(
                "no PostgreSQL server programs (initdb, pg_ctl, pgbench under /usr/lib/postgresql/*/bin, a postgres user) or no psql",
                TO_ENABLE,
            );
            None
        }
    }
}

fn owned_by_postgres(dir: &Path) {
    let out = Command::new("chown").arg("postgres:").arg(dir).output().expect("chown runs");
    assert!(out.status.success(), "chown postgres: {}", String::from_utf8_lossy(&out.stderr));
}

/// `program` run as the postgres user with the arguments `args` adds.
fn run_as_postgres(program: &Path, args: impl FnOnce(&mut Command) -> &mut Command) -> Output {
    let mut cmd = Command::new("runuser");
    cmd.args(["-u", "postgres", "--"]).arg(program);
    args(&mut cmd).output().expect("runuser runs")
}

/// `run_as_postgres`, which must succeed.
fn as_postgres(program: &Path, args: impl FnOnce(&mut Command) -> &mut Command) {
    let out = run_as_postgres(program, args);
    assert!(
        out.status.success(),
        "{}: {}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A TCP port on 127.0.0.1 that nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().unwrap().port()
}
