//! The decision an evaluation exists for: given requirements (limits on reported figures) and
//! each configuration's facts (price, capacity), which configurations meet every requirement,
//! with what margin and which requirement binds, which one to choose and why, what a unit of
//! work costs on each, and how each pair compares.
//!
//! - `figures`: the figures a requirement may name, per workload and for power.
//! - `requirement`: requirements as a plan states them, and back as lines.
//! - `verdict`: the rule for one requirement over a group's repetitions.
//! - `choice`: the choice among the configurations that meet everything, costs and pairs.
//!
//! Pure: from a [`ReportInput`] (the evaluation with its runs' summaries) to a [`Decision`].

pub mod choice;
pub mod figures;
mod relative;
pub mod requirement;
pub mod verdict;

use crate::evaluation::{Evaluation, RunRecord, RunStatus, SweepPoint};
use crate::input::ReportInput;
use figures::{POWER, Value};
use requirement::{EVERY_WORKLOAD, Requirement};
use serde::{Deserialize, Serialize};
use verdict::Verdict;

/// What `storbench decide --json` prints and the report's first screen shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Said first where the figures stand on a part of each run (`--window`): which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// Said first where runs of the evaluation did not finish: how many, and that nothing
    /// they would have measured is chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// The requirements as judged, one line each.
    pub requirements: Vec<String>,
    /// The configuration to choose; None when none meets every requirement.
    pub chosen: Option<String>,
    /// Why, in a sentence or two.
    pub why: String,
    pub configurations: Vec<ConfigurationDecision>,
    /// Among those that meet every requirement: the lowest price, power and best per watt.
    pub best: Vec<Best>,
    /// Each pair of configurations on each workload, as the reference reports compare them.
    pub comparisons: Vec<String>,
}

/// One configuration judged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationDecision {
    pub name: String,
    /// The storage it measured and its condition there (`normal`, `rebuild`): only a
    /// storage's normal configuration can be chosen; its degraded ones are judged beside it.
    pub storage: String,
    pub condition: String,
    /// True where every requirement is met, false where any is not, None where none fails
    /// but some are not shown either way.
    pub meets: Option<bool>,
    pub verdicts: Vec<Verdict>,
    /// Its workloads without a finished run (pending, interrupted): until they have one it is
    /// not shown either way, and cannot be chosen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<String>,
    /// Its workloads whose every run failed (their I/Os or their own check): it fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// The requirement that decides: the one it fails by most, the one not shown, or the met
    /// one with the least headroom.
    pub binding: Option<String>,
    pub price: Option<f64>,
    pub currency: Option<String>,
    pub capacity_bytes: Option<u64>,
    /// The highest active power of its workloads' reported runs, watts.
    pub active_w: Option<f64>,
    /// What a unit of work or capacity costs: `12.50 USD per 1,000 OPM (oltp)`.
    pub costs: Vec<String>,
}

/// One "best of" among the configurations that meet everything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Best {
    /// `lowest price`, `lowest active power`, `best OPM per watt on oltp`.
    pub what: String,
    pub configuration: String,
    pub value: String,
}

/// The decision over `input` under `given` requirements.
pub fn decide(input: &ReportInput, given: &[Requirement]) -> Decision {
    let judged = requirement::judged(given);
    let e = &input.evaluation;
    let configurations: Vec<ConfigurationDecision> =
        configurations(e).iter().map(|c| judge_configuration(input, c, &judged)).collect();
    let mut d = Decision {
        window: input.window_said(),
        incomplete: incomplete(e),
        requirements: judged.iter().map(|r| r.said()).collect(),
        configurations,
        comparisons: choice::comparisons(input),
        ..Decision::default()
    };
    choice::choose(&mut d, input);
    d
}

impl Decision {
    /// Whether the decision failed its requirements: some were given and no configuration
    /// meets them all (exit 1, for `run` and `decide` alike).
    pub fn unmet(&self) -> bool {
        self.chosen.is_none() && !self.requirements.is_empty()
    }
}

/// Why evaluation `e` fails (exit 1, for `run` and `decide` alike), with `unmet` whether its
/// decision meets no requirement given: runs that did not finish, runs that failed (their I/Os
/// or an error), runs that failed their workload's own check, requirements no configuration
/// meets. None of these: it holds (exit 0).
pub fn failing(e: &Evaluation, unmet: bool) -> Vec<String> {
    let count = |s: RunStatus| e.runs.iter().filter(|r| r.status == s).count();
    let open = e.runs.iter().filter(|r| !finished(r.status)).count();
    let reasons = [
        (open, format!("{open} of {} runs did not finish", e.runs.len())),
        (count(RunStatus::Failed), format!("{} run(s) failed", count(RunStatus::Failed))),
        (
            count(RunStatus::CheckFailed),
            format!("{} run(s) failed their workload's own check", count(RunStatus::CheckFailed)),
        ),
        (usize::from(unmet), "no configuration meets every requirement".into()),
    ];
    reasons.into_iter().filter(|(n, _)| *n > 0).map(|(_, why)| why).collect()
}

