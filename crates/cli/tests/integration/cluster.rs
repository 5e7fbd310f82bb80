//! `storbench run PLAN --on slurm`: an evaluation whose runs are shards on a real (one-node)
//! Slurm cluster, set up by .ci/slurm-local.sh: every shard's setup, then their measured runs
//! started together, merged into the run's bundle; a shard that fails fails its run with the
//! shard's error while the evaluation goes on; shards of one run share a directory, each with
//! its own files.

use crate::support::{json, only_bundle, storbench};
use std::path::{Path, PathBuf};
use storbench_bench::testing::skip;

/// Whether a Slurm cluster answers here (srun on PATH, a node up); says how to get one if not.
fn slurm_up() -> bool {
    let up = std::process::Command::new("sinfo")
        .args(["-h", "-o", "%T"])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    if !up {
        skip("no Slurm cluster answers (sinfo)", "run .ci/slurm-local.sh as root for a one-node cluster");
    }
    up
}

fn write_plan(dir: &Path, target: &str, workloads: &str) -> PathBuf {
    let plan = dir.join("plan.toml");
    let text = format!(
        "name = \"sharded\"\n[method]\nrepetitions = 1\nidle_settle = \"0s\"\nidle_power = \"0s\"\n\
         power = \"none\"\n[[configuration]]\nname = \"c\"\ntarget = \"{target}\"\n{workloads}"
    );
    std::fs::write(&plan, text).unwrap();
    plan
}

const IO: &str = "[[workload]]\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"16MiB\"\n\
                  runtime = \"3s\"\nramp = \"0s\"\n";
const OLTP: &str = "[[workload]]\nkind = \"oltp\"\ndb_size = \"1MB\"\nn_threads = 2\nrun_time = \"3s\"\n\
                    warmup_time = \"0s\"\n";

/// `storbench run PLAN` on `engine` with `shards` tasks on one node, into `out`. The shards
/// start at the default 10 s after their step's submission: srun took over 4 s to start a
/// step here while other tests loaded both cores, so a shorter time would fail them.
fn run_on(plan: &Path, engine: &[&str], shards: u32, out: &Path) -> assert_cmd::assert::Assert {
    let tasks = shards.to_string();
    let mut c = storbench();
    c.arg("run").arg(plan).args(["--on"]).args(engine).args(["--tasks-per-node", &tasks, "--output-dir"]);
    c.arg(out).assert()
}

fn evaluation(out: &Path) -> (PathBuf, serde_json::Value) {
    let dir = only_bundle(out);
    let eval = json(&std::fs::read(dir.join("evaluation.json")).unwrap());
    (dir, eval)
}

#[test]
fn an_evaluation_on_slurm_runs_io_and_oltp_as_shards_started_together_and_merged() {
    if !slurm_up() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=3 {
        std::fs::create_dir(dir.path().join(format!("s{i}"))).unwrap();
    }
    let target = format!("{}/s{{shard}}", dir.path().display());
    let plan = write_plan(dir.path(), &target, &format!("{IO}{OLTP}"));
    let out = dir.path().join("out");
    run_on(&plan, &["slurm", "--nodes", "1"], 3, &out).success();
    let (eval_dir, eval) = evaluation(&out);
    let runs = eval["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        assert_eq!(run["status"], "done", "{run}");
        let bundle = eval_dir.join(run["bundle"].as_str().unwrap());
        let merged = json(&std::fs::read(bundle.join("summary.json")).unwrap());
        let shards = json(&std::fs::read(bundle.join("shards.json")).unwrap());
        assert_eq!(shards["complete"], true, "{shards}");
        let entries = shards["shards"].as_array().unwrap();
        assert_eq!(entries.len(), 3, "{shards}");
        // Started together: every shard's measured phase begins within half a second of the
        // others' (the common --start-at; a busy machine may wake one late).
        let starts: Vec<f64> = entries.iter().map(|e| e["measured_s"][0].as_f64().unwrap()).collect();
        let spread =
            starts.iter().cloned().fold(f64::MIN, f64::max) - starts.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread < 0.5, "{starts:?}");
        // Each shard is its own run on its own place, and says which shard it was.
        let mut headline_sum = 0.0;
        for i in 1..=3 {
            let s =
                json(&std::fs::read(bundle.join("shards").join(i.to_string()).join("summary.json")).unwrap());
            assert_eq!(
                (&s["shard"]["index"], &s["shard"]["count"]),
                (&i.into(), &3.into()),
                "{}",
                s["shard"]
            );
            assert_eq!(s["shard"]["from"], "slurm");
            headline_sum +=
                storbench_report::evaluation::headline(&serde_json::from_value(s).unwrap()).unwrap().value;
        }
        // The run's figure is the shards' together: their sum, over the common window.
        let merged_value =
            storbench_report::evaluation::headline(&serde_json::from_value(merged).unwrap()).unwrap().value;
        let recorded = run["headline"]["value"].as_f64().unwrap();
        assert_eq!(recorded, merged_value);
        assert!(
            (merged_value / headline_sum - 1.0).abs() < 0.15,
            "merged {merged_value}, shards' sum {headline_sum}"
        );
    }
    // `{shard}` gave each shard its own directory, where it made its own files.
    for i in 1..=3 {
        let own = dir.path().join(format!("s{i}"));
        for file in [format!("storbench-io.shard{i}.dat"), format!("storbench-ds3.shard{i}.db")] {
            assert!(own.join(&file).is_file(), "{file} in {own:?}");
        }
    }
}

