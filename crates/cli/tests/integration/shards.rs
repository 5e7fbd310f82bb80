//! `--shard I/N` and `--start-at`: shards told the same time start their runs together after
//! their own setup, each summary says which shard it was, and `{shard}` names each one's
//! places; bad shards and times are refused before anything runs.

use crate::support::{json, only_bundle, refused, storbench};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[test]
fn shards_given_one_start_time_start_together_and_say_which_shard_each_is() {
    let dir = tempfile::tempdir().unwrap();
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + Duration::from_secs(3);
    let at = start.as_secs().to_string();
    let shard = |spec: &str, env: &[(&str, &str)]| {
        let mut c = std::process::Command::new(storbench().get_program());
        c.args([
            "io",
            "--engine",
            "null",
            "--runtime",
            "1s",
            "--ramp",
            "0",
            "--power",
            "none",
            "--name",
            "s{shard}",
        ])
        .args(["--shard", spec, "--start-at", &at, "--output-dir"])
        .arg(dir.path().join("results-{shard}"));
        c.envs(env.iter().copied()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        c.spawn().unwrap()
    };
    // Shard 2 of 2 named on the command line, shard 1 read from Slurm's environment.
    let children = [shard("2/2", &[]), shard("env", &[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2")])];
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    for (i, from) in [(1, "slurm"), (2, "--shard")] {
        let bundle = only_bundle(&dir.path().join(format!("results-{i}")));
        assert!(bundle.file_name().unwrap().to_string_lossy().ends_with(&format!("-s{i}")), "{bundle:?}");
        let s = json(&std::fs::read(bundle.join("summary.json")).unwrap());
        let sh = &s["shard"];
        assert_eq!((&sh["index"], &sh["count"], &sh["from"]), (&i.into(), &2.into(), &from.into()), "{sh}");
        assert_eq!((&sh["late"], &sh["late_s"]), (&false.into(), &0.0.into()), "{sh}");
        assert!(sh["clock"]["max_error_us"].is_i64(), "{sh}");
        // Each started within 250 ms of the common instant (a busy machine may wake it late).
        let started: jiff::Timestamp = s["started_at"].as_str().unwrap().parse().unwrap();
        let off = started.duration_since(jiff::Timestamp::from_second(start.as_secs() as i64).unwrap());
        assert!(
            off.as_secs_f64() >= 0.0 && off.as_secs_f64() < 0.25,
            "shard {i} started {off:?} after the start time"
        );
    }
    // A run that is no shard says nothing of one.
    let alone = crate::support::stdout_json(
        &storbench()
            .args(["io", "--engine", "null", "--runtime", "1s", "--ramp", "0", "--json", "--output-dir"])
            .arg(dir.path().join("alone"))
            .assert()
            .success(),
    );
    assert!(alone.get("shard").is_none(), "{alone}");
    // Bad shards and times: exit 2 before anything runs.
    for (args, says) in [
        (["--shard", "0/2"], "shards count from 1 to 2"),
        (["--shard", "3/2"], "shard 3 of 2 does not exist"),
        (["--start-at", "1000000000"], "has passed"),
        (["--start-at", "4102444800"], "more than a day ahead"),
        (["--shard", "env"], "give --shard I/N"),
    ] {
        let mut c = storbench();
        c.args(["io", "--engine", "null", "--runtime", "1s"]).args(args).env_remove("SLURM_PROCID");
        c.env_remove("OMPI_COMM_WORLD_RANK")
            .env_remove("JOB_COMPLETION_INDEX")
            .arg("--output-dir")
            .arg(dir.path().join("none"));
        refused(&mut c, says);
    }
    assert!(!dir.path().join("none").exists());
}