/// Where runs did not finish: how many of how many, said before anything else.
fn incomplete(e: &Evaluation) -> Option<String> {
    let open = e.runs.iter().filter(|r| !finished(r.status)).count();
    (open > 0).then(|| {
        format!(
            "The evaluation is incomplete: {open} of {} runs did not finish; a configuration is chosen only \
             where each of its workloads finished (storbench run --resume finishes them).",
            e.runs.len()
        )
    })
}

/// A run that ended with its status known for good: done, or failed one way or another.
fn finished(s: RunStatus) -> bool {
    matches!(s, RunStatus::Done | RunStatus::CheckFailed | RunStatus::Failed)
}

/// Configuration `name`'s workloads whose runs did not all finish, and those whose every run
/// failed, each as a phrase.
fn gaps(e: &Evaluation, name: &str) -> (Vec<String>, Vec<String>) {
    let (mut unfinished, mut failed) = (Vec::new(), Vec::new());
    for label in crate::evaluation::workloads(e) {
        let runs: Vec<&RunRecord> =
            e.runs.iter().filter(|r| r.configuration == name && r.workload == label).collect();
        let open = runs.iter().filter(|r| !finished(r.status)).count();
        if open > 0 {
            unfinished.push(format!("{label}: {open} of {} runs did not finish", runs.len()));
        } else if !runs.is_empty() && runs.iter().all(|r| r.status != RunStatus::Done) {
            failed.push(format!("{label}: every run failed"));
        }
    }
    (unfinished, failed)
}

/// The evaluation's configurations, and any its runs name that the list lacks (a file
/// written by hand or cut short), in plan order.
fn configurations(e: &Evaluation) -> Vec<crate::evaluation::Configuration> {
    let mut out = e.configurations.clone();
    for r in &e.runs {
        if !out.iter().any(|c| c.name == r.configuration) {
            out.push(crate::evaluation::Configuration {
                name: r.configuration.clone(),
                ..Default::default()
            });
        }
    }
    out
}

/// Every requirement judged on configuration `c`, and its facts.
fn judge_configuration(
    input: &ReportInput,
    c: &crate::evaluation::Configuration,
    judged: &[Requirement],
) -> ConfigurationDecision {
    let e = &input.evaluation;
    let mut verdicts = Vec::new();
    for label in crate::evaluation::workloads(e) {
        let mine: Vec<&Requirement> =
            judged.iter().filter(|r| applies(r, e, label) && relative::applies_to(r, c)).collect();
        if !mine.is_empty() {
            verdicts.extend(at_best_point(input, &c.name, label, &mine));
        }
    }
    let (unfinished, failed) = gaps(e, &c.name);
    let meets = if verdicts.iter().any(|v| v.met == Some(false)) || !failed.is_empty() {
        Some(false)
    } else if unfinished.is_empty() && verdicts.iter().all(|v| v.met == Some(true)) {
        Some(true)
    } else {
        None
    };
    let binding = binding(&verdicts);
    let active_w = reported(e, &c.name).filter_map(|r| r.active_watts).reduce(f64::max);
    let capacity_bytes = c.capacity_bytes.or_else(|| measured_capacity(input, &c.target));
    ConfigurationDecision {
        name: c.name.clone(),
        storage: c.storage().to_string(),
        condition: c.condition().to_string(),
        meets,
        verdicts,
        unfinished,
        failed,
        binding,
        price: c.price,
        currency: c.currency.clone(),
        capacity_bytes,
        active_w,
        costs: Vec::new(),
    }
}

/// Whether requirement `r` is on workload `label`: it names the label, or its kind where no
/// workload has that label, or every workload (`power`).
pub fn applies(r: &Requirement, e: &Evaluation, label: &str) -> bool {
    if r.workload == label || r.workload == EVERY_WORKLOAD {
        return true;
    }
    let is_label = e.runs.iter().any(|x| x.workload == r.workload);
    !is_label && e.runs.iter().any(|x| x.workload == label && x.kind == r.workload)
}

/// The reported runs of configuration `name`.
fn reported<'a>(e: &'a Evaluation, name: &'a str) -> impl Iterator<Item = &'a RunRecord> {
    e.runs.iter().filter(move |r| r.configuration == name && r.reported)
}

