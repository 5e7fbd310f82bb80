//! What tests build runs from, here and in the crates above: a summary of given results.

use crate::model::{Host, Phases, TargetInfo, Tool};
use crate::summary::{SCHEMA_VERSION, Summary};
use crate::workloads::Results;

/// A summary of `results` on a workload `kind` (named after it), complete or not: 60 measured
/// seconds on a file, nothing else said.
pub fn summary(kind: &str, results: Results, complete: bool) -> Summary {
    Summary {
        schema_version: SCHEMA_VERSION,
        tool: Tool { name: "storbench".into(), version: "0".into() },
        workload: kind.into(),
        name: kind.into(),
        complete,
        started_at: String::new(),
        ended_at: None,
        seed: 1,
        host: Host { hostname: "h".into(), kernel: String::new(), cpus: 1 },
        parameters: serde_json::Value::Null,
        target: TargetInfo {
            path: "/x".into(),
            kind: "file".into(),
            size_bytes: 0,
            direct: true,
            device: None,
        },
        engine: "null".into(),
        phases: Phases { ramp_s: 0.0, measured_s: 60.0 },
        results,
        cpu: Default::default(),
        warnings: Vec::new(),
        steady_state: None,
        background: Vec::new(),
        search: None,
        shard: None,
    }
}
