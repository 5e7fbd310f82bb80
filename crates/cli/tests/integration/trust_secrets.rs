//! Issue 12, classes 4 and 12: no password a user gives storbench is printed or written
//! anywhere (plan urls, --power URLs, plan errors, the bundle's plan copy, reports), and a
//! power meter command never outlives the run, nor does a meter that gives nothing go unsaid.

use crate::support::{disk_tempdir, json, refused, storbench};
use std::path::{Path, PathBuf};
use std::process::Command;
use storbench_bench::db::BackendKind;
use storbench_bench::db::testing::{server_url, unique_db_name};

/// The password put everywhere a user can put one; it must never come back out.
const PASSWORD: &str = "Zk8-sekrit-Q4";

/// A PostgreSQL database for one test, reached with [`PASSWORD`] (trust authentication
/// accepts any), dropped with its copies at the end.
struct PasswordDb {
    base: String,
    name: String,
}

impl PasswordDb {
    fn new() -> Option<Self> {
        Some(PasswordDb { base: server_url(BackendKind::Postgres)?, name: unique_db_name("secret") })
    }

    /// `postgres://user:PASSWORD@host/<this test's database>`.
    fn url(&self) -> String {
        let (server, _) = self.base.rsplit_once('/').expect("a URL with a database");
        let (scheme, rest) = server.split_once("://").expect("a URL");
        let (user, host) = rest.rsplit_once('@').expect("a URL with a user");
        let user = user.split(':').next().unwrap_or(user);
        format!("{scheme}://{user}:{PASSWORD}@{host}/{}", self.name)
    }
}

impl Drop for PasswordDb {
    fn drop(&mut self) {
        let psql = |sql: &str| Command::new("psql").args([&self.base, "-XAtc", sql]).output();
        let like = format!("SELECT datname FROM pg_database WHERE datname LIKE '{}%'", self.name);
        let Ok(out) = psql(&like) else { return };
        for db in String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()) {
            let _ = psql(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"));
        }
    }
}

/// A Redfish URL with [`PASSWORD`] for a local port nothing listens on (the meter fails).
fn redfish_power() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("redfish:http://admin:{PASSWORD}@127.0.0.1:{port}/redfish/v1/Chassis/1/Power")
}

/// A quick evaluation plan on `dir/a`: an io run, and an oltp run on `url` when given.
fn plan_text(dir: &Path, url: Option<&str>) -> String {
    std::fs::create_dir_all(dir.join("a")).unwrap();
    let mut text = format!(
        "name = \"secret\"\n[method]\nrepetitions = 1\nidle_settle = 0\nidle_power = 0\n\
         [[configuration]]\nname = \"a\"\ntarget = \"{}\"\n",
        dir.join("a").display()
    );
    if let Some(url) = url {
        text += &format!("url = [\"{url}\"]\n");
    }
    text += "[[workload]]\nkind = \"io\"\nlabel = \"rr\"\nrw = \"randread\"\nsize = \"8MiB\"\nruntime = 1\nramp = 0\n";
    if url.is_some() {
        text += "[[workload]]\nkind = \"oltp\"\ndb_size = \"1MB\"\nrun_time = \"2s\"\nwarmup_time = \"0s\"\n\
                 n_threads = 2\nsettle_time = 0\n";
    }
    text
}

/// What a command printed, both streams.
fn printed(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Every file under `root` that holds `needle`.
fn files_holding(root: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path);
            }
        }
    }
    found
}

/// Runs `plan` with a Redfish meter holding [`PASSWORD`], checks what the bundle keeps (the
/// plan's url and the meter, passwords hidden), resumes it (which needs the passwords given
/// again) and renders its report; returns all they printed.
fn evaluate_resume_and_report(tmp: &Path, plan: &Path, with_url: bool) -> String {
    let results = tmp.join("results");
    let run = storbench()
        .arg("run")
        .arg(plan)
        .args(["--power", &redfish_power()])
        .arg("--output-dir")
        .arg(&results)
        .output()
        .unwrap();
    let mut output = printed(&run);
    assert_eq!(run.status.code(), Some(0), "{output}");
    let dir = std::fs::read_dir(&results).unwrap().next().unwrap().unwrap().path();
    let method = std::fs::read_to_string(dir.join("method.json")).unwrap();
    assert!(method.contains("redfish:http://admin:***@127.0.0.1:"), "{method}");
    if with_url {
        let copy = std::fs::read_to_string(dir.join("plan.toml")).unwrap();
        assert!(copy.contains(":***@127.0.0.1"), "the plan copy keeps its url, password hidden: {copy}");
        let evaluation = json(&std::fs::read(dir.join("evaluation.json")).unwrap());
        let oltp = evaluation["runs"].as_array().unwrap().iter().find(|r| r["kind"] == "oltp").unwrap();
        assert_eq!(oltp["status"], "done", "{oltp}");
        let without_plan = storbench().arg("run").arg("--resume").arg(&dir).output().unwrap();
        output += &printed(&without_plan);
        assert!(printed(&without_plan).contains("passwords hidden"), "{}", printed(&without_plan));
    }
    let resume = |args: &[&str]| {
        let mut cmd = storbench();
        cmd.arg("run").arg("--resume").arg(&dir);
        if with_url {
            cmd.arg(plan);
        }
        cmd.args(args).output().unwrap()
    };
    let without_meter = resume(&[]);
    output += &printed(&without_meter);
    assert_eq!(without_meter.status.code(), Some(2), "{}", printed(&without_meter));
    assert!(printed(&without_meter).contains("password hidden"), "{}", printed(&without_meter));
    let resumed = resume(&["--power", "none"]);
    output += &printed(&resumed);
    assert_eq!(resumed.status.code(), Some(0), "{}", printed(&resumed));
    output + &printed(&storbench().arg("report").arg(&dir).output().unwrap())
}

