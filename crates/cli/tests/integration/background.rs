//! `--background SPEC`: a stream beside the run's workload, driven on its schedule, in the same
//! time series under its own name, with its figures in summary.json and its own lines in the
//! record.

use crate::support::{disk_tempdir, json, only_bundle, refused, storbench};
use std::path::Path;

const MIB: f64 = 1048576.0;

/// The bundle's time series: its header and its rows, cell by cell.
fn series(bundle: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(bundle.join("timeseries.csv")).unwrap();
    let mut lines = text.lines().map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>());
    let header = lines.next().expect("a header");
    (header, lines.collect())
}

#[test]
fn an_io_run_at_depth_32_and_a_10_mib_s_background_stream_share_one_series_and_the_rate_holds() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    storbench()
        .args(["io", "--size", "64MiB", "--iodepth", "32", "--ramp", "1s", "--runtime", "4s", "--target"])
        .arg(dir.path())
        .args(["--background", "io:rate=10MiB,size=32MiB", "--output-dir"])
        .arg(&results)
        .assert()
        .success();
    let bundle = only_bundle(&results);
    let (header, rows) = series(&bundle);
    let col =
        |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name}: {header:?}"));
    let (fg, bg) = (col("read_iops"), col("bg1.write_bytes_per_sec"));
    assert!(
        fg < bg && bg < col("disk_reads_per_sec"),
        "the stream's columns follow the workload's: {header:?}"
    );
    assert!(rows.iter().all(|r| r.len() == header.len() && r[0] != "t_s"), "one header, every row as wide");
    assert!(rows.iter().all(|r| r[fg].parse::<f64>().unwrap() > 0.0), "the workload ran throughout");
    let summary = json(&std::fs::read(bundle.join("summary.json")).unwrap());
    let b = &summary["background"][0];
    assert_eq!((b["name"].as_str(), b["kind"].as_str()), (Some("bg1"), Some("io")), "{b}");
    assert_eq!(b["spec"], "io:rate=10MiB,size=32MiB");
    let rate = b["write_bytes_per_sec"].as_f64().unwrap();
    assert!((rate / (10.0 * MIB) - 1.0).abs() <= 0.05, "the stream held 10 MiB/s within 5 %: {b}");
    assert_eq!(b["read_iops"], 0.0);
    assert!(summary["results"]["read"]["iops"].as_f64().unwrap() > 0.0);
    let file = std::fs::metadata(dir.path().join("storbench-bg1.dat")).unwrap();
    assert_eq!(file.len(), 32 << 20, "the stream's own file, beside the target");
}

