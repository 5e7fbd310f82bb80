//! Issue 12's file and process classes: a data file counts only when its fill finished; one
//! storbench per target and per evaluation; a closed terminal or a full output directory never
//! loses what was measured.

use crate::support::{disk_tempdir, json, only_bundle, stderr_text, storbench};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use storbench_bench::testing::{skip, wait_until};

fn spawn(args: &[&str], stderr: Stdio) -> Child {
    Command::new(storbench().get_program())
        .args(args)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("storbench starts")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

#[test]
fn a_data_file_whose_fill_was_killed_is_filled_again_and_never_measured() {
    let tmp = disk_tempdir();
    let data = tmp.path().join("storbench-io.dat");
    let results = tmp.path().join("results");
    let args = ["io", "--target", path_str(tmp.path()), "--size", "1GiB", "--runtime", "1s", "--ramp", "0"];
    let mut child = spawn(&[&args[..], &["--output-dir", path_str(&results)]].concat(), Stdio::null());
    // Killed once the fill has written its first chunk (the file is reserved, as zeros, first).
    let first_chunk_written = || {
        let mut head = [0u8; 4096];
        std::fs::File::open(&data)
            .and_then(|f| f.read_exact_at(&mut head, 0))
            .is_ok_and(|()| head != [0; 4096])
    };
    wait_until("the fill to write its first chunk", Duration::from_secs(60), first_chunk_written);
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    assert!(data.exists(), "the killed fill left its file");
    // A write workload on it: before, "storbench did not create it"; a read one measured zeros.
    let rerun =
        storbench().args(args).args(["--rw", "randwrite", "--output-dir"]).arg(&results).assert().success();
    let err = stderr_text(&rerun);
    assert!(err.contains("was left partly filled") && err.contains("filling it again"), "{err}");
    let again = storbench().args(args).args(["--output-dir"]).arg(&results).assert().success();
    assert!(!stderr_text(&again).contains("filling"), "a finished fill is reused as it is");
}

#[test]
fn a_second_storbench_on_a_busy_target_is_refused_naming_the_first() {
    let tmp = disk_tempdir();
    let results = tmp.path().join("results");
    let dir = path_str(tmp.path());
    let first_args = ["io", "--target", dir, "--size", "16MiB", "--runtime", "30s", "--ramp", "0"];
    let mut first = spawn(&[&first_args[..], &["--output-dir", path_str(&results)]].concat(), Stdio::null());
    wait_until("the first run's bundle", Duration::from_secs(20), || {
        std::fs::read_dir(&results).is_ok_and(|mut d| d.next().is_some())
    });
    let second = storbench()
        .args(["io", "--target", dir, "--rw", "randrw", "--verify", "--runtime", "1s", "--output-dir"])
        .arg(tmp.path().join("second"))
        .assert()
        .code(2);
    let err = stderr_text(&second);
    assert!(
        err.contains("in use by another storbench") && err.contains(&format!("pid {}", first.id())),
        "{err}"
    );
    assert!(!tmp.path().join("second").exists(), "the refused run wrote nothing");
    first.kill().unwrap();
    first.wait().unwrap();
}

#[test]
fn resuming_an_evaluation_that_is_still_running_is_refused() {
    let tmp = disk_tempdir();
    std::fs::create_dir(tmp.path().join("a")).unwrap();
    let plan = tmp.path().join("plan.toml");
    let text = format!(
        "name = \"busy\"\n[method]\nidle_settle = 0\nidle_power = 0\nrepetitions = 1\npower = \"none\"\n\
         [[configuration]]\nname = \"a\"\ntarget = \"{}\"\n\
         [[workload]]\nkind = \"io\"\nrw = \"randread\"\nsize = \"8MiB\"\nruntime = 30\nramp = 0\n",
        tmp.path().join("a").display()
    );
    std::fs::write(&plan, text).unwrap();
    let results = tmp.path().join("results");
    let mut running = spawn(&["run", path_str(&plan), "--output-dir", path_str(&results)], Stdio::null());
    let eval_dir = || std::fs::read_dir(&results).ok()?.next()?.ok().map(|e| e.path());
    wait_until("evaluation.json", Duration::from_secs(20), || {
        eval_dir().is_some_and(|d| d.join("evaluation.json").exists())
    });
    let dir: PathBuf = eval_dir().unwrap();
    let before = std::fs::read(dir.join("evaluation.json")).unwrap();
    let resume = storbench().args(["run", "--resume"]).arg(&dir).assert().code(2);
    let err = stderr_text(&resume);
    assert!(
        err.contains("in use by another storbench") && err.contains(&format!("pid {}", running.id())),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.join("evaluation.json")).unwrap(),
        before,
        "the refused resume wrote nothing"
    );
    running.kill().unwrap();
    running.wait().unwrap();
}

