//! `--search` under `--latency-limit`: an io search on the null engine (every depth holds, so
//! it ends at its maximum), short searches on oltp (SQLite) and the mailbox that end within
//! their step budget at a confirmed load that holds, and the refusals that come before
//! anything runs.

use crate::support::{disk_tempdir, json, oltp_run, refused, storbench};
use std::path::{Path, PathBuf};

/// The search's directory under `results` and the summary of its confirmed run.
fn confirmed(results: &Path) -> (PathBuf, serde_json::Value) {
    let search = crate::support::only_bundle(results);
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&search).unwrap().map(|e| e.unwrap().path()).collect();
    runs.sort();
    let confirm =
        runs.iter().rev().find(|p| p.to_string_lossy().contains("-confirm-")).expect("a confirmation");
    let s = json(&std::fs::read(confirm.join("summary.json")).unwrap());
    (search, s)
}

/// Checks what every search's summary must say: steps within the budget, the last one a
/// confirmation of the chosen load that held every limit, and the time spent accounted for.
fn check_search(s: &serde_json::Value, budget: u64) -> &serde_json::Value {
    let search = &s["search"];
    let steps = search["steps"].as_array().expect("steps");
    let short = steps.iter().filter(|st| st["confirm"] == false).count() as u64;
    assert!(short <= budget, "{short} short steps, budget {budget}: {search}");
    let last = steps.last().unwrap();
    assert_eq!((&last["confirm"], &last["held"]), (&true.into(), &true.into()), "{search}");
    assert_eq!(last["load"], search["chosen"]);
    for l in last["latencies"].as_array().unwrap() {
        assert_eq!(l["held"], true, "{l}");
    }
    let (elapsed, measured) = (search["elapsed_s"].as_f64().unwrap(), search["measured_s"].as_f64().unwrap());
    assert!(measured > 0.0 && elapsed >= measured, "{search}");
    assert!((search["overhead_s"].as_f64().unwrap() - (elapsed - measured)).abs() < 1e-6);
    search
}

#[test]
fn an_io_search_on_the_null_engine_doubles_to_its_maximum_and_confirms_it() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let a = storbench()
        .args(["io", "--engine", "null", "--ramp", "0", "--runtime", "0.3s", "--search", "iodepth"])
        .args([
            "--latency-limit",
            "p99<=1s",
            "--search-max",
            "8",
            "--search-step-time",
            "0.2s",
            "--json",
            "--output-dir",
        ])
        .arg(&results)
        .assert()
        .success();
    let err = crate::support::stderr_text(&a);
    assert!(err.contains("[4] iodepth = 8 ... held") && err.contains("iodepth = 8 confirmed"), "{err}");
    let (_, s) = confirmed(&results);
    assert_eq!(crate::support::stdout_json(&a), s, "--json: the confirmed run's summary, search included");
    let search = check_search(&s, 12);
    let loads: Vec<f64> =
        search["steps"].as_array().unwrap().iter().map(|st| st["load"].as_f64().unwrap()).collect();
    assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 8.0], "{search}");
    assert_eq!(
        (&search["parameter"], &search["throughput"], &search["limits"][0]),
        (&"iodepth".into(), &"IOPS".into(), &"p99<=1s".into())
    );
    assert_eq!(s["parameters"]["iodepth"], 8, "the confirmed run is a run at the chosen depth");
}

