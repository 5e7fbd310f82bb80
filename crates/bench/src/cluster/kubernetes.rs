//! Kubernetes: each step of a run's shards is an Indexed Job (completionMode Indexed,
//! parallelism and completions N; pod I runs shard I+1, whose `--shard env/N` reads
//! JOB_COMPLETION_INDEX). Its manifest is written beside the evaluation
//! (`kubernetes/<job>.json`), applied with kubectl and followed until every pod completed or one
//! failed; the shards write their bundles into the evaluation's directory, which the pods see at
//! the same path, as they see the configurations' targets (hostPath volumes: storage mounted
//! there on every node, or a one-node cluster). Where kubectl is missing or no cluster answers,
//! the evaluation writes every run's manifests and stops, saying what to run.

use super::Step;
use crate::Result;
use crate::command::{self, Spec};
use crate::error::Doing;
use crate::run::StopFlag;
use crate::run::bundle;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The storbench a pod runs: the image's (the repository's Dockerfile puts it on PATH).
const IN_IMAGE: &str = "storbench";

/// How long a kubectl call may take (apply, get, delete).
const KUBECTL_LIMIT: Duration = Duration::from_secs(60);

/// How often a running Job is asked how far it is.
const POLL: Duration = Duration::from_secs(2);

/// Where the manifests go in the evaluation's directory.
pub const MANIFESTS: &str = "kubernetes";

#[derive(Debug)]
pub struct Kubernetes {
    image: String,
    shards: u32,
}

impl Kubernetes {
    pub fn new(image: String, shards: u32) -> Kubernetes {
        Kubernetes { image, shards }
    }

    pub fn shards(&self) -> u32 {
        self.shards
    }

    /// Whether kubectl is here and a cluster answers it.
    pub fn reachable() -> bool {
        crate::background::cmd::shell_finds("kubectl") && {
            let spec = Spec::new("kubectl", ["version", "--request-timeout=5s", "-o", "json"], KUBECTL_LIMIT);
            command::run(&spec, &StopFlag::new()).is_ok_and(|f| f.succeeded())
        }
    }

    /// The step's Job, its manifest written under `dir`.
    pub fn manifest(
        &self,
        step: &Step,
        dir: &Path,
        step_name: &str,
        places: &[PathBuf],
    ) -> Result<(String, PathBuf)> {
        let name = job_name(dir, step.run_id, step_name);
        let job =
            job(&JobSpec { name: &name, image: &self.image, shards: step.shards, argv: &step.argv, places });
        let file = dir.join(MANIFESTS).join(format!("{name}.json"));
        let manifests = dir.join(MANIFESTS);
        crate::files::create_dirs(&manifests).doing(&format!("making {}", manifests.display()))?;
        let text = serde_json::to_string_pretty(&job).doing("writing the Job's manifest")? + "\n";
        bundle::write_atomic(&file, &text).doing(&format!("writing {}", file.display()))?;
        Ok((name, file))
    }

    /// Applies the step's Job and waits until every pod completed; an error names the shards
    /// that failed with their last error.
    pub fn run(&self, step: &Step, dir: &Path, places: &[PathBuf], stop: &StopFlag) -> Result<()> {
        let step_name = if step.argv.iter().any(|a| a == "--setup-only") { "setup" } else { "run" };
        let (name, file) = self.manifest(step, dir, step_name, places)?;
        kubectl(&["apply", "-f", &file.display().to_string()])?;
        let started = Instant::now();
        loop {
            let status =
                kubectl(&["get", "job", &name, "-o", "jsonpath={.status.succeeded}/{.status.failed}"])?;
            let (done, failed) = counts(&status);
            if done >= step.shards {
                return Ok(());
            }
            if failed > 0 {
                let logs = kubectl(&["logs", "-l", &format!("job-name={name}"), "--prefix", "--tail=20"]);
                let _ = kubectl(&["delete", "job", &name, "--wait=false"]);
                refuse!("job {name}: {failed} shard(s) failed: {}", last_errors(&logs.unwrap_or_default()));
            }
            if stop.is_stopped() || started.elapsed() > step.time_limit {
                let _ = kubectl(&["delete", "job", &name, "--wait=false"]);
                if stop.is_stopped() {
                    return Ok(());
                }
                refuse!(
                    "job {name} ran past its time limit of {} s and was deleted",
                    step.time_limit.as_secs()
                );
            }
            std::thread::sleep(POLL);
        }
    }
}

/// kubectl with `args`; its stdout, or an error with what it said.
fn kubectl(args: &[&str]) -> Result<String> {
    let finished = command::run(&Spec::new("kubectl", args.iter().copied(), KUBECTL_LIMIT), &StopFlag::new())
        .doing("running kubectl")?;
    if !finished.succeeded() {
        refuse!("kubectl {} failed: {}", args.join(" "), finished.stderr.text().trim());
    }
    Ok(finished.stdout.text())
}