#[test]
fn on_the_null_engine_the_streams_counts_are_exact_and_add_up_to_its_figures() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    storbench()
        .args(["io", "--engine", "null", "--ramp", "1s", "--runtime", "3s"])
        .args(["--background", "io:rate=4MiB,bs=256k", "--background", "io:rw=read,bs=4k,rate=400k"])
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success();
    let bundle = only_bundle(&results);
    let log = std::fs::read_to_string(bundle.join("output.log")).unwrap();
    let status = log.lines().rfind(|l| l.contains(" measure ")).expect("a status line");
    assert!(status.contains("  bg1 ") && status.contains("  bg2 ") && status.ends_with(" MB/s"), "{status}");
    let record = std::fs::read_to_string(bundle.join("record.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = record.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary = json(&std::fs::read(bundle.join("summary.json")).unwrap());
    for (n, (stream, dir, bs)) in [("bg1", "write", 262144u64), ("bg2", "read", 4096)].into_iter().enumerate()
    {
        let measured: Vec<&serde_json::Value> = lines
            .iter()
            .filter_map(|l| l.get("interval"))
            .filter(|i| i["stream"] == stream && i["phase"] == "measure")
            .collect();
        assert_eq!(measured.len(), 3, "{stream}: an interval beside each of the workload's");
        let count =
            |i: &serde_json::Value, what: &str| i["counts"][format!("{dir}.{what}")].as_u64().unwrap_or(0);
        for i in &measured {
            assert_eq!(count(i, "bytes"), count(i, "ios") * bs, "{stream}: every request a whole block: {i}");
        }
        let ios: u64 = measured.iter().map(|i| count(i, "ios")).sum();
        let b = &summary["background"][n];
        assert_eq!(b["name"], stream);
        let measured_s = b["measured_s"].as_f64().unwrap();
        assert_eq!(b[format!("{dir}_iops")].as_f64().unwrap(), ios as f64 / measured_s, "{b}");
        assert_eq!(b["bytes_per_sec"].as_f64().unwrap(), (ios * bs) as f64 / measured_s, "{b}");
        let asked = if n == 0 { 4.0 * MIB } else { 400.0 * 1024.0 };
        assert!(((ios * bs) as f64 / measured_s / asked - 1.0).abs() <= 0.05, "{stream} held its rate: {b}");
        let tags = measured[0]["hists"].as_array().unwrap();
        assert!(tags.iter().all(|t| t.as_str().unwrap().starts_with(&format!("{stream}."))), "{tags:?}");
    }
    assert_eq!(
        summary["results"]["read"]["ios"].as_u64(),
        lines
            .iter()
            .filter_map(|l| l.get("interval"))
            .filter(|i| i["stream"] == "io" && i["phase"] == "measure")
            .map(|i| i["counts"]["read.ios"].as_u64().unwrap_or(0))
            .sum::<u64>()
            .into(),
        "the workload's own figures are its stream's alone"
    );
}

#[test]
fn a_background_spec_that_is_not_understood_is_refused_naming_the_key() {
    let said =
        refused(storbench().args(["io", "--engine", "null", "--background", "io:rate=fast"]), "rate=fast");
    assert!(said.contains("not a size"), "{said}");
    let said =
        refused(storbench().args(["io", "--engine", "null", "--background", "io:speed=1M"]), "speed=1M");
    assert!(said.contains("the keys are rw="), "{said}");
    let said = refused(storbench().args(["io", "--engine", "null", "--background", "resync"]), "give io[:");
    assert!(said.contains("rebuild[:") && said.contains("cmd:COMMAND"), "{said}");
    refused(
        storbench().args(["io", "--engine", "null", "--background", "io:bs=1M,size=4k"]),
        "less than one block",
    );
    refused(
        storbench().args(["io", "--engine", "null", "--background", "io:bs=4k/50:8k/50"]),
        "one block size",
    );
    // O_DIRECT's alignment is the target's: refused before anything is made.
    let dir = disk_tempdir();
    let mut cmd = storbench();
    cmd.args([
        "io",
        "--runtime",
        "1s",
        "--ramp",
        "0",
        "--size",
        "1MiB",
        "--background",
        "io:bs=1000,size=1M",
    ]);
    cmd.arg("--target").arg(dir.path()).arg("--output-dir").arg(dir.path().join("results"));
    let said = refused(&mut cmd, "not a multiple of");
    assert!(said.contains("direct=no"), "{said}");
    assert!(!dir.path().join("storbench-bg1.dat").exists() && !dir.path().join("results").exists());
}

#[test]
fn a_configuration_of_a_plan_runs_its_workloads_beside_its_background_streams_and_another_without() {
    let tmp = disk_tempdir();
    std::fs::create_dir_all(tmp.path().join("t")).unwrap();
    let target = tmp.path().join("t").display().to_string();
    let plan = format!(
        "name = \"rebuild\"\n[method]\nidle_settle = 0\npower = \"none\"\n\
         [[configuration]]\nname = \"normal\"\ntarget = \"{target}\"\n\
         [[configuration]]\nname = \"vol-rebuild\"\ntarget = \"{target}\"\nbackground = [\"io:rate=4MiB,size=8MiB\"]\n\
         [[workload]]\nkind = \"io\"\nlabel = \"rr\"\nrw = \"randread\"\nsize = \"8MiB\"\nruntime = 2\nramp = 0\n"
    );
    std::fs::write(tmp.path().join("plan.toml"), plan).unwrap();
    let results = tmp.path().join("results");
    let ran =
        storbench().arg("run").arg(tmp.path().join("plan.toml")).arg("--output-dir").arg(&results).assert();
    let said = crate::support::stderr_text(&ran.success());
    let writes = "  background: storbench-bg1.dat (8MiB, made once and kept) beside each workload's files; \
                  io:rate=4MiB,size=8MiB writes it sequentially, 4MiB/s";
    assert!(said.contains("on vol-rebuild it writes:") && said.contains(writes), "{said}");
    let eval = only_bundle(&results);
    let summary = |id: &str| {
        json(&std::fs::read(only_bundle(&eval.join("runs").join(id)).join("summary.json")).unwrap())
    };
    assert!(summary("rr.normal.r1").get("background").is_none(), "a configuration without streams has none");
    let b = &summary("rr.vol-rebuild.r1")["background"][0];
    assert_eq!(b["spec"], "io:rate=4MiB,size=8MiB", "{b}");
    assert!((b["write_bytes_per_sec"].as_f64().unwrap() / (4.0 * MIB) - 1.0).abs() <= 0.05, "{b}");
    refused(
        storbench().arg("run").arg(write_plan(tmp.path(), "background = [\"io:rate=slow\"]")),
        "rate=slow",
    );
}

/// A one-configuration plan in `dir` with `extra` in its configuration.
fn write_plan(dir: &Path, extra: &str) -> std::path::PathBuf {
    let text = format!(
        "name = \"p\"\n[[configuration]]\nname = \"c\"\ntarget = \"{}\"\n{extra}\n\
         [[workload]]\nkind = \"io\"\n",
        dir.display()
    );
    let path = dir.join("bad-plan.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_oltp_run_on_sqlite_has_its_stream_beside_the_database() {
    let dir = disk_tempdir();
    let db = dir.path().join("ds3.db");
    storbench().args(["oltp", "load", "--db-size", "1MB", "--path"]).arg(&db).assert().success();
    let results = dir.path().join("results");
    let args = [
        "--warmup-time",
        "1s",
        "--run-time",
        "2s",
        "--n-threads",
        "2",
        "--background",
        "io:rate=2MiB,size=8MiB",
    ];
    let out = crate::support::oltp_run(&["--path", db.to_str().unwrap()], &results, &args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = json(&out.stdout);
    let b = &summary["background"][0];
    assert!((b["write_bytes_per_sec"].as_f64().unwrap() / (2.0 * MIB) - 1.0).abs() <= 0.05, "{b}");
    assert!(summary["results"]["opm"].as_f64().unwrap() > 0.0, "{summary}");
    assert!(dir.path().join("storbench-bg1.dat").exists(), "the stream's file is beside the database");
    let (header, _) = series(&only_bundle(&results));
    assert!(header.iter().any(|h| h == "opm") && header.iter().any(|h| h == "bg1.write_iops"), "{header:?}");
}

/// `storbench io` on a 64 MiB file in `dir` for 3 s, randread at depth 8, with `background`
/// (given each time), its bundle in `dir/results`: its summary.
fn randread_beside(dir: &Path, results: &str, background: &[&str]) -> serde_json::Value {
    let results = dir.join(results);
    let mut cmd = storbench();
    cmd.args(["io", "--size", "64MiB", "--iodepth", "8", "--ramp", "1s", "--runtime", "3s", "--json"]);
    cmd.arg("--target").arg(dir).arg("--output-dir").arg(&results);
    for b in background {
        cmd.args(["--background", b]);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json(&out.stdout)
}

#[test]
fn an_emulated_rebuild_on_the_runs_own_disk_copies_at_its_rate_and_costs_the_workload_iops() {
    let dir = disk_tempdir();
    let iops = |s: &serde_json::Value| s["results"]["read"]["iops"].as_f64().unwrap();
    let normal = randread_beside(dir.path(), "normal", &[]);
    let paced = randread_beside(dir.path(), "paced", &["rebuild:rate=40MiB,size=64MiB"]);
    let b = &paced["background"][0];
    assert_eq!((b["name"].as_str(), b["kind"].as_str()), (Some("bg1"), Some("rebuild")), "{b}");
    let copied = b["bytes_per_sec"].as_f64().unwrap();
    assert!((copied / (40.0 * MIB) - 1.0).abs() <= 0.05, "the copy held 40 MiB/s within 5 %: {b}");
    // Every block read is written; one read as the window closed may still be on its way to
    // its write (under load its write took 30 ms).
    let f = |key: &str| b[key].as_f64().unwrap();
    let block = f("read_bytes_per_sec") / f("read_iops");
    let unwritten = (f("read_bytes_per_sec") - f("write_bytes_per_sec")) * f("measured_s") / block;
    assert!((-1e-6..=1.0 + 1e-6).contains(&unwritten), "every block read is written: {b}");
    assert_eq!(b["errors"], 0);
    assert!(iops(&paced) > 0.0);
    for side in ["source", "dest"] {
        let file = std::fs::metadata(dir.path().join(format!("storbench-bg1-{side}.dat"))).unwrap();
        assert_eq!(file.len(), 64 << 20, "the copy's own {side} file, beside the target");
    }
    let bundle = only_bundle(&dir.path().join("paced"));
    let (header, _) = series(&bundle);
    assert!(header.iter().any(|h| h == "bg1.read_bytes_per_sec"), "{header:?}");
    storbench().arg("summarize").arg("--check").arg(&bundle).assert().success();
    // Unthrottled, the copy takes what the disk gives: the workload's figures fall.
    let degraded = randread_beside(dir.path(), "degraded", &["rebuild:size=64MiB"]);
    assert!(
        iops(&degraded) < 0.9 * iops(&normal),
        "randread under a rebuild {} IOPS, normal {} IOPS",
        iops(&degraded),
        iops(&normal)
    );
    assert!(degraded["background"][0]["bytes_per_sec"].as_f64().unwrap() > copied);
}

#[test]
fn a_rebuild_whose_destination_is_a_users_file_or_whose_source_is_too_small_is_refused_with_nothing_made() {
    let dir = disk_tempdir();
    let mine = dir.path().join("mine.dat");
    std::fs::write(&mine, "the user's own data\n").unwrap();
    let run = |spec: &str| {
        let mut cmd = storbench();
        cmd.args(["io", "--size", "8MiB", "--ramp", "0", "--runtime", "1s", "--background", spec]);
        cmd.arg("--target").arg(dir.path()).arg("--output-dir").arg(dir.path().join("results"));
        cmd
    };
    let said =
        refused(&mut run(&format!("rebuild:dest={},size=1M", mine.display())), "storbench did not create");
    assert!(said.contains("bg1") && said.contains("mine.dat"), "{said}");
    refused(
        &mut run(&format!("rebuild:source={},size=1M", mine.display())),
        "smaller than the 1048576 bytes",
    );
    refused(&mut run("rebuild:source=/no/such/file"), "does not exist");
    refused(&mut run("rebuild:size=1M,bs=2M"), "less than one block");
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "the user's own data\n",
        "the user's file is untouched"
    );
    let made: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(made, ["mine.dat"], "nothing was made: no target, no stream file, no bundle");
    // A plan is checked whole before its first run.
    let extra = format!("background = [\"rebuild:dest={},size=1M\"]", mine.display());
    let plan = write_plan(dir.path(), &extra);
    let said = refused(
        storbench().arg("run").arg(&plan).arg("--output-dir").arg(dir.path().join("results")),
        "configuration c's background",
    );
    assert!(said.contains("storbench did not create"), "{said}");
    assert!(!dir.path().join("results").exists() && !dir.path().join("storbench-io.dat").exists());
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "the user's own data\n");
}

/// `storbench io` on the null engine for `runtime` with `cmd` beside it and `extra` options,
/// its output.
fn null_run_beside(dir: &Path, command: &str, runtime: &str, extra: &[&str]) -> std::process::Output {
    storbench()
        .args([
            "io",
            "--engine",
            "null",
            "--ramp",
            "1s",
            "--runtime",
            runtime,
            "--json",
            "--background",
            command,
        ])
        .args(extra)
        .arg("--output-dir")
        .arg(dir.join("results"))
        .output()
        .unwrap()
}

#[test]
fn a_background_command_runs_in_the_measured_phase_and_its_exit_seconds_and_output_are_kept() {
    let dir = disk_tempdir();
    let out = null_run_beside(dir.path(), "cmd:echo copying; echo 'half done' >&2; sleep 1", "3s", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = json(&out.stdout);
    let b = &summary["background"][0];
    assert_eq!(
        (b["kind"].as_str(), b["exit_code"].as_i64(), b["stopped"].as_bool()),
        (Some("cmd"), Some(0), Some(false))
    );
    assert_eq!(b["command"], "echo copying; echo 'half done' >&2; sleep 1");
    // Its seconds count from when its start returned, a few ms into the sleep on a loaded
    // machine (0.997 s seen).
    let seconds = b["seconds"].as_f64().unwrap();
    assert!((0.9..2.0).contains(&seconds), "it ran its second: {b}");
    assert!(!summary["warnings"].to_string().contains("bg1"), "a command that succeeds is no warning");
    let bundle = only_bundle(&dir.path().join("results"));
    let log = std::fs::read_to_string(bundle.join("output.log")).unwrap();
    assert!(log.contains("copying") && log.contains("half done"), "its output is in the run's log:\n{log}");
    storbench().arg("summarize").arg("--check").arg(&bundle).assert().success();
}

#[test]
fn a_background_command_that_fails_is_a_warning_with_its_exit_code_and_its_output_stays_off_stdout() {
    let dir = disk_tempdir();
    let out = null_run_beside(dir.path(), "cmd:echo '{not json'; echo no spare disk >&2; exit 3", "2s", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = json(&out.stdout);
    let b = &summary["background"][0];
    assert_eq!((b["exit_code"].as_i64(), b["stopped"].as_bool()), (Some(3), Some(false)), "{b}");
    let warning =
        summary["warnings"].as_array().unwrap().iter().find_map(|w| w.as_str().filter(|w| w.contains("bg1")));
    let warning = warning.expect("a warning");
    assert!(warning.contains("failed (exit status: 3") && warning.contains("no spare disk"), "{warning}");
    let bundle = only_bundle(&dir.path().join("results"));
    storbench().arg("summarize").arg("--check").arg(&bundle).assert().success();
}

#[test]
fn a_background_command_that_hangs_is_stopped_at_the_runs_end_with_all_it_started() {
    let dir = disk_tempdir();
    let pids = dir.path().join("pids");
    let asked = dir.path().join("asked");
    let command = format!(
        "cmd:trap 'echo SIGTERM > {1}; exit 0' TERM; echo $$ >> {0}; sleep 1000 & echo $! >> {0}; wait",
        pids.display(),
        asked.display()
    );
    let started = std::time::Instant::now();
    let out = null_run_beside(dir.path(), &command, "2s", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "the run did not wait for it");
    let b = &json(&out.stdout)["background"][0];
    assert_eq!((b["exit_code"].as_i64(), b["stopped"].as_bool()), (None, Some(true)), "{b}");
    assert!(b.get("exit_code").is_some_and(serde_json::Value::is_null), "exit_code is null: {b}");
    let seconds = b["seconds"].as_f64().unwrap();
    assert!((1.5..4.0).contains(&seconds), "it ran through the measured phase: {b}");
    let pids = crate::trust_commands::pids_in(&pids);
    assert_eq!(pids.len(), 2, "{pids:?}");
    let left: Vec<_> = pids.into_iter().filter(|&p| crate::trust_commands::running(p)).collect();
    assert!(left.is_empty(), "nothing it started still runs: {left:?}");
    assert!(asked.exists(), "it was asked to stop with SIGTERM first");
}

#[test]
fn with_background_wait_the_runs_end_waits_for_the_command_to_exit() {
    let dir = disk_tempdir();
    let out = null_run_beside(dir.path(), "cmd:sleep 3; echo rebuilt", "1s", &["--background-wait"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let b = &json(&out.stdout)["background"][0];
    assert_eq!((b["exit_code"].as_i64(), b["stopped"].as_bool()), (Some(0), Some(false)), "{b}");
    // Its seconds count from when its start returned, a few ms after the sleep began on a
    // loaded machine (2.998 s seen).
    assert!(b["seconds"].as_f64().unwrap() >= 2.9, "{b}");
}

#[test]
fn a_background_command_that_cannot_start_is_refused_before_anything_runs() {
    let dir = disk_tempdir();
    let results = dir.path().join("results");
    let said = refused(
        storbench()
            .args([
                "io",
                "--engine",
                "null",
                "--runtime",
                "1s",
                "--background",
                "cmd:no-such-rebuild-tool --now",
            ])
            .arg("--output-dir")
            .arg(&results),
        "`no-such-rebuild-tool` cannot start",
    );
    assert!(said.contains("bg1") && said.contains("full path"), "{said}");
    let script = dir.path().join("rebuild.sh");
    std::fs::write(&script, "#!/bin/sh\necho rebuilding\n").unwrap();
    refused(
        storbench()
            .args(["io", "--engine", "null", "--runtime", "1s", "--background"])
            .arg(format!("cmd:{} --now", script.display()))
            .arg("--output-dir")
            .arg(&results),
        "not executable",
    );
    assert!(!results.exists(), "no bundle was made");
}