#[test]
fn a_load_the_workload_lacks_or_a_limit_it_cannot_judge_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let mut oltp = storbench();
    oltp.args(["oltp", "run", "--search", "iodepth", "--latency-limit", "p99<=50ms", "--path"]).arg(&db);
    refused(&mut oltp, "--search iodepth: oltp has no such load; it has threads");
    // Steady-state rounds in a step would make each step as long as the rule takes.
    let mut steady = storbench();
    steady
        .args([
            "oltp",
            "run",
            "--search",
            "threads",
            "--latency-limit",
            "p99<=50ms",
            "--steady-state",
            "1s",
            "--path",
        ])
        .arg(&db);
    refused(&mut steady, "drop --steady-state");
    let io = |limit: &str| {
        let mut c = storbench();
        c.args(["io", "--engine", "null", "--search", "iodepth", "--latency-limit", limit, "--output-dir"])
            .arg(dir.path().join("results"));
        c
    };
    refused(&mut io("trim:p99<=5ms"), "io has no request type `trim`; its types are read, write");
    refused(&mut io("p99<5ms"), "e.g. p99<=50ms");
    let mut replay = storbench();
    replay.args(["replay", "none.log", "--search", "iodepth", "--latency-limit", "p99<=1s"]);
    refused(&mut replay, "replay has no such load; it has threads, rate");
    let mut alone = storbench();
    alone.args(["io", "--engine", "null", "--latency-limit", "p99<=5ms"]);
    refused(&mut alone, "--search");
    assert!(!dir.path().join("results").exists(), "nothing ran");
}

#[test]
fn an_oltp_search_on_sqlite_ends_within_its_steps_at_a_load_that_holds() {
    let dir = disk_tempdir();
    let db = dir.path().join("ds3.db");
    storbench().args(["oltp", "load", "--db-size", "1MB", "--path"]).arg(&db).assert().success();
    let results = dir.path().join("results");
    let search = ["--search", "threads", "--latency-limit", "order:p99<=5s", "--search-max", "2"];
    let timing =
        ["--warmup-time", "1s", "--run-time", "2s", "--search-step-time", "1s", "--search-steps", "3"];
    let extra: Vec<&str> = search.iter().chain(&timing).copied().collect();
    let out = oltp_run(&["--path", db.to_str().unwrap()], &results, &extra).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, s) = confirmed(&results);
    let search = check_search(&s, 3);
    assert_eq!(search["throughput"], "OPM");
    assert!(search["steps"].as_array().unwrap().iter().all(|st| st["throughput"].as_f64().unwrap() > 0.0));
    assert_eq!(s["results"]["threads"].as_f64(), search["chosen"].as_f64());
}

#[test]
fn a_mailbox_search_ends_within_its_steps_at_a_thread_count_that_holds() {
    let dir = disk_tempdir();
    let args = crate::mailbox::generous(&[
        ("--threads", "1"),
        ("--search", "threads"),
        ("--latency-limit", "db_read:mean<=5s"),
        ("--search-max", "2"),
        ("--search-step-time", "1s"),
        ("--search-steps", "3"),
    ]);
    let a = crate::mailbox::mailbox(dir.path(), &args).assert().success();
    let err = crate::support::stderr_text(&a);
    assert!(err.contains("threads = 2 confirmed"), "{err}");
    let (_, s) = confirmed(&dir.path().join("results"));
    let search = check_search(&s, 3);
    assert_eq!(search["throughput"], "transactional IOPS");
    assert_eq!(s["results"]["threads"], 2);
    assert!(
        !dir.path().join("db").join("mailbox1.edb").exists(),
        "the last run removes the databases the search made"
    );
}

#[test]
fn a_mailbox_search_whose_runs_fail_their_own_thresholds_holds_no_step() {
    // Each step's latency meets the search's limit, but fails Jetstress's log write
    // threshold: a run that failed its own check holds nothing, so no thread count is found.
    let dir = disk_tempdir();
    let args = crate::mailbox::generous(&[
        ("--threads", "1"),
        ("--search", "threads"),
        ("--latency-limit", "log_write:mean<=5s"),
        ("--search-max", "2"),
        ("--search-step-time", "1s"),
        ("--search-steps", "2"),
        ("--log-write-avg-ms", "0.000001"),
    ]);
    let a = crate::mailbox::mailbox(dir.path(), &args).assert().code(1);
    let err = crate::support::stderr_text(&a);
    assert!(err.contains(" broke: ") && err.contains("the run failed: log_write_avg_ms"), "{err}");
    assert!(!err.contains(" held: ") && !err.contains("confirmed"), "{err}");
}

