//! The cluster engines an evaluation's shards run on (`storbench run PLAN --on ENGINE`): Slurm
//! job steps (`srun`) and a Kubernetes Indexed Job (`kubectl`), each started through
//! `crate::command`, waited for, and cancelled on a stop request or at its time limit. What a
//! shard runs and how the shards' bundles are merged is the caller's.

pub mod kubernetes;
pub mod slurm;

use std::time::Duration;

/// A run's shards, as the engine starts them: how many, and their command, to which the
/// engine adds how a shard learns its index (`--shard env`, from the engine's environment).
pub struct Step<'a> {
    pub run_id: &'a str,
    pub shards: u32,
    pub argv: Vec<String>,
    pub time_limit: Duration,
}
