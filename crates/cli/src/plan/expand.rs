//! A plan → the runs it asks for, in the order they run: per workload and sweep point, each
//! repetition runs every configuration in turn, so slow drift of the machine touches every
//! configuration alike. Each run's options are its command's own, with the configuration's
//! place and the method's defaults filled in.

use super::{Configuration, Method, Plan, WorkloadArgs};
use crate::args::{IntegrityArgs, IoArgs, MailboxArgs, OltpRunArgs};
use crate::units::{Minutes, Seconds};
use std::time::Duration;

/// One run of the evaluation.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    /// `<workload>.<configuration>[.<param>-<value>].r<N>`, stable across a resume.
    pub id: String,
    pub workload: String,
    pub configuration: usize,
    pub sweep: Option<(String, serde_json::Value)>,
    pub repetition: u32,
    pub args: WorkloadArgs,
    /// What the run should take, for the ETA: warm-up plus measured phase.
    pub expected: Duration,
}

pub const DEFAULT_REPETITIONS: u32 = 3;

/// Every run of `plan`, in order.
pub fn runs(plan: &Plan) -> Vec<PlannedRun> {
    let reps = plan.method.repetitions.unwrap_or(DEFAULT_REPETITIONS);
    let mut out = Vec::new();
    for w in &plan.workloads {
        for (pi, (sweep, args)) in w.points.iter().enumerate() {
            for repetition in 1..=reps {
                for (ci, c) in plan.configurations.iter().enumerate() {
                    let own = w.by_configuration.get(ci).and_then(Option::as_ref).and_then(|p| p.get(pi));
                    let args = own.unwrap_or(args);
                    let point =
                        sweep.as_ref().map(|(k, v)| format!(".{k}-{}", value_text(v))).unwrap_or_default();
                    let mut args = for_configuration(args, c, &plan.method);
                    if let (Some((key, n)), WorkloadArgs::Oltp(a)) = (sweep, &mut args)
                        && key == super::parse::TARGETS
                    {
                        a.db.url.truncate(n.as_u64().unwrap_or(1) as usize);
                    }
                    out.push(PlannedRun {
                        id: format!("{}.{}{point}.r{repetition}", w.label, c.name),
                        workload: w.label.clone(),
                        configuration: ci,
                        sweep: sweep.clone(),
                        repetition,
                        expected: expected(&args),
                        args,
                    });
                }
            }
        }
    }
    out
}

fn value_text(v: &serde_json::Value) -> String {
    let text = match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect()
}

/// The workload's options with the configuration's place and the method's defaults.
pub fn for_configuration(args: &WorkloadArgs, c: &Configuration, m: &Method) -> WorkloadArgs {
    match args {
        WorkloadArgs::Io(a) => WorkloadArgs::Io(Box::new(io(a, c, m))),
        WorkloadArgs::Oltp(a) => WorkloadArgs::Oltp(Box::new(oltp(a, c, m))),
        WorkloadArgs::Mailbox(a) => WorkloadArgs::Mailbox(Box::new(mailbox(a, c, m))),
        WorkloadArgs::Integrity(a) => WorkloadArgs::Integrity(Box::new(integrity(a, c, m))),
    }
}

fn io(a: &IoArgs, c: &Configuration, m: &Method) -> IoArgs {
    let steady = m.window.as_deref() == Some("steady_state");
    let round = Seconds(m.round_or_default());
    IoArgs {
        target: Some(c.target.clone()),
        steady_state: a.steady_state.or(steady.then_some(round)),
        allow_device: c.allow_device,
        force: c.force,
        runtime: a.runtime.or(m.measure),
        ramp: a.ramp.or(m.warmup),
        seed: a.seed.or(m.seed),
        ..a.clone()
    }
}

fn oltp(a: &OltpRunArgs, c: &Configuration, m: &Method) -> OltpRunArgs {
    let mut out = OltpRunArgs {
        run_time: a.run_time.or(m.measure.map(|s| Minutes(s.0))),
        warmup_time: a.warmup_time.or(m.warmup.map(|s| Minutes(s.0))),
        seed: a.seed.or(m.seed),
        settle_time: a.settle_time.or(m.idle_settle),
        ..a.clone()
    };
    if c.url.is_empty() {
        out.db.path = Some(c.target.join("storbench-ds3.db"));
    } else {
        out.db.url = c.url.clone();
    }
    out
}

fn mailbox(a: &MailboxArgs, c: &Configuration, m: &Method) -> MailboxArgs {
    MailboxArgs {
        target: Some(c.target.join("storbench-mailbox")),
        log_target: c.log_target.clone(),
        duration: a.duration.or(m.measure),
        max_warmup: a.max_warmup.or(m.warmup),
        seed: a.seed.or(m.seed),
        ..a.clone()
    }
}

/// The integrity stress has no warm-up: an error counts whenever it happens.
fn integrity(a: &IntegrityArgs, c: &Configuration, m: &Method) -> IntegrityArgs {
    IntegrityArgs {
        target: Some(c.target.join("storbench-integrity")),
        duration: a.duration.or(m.measure),
        seed: a.seed.or(m.seed),
        ..a.clone()
    }
}

/// Warm-up plus measured phase, from the options or the commands' defaults.
fn expected(args: &WorkloadArgs) -> Duration {
    match args {
        // Steady state usually comes within a few rounds of the first five; count eight.
        WorkloadArgs::Io(a) => match (a.steady_state, a.runtime) {
            (Some(round), None) => round.0 * 8 + a.ramp_or_default(),
            _ => a.runtime.map_or(IoArgs::RUNTIME, |r| r.0) + a.ramp_or_default(),
        },
        WorkloadArgs::Oltp(a) => a.run_time_or_default() + a.warmup_time_or_default(),
        // The mailbox warm-up usually ends well before its limit; count half of it.
        WorkloadArgs::Mailbox(a) => a.duration_or_default() + a.max_warmup_or_default() / 2,
        WorkloadArgs::Integrity(a) => a.duration.map_or(IntegrityArgs::DURATION, |d| d.0),
    }
}