#[test]
fn a_failed_shard_fails_its_run_by_name_and_the_evaluation_goes_on() {
    if !slurm_up() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Shard 2's target is missing: its setup fails, and with it the run, in both repetitions.
    for i in [1, 3] {
        std::fs::create_dir(dir.path().join(format!("s{i}"))).unwrap();
    }
    let target = format!("{}/s{{shard}}", dir.path().display());
    let plan = write_plan(dir.path(), &target, IO);
    let text = std::fs::read_to_string(&plan).unwrap().replace("repetitions = 1", "repetitions = 2");
    std::fs::write(&plan, text).unwrap();
    let out = dir.path().join("out");
    let ran = run_on(&plan, &["slurm"], 3, &out).failure();
    let said = String::from_utf8_lossy(&ran.get_output().stderr).into_owned();
    assert!(!said.contains("panicked"), "{said}");
    let (_, eval) = evaluation(&out);
    let runs = eval["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "both repetitions were tried");
    for run in runs {
        assert_eq!(run["status"], "failed", "{run}");
        let error = run["error"].as_str().unwrap();
        assert!(error.contains("shard 2 failed") && error.contains("s2"), "{error}");
        assert!(!error.contains("shard 1 failed") && !error.contains("shard 3 failed"), "{error}");
    }
}

#[test]
fn io_shards_of_one_run_share_a_directory_each_with_its_own_file() {
    if !slurm_up() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let plan = write_plan(dir.path(), &shared.display().to_string(), IO);
    let out = dir.path().join("out");
    run_on(&plan, &["slurm"], 2, &out).success();
    let mut files: Vec<String> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["storbench-io.shard1.dat", "storbench-io.shard2.dat"]);
    let (_, eval) = evaluation(&out);
    assert_eq!(eval["runs"][0]["status"], "done", "{}", eval["runs"][0]);
}

