//! `storbench oltp` as a user runs it: DS3's CSV files, a load and a short run on SQLite with
//! DS3's output lines and the bundle, the sales check, and the errors that must come before a
//! run starts.

use crate::support::{disk_tempdir, json, oltp_run, only_bundle, stderr_text, storbench};
use std::path::Path;

/// `storbench oltp load` of a SQLite file at `size`.
fn load_sqlite(db: &Path, size: &str) {
    storbench().args(["oltp", "load", "--db-size", size, "--path"]).arg(db).assert().success();
}

/// A short run (2 s warm-up, 4 s measured) with summary.json on stdout.
fn short_run(dir: &Path, db: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    use assert_cmd::assert::OutputAssertExt;
    let timing = ["--warmup-time", "2s", "--run-time", "4s", "--settle-time", "5s"];
    let extra: Vec<&str> = timing.iter().chain(extra).copied().collect();
    oltp_run(&["--path", db.to_str().unwrap()], &dir.join("results"), &extra).assert().success()
}

#[test]
fn gen_writes_ds3s_files_and_never_overwrites_them() {
    let dir = disk_tempdir();
    let out = dir.path().join("ds3");
    storbench()
        .args(["oltp", "gen", "--db-size", "1MB", "--threads", "2", "--out"])
        .arg(&out)
        .assert()
        .success();
    let lines = |p: &str| std::fs::read_to_string(out.join(p)).unwrap().lines().count();
    assert_eq!(lines("cust/us_cust.csv") + lines("cust/row_cust.csv"), 2_000);
    assert_eq!(lines("prod/prod.csv"), 1_000);
    for mon in ["jan", "jun", "dec"] {
        assert_eq!(lines(&format!("orders/{mon}_orders.csv")), 100, "{mon}");
    }
    assert_eq!(lines("reviews/reviews.csv"), 20_000);
    let again = storbench().args(["oltp", "gen", "--db-size", "1MB", "--out"]).arg(&out).assert().code(2);
    assert!(stderr_text(&again).contains("exists"), "{}", stderr_text(&again));
}

#[test]
fn a_short_sqlite_run_prints_ds3s_lines_and_writes_a_bundle_with_opm() {
    let dir = disk_tempdir();
    let db = dir.path().join("ds3.db");
    load_sqlite(&db, "1MB");
    let ds3_csv = dir.path().join("ds3.csv");
    let a = short_run(
        dir.path(),
        &db,
        &["--n-threads", "2", "--log-freq", "2", "--out-filename", ds3_csv.to_str().unwrap()],
    );
    let s = crate::support::stdout_json(&a);
    assert_eq!(s["workload"], "oltp");
    assert_eq!(s["complete"], true);
    let r = &s["results"];
    assert!(r["opm"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["orders"].as_u64().unwrap() > 0);
    assert_eq!(r["threads"], 2);
    assert!(r["transactions"]["purchase"]["calls"].as_u64().unwrap() > 0);
    assert!(r["transactions"]["login"]["lat_ns"]["p99"].as_u64().unwrap() > 0);
    let err = stderr_text(&a);
    assert!(err.contains("Stats reset"), "{err}");
    assert!(err.lines().any(|l| l.starts_with("et=") && l.contains(" opm=")), "{err}");
    let fin = err.lines().find(|l| l.starts_with("Final (")).expect("a Final line");
    assert!(fin.contains("n_purchase_overall=") && fin.contains("rollback_rate ="), "{fin}");
    assert!(fin.contains(&format!(" n_overall={} ", r["orders"])), "Final covers the measured phase: {fin}");
    assert!(err.contains("Run over"));
    let periodic = std::fs::read_to_string(&ds3_csv).unwrap();
    assert!(periodic.starts_with("datetime et, n_overall, opm,"), "{periodic}");
    // Read by its header, as a script would: every row has a field for every name.
    let mut lines = periodic.lines();
    let names: Vec<&str> = lines.next().unwrap().split(", ").collect();
    let n_overall = names.iter().position(|n| *n == "n_overall").unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(!rows.is_empty() && rows.iter().all(|r| r.len() == names.len()), "{periodic}");
    let et: f64 = rows[0][0].trim().parse().expect("et in the first field, after the (empty) stamp");
    assert!(et > 0.0 && rows.iter().all(|r| r[n_overall].parse::<u64>().is_ok()), "{periodic}");
    let bundle = only_bundle(&dir.path().join("results"));
    let csv = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for col in ["opm", "purchase_p99_ms", "db_commits_per_sec", "disk_writes_per_sec", "cpu_user_pct"] {
        assert!(header.split(',').any(|c| c == col), "{col} missing from {header}");
    }
    assert!(csv.lines().filter(|l| l.contains(",measure,")).count() >= 3);
    assert_eq!(json(&std::fs::read(bundle.join("summary.json")).unwrap())["results"]["orders"], r["orders"]);
    // The disclosure names SQLite's version and the pragmas every session ran with.
    let d = &json(&std::fs::read(bundle.join("disclosure.json")).unwrap())["database"];
    assert_eq!(d["kind"], "sqlite");
    assert!(d["version"].as_str().is_some_and(|v| v.starts_with("3.")), "{d}");
    let set = &d["non_default_settings"];
    assert_eq!((&set["journal_mode"], &set["synchronous"]), (&"wal".into(), &"full".into()), "{d}");
    assert_eq!(set["cache_size"], "-32768", "32 MiB a connection: {d}");
    storbench().args(["oltp", "check", "--path"]).arg(&db).assert().success();
}

#[test]
fn ds3s_own_parameter_spellings_are_accepted() {
    let dir = disk_tempdir();
    let db = dir.path().join("ds3.db");
    load_sqlite(&db, "1MB");
    let a = storbench()
        .args([
            "oltp",
            "run",
            "--db_size=1MB",
            "--n_threads=1",
            "--warmup_time=0",
            "--run_time=0.05",
            "--ds2_mode=Y",
        ])
        .args(["--think_time=0", "--pct_newcustomers=50", "--settle-time=0", "--json", "--path"])
        .arg(&db)
        .arg("--output-dir")
        .arg(dir.path().join("results"))
        .assert()
        .success();
    let s = crate::support::stdout_json(&a);
    assert_eq!(s["parameters"]["ds2_mode"], true);
    assert_eq!(s["parameters"]["run_time_s"], 3.0);
    assert_eq!(s["results"]["transactions"]["get_reviews"]["calls"], 0, "ds2 mode reads no reviews");
}

/// `storbench oltp ARGS`: exit 2, the message, no panic, no bundle.
fn refuses(dir: &Path, args: &[&str], needle: &str) {
    let results = dir.join("results");
    let a = storbench().arg("oltp").args(args).arg("--output-dir").arg(&results).assert().code(2);
    let err = stderr_text(&a);
    assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!results.exists(), "nothing may be written on bad input");
}

