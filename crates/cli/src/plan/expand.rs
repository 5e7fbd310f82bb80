//! A plan → the runs it asks for, in the order they run: per workload and sweep point, each
//! repetition runs every configuration in turn, so slow drift of the machine touches every
//! configuration alike. Each run's options are its command's own, with the configuration's
//! place and the method's defaults filled in.

use super::Plan;
use crate::registry::kind::Options;
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
    pub args: Box<dyn Options>,
    /// What the run should take, for the ETA: warm-up plus measured phase (a search: the
    /// longest it may take).
    pub expected: Duration,
    /// The workload's search, where each run is one.
    pub search: Option<crate::search::args::SearchArgs>,
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
                    let mut args = args.for_configuration(c, &method_of(w, &plan.method));
                    if let Some((key, n)) = sweep
                        && key == super::parse::TARGETS
                    {
                        args.use_targets(n.as_u64().unwrap_or(1) as usize);
                    }
                    out.push(PlannedRun {
                        id: format!("{}.{}{point}.r{repetition}", w.label, c.name),
                        workload: w.label.clone(),
                        configuration: ci,
                        sweep: sweep.clone(),
                        repetition,
                        expected: expected(&*args, w.search.as_ref()),
                        args,
                        search: w.search.clone(),
                    });
                }
            }
        }
    }
    out
}

/// The method as workload `w`'s runs take it: a search's steps are of fixed length, whatever
/// the method's window.
fn method_of(w: &super::Workload, m: &super::method::Method) -> super::method::Method {
    match w.search {
        Some(_) => super::method::Method { window: None, ..m.clone() },
        None => m.clone(),
    }
}

/// How long a run may take: its warm-up and measured phase, or a search's every step.
fn expected(args: &dyn Options, search: Option<&crate::search::args::SearchArgs>) -> Duration {
    search.and_then(|s| crate::search::longest(args, s)).unwrap_or_else(|| args.expected())
}

fn value_text(v: &serde_json::Value) -> String {
    let text = match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect()
}
