//! What the terminal shows of an evaluation: a line per run with its headline, the table and
//! where the evaluation and its report are; each run's own output (per-second lines, its
//! table, its bundle) in its bundle's output.log, and on the terminal too with --verbose.

use crate::support::{disk_tempdir, json, stderr_text, storbench};
use std::path::{Path, PathBuf};

/// A plan of two configurations and two repetitions of a 2-second null-engine io workload,
/// written in `dir`. Power is the machine's own, if it has a meter (no idle window).
fn plan(dir: &Path) -> PathBuf {
    for c in ["a", "b"] {
        std::fs::create_dir_all(dir.join(c)).unwrap();
    }
    let text = format!(
        "name = \"lines\"\n[method]\nidle_settle = 0\nidle_power = 0\nrepetitions = 2\n\
         [[configuration]]\nname = \"a\"\ntarget = \"{}\"\n\
         [[configuration]]\nname = \"b\"\ntarget = \"{}\"\n\
         [[workload]]\nkind = \"io\"\nlabel = \"nul\"\nengine = \"null\"\nruntime = 2\nramp = 0\n",
        dir.join("a").display(),
        dir.join("b").display()
    );
    let path = dir.join("plan.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `storbench run PLAN --output-dir RESULTS EXTRA`, expected to succeed; stdout, stderr and
/// the evaluation directory.
fn evaluate(tmp: &Path, extra: &[&str]) -> (String, String, PathBuf) {
    let results = tmp.join("results");
    let out = storbench()
        .arg("run")
        .arg(plan(tmp))
        .arg("--output-dir")
        .arg(&results)
        .args(extra)
        .assert()
        .success();
    let dir = std::fs::read_dir(&results).unwrap().next().unwrap().unwrap().path();
    (String::from_utf8_lossy(&out.get_output().stdout).into_owned(), stderr_text(&out), dir)
}

/// Each run's output.log, by run id, from the bundles evaluation.json records.
fn logs(dir: &Path) -> Vec<(String, String)> {
    let e = json(&std::fs::read(dir.join("evaluation.json")).unwrap());
    let runs = e["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "{e}");
    runs.iter()
        .map(|r| {
            let bundle = dir.join(r["bundle"].as_str().unwrap_or_else(|| panic!("no bundle: {r}")));
            let log =
                std::fs::read_to_string(bundle.join("output.log")).expect("output.log in the run's bundle");
            (r["id"].as_str().unwrap().to_string(), log)
        })
        .collect()
}

#[test]
fn an_evaluation_shows_a_line_per_run_and_each_run_logs_its_own_output() {
    let tmp = disk_tempdir();
    let (stdout, stderr, dir) = evaluate(tmp.path(), &[]);
    let lines: Vec<&str> = stderr.lines().collect();
    let runs: Vec<&&str> = lines.iter().filter(|l| l.starts_with('[')).collect();
    assert_eq!(runs.len(), 4, "one line per run:\n{stderr}");
    for (line, id) in runs.iter().zip(["nul.a.r1", "nul.b.r1", "nul.a.r2", "nul.b.r2"]) {
        assert!(line.contains(&format!("] {id}: nul on ")), "{line}");
        assert!(
            line.contains(" ... ") && line.ends_with(" IOPS, done"),
            "started, then its headline: {line}"
        );
    }
    // Besides the runs: where it goes and the power source at the start, its notes, where it
    // went and the report.
    let others: Vec<&&str> = lines.iter().filter(|l| !l.starts_with('[')).collect();
    assert!(others[0].starts_with("evaluation lines: 4 runs"), "{stderr}");
    assert!(stderr.matches("no power source").count() <= 1, "said once, not per run: {stderr}");
    // Notes, the power source, and warnings on the evidence (an unstable result: null runs on
    // a busy machine can vary by a third).
    let said = |l: &str| l.starts_with("note: ") || l.starts_with("power: ") || l.starts_with("warning: ");
    let rest: Vec<&&&str> = others[1..].iter().filter(|l| !said(l)).collect();
    assert_eq!(rest.len(), 3, "the evaluation, report.html and report.md:\n{stderr}");
    assert!(
        rest[0].starts_with("evaluation: ")
            && rest[1].starts_with("report: ")
            && rest[2].starts_with("report: ")
    );
    assert!(stdout.lines().all(|l| "┌│╞├└".contains(l.chars().next().unwrap())), "only the table:\n{stdout}");
    assert_eq!(stdout.matches("│ nul ").count(), 2, "a row per configuration:\n{stdout}");

    for (id, log) in logs(&dir) {
        for second in ["1s measure", "2s measure"] {
            assert!(log.lines().any(|l| l.contains(&format!("] {id}")) && l.contains(second)), "{id}: {log}");
        }
        assert!(log.contains("│ read ") && log.contains("bundle: "), "its table and bundle: {log}");
    }
}

#[test]
fn verbose_shows_each_runs_own_output_and_still_logs_it() {
    let tmp = disk_tempdir();
    let (_, stderr, dir) = evaluate(tmp.path(), &["--verbose"]);
    assert_eq!(stderr.matches("bundle: ").count(), 4, "each run's own lines:\n{stderr}");
    assert_eq!(stderr.lines().filter(|l| l.ends_with(" IOPS, done")).count(), 4, "{stderr}");
    for (id, log) in logs(&dir) {
        assert!(log.contains("bundle: ") && log.contains("2s measure"), "{id}: {log}");
    }
}