#[test]
fn without_a_cluster_kubernetes_jobs_are_written_and_a_pod_runs_as_the_shard_of_its_index() {
    let answers = std::process::Command::new("sh")
        .args(["-c", "kubectl version --request-timeout=5s -o json"])
        .output()
        .is_ok_and(|o| o.status.success());
    if answers {
        eprintln!("a Kubernetes cluster answers kubectl here: this test is of a machine without one");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=2 {
        std::fs::create_dir(dir.path().join(format!("s{i}"))).unwrap();
    }
    let plan = write_plan(dir.path(), &format!("{}/s{{shard}}", dir.path().display()), IO);
    let out = dir.path().join("out");
    // A start time too close to the submission for any engine is refused before anything runs.
    let mut soon = storbench();
    soon.arg("run").arg(&plan).args(["--on", "kubernetes", "--image", "x", "--start-ahead", "0.5s"]);
    crate::support::refused(soon.arg("--output-dir").arg(&out), "not from 1s to 1h");
    assert!(!out.exists(), "a refused evaluation made its directory");
    let stopped = run_on(&plan, &["kubernetes", "--image", "example.org/storbench:1"], 2, &out).code(2);
    let said = String::from_utf8_lossy(&stopped.get_output().stderr).into_owned();
    assert!(
        said.contains("no Kubernetes cluster answers") && said.contains("storbench run --resume"),
        "{said}"
    );
    let (eval_dir, eval) = evaluation(&out);
    assert_eq!(eval["runs"][0]["status"], "pending", "the evaluation is left to resume");
    let run_id = eval["runs"][0]["id"].as_str().unwrap().to_string();

    // Each pod runs the manifest's command with its JOB_COMPLETION_INDEX: here, as this host.
    let command = |step: &str| -> Vec<String> {
        let found = std::fs::read_dir(eval_dir.join("kubernetes"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(&format!("-{step}.json")))
            .unwrap();
        let job = json(&std::fs::read(found).unwrap());
        let c = &job["spec"]["template"]["spec"]["containers"][0]["command"];
        c.as_array().unwrap().iter().skip(1).map(|a| a.as_str().unwrap().to_string()).collect()
    };
    let pod = |step: &str, index: u32| {
        let mut c = std::process::Command::new(storbench().get_program());
        c.args(command(step)).env("JOB_COMPLETION_INDEX", index.to_string());
        c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    for index in 0..2 {
        let setup = pod("setup", index).wait_with_output().unwrap();
        assert!(setup.status.success(), "{}", String::from_utf8_lossy(&setup.stderr));
    }
    for (i, own) in [(1, "s1"), (2, "s2")] {
        assert!(
            dir.path().join(own).join(format!("storbench-io.shard{i}.dat")).is_file(),
            "shard {i}'s file in {own}"
        );
    }
    let pods: Vec<_> = (0..2).map(|index| pod("run", index)).collect();
    for p in pods {
        let done = p.wait_with_output().unwrap();
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    }
    let shards = eval_dir.join("runs").join(&run_id).join("shards");
    for i in 1..=2 {
        let s = json(&std::fs::read(shards.join(i.to_string()).join("summary.json")).unwrap());
        assert_eq!((&s["shard"]["index"], &s["shard"]["count"]), (&i.into(), &2.into()), "{}", s["shard"]);
        assert_eq!(s["shard"]["from"], "kubernetes");
    }
    storbench()
        .arg("merge")
        .arg(shards.join("1"))
        .arg(shards.join("2"))
        .arg("--out")
        .arg(dir.path().join("merged"))
        .assert()
        .success();
}

/// `--on kubernetes` where kubectl answers, through a stand-in kubectl (tests/integration/
/// standin/kubectl) whose one-node "cluster" runs each Indexed Job's pods as processes on this
/// host: storbench applies the setup Job, then the run's, follows them to completion, and
/// merges the shards' bundles from the results volume; a Job whose pod fails fails its run
/// with that pod's last error and is deleted. No Kubernetes cluster runs here, so this tests
/// storbench's side of the conversation, not a cluster's.
#[test]
fn with_a_cluster_answering_kubectl_jobs_are_applied_followed_and_their_shards_merged() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let standin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/standin/kubectl");
    std::fs::copy(&standin, bin.join("kubectl")).unwrap();
    let state = dir.path().join("cluster");
    std::fs::create_dir(&state).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    // The cluster, apart from storbench; ended with the test.
    struct Cluster(std::process::Child);
    impl Drop for Cluster {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _cluster = Cluster(
        std::process::Command::new(bin.join("kubectl"))
            .arg("serve")
            .env("STANDIN_STATE", &state)
            .env("STANDIN_STORBENCH", storbench().get_program())
            .spawn()
            .unwrap(),
    );
    let on_cluster = |plan: &Path, out: &Path| {
        let mut c = storbench();
        c.arg("run").arg(plan).args(["--on", "kubernetes", "--image", "example.org/storbench:1"]);
        c.args(["--tasks-per-node", "2", "--start-ahead", "5s", "--output-dir"]).arg(out);
        c.env("PATH", &path).env("STANDIN_STATE", &state);
        c.assert()
    };
    std::fs::create_dir(dir.path().join("s1")).unwrap();
    std::fs::create_dir(dir.path().join("s2")).unwrap();
    let plan = write_plan(dir.path(), &format!("{}/s{{shard}}", dir.path().display()), IO);
    let out = dir.path().join("out");
    on_cluster(&plan, &out).success();
    let (eval_dir, eval) = evaluation(&out);
    let run = &eval["runs"][0];
    assert_eq!(run["status"], "done", "{run}");
    let id = run["id"].as_str().unwrap();
    let bundle = only_bundle(&eval_dir.join("runs").join(id));
    let merged = json(&std::fs::read(bundle.join("summary.json")).unwrap());
    assert_eq!(merged["complete"], true, "{}", merged["shards"]);
    assert!(merged["results"]["read"]["ios"].as_u64().unwrap() > 0, "{}", merged["results"]);
    for i in 1..=2 {
        assert!(dir.path().join(format!("s{i}/storbench-io.shard{i}.dat")).is_file(), "shard {i}'s file");
    }

    // Shard 2's directory gone: its pod fails in the setup Job, and the run with its error.
    std::fs::remove_dir_all(dir.path().join("s2")).unwrap();
    let out = dir.path().join("out2");
    let said = on_cluster(&plan, &out).failure();
    let said = String::from_utf8_lossy(&said.get_output().stderr).into_owned();
    assert!(!said.contains("panicked"), "{said}");
    let (_, eval) = evaluation(&out);
    let run = &eval["runs"][0];
    assert_eq!(run["status"], "failed", "{run}");
    let error = run["error"].as_str().unwrap();
    assert!(error.contains("1 shard(s) failed") && error.contains("s2"), "{error}");
}

/// Issue 37: a Job mounts each configuration's own directory (each shard's, where `{shard}`
/// makes one per shard) and the evaluation's, never a parent: a target right under `/` no
/// longer gives every pod the host's `/`. `/` or a system directory as a target is refused
/// before anything is made.
#[test]
fn kubernetes_jobs_mount_only_each_configurations_own_place_and_never_a_system_directory() {
    // A directory right under `/`, whose parent is the host's root.
    let top = tempfile::Builder::new().prefix("storbench-k8s-test-").tempdir_in("/").unwrap();
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=2 {
        std::fs::create_dir(top.path().join(format!("s{i}"))).unwrap();
    }
    let plan = write_plan(dir.path(), &format!("{}/s{{shard}}", top.path().display()), IO);
    let out = dir.path().join("out");
    // With no cluster to answer, the Jobs are written and the evaluation stops.
    let path = format!("{}:/usr/bin:/bin", dir.path().display());
    let mut c = storbench();
    c.arg("run").arg(&plan).args(["--on", "kubernetes", "--image", "x", "--tasks-per-node", "2"]);
    c.env("PATH", path).arg("--output-dir").arg(&out).assert().code(2);
    let (eval_dir, _) = evaluation(&out);
    let manifests: Vec<PathBuf> =
        std::fs::read_dir(eval_dir.join("kubernetes")).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(!manifests.is_empty());
    for manifest in manifests {
        let job = json(&std::fs::read(&manifest).unwrap());
        let volumes = job["spec"]["template"]["spec"]["volumes"].as_array().unwrap().clone();
        let mut mounted: Vec<String> =
            volumes.iter().map(|v| v["hostPath"]["path"].as_str().unwrap().to_string()).collect();
        mounted.sort();
        let mut want = vec![
            eval_dir.display().to_string(),
            top.path().join("s1").display().to_string(),
            top.path().join("s2").display().to_string(),
        ];
        want.sort();
        assert_eq!(mounted, want, "{}", manifest.display());
    }
    for system in ["/", "/etc", "/var/"] {
        let plan = write_plan(dir.path(), system, IO);
        let out = dir.path().join("refused");
        let mut c = storbench();
        c.arg("run").arg(&plan).args(["--on", "kubernetes", "--image", "x", "--output-dir"]).arg(&out);
        let said = crate::support::refused(&mut c, "configuration c: its target");
        assert!(
            said.contains("the system's own directory") && said.contains("directory of its own"),
            "{said}"
        );
        assert!(!out.exists(), "{system}: a refused evaluation made its directory");
    }
}