/// `succeeded/failed` as kubectl prints them (empty where none yet).
fn counts(text: &str) -> (u32, u32) {
    let (a, b) = text.trim().split_once('/').unwrap_or((text.trim(), ""));
    (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
}

/// The last `error:` line of each pod in `kubectl logs --prefix` output.
fn last_errors(logs: &str) -> String {
    let mut said: Vec<(String, String)> = Vec::new();
    for line in logs.lines() {
        let Some((pod, rest)) = line.split_once(' ') else { continue };
        if let Some(e) = rest.trim().strip_prefix("error:") {
            said.retain(|(p, _)| p != pod);
            said.push((pod.to_string(), e.trim().to_string()));
        }
    }
    if said.is_empty() {
        return "they said no error (see kubectl logs)".into();
    }
    said.into_iter().map(|(pod, e)| format!("{pod}: {e}")).collect::<Vec<_>>().join("; ")
}

/// A Job's name: DNS-1123 (lowercase letters, digits, '-'), at most 63 characters, unique to
/// the evaluation (a hash of its directory), the run and the step.
pub fn job_name(dir: &Path, run_id: &str, step: &str) -> String {
    let hash = dir
        .display()
        .to_string()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let run: String = run_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let run: String = run.trim_matches('-').chars().take(40).collect();
    format!("sb-{:06x}-{}-{step}", hash & 0xff_ffff, run.trim_end_matches('-'))
}

/// What a Job is made of.
pub struct JobSpec<'a> {
    pub name: &'a str,
    pub image: &'a str,
    pub shards: u32,
    /// The shard's command line, its first word storbench.
    pub argv: &'a [String],
    /// Paths the pods must see where this host sees them: the evaluation's directory and each
    /// configuration's place (its target's directory, or its block device).
    pub places: &'a [PathBuf],
}

/// The Indexed Job of `spec`, as the batch/v1 API takes it.
pub fn job(spec: &JobSpec) -> Value {
    let mut command: Vec<String> =
        std::iter::once(IN_IMAGE.to_string()).chain(spec.argv[1..].iter().cloned()).collect();
    command.extend(["--shard".into(), format!("env/{}", spec.shards)]);
    let devices = spec.places.iter().any(|p| is_device(p));
    let volumes: Vec<Value> = spec
        .places
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let kind = if is_device(p) { "BlockDevice" } else { "Directory" };
            json!({ "name": format!("place{i}"), "hostPath": { "path": p.display().to_string(), "type": kind } })
        })
        .collect();
    let mounts: Vec<Value> = spec
        .places
        .iter()
        .enumerate()
        .map(|(i, p)| json!({ "name": format!("place{i}"), "mountPath": p.display().to_string() }))
        .collect();
    let labels = json!({ "app.kubernetes.io/name": "storbench", "app.kubernetes.io/component": "shard" });
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": spec.name, "labels": labels },
        "spec": {
            "completionMode": "Indexed",
            "completions": spec.shards,
            "parallelism": spec.shards,
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": { "labels": labels },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "shard",
                        "image": spec.image,
                        "command": command,
                        "volumeMounts": mounts,
                        // A block device under test needs the device node and O_DIRECT on it.
                        "securityContext": { "privileged": devices }
                    }],
                    "volumes": volumes
                }
            }
        }
    })
}

fn is_device(p: &Path) -> bool {
    crate::files::entry(p).ok().flatten().is_some_and(|e| e.kind == crate::files::FileKind::BlockDevice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::batch::v1::Job;

    fn spec_job(places: &[PathBuf]) -> Value {
        let argv: Vec<String> =
            ["/usr/local/bin/storbench", "run", "--resume", "/results/e1", "--shard-of", "io.c.r1"]
                .map(String::from)
                .to_vec();
        job(&JobSpec {
            name: "sb-0a0b0c-io-c-r1-run",
            image: "example.org/storbench:1",
            shards: 4,
            argv: &argv,
            places,
        })
    }

    #[test]
    fn the_job_is_a_batch_v1_indexed_job_with_one_shard_per_pod() {
        let dir = tempfile::tempdir().unwrap();
        let places = [dir.path().join("e1"), dir.path().to_path_buf()];
        let manifest = spec_job(&places);
        let typed: Job = serde_json::from_value(manifest.clone()).expect("a batch/v1 Job");
        // Every field is one the Job API has, with its type: the typed Job writes back the
        // manifest exactly (a field it does not know would be dropped).
        assert_eq!(serde_json::to_value(&typed).unwrap(), manifest);
        let spec = typed.spec.unwrap();
        assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
        assert_eq!((spec.completions, spec.parallelism, spec.backoff_limit), (Some(4), Some(4), Some(0)));
        let pod = spec.template.spec.unwrap();
        assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
        let shard = &pod.containers[0];
        let command = shard.command.clone().unwrap();
        // The image's storbench, the evaluation's shard command, the index from the Job.
        assert_eq!(command[..2], ["storbench", "run"]);
        assert_eq!(command[command.len() - 2..], ["--shard", "env/4"]);
        let mounted: Vec<String> =
            shard.volume_mounts.clone().unwrap().into_iter().map(|m| m.mount_path).collect();
        let shown: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(mounted, shown, "each place at the path this host sees it at");
        let volumes = pod.volumes.unwrap();
        assert!(
            volumes
                .iter()
                .all(|v| v.host_path.as_ref().is_some_and(|h| h.type_.as_deref() == Some("Directory")))
        );
    }

    #[test]
    fn job_names_are_dns_labels_unique_to_the_evaluation_the_run_and_the_step() {
        let long = "oltp-swept-n_threads=64.ssd-raid10-with-a-long-name.r3";
        let name = job_name(Path::new("/results/20261126-sharded"), long, "setup");
        assert!(name.len() <= 63, "{name}");
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{name}");
        assert!(name.starts_with("sb-") && name.ends_with("-setup"), "{name}");
        assert_ne!(name, job_name(Path::new("/results/other"), long, "setup"));
        assert_ne!(name, job_name(Path::new("/results/20261126-sharded"), long, "run"));
    }

    #[test]
    fn a_failed_pods_last_error_is_told_by_pod() {
        let logs = "[pod/sb-1-run-0-abc/shard] waiting for --start-at\n\
                    [pod/sb-1-run-1-def/shard] error: the target /mnt/s2 does not exist\n";
        assert_eq!(last_errors(logs), "[pod/sb-1-run-1-def/shard]: the target /mnt/s2 does not exist");
        assert_eq!(counts("3/1"), (3, 1));
        assert_eq!(counts("/"), (0, 0));
    }
}
