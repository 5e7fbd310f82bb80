//! Outside commands (issue 21, item 3): `--crash-cmd` has a time limit, its failure fails its
//! cycle and the run, its output goes to the bundle's log (never onto stdout, so `--json`
//! stays JSON), a stop request ends it and the crash writer at once, and neither outlives
//! storbench, even one killed outright; a `cmd:` power meter's children that call setsid end
//! with the run. Every process a command starts writes its pid into a file, and the tests
//! check that none of them is left running.

use crate::support::{
    bundle_summary, disk_tempdir, json, only_bundle, refused, stderr_text, stdout_json, storbench,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use storbench_bench::testing::wait_until;

/// `storbench integrity` with crash cycles on the small file set.
fn crash_args(target: &Path, results: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["integrity", "--target"].map(String::from).to_vec();
    args.push(target.display().to_string());
    args.extend(["--output-dir".to_owned(), results.display().to_string()]);
    args.extend(crate::integrity::SMALL.map(String::from));
    args.extend(["--crash-after", "1s", "--power", "none"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// A script line that records its shell's pid in `pids` and then runs `then`.
fn recorded(pids: &Path, then: &str) -> String {
    format!("echo $$ >> {}; {then}", pids.display())
}

/// A crash command that hangs: a shell and a child of it, both recorded.
fn hanging(pids: &Path) -> String {
    recorded(pids, &format!("sleep 1000 & echo $! >> {}; wait", pids.display()))
}

pub(crate) fn pids_in(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Whether process `pid` runs (exists and is not a zombie).
pub(crate) fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with(['Z', 'X'])))
}

/// The crash writers working on `target` (their command line names it).
fn writers_of(target: &Path) -> Vec<i32> {
    let needle = format!("--crash-writer\0--target\0{}\0", target.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| contains(&c, needle.as_bytes()))
        })
        .filter(|&pid| running(pid))
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Asserts that none of `pids` runs, allowing 2 s for the killed to go.
fn none_left(pids: &[i32], what: &str) {
    let until = Instant::now() + Duration::from_secs(2);
    while pids.iter().any(|&p| running(p)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|&p| running(p)).collect();
    for &pid in &left {
        // Leave the machine clean for the next test, then fail.
        signal_pid(pid, rustix::process::Signal::KILL);
    }
    assert!(left.is_empty(), "{what} left running: {left:?}");
}

/// A crash run on a temporary disk directory: its target, results and pid file.
struct Place {
    _dir: tempfile::TempDir,
    target: PathBuf,
    results: PathBuf,
    pids: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = disk_tempdir();
        let p = dir.path().to_owned();
        Place { target: p.join("t"), results: p.join("r"), pids: p.join("pids"), _dir: dir }
    }

    fn args(&self, extra: &[&str]) -> Vec<String> {
        crash_args(&self.target, &self.results, extra)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(only_bundle(&self.results).join("output.log")).unwrap()
    }
}

#[test]
fn trust_a_hanging_crash_command_is_killed_at_its_time_limit_and_fails_its_cycle() {
    let p = Place::new();
    let cmd = hanging(&p.pids);
    let began = Instant::now();
    let out = storbench()
        .args(p.args(&["--crash-cmd", &cmd, "--crash-cmd-timeout", "2s", "--crash-cycles", "3", "--json"]))
        .timeout(Duration::from_secs(120))
        .assert()
        .code(1);
    assert!(began.elapsed() < Duration::from_secs(60), "took {:?}", began.elapsed());
    let s = stdout_json(&out);
    assert_eq!(s["results"]["pass"], false, "{}", s["results"]);
    assert_eq!(s["complete"], true, "a failed cycle is no interruption");
    assert_eq!(s["results"]["crash"]["cycles"], 1, "the run stops at the failed cycle: {}", s["results"]);
    let warnings = s["warnings"].to_string();
    assert!(
        warnings.contains(
            "crash cycle 1 failed: --crash-cmd did not finish: killed at its time limit of 2 s (--crash-cmd-timeout); --crash-cmd ran "
        ),
        "{warnings}"
    );
    assert!(warnings.contains("crash cycles 2 to 3 were not run"), "{warnings}");
    // The real times: the command started near the planned point, ran its 2 s, the writer
    // was killed after it (not the planned delay shown as the kill time).
    let err = stderr_text(&out);
    let line =
        err.lines().find(|l| l.starts_with("crash cycle 1 of 3: FAILED")).unwrap_or_else(|| panic!("{err}"));
    let (ran, gone) =
        (seconds_after(line, "--crash-cmd ran "), seconds_after(line, "killed by storbench at "));
    assert!(ran >= seconds_after(line, "(planned "), "not before the planned point: {line}");
    assert!(gone >= ran + 1.9, "the writer was killed after the command's 2 s: {line}");
    assert!(
        warnings.contains("; the writer killed by storbench at "),
        "the real kill time is kept: {warnings}"
    );
    let pids = pids_in(&p.pids);
    assert_eq!(pids.len(), 2, "the command and its child ran: {pids:?}");
    none_left(&pids, "the timed-out command");
    none_left(&writers_of(&p.target), "the writer");
}

