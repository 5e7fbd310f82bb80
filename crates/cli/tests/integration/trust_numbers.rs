//! Issue 21's numbers: the largest values a user can type, fed to every size, count, rate and
//! limit option of every workload and to the same keys in a plan. Each is refused with exit 2
//! and a message, never a panic, an overflow or a wrapped check, and nothing is created.

use crate::support::{disk_tempdir, refused, stderr_text, storbench};
use std::path::Path;
use std::time::Duration;

/// u64::MAX, one below it, i64::MAX and one above it.
const HUGE: [&str; 4] =
    ["18446744073709551615", "18446744073709551614", "9223372036854775807", "9223372036854775808"];

/// The values an option gets: the huge ones, and u32::MAX for a count (a value clap takes for
/// a 32-bit count, so the checks must refuse it; for a size it is a plain 4 GiB).
fn values(option: &str) -> Vec<&'static str> {
    let sizes =
        ["size", "max", "growth", "bw", "depth", "rate", "iops", "db-size", "-ms", "stalls", "per-mailbox"];
    let is_size =
        sizes.iter().any(|s| option.ends_with(s) || option.contains("-size")) && !option.ends_with("iodepth");
    let mut v = HUGE.to_vec();
    if !is_size {
        v.push("4294967295");
    }
    v
}

/// (command, what else it needs, the options). Seeds are left out: any 64-bit seed is a seed.
fn commands() -> Vec<(&'static [&'static str], &'static [&'static str], &'static [&'static str])> {
    vec![
        (
            &["io"],
            &["--runtime", "1s"],
            &[
                "--size",
                "--io-size",
                "--rate-bw",
                "--rate-iops",
                "--iodepth",
                "--workers",
                "--rwmix-read",
                "--bs",
            ],
        ),
        (
            &["integrity"],
            &["--duration", "2s"],
            &["--data-size", "--data-max", "--data-growth", "--log-size", "--users", "--target-io-ms"],
        ),
        (
            &["mailbox"],
            &["--mailboxes", "50", "--mailbox-size", "1MiB", "--duration", "2s"],
            &[
                "--mailbox-size",
                "--mailboxes",
                "--capacity-pct",
                "--iops-per-mailbox",
                "--threads",
                "--databases",
                "--cache-size",
                "--checkpoint-depth",
                "--lazy-commits",
                "--bdm-rate",
                "--log-files",
                "--db-read-avg-ms",
                "--db-read-max-ms",
                "--log-write-avg-ms",
                "--log-write-max-ms",
                "--page-fault-stalls",
            ],
        ),
    ]
}

/// Everything under `dir` (nothing may have been created).
fn contents(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        found.push(e.unwrap().file_name().to_string_lossy().into_owned());
    }
    found
}

fn assert_refused(what: &str, out: &std::process::Output, dir: &Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: exit {:?}\n{err}", out.status);
    for bug in ["panicked", "internal error", "overflow", "RUST_BACKTRACE", "stack backtrace"] {
        assert!(!err.contains(bug), "{what}: {bug}\n{err}");
    }
    assert!(err.starts_with("error:"), "{what}: a message says what is wrong\n{err}");
    assert!(contents(dir).is_empty(), "{what}: created {:?}", contents(dir));
}

#[test]
fn the_largest_values_of_every_size_and_count_option_are_refused_with_nothing_created() {
    for (command, extra, options) in commands() {
        for option in options {
            for value in values(option) {
                let dir = disk_tempdir();
                let mut cmd = storbench();
                cmd.args(command).args(extra).args([*option, value]);
                cmd.arg("--target").arg(dir.path()).arg("--output-dir").arg(dir.path().join("results"));
                let out = cmd.timeout(Duration::from_secs(30)).output().unwrap();
                assert_refused(&format!("{} {option} {value}", command.join(" ")), &out, dir.path());
            }
        }
    }
}