/// A plan whose io workload (null engine) searches the queue depth up to 2 on two
/// configurations, twice each, with a requirement on its headline; `b_own` adds to the
/// second configuration. Its method asks io for a steady-state window, which a search's
/// fixed-length steps do without.
fn searching_plan(dir: &Path, b_own: &str) -> PathBuf {
    let mut text = "name = \"s\"\n[method]\nidle_settle = 0\nrepetitions = 2\npower = \"none\"\n\
                    window = \"steady_state\"\n"
        .to_string();
    for c in ["a", "b"] {
        std::fs::create_dir_all(dir.join(c)).unwrap();
        text += &format!("[[configuration]]\nname = \"{c}\"\ntarget = \"{}\"\n", dir.join(c).display());
    }
    text += b_own;
    text += "[[workload]]\nkind = \"io\"\nlabel = \"qd\"\nengine = \"null\"\nramp = 0\nruntime = \"0.2s\"\n\
             search = \"iodepth\"\nlatency_limit = [\"p99<=1s\", \"read:mean<=1s\"]\nsearch_max = 2\n\
             search_step_time = \"0.1s\"\n[requirements]\n\"qd.iops\" = \">= 1\"\n\"qd.search_load\" = \">= 2\"\n";
    let plan = dir.join("plan.toml");
    std::fs::write(&plan, text).unwrap();
    plan
}

#[test]
fn a_plans_workload_searches_in_every_run_and_its_confirmed_run_is_the_runs_figures_and_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let plan = searching_plan(dir.path(), "");
    storbench().arg("run").arg(&plan).arg("--output-dir").arg(&results).assert().success();
    let eval = crate::support::only_bundle(&results);
    let e = json(&std::fs::read(eval.join("evaluation.json")).unwrap());
    let runs = e["runs"].as_array().unwrap();
    let ids: Vec<&str> = runs.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["qd.a.r1", "qd.b.r1", "qd.a.r2", "qd.b.r2"]);
    for r in runs {
        assert_eq!((&r["status"], &r["headline"]["metric"]), (&"done".into(), &"IOPS".into()), "{r}");
        // The run's bundle is its confirmed step's, beside the steps before it.
        let bundle = eval.join(r["bundle"].as_str().unwrap());
        assert!(bundle.ends_with("03-confirm-iodepth-2"), "{r}");
        let search_dir = bundle.parent().unwrap();
        for step in ["01-step-iodepth-1", "02-step-iodepth-2"] {
            assert!(search_dir.join(step).join("summary.json").is_file(), "{step} of {r}");
        }
        let log = std::fs::read_to_string(search_dir.join("output.log")).unwrap();
        assert!(log.contains("[1] iodepth = 1: held") && log.contains("iodepth = 2 confirmed"), "{log}");
        let s = json(&std::fs::read(bundle.join("summary.json")).unwrap());
        let search = check_search(&s, 12);
        assert_eq!((&search["chosen"], &s["parameters"]["iodepth"]), (&2.0.into(), &2.into()), "{search}");
        let iops = s["results"]["read"]["iops"].as_f64().unwrap();
        assert_eq!(r["headline"]["value"].as_f64(), Some(iops), "the headline is the confirmed run's");
    }
    let md = std::fs::read_to_string(eval.join("report.md")).unwrap();
    let decision = &md[md.find("## Decision").expect("a decision")..];
    assert!(decision.contains("| qd.iops &gt;= 1 | qd | met |"), "{decision}");
    // "The most load that holds the limit is at least 2": the search's own figure.
    assert!(decision.contains("| qd.search_load &gt;= 2 | qd | met | 2"), "{decision}");
    assert!(!decision.contains("Chosen: none"), "{decision}");

    // A configuration's own value the search cannot run with: refused before anything runs.
    let bounded = searching_plan(dir.path(), "set.qd = { io_size = \"4k\" }\n");
    let mut run = storbench();
    run.arg("run").arg(&bounded).arg("--output-dir").arg(dir.path().join("none"));
    refused(&mut run, "in the plan, workload qd on b: search runs steps of search_step_time; drop io_size");
    assert!(!dir.path().join("none").exists());
}