/// A plan that is not TOML on its url line (a comma missing) is refused quoting that line;
/// returns what was printed.
fn refuse_a_broken_url_line(tmp: &Path, url: Option<&str>) -> String {
    let bad = tmp.join("bad.toml");
    let bad_url = url.map_or_else(|| format!("postgres://postgres:{PASSWORD}@127.0.0.1:1/x"), str::to_owned);
    let text = plan_text(tmp, None).replace("target", &format!("url = [\"{bad_url}\" \"x\"]\ntarget"));
    std::fs::write(&bad, text).unwrap();
    let err =
        refused(storbench().arg("run").arg(&bad).arg("--output-dir").arg(tmp.join("results")), "bad.toml:");
    assert!(err.contains(":***@"), "the line is shown, its password hidden: {err}");
    err
}

#[test]
fn a_password_given_anywhere_is_never_printed_or_written() {
    let db = PasswordDb::new();
    let url = db.as_ref().map(PasswordDb::url);
    let tmp = disk_tempdir();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(&plan, plan_text(tmp.path(), url.as_deref())).unwrap();
    let output = evaluate_resume_and_report(tmp.path(), &plan, url.is_some())
        + &refuse_a_broken_url_line(tmp.path(), url.as_deref());
    assert!(!output.contains(PASSWORD), "storbench printed the password:\n{output}");
    let mut holding = files_holding(tmp.path(), PASSWORD);
    holding.sort();
    assert_eq!(holding, [tmp.path().join("bad.toml"), plan], "only the user's own plans hold it");
}

/// Processes whose command line is exactly `command`.
fn processes_running(command: &str) -> String {
    let out = Command::new("pgrep").args(["-f", &format!("^{command}$")]).output().expect("pgrep runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A meter command no other process runs (so that pgrep finds only this test's), which never
/// answers.
fn hanging_meter(tag: u32) -> String {
    format!("sleep 100.{}{tag}", std::process::id())
}

/// Waits up to 2 s for every process running `command` to end; whether they did.
fn all_ended(command: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while !processes_running(command).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    processes_running(command).is_empty()
}

#[test]
fn a_meter_command_that_never_answers_ends_with_the_run_and_its_silence_is_a_warning() {
    let tmp = disk_tempdir();
    let meter = hanging_meter(1);
    let results = tmp.path().join("results");
    let run = storbench()
        .args(["io", "--ramp", "0", "--runtime", "1", "--size", "8MiB", "--power", &format!("cmd:{meter}")])
        .arg("--target")
        .arg(tmp.path())
        .arg("--output-dir")
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", printed(&run));
    assert!(all_ended(&meter), "the meter command outlived storbench");
    let summary = crate::support::bundle_summary(&results);
    let warnings = summary["warnings"].to_string();
    assert!(warnings.contains("power meter") && warnings.contains("gave no reading"), "{warnings}");
    assert!(printed(&run).contains("gave no reading"), "the terminal says it too: {}", printed(&run));
}

#[test]
fn an_interrupted_run_ends_its_meter_command_too() {
    let tmp = disk_tempdir();
    let meter = hanging_meter(2);
    let results = tmp.path().join("results");
    let target = tmp.path().display().to_string();
    let power = format!("cmd:{meter}");
    let args =
        ["io", "--ramp", "0", "--runtime", "60", "--size", "8MiB", "--power", &power, "--target", &target];
    let started =
        || !processes_running(&meter).is_empty() && results.read_dir().is_ok_and(|mut d| d.next().is_some());
    crate::support::interrupt_when(&args, &results, &started);
    assert!(all_ended(&meter), "the meter command outlived the interrupted storbench");
}

#[test]
fn a_power_file_that_is_a_device_is_refused_before_anything_runs() {
    let tmp = disk_tempdir();
    let results = tmp.path().join("results");
    let err = refused(
        storbench()
            .args(["io", "--runtime", "1", "--power", "file:/dev/zero", "--target"])
            .arg(tmp.path())
            .arg("--output-dir")
            .arg(&results),
        "/dev/zero is a character device, not a regular file",
    );
    assert!(err.contains("--power"), "{err}");
    assert!(!results.exists(), "nothing is written for a refused meter");
}