#[test]
fn the_largest_values_of_oltp_counts_and_sizes_are_refused_before_the_database_is_touched() {
    let options = [
        "--n-threads",
        "--n-searches",
        "--search-batch-size",
        "--search-depth",
        "--n-reviews",
        "--n-line-items",
        "--log-freq",
        "--db-size",
        "--ramp-rate",
        "--pct-newcustomers",
    ];
    for option in options {
        for value in values(option) {
            let dir = disk_tempdir();
            let mut cmd = storbench();
            cmd.args(["oltp", "run", "--run-time", "1s", option, value, "--path"])
                .arg(dir.path().join("x.db"));
            cmd.arg("--output-dir").arg(dir.path().join("results"));
            let out = cmd.timeout(Duration::from_secs(30)).output().unwrap();
            assert_refused(&format!("oltp run {option} {value}"), &out, dir.path());
        }
    }
    for value in values("--threads") {
        let dir = disk_tempdir();
        let mut cmd = storbench();
        cmd.args(["oltp", "gen", "--db-size", "1MB", "--threads", value, "--out"])
            .arg(dir.path().join("gen"));
        let out = cmd.timeout(Duration::from_secs(30)).output().unwrap();
        assert_refused(&format!("oltp gen --threads {value}"), &out, dir.path());
    }
}

#[test]
fn the_largest_values_in_a_plan_are_refused_at_the_check_with_nothing_created() {
    let keys = [
        ("io", "size"),
        ("io", "io_size"),
        ("io", "rate_bw"),
        ("io", "rate_iops"),
        ("io", "iodepth"),
        ("integrity", "data_max"),
        ("integrity", "data_size"),
        ("integrity", "log_size"),
        ("integrity", "target_io_ms"),
        ("mailbox", "mailbox_size"),
        ("mailbox", "cache_size"),
        ("mailbox", "iops_per_mailbox"),
        ("oltp", "n_line_items"),
    ];
    for (kind, key) in keys {
        for value in values(&key.replace('_', "-")) {
            let dir = disk_tempdir();
            let target = dir.path().join("t");
            std::fs::create_dir(&target).unwrap();
            let plan = dir.path().join("plan.toml");
            // Quoted: a bare 18446744073709551615 is no TOML integer at all.
            let text = format!(
                "name = \"n\"\n[[configuration]]\nname = \"c\"\ntarget = \"{}\"\n[[workload]]\nkind = \"{kind}\"\n{key} = \"{value}\"\n",
                target.display()
            );
            std::fs::write(&plan, &text).unwrap();
            let mut cmd = storbench();
            cmd.arg("run").arg(&plan).arg("--output-dir").arg(dir.path().join("results"));
            let out = cmd.timeout(Duration::from_secs(30)).output().unwrap();
            let what = format!("plan {kind}.{key} = {value}");
            assert_eq!(out.status.code(), Some(2), "{what}: {}", String::from_utf8_lossy(&out.stderr));
            assert!(!stderr_text_of(&out).contains("panicked"), "{what}");
            assert!(contents(&target).is_empty(), "{what}: created {:?}", contents(&target));
            assert!(!dir.path().join("results").exists(), "{what}: a bundle was made");
        }
    }
}

fn stderr_text_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_data_max_of_u64_max_is_named_in_the_message() {
    let dir = disk_tempdir();
    let mut cmd = storbench();
    cmd.args(["integrity", "--data-max", "18446744073709551615", "--target"]).arg(dir.path());
    let out = cmd.assert().code(2);
    assert!(stderr_text(&out).contains("more than 1 EiB"), "{}", stderr_text(&out));
}

/// Issue 37: values that would never end or measure nothing are refused before anything is
/// made: a paced io run that would start fewer than 10 I/Os, a trace replay stretched past a
/// year, a footprint too small for the trace's largest request.
#[test]
fn a_rate_speed_or_footprint_that_measures_nothing_or_never_ends_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let trace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus/trace/io-randrw-fdatasync.sbtrace");
    let out = dir.path().join("results");
    let mut io = storbench();
    io.args(["io", "--size", "1MiB", "--runtime", "1", "--rate-iops", "0.0001", "--target"]).arg(dir.path());
    refused(io.arg("--output-dir").arg(&out), "too few to measure");
    let mut io = storbench();
    io.args(["io", "--size", "1MiB", "--io-size", "1PiB", "--rate-iops", "10", "--target"]).arg(dir.path());
    refused(io.arg("--output-dir").arg(&out), "days, more than the year a run may last");
    let replay = |args: &[&str]| {
        let mut c = storbench();
        c.arg("replay-trace")
            .arg(&trace)
            .arg("--target")
            .arg(dir.path())
            .args(args)
            .arg("--output-dir")
            .arg(&out);
        c
    };
    refused(&mut replay(&["--speed", "0.000000001"]), "days to replay, more than the year");
    refused(&mut replay(&["--footprint", "4KiB", "--fast"]), "smaller than the trace's largest request");
    assert!(!out.exists(), "nothing made for a refused run");
}