/// The requirements on one workload of one configuration, judged at the sweep point that
/// meets them best: the first where all are met, else the first where none fails, else the
/// one with the most met. Without a sweep there is one point.
fn at_best_point(
    input: &ReportInput,
    configuration: &str,
    label: &str,
    reqs: &[&Requirement],
) -> Vec<Verdict> {
    let mut points: Vec<Option<&SweepPoint>> = Vec::new();
    for r in &input.evaluation.runs {
        if r.configuration == configuration && r.workload == label && !points.contains(&r.sweep.as_ref()) {
            points.push(r.sweep.as_ref());
        }
    }
    if points.is_empty() {
        points.push(None);
    }
    let judged: Vec<Vec<Verdict>> = points
        .iter()
        .map(|p| reqs.iter().map(|r| judge_at(input, configuration, label, *p, r)).collect())
        .collect();
    let count = |vs: &Vec<Verdict>, m: Option<bool>| vs.iter().filter(|v| v.met == m).count();
    let pick = judged
        .iter()
        .position(|vs| count(vs, Some(true)) == vs.len())
        .or_else(|| judged.iter().position(|vs| count(vs, Some(false)) == 0))
        .or_else(|| (0..judged.len()).max_by_key(|i| (count(&judged[*i], Some(true)), std::cmp::Reverse(*i))))
        .unwrap_or(0);
    judged.into_iter().nth(pick).unwrap_or_default()
}

fn judge_at(
    input: &ReportInput,
    configuration: &str,
    label: &str,
    point: Option<&SweepPoint>,
    r: &Requirement,
) -> Verdict {
    if let Some(rel) = &r.relative {
        let c = configurations(&input.evaluation).into_iter().find(|c| c.name == configuration);
        let c = c.unwrap_or_default();
        return relative::judge_at(input, &c, (label, point), r, rel);
    }
    let runs = input
        .evaluation
        .runs
        .iter()
        .filter(|x| x.configuration == configuration && x.workload == label && x.sweep.as_ref() == point);
    let mut unit = "";
    let mut evidence = verdict::Evidence::default();
    // By each run's one status: only a done run's figure counts; a failed one meets nothing;
    // one not finished (pending, interrupted) is no evidence either way.
    for run in runs {
        match run.status {
            RunStatus::Done => match figure(input, run, &r.figure) {
                Some((v, u)) => {
                    evidence.values.push(v);
                    unit = u;
                }
                None => evidence.unjudged += 1,
            },
            RunStatus::CheckFailed | RunStatus::Failed => evidence.failed += 1,
            RunStatus::Pending | RunStatus::Interrupted => {}
        }
    }
    let at = point.map(|p| format!("{} = {}", p.param, crate::evaluation::sweep_value(p)));
    verdict::judge(r, label, at, &evidence, unit)
}

/// Figure `name` of one run with its unit: a power figure from the run's record, else its
/// workload's from its summary.
pub(super) fn figure(input: &ReportInput, run: &RunRecord, name: &str) -> Option<(Value, &'static str)> {
    if let Some(f) = POWER.iter().find(|f| f.name == name) {
        return (f.get)(run).map(|v| (v, f.unit));
    }
    let data = input.runs.get(&run.id)?;
    let reported = data.summary.results.workload().reported();
    let unit =
        (reported.figures)().into_iter().chain(figures::searched_figures()).find(|f| f.name == name)?.unit;
    // The summary's own figures (a search's load) first, then its workload's.
    let value = figures::summary_figure(&data.summary, name)
        .unwrap_or_else(|| data.summary.results.workload().figure(name).flatten());
    value.map(|v| (v, unit))
}

/// The requirement that decides the configuration's verdict (see `ConfigurationDecision`).
fn binding(verdicts: &[Verdict]) -> Option<String> {
    let margin = |v: &Verdict| v.margin_pct.unwrap_or(0.0);
    let worst = |m: Option<bool>| {
        verdicts.iter().filter(|v| v.met == m).min_by(|a, b| margin(a).total_cmp(&margin(b)))
    };
    worst(Some(false)).or_else(|| worst(None)).or_else(|| worst(Some(true))).map(|v| v.requirement.clone())
}

/// The size of the block device under `target`, where the disclosure has it.
fn measured_capacity(input: &ReportInput, target: &str) -> Option<u64> {
    let d = input.disclosure.as_ref()?;
    let device = d.targets.iter().find(|t| t.path == target)?.device.as_deref()?;
    d.devices.iter().find(|b| b.layer.name == device)?.size_bytes
}

#[cfg(test)]
mod failed_tests;
#[cfg(test)]
mod tests;