/// The number in `line` right after `label` ("... ran 0.74 s ...").
fn seconds_after(line: &str, label: &str) -> f64 {
    let rest = &line[line.find(label).unwrap_or_else(|| panic!("{label:?} in {line}")) + label.len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn trust_a_failing_crash_command_fails_its_cycle_with_its_status_and_its_output_stays_off_stdout() {
    let p = Place::new();
    let cmd = "echo printed-by-the-crash-command; echo the-bmc-said-no >&2; exit 3";
    let out = storbench().args(p.args(&["--crash-cmd", cmd, "--json"])).assert().code(1);
    let s = stdout_json(&out);
    assert_eq!(s["results"]["pass"], false);
    assert_eq!(s["results"]["crash"]["cycles"], 1, "the cycle was audited: {}", s["results"]);
    let warnings = s["warnings"].to_string();
    assert!(
        warnings.contains("crash cycle 1 failed: --crash-cmd failed (exit status: 3): the-bmc-said-no"),
        "{warnings}"
    );
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!stdout.contains("printed-by-the-crash-command"), "the command's output is on stdout");
    let log = p.log();
    assert!(log.contains("--crash-cmd said on stdout:\nprinted-by-the-crash-command"), "{log}");
    assert!(log.contains("--crash-cmd said on stderr:\nthe-bmc-said-no"), "{log}");
    none_left(&writers_of(&p.target), "the writer");
}

#[test]
fn trust_a_crash_command_that_prints_keeps_json_valid_and_its_output_in_the_log() {
    let p = Place::new();
    // A power cut that talks: it kills the writer and says so on stdout.
    let cmd = format!(
        "echo cutting power; pkill -KILL -f -- '[-]-crash-writer --target {}'; echo done >&2",
        p.target.display()
    );
    let out = storbench().args(p.args(&["--crash-cmd", &cmd, "--json"])).assert().success();
    let s = json(&out.get_output().stdout);
    assert_eq!(s["results"]["pass"], true, "{}", s["results"]);
    assert_eq!(s["results"]["crash"]["lost"], 0);
    let log = p.log();
    assert!(log.contains("--crash-cmd said on stdout:\ncutting power"), "{log}");
    let err = stderr_text(&out);
    assert!(err.contains("--crash-cmd ran ") && err.contains("exit status: 0"), "{err}");
    assert!(!err.contains("still running"), "the command ended the writer: {err}");
}

/// Starts a crash run whose command hangs, and waits until the command runs; returns the
/// storbench process, the command's pids and the writer's.
fn start_hanging(p: &Place) -> (Child, Vec<i32>, Vec<i32>) {
    let cmd = hanging(&p.pids);
    let child = std::process::Command::new(storbench().get_program())
        .args(p.args(&["--crash-cmd", &cmd, "--json"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while pids_in(&p.pids).len() < 2 {
        assert!(Instant::now() < until, "the crash command did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let writers = writers_of(&p.target);
    assert_eq!(writers.len(), 1, "one writer runs: {writers:?}");
    (child, pids_in(&p.pids), writers)
}

fn signal(child: &Child, signal: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_child(child);
    rustix::process::kill_process(pid, signal).unwrap();
}

/// Waits up to `limit` for `child` to exit; its exit code (None when a signal ended it).
fn exits_within(child: &mut Child, limit: Duration) -> Option<i32> {
    let sent = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if sent.elapsed() > limit {
            let _ = child.kill();
            panic!("storbench still ran {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn trust_sigterm_during_a_hanging_crash_command_stops_at_once_and_leaves_nothing_running() {
    let p = Place::new();
    let (mut child, pids, writers) = start_hanging(&p);
    signal(&child, rustix::process::Signal::TERM);
    assert_eq!(exits_within(&mut child, Duration::from_secs(3)), Some(130));
    none_left(&pids, "the crash command");
    none_left(&writers, "the writer");
    let s = bundle_summary(&p.results);
    assert_eq!(s["complete"], false);
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert!(stdout.is_empty() || serde_json::from_str::<serde_json::Value>(&stdout).is_ok(), "{stdout}");
}

#[test]
fn trust_a_second_sigterm_quits_at_once_and_still_leaves_nothing_running() {
    let p = Place::new();
    let (mut child, pids, writers) = start_hanging(&p);
    signal(&child, rustix::process::Signal::TERM);
    signal(&child, rustix::process::Signal::TERM);
    assert_eq!(exits_within(&mut child, Duration::from_secs(3)), Some(130));
    none_left(&pids, "the crash command");
    none_left(&writers, "the writer");
}

#[test]
fn trust_storbench_killed_outright_takes_its_writer_and_crash_command_along() {
    let p = Place::new();
    let (mut child, pids, writers) = start_hanging(&p);
    signal(&child, rustix::process::Signal::KILL);
    assert_eq!(exits_within(&mut child, Duration::from_secs(3)), None);
    // The writer and the command's shell die with storbench (the parent-death signal).
    none_left(&writers, "the writer");
    none_left(&pids[..1], "the crash command");
    // The shell's own child is left in the command's cgroup, which a SIGKILL gives storbench
    // no time to end: the next storbench to run a command ends it.
    let grandchild = pids[1];
    let cgroup = std::fs::read_to_string(format!("/proc/{grandchild}/cgroup")).unwrap_or_default();
    if !cgroup.lines().any(|l| l.starts_with("0::") && l.contains("/storbench-")) {
        eprintln!("no cgroup here: a SIGKILLed storbench's grandchildren are PID 1's");
        signal_pid(grandchild, rustix::process::Signal::KILL);
        return;
    }
    null_io(&p.results.join("next"), "cmd:echo 5").assert().success();
    none_left(&pids[1..], "the crash command's child");
}

#[test]
fn trust_zero_crash_cycles_or_a_zero_command_time_limit_is_refused_before_anything_is_written() {
    let p = Place::new();
    let err = refused(storbench().args(p.args(&["--crash-cycles", "0"])), "--crash-cycles");
    assert!(err.contains("0 crash cycles would test nothing; give 1 or more"), "{err}");
    let err = refused(
        storbench().args(p.args(&["--crash-cmd", "true", "--crash-cmd-timeout", "0"])),
        "--crash-cmd-timeout",
    );
    assert!(err.contains("a time limit of 0"), "{err}");
    assert!(!p.target.exists() && !p.results.exists(), "nothing was created");
}

#[test]
fn trust_a_power_meter_commands_children_that_call_setsid_end_with_the_run() {
    let dir = disk_tempdir();
    let pids = dir.path().join("pids");
    // One child in a session of its own (its output elsewhere), one daemon (double fork and
    // setsid) that keeps the meter's stdout open; then the reading.
    let me = |redirect: &str| recorded(&pids, &format!("exec sleep 300{redirect}"));
    // The reading comes once both children have recorded their pids (at most 10 s): on a
    // loaded machine a child not yet started when the reading came was ended before it could.
    let wait = format!(
        "n=0; while [ \"$(cat {} 2>/dev/null | wc -l)\" -lt 2 ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done",
        pids.display()
    );
    let meter = format!(
        "cmd:setsid sh -c '{}' & (setsid sh -c '{}' &); {wait}; echo 100",
        me(" >/dev/null 2>&1"),
        me("")
    );
    let out = null_io(&dir.path().join("results"), &meter).assert().success();
    let s = stdout_json(&out);
    assert!(!s["warnings"].to_string().contains("power"), "the meter gave its readings: {}", s["warnings"]);
    let started = pids_in(&pids);
    assert!(started.len() >= 2, "the meter ran and started its children: {started:?}");
    none_left(&started, "the meter's children");
}

/// `storbench io` on the null engine for 2 s with the meter `power`, its JSON on stdout.
fn null_io(results: &Path, power: &str) -> assert_cmd::Command {
    let mut cmd = storbench();
    cmd.args(["io", "--engine", "null", "--runtime", "2s", "--ramp", "0", "--json", "--power", power])
        .arg("--output-dir")
        .arg(results)
        .timeout(Duration::from_secs(60));
    cmd
}

#[test]
fn trust_a_writer_that_dies_before_its_crash_point_fails_its_cycle() {
    let p = Place::new();
    let mut args = p.args(&["--json"]);
    // The crash would come 15-30 s in; the writer is killed from outside long before.
    let after = args.iter().position(|a| a == "1s").unwrap();
    args[after] = "30s".into();
    let mut child = std::process::Command::new(storbench().get_program())
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Its activities have started once its log file holds data: the files' creation and fill
    // write none there.
    let log = p.target.join("storbench-integrity.ldf");
    let logging = || std::fs::metadata(&log).is_ok_and(|m| std::os::unix::fs::MetadataExt::blocks(&m) > 0);
    wait_until("the writer's activities to start", Duration::from_secs(60), || {
        assert!(child.try_wait().unwrap().is_none(), "storbench ended before its writer was killed");
        logging()
    });
    for pid in writers_of(&p.target) {
        signal_pid(pid, rustix::process::Signal::KILL);
    }
    assert_eq!(exits_within(&mut child, Duration::from_secs(30)), Some(1));
    let mut stdout = Vec::new();
    std::io::Read::read_to_end(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let s = json(&stdout);
    assert_eq!(s["results"]["pass"], false);
    let warnings = s["warnings"].to_string();
    assert!(warnings.contains("crash cycle 1 failed: the writer ended before its crash point"), "{warnings}");
    assert!(warnings.contains("SIGKILL"), "{warnings}");
}

fn signal_pid(pid: i32, signal: rustix::process::Signal) {
    let _ = rustix::process::kill_process(rustix::process::Pid::from_raw(pid).unwrap(), signal);
}
