//! Slurm: each step of a run's shards is one `srun` (a job of its own with nodes x tasks per
//! node tasks, each task a shard: `--shard env` reads SLURM_PROCID and SLURM_NTASKS), run
//! through storbench's one command helper with the step's time limit. `--label` prefixes each
//! line a task prints with its task number, so that a failure is told by its shard. A stopped
//! evaluation (Ctrl-C) cancels the job with `scancel`: ending srun alone leaves the decision to
//! the controller, which may keep the tasks running for a while.

use super::Step;
use crate::Result;
use crate::command::{self, Ending, Finished, Spec};
use crate::error::Doing;
use crate::run::StopFlag;
use std::time::Duration;

/// What srun's output keeps of a step: enough for every shard's last lines.
const OUTPUT_LIMIT: usize = 1 << 20;

/// How long `scancel` may take.
const CANCEL_LIMIT: Duration = Duration::from_secs(30);

/// The exit status a shard ends with when its run measured but a check failed (the merged
/// summary says which): not a failed shard.
const CHECK_FAILED: i32 = 1;

#[derive(Debug)]
pub struct Slurm {
    nodes: u32,
    per_node: u32,
    partition: Option<String>,
}

impl Slurm {
    /// Slurm with its shape, refused where srun is not on PATH.
    pub fn check(nodes: u32, per_node: u32, partition: Option<String>) -> Result<Slurm> {
        if !crate::background::cmd::shell_finds("srun") {
            refuse!(
                "--on slurm needs Slurm's srun on PATH: run storbench on a host of the cluster (a login \
                 node), or install Slurm's client (Debian: apt install slurm-client)"
            );
        }
        Ok(Slurm { nodes, per_node, partition })
    }

    pub fn shards(&self) -> u32 {
        self.nodes * self.per_node
    }

    /// Runs `step` as one srun and waits for it; an error names each shard that failed and
    /// what it said last.
    /// What srun and the shards said goes to `log` (the run's log, never the terminal).
    pub fn run(&self, step: &Step, log: &dyn Fn(&str), stop: &StopFlag) -> Result<()> {
        let job = format!("storbench-{}", step.run_id);
        let spec = Spec::new("srun", self.args(&job, step), step.time_limit).output_limit(OUTPUT_LIMIT);
        let finished = command::run(&spec, stop).doing("running srun")?;
        log(&finished.stdout.text());
        log(&finished.stderr.text());
        match finished.ending {
            Ending::Exited if finished.status.and_then(|s| s.code()).is_some_and(|c| c <= CHECK_FAILED) => {
                Ok(())
            }
            Ending::Stopped | Ending::Ended => {
                cancel(&job);
                Ok(())
            }
            Ending::TimeLimit => {
                cancel(&job);
                refuse!(
                    "job {job} ran past its time limit of {} s and was cancelled",
                    step.time_limit.as_secs()
                )
            }
            Ending::Exited => refuse!("{}", failed_shards(&finished, &job)),
        }
    }

    fn args(&self, job: &str, step: &Step) -> Vec<String> {
        let mut args = vec![
            format!("--nodes={}", self.nodes),
            format!("--ntasks-per-node={}", self.per_node),
            format!("--ntasks={}", self.shards()),
            format!("--job-name={job}"),
            "--label".into(),
            "--kill-on-bad-exit=1".into(),
        ];
        args.extend(self.partition.iter().map(|p| format!("--partition={p}")));
        args.extend(step.argv.iter().cloned());
        args.extend(["--shard".into(), "env".into()]);
        args
    }
}

/// Ends the job named `job` (the stopped step's), best effort: what is left is Slurm's.
fn cancel(job: &str) {
    let spec = Spec::new("scancel", ["--name", job], CANCEL_LIMIT);
    let _ = command::run(&spec, &StopFlag::new());
}

/// Each failed shard's last error, from srun's labelled output (`2: error: ...` is task 2's,
/// shard 3), up to srun's abort of the step (with `--kill-on-bad-exit` the other shards are
/// stopped then, and what they say of their interruption is not why the step failed); srun's
/// own words where no shard said anything.
fn failed_shards(finished: &Finished, job: &str) -> String {
    let text = finished.stderr.text();
    let mut said: Vec<(u32, String)> = Vec::new();
    for line in text.lines().take_while(|l| !l.contains("Job step aborted") && !l.contains("CANCELLED")) {
        let Some((task, rest)) = line.split_once(": ") else { continue };
        let (Ok(task), rest) = (task.trim().parse::<u32>(), rest.trim()) else { continue };
        if rest.starts_with("error:") {
            said.retain(|(t, _)| *t != task + 1);
            said.push((task + 1, rest.trim_start_matches("error:").trim().to_string()));
        }
    }
    said.sort();
    if said.is_empty() {
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output");
        return format!("job {job} failed ({}): {last}", finished.describe(Duration::ZERO));
    }
    said.iter().map(|(shard, e)| format!("shard {shard} failed: {e}")).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_shard_is_named_by_its_index_with_its_last_error() {
        // As srun tells a step whose shard 2 failed and whose others it then stopped.
        let spec = Spec::shell(
            "echo '0: waiting for --start-at'; echo '1: error: the target /x/s2 does not exist; create it' >&2; \
             echo 'srun: error: vm: task 1: Exited with exit code 2' >&2; \
             echo 'srun: Job step aborted: Waiting up to 32 seconds for job step to finish.' >&2; \
             echo '0: error: filling /x/s1/f: interrupted' >&2; exit 2",
            Duration::from_secs(10),
        );
        let finished = command::run(&spec, &StopFlag::new()).unwrap();
        let said = failed_shards(&finished, "storbench-r1");
        assert_eq!(said, "shard 2 failed: the target /x/s2 does not exist; create it");
    }

    #[test]
    fn srun_is_given_the_shape_the_partition_and_the_shards_command() {
        let slurm = Slurm { nodes: 2, per_node: 3, partition: Some("ssd".into()) };
        let step = Step {
            run_id: "r1",
            shards: 6,
            argv: vec!["/bin/storbench".into(), "run".into()],
            time_limit: Duration::ZERO,
        };
        let args = slurm.args("storbench-r1", &step);
        assert_eq!(
            args,
            [
                "--nodes=2",
                "--ntasks-per-node=3",
                "--ntasks=6",
                "--job-name=storbench-r1",
                "--label",
                "--kill-on-bad-exit=1",
                "--partition=ssd",
                "/bin/storbench",
                "run",
                "--shard",
                "env"
            ]
        );
    }
}