#[test]
fn run_errors_come_before_anything_runs() {
    let dir = disk_tempdir();
    let db = dir.path().join("ds3.db");
    let p = db.to_str().unwrap();
    refuses(dir.path(), &["run", "--path", p], "load one first");
    load_sqlite(&db, "1MB");
    refuses(dir.path(), &["run", "--path", p, "--db-size", "2MB"], "loaded with 2000 customers");
    refuses(dir.path(), &["run", "--path", p, "--db-size", "huge"], "S (10MB)");
    refuses(
        dir.path(),
        &["run", "--path", p, "--db-size", "1MB", "--pct-newcustomers", "150"],
        "between 0 and 100",
    );
    refuses(dir.path(), &["run", "--path", p, "--db-size", "1MB", "--n-line-items", "0"], "at least 1");
    refuses(dir.path(), &["run", "--path", p, "--db-size", "1MB", "--run-time=-2"], "negative");
    refuses(
        dir.path(),
        &["run", "--path", p, "--db-size", "1MB", "--restock", "N"],
        "SQLite always restocks",
    );
    refuses(dir.path(), &["run", "--url", "http://x", "--db-size", "1MB"], "not a database URL");
    refuses(dir.path(), &["run", "--backend", "postgres", "--db-size", "1MB"], "needs --url");
}

#[test]
fn load_refuses_a_file_storbench_did_not_create() {
    let dir = disk_tempdir();
    let precious = dir.path().join("app.db");
    std::fs::write(&precious, b"not ours").unwrap();
    let a = storbench().args(["oltp", "load", "--db-size", "1MB", "--path"]).arg(&precious).assert().code(2);
    assert!(stderr_text(&a).contains("not a storbench database"), "{}", stderr_text(&a));
    assert_eq!(std::fs::read(&precious).unwrap(), b"not ours");
}

#[test]
fn a_ds3_parameter_file_is_read_in_place_and_later_options_win() {
    let dir = disk_tempdir();
    let db = dir.path().join("ds3.db");
    load_sqlite(&db, "1MB");
    let conf = dir.path().join("DriverConfig.txt");
    std::fs::write(&conf, "# DS3 driver settings\nn_threads=3\nrun_time=0.05\nwarmup_time=0\ndb_size=1MB\nlinux_perf_host=web:web:db1\npct_newcustomers=40\n").unwrap();
    let a = storbench()
        .args(["oltp", "run", "--settle-time=0"])
        .arg(format!("--config_file={}", conf.display()))
        .args(["--pct_newcustomers=30", "--json", "--path"])
        .arg(&db)
        .arg("--output-dir")
        .arg(dir.path().join("results"))
        .assert()
        .success();
    let p = &crate::support::stdout_json(&a)["parameters"];
    assert_eq!((p["n_threads"].as_u64(), p["pct_newcustomers"].as_f64()), (Some(3), Some(30.0)), "{p}");
    assert!(stderr_text(&a).contains("ignoring DS3's 'web:web:db1'"));
    std::fs::write(&conf, "n_threads 3\n").unwrap();
    let bad = storbench().args(["oltp", "run", "--config-file"]).arg(&conf).assert().code(2);
    assert!(stderr_text(&bad).contains("is not name=value"), "{}", stderr_text(&bad));
    let unknown = storbench().args(["oltp", "run", "--config-file", "/nonexistent/conf"]).assert().code(2);
    assert!(stderr_text(&unknown).contains("DS3 parameter file"));
}