#[test]
fn a_closed_stderr_ends_no_run_and_loses_no_result() {
    let tmp = disk_tempdir();
    let results = tmp.path().join("results");
    let mut child = Command::new(storbench().get_program())
        .args([
            "io",
            "--engine",
            "null",
            "--runtime",
            "2s",
            "--ramp",
            "0",
            "--output-dir",
            path_str(&results),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // As `2>&1 | head -1` does once it has its line: the reader goes away.
    drop(child.stderr.take());
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "no abort (134) and no internal error");
    let summary = json(&std::fs::read(only_bundle(&results).join("summary.json")).unwrap());
    assert_eq!(summary["complete"], true);
    assert!(summary["results"]["read"]["ios"].as_u64().unwrap() > 0);
}

/// A tmpfs of `kib` KiB at a new directory; None (with a note) where mounting is not allowed.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(kib: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip("cannot mount a tmpfs here", "run the tests as root");
            return None;
        }
        Some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_full_output_directory_keeps_the_summary_with_the_results_and_says_what_is_missing() {
    let Some(fs) = Tmpfs::mount(512) else { return };
    // Leave about 276 KiB: room for the bundle's start and its reserve, not for 8 s of rows.
    let free = |p: &Path| {
        let out = Command::new("df").args(["-k", "--output=avail"]).arg(p).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().last().unwrap().trim().parse::<u64>().unwrap()
    };
    let avail = free(fs.0.path());
    std::fs::write(fs.0.path().join("filler"), vec![1u8; ((avail - 276) * 1024) as usize]).unwrap();
    let results = fs.0.path().join("results");
    let out = storbench()
        .args(["io", "--engine", "null", "--runtime", "8s", "--ramp", "0", "--power", "none", "--output-dir"])
        .arg(&results)
        .assert()
        .code(2);
    let err = stderr_text(&out);
    assert!(err.contains("is incomplete") && err.contains("summary.json holds the results"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let summary = json(&std::fs::read(only_bundle(&results).join("summary.json")).unwrap());
    assert!(summary["results"]["read"]["ios"].as_u64().unwrap() > 0, "the results are kept: {summary}");
    assert!(summary["phases"]["measured_s"].as_f64().unwrap() > 7.0);
    let warnings = summary["warnings"].to_string();
    assert!(warnings.contains("stops at"), "the summary says which file is cut: {warnings}");
}

#[test]
fn a_refused_target_is_explained_once() {
    let tmp = disk_tempdir();
    let file = tmp.path().join("theirs.dat");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    if !Command::new("chattr").arg("+i").arg(&file).status().is_ok_and(|s| s.success()) {
        return skip("chattr +i is not allowed here", "run the tests as root on ext4 (STORBENCH_TEST_DIR)");
    }
    let out = storbench()
        .args(["io", "--rw", "randwrite", "--force", "--runtime", "1s", "--target"])
        .arg(&file)
        .arg("--output-dir")
        .arg(tmp.path().join("results"))
        .assert()
        .code(2);
    let _ = Command::new("chattr").arg("-i").arg(&file).status();
    let err = stderr_text(&out);
    assert_eq!(err.matches("is not writable").count(), 1, "said once: {err}");
    assert!(err.contains("lsattr"), "the fix names the attribute: {err}");
    assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 1 << 20], "the file is untouched");
}

#[test]
fn an_edited_report_is_never_overwritten() {
    let tmp = disk_tempdir();
    let results = tmp.path().join("results");
    storbench()
        .args(["io", "--engine", "null", "--runtime", "1s", "--ramp", "0", "--power", "none", "--output-dir"])
        .arg(&results)
        .assert()
        .success();
    let bundle = only_bundle(&results);
    let report = || storbench().arg("report").arg(&bundle).assert();
    report().success();
    report().success(); // its own, unedited report is replaced
    let md = bundle.join("report.md");
    let edited = std::fs::read_to_string(&md).unwrap() + "\nMy notes: the SSD was replaced on Monday.\n";
    std::fs::write(&md, &edited).unwrap();
    let err = stderr_text(&report().code(2));
    assert!(err.contains("report.md was edited since storbench wrote it"), "{err}");
    assert_eq!(std::fs::read_to_string(&md).unwrap(), edited, "the edit is kept");
}

/// A link planted at the name a run's bundle would take (dangling, so following it would make
/// a directory wherever it points) does not stop the run: the bundle takes the next free name,
/// and the link is left as it was.
#[test]
fn a_link_at_the_next_bundle_name_is_passed_over_for_the_next_free_one() {
    let dir = crate::support::disk_tempdir();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let mut planted = Vec::new();
    // Every second the run may start in, as its local time names it.
    for t in now..now + 20 {
        let out = std::process::Command::new("date")
            .args(["-d", &format!("@{t}"), "+%Y%m%d-%H%M%S"])
            .output()
            .unwrap();
        let link = results.join(format!("{}-linked", String::from_utf8_lossy(&out.stdout).trim()));
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        planted.push(link);
    }
    crate::support::io_in(
        dir.path(),
        &["--size", "4MiB", "--runtime", "0.2", "--name", "linked", "--power", "none"],
    );
    let made: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(made.len() == 1 && made[0].ends_with("-linked-2"), "{made:?}");
    for link in &planted {
        assert!(std::fs::symlink_metadata(link).unwrap().file_type().is_symlink(), "{}", link.display());
    }
    assert!(!dir.path().join("elsewhere").exists(), "nothing was made where a link points");
}
