//! Crash cycles from the command line: the crash options into the library's `CrashSpec`, the
//! writer process as this binary with the hidden `--crash-writer` (its `WriterSpec` as JSON,
//! named by its target for a crash command that looks for it), and the lines the cycles say
//! on the terminal and in the run's log (`workload::integrity::crash`).

use crate::args::integrity::CrashArgs;
use anyhow::{Context, Result};
use std::io::Write;
use std::time::Duration;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::integrity::IntegritySpec;
use storbench_bench::workload::integrity::bundle::ErrorFile;
use storbench_bench::workload::integrity::crash::handover::Sink;
use storbench_bench::workload::integrity::crash::{
    self, Around, CrashSpec, Cycles, Voice, WriterCommand, WriterSpec,
};

/// The crash options, checked, with the crash coming by `after`.
pub fn crash_spec(a: &CrashArgs, after: Duration) -> CrashSpec {
    CrashSpec {
        after,
        command: a.crash_cmd.clone(),
        command_limit: a.crash_cmd_timeout_or_default(),
        cycles: a.crash_cycles.unwrap_or(1),
    }
}

/// Runs the crash cycles, each writer this binary.
pub fn run_cycles(
    spec: &IntegritySpec,
    plan: &CrashSpec,
    (errors, sink): (&mut ErrorFile, &mut Sink),
    stop: &StopFlag,
) -> Result<Cycles> {
    let exe = std::env::current_exe().context("finding storbench's own binary")?;
    let voice = Voice { say: &crate::console::say_line, alert: &alert_line, log: &crate::console::log_only };
    let around = Around { writer: WriterCommand { program: &exe, args: &writer_args }, voice };
    Ok(crash::run_cycles(spec, plan, around, (errors, sink), stop)?)
}

fn alert_line(line: &str) {
    alert!("{line}");
}

/// The writer's command line: its `WriterSpec` as JSON, named by its target for a crash
/// command that looks for it (`pkill -f -- '--crash-writer --target DIR'`).
fn writer_args(writer: &WriterSpec) -> storbench_bench::Result<Vec<String>> {
    let json = serde_json::to_string(writer).map_err(|e| format!("handing the writer its spec: {e}"))?;
    let spec = &writer.spec;
    let place = spec.device.as_ref().unwrap_or(&spec.dir).display().to_string();
    // The run's power meter is the parent's; the writer reads none.
    let args = ["integrity", "--crash-writer", "--target", &place, "--writer-spec", &json, "--power", "none"];
    Ok(args.map(String::from).to_vec())
}

/// The writer process (`--crash-writer`): it says "ready" on stdout, for its parent, once its
/// activities start.
pub fn writer(w: &WriterSpec, stop: &StopFlag) -> Result<()> {
    let mut ready = || {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"ready\n").and_then(|()| out.flush());
    };
    Ok(crash::writer(w, &mut ready, alert_line, stop)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_writer_runs_the_parents_spec_exactly_with_its_cycles_seed_and_hands_over_its_intervals() {
        let dir = tempfile::tempdir().unwrap();
        let parse = |argv: Vec<String>| {
            crate::root::parse_kind::<crate::args::integrity::IntegrityCommand>(&argv).run
        };
        let target = dir.path().display().to_string();
        let parent = parse(["storbench", "integrity", "--target", &target].map(String::from).to_vec());
        let spec = IntegritySpec {
            users: 3,
            sync_every: Duration::from_millis(700),
            ..super::super::validate::validate(&parent.job()).unwrap()
        };
        let intervals = dir.path().join("cycle3.intervals.jsonl");
        let args = writer_args(&WriterSpec::of_cycle(&spec, 3, &intervals)).unwrap();
        let w = parse(["storbench".to_string()].into_iter().chain(args).collect());
        assert!(w.crash.crash_writer);
        assert_eq!(w.target.as_deref(), Some(spec.dir.as_path()), "named by its target");
        let got: WriterSpec = serde_json::from_str(w.crash.writer_spec.as_deref().unwrap()).unwrap();
        let expected = IntegritySpec { duration: crash::WRITER_DURATION, seed: spec.seed + 2, ..spec };
        assert_eq!(format!("{:?}", got.spec), format!("{expected:?}"));
        assert_eq!(got.intervals, intervals, "it hands its intervals over where the run reads them");
    }
}
