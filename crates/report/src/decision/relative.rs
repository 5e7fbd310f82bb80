//! Relative requirements: a figure judged against the same storage under its normal condition
//! (`>= 50 % of normal during vol-rebuild`) or against another workload's same figure on the
//! same configuration (`>= 4 x time-sync`). Repetitions are paired by number, as the runs take
//! turns: each pair gives one ratio, and the ratios are judged as any figure's values are (met
//! where every pair meets it). A pair with a failed run meets nothing; a base of zero, or a
//! side without a sample, is not judged.

use super::figure;
use super::requirement::{Relative, Requirement};
use super::verdict::{self, Evidence, Verdict};
use crate::evaluation::{Configuration, RunRecord, RunStatus, SweepPoint};
use crate::input::ReportInput;

/// Whether relative requirement `r` is judged on configuration `c`: a condition's on the
/// normal condition of each storage (its choice), a workload ratio everywhere.
pub(super) fn applies_to(r: &Requirement, c: &Configuration) -> bool {
    match &r.relative {
        Some(Relative::Condition(_)) => c.condition() == crate::evaluation::NORMAL,
        _ => true,
    }
}

/// `r` (relative as `rel`) on workload `label` of configuration `c` at sweep `point`.
pub(super) fn judge_at(
    input: &ReportInput,
    c: &Configuration,
    (label, point): (&str, Option<&SweepPoint>),
    r: &Requirement,
    rel: &Relative,
) -> Verdict {
    let at = point.map(|p| format!("{} = {}", p.param, crate::evaluation::sweep_value(p)));
    let (evidence, unit) = match rel {
        Relative::Condition(during) => {
            let e = &input.evaluation;
            let degraded =
                e.configurations.iter().find(|d| d.storage() == c.storage() && d.condition() == during);
            let Some(d) = degraded else {
                return unmeasured(
                    r,
                    label,
                    at,
                    &format!("no configuration measured {} during {during}", c.storage()),
                );
            };
            (paired(input, (&d.name, label), (&c.name, label), point, (&r.figure, 100.0)), "% of normal")
        }
        Relative::Workload(base) => {
            (paired(input, (&c.name, label), (&c.name, base), point, (&r.figure, 1.0)), "x")
        }
    };
    verdict::judge(r, label, at, &evidence, unit)
}

/// A relative requirement nothing measured the base of: not met, saying why.
fn unmeasured(r: &Requirement, label: &str, at: Option<String>, why: &str) -> Verdict {
    Verdict {
        requirement: r.said(),
        workload: label.to_string(),
        at,
        value: None,
        limit: r.limit.clone(),
        runs: 0,
        met: Some(false),
        margin_pct: None,
        text: format!("not met: {why}, so it cannot be shown"),
    }
}

/// Ratio `scale` x figure of (configuration, workload) `a` over that of `b`, repetition by
/// repetition, at `point` (the base's runs at the same point, or without a sweep).
fn paired(
    input: &ReportInput,
    a: (&str, &str),
    b: (&str, &str),
    point: Option<&SweepPoint>,
    (name, scale): (&str, f64),
) -> Evidence {
    let of = |(config, label): (&str, &str)| -> Vec<&RunRecord> {
        input.evaluation.runs.iter().filter(|r| r.configuration == config && r.workload == label).collect()
    };
    let base = of(b);
    let mut evidence = Evidence::default();
    for x in of(a).into_iter().filter(|x| x.sweep.as_ref() == point) {
        let same = |y: &&&RunRecord| {
            y.repetition == x.repetition && (y.sweep.as_ref() == point || y.sweep.is_none())
        };
        let Some(y) = base.iter().find(same).copied() else { continue };
        let failed = |r: &RunRecord| matches!(r.status, RunStatus::Failed | RunStatus::CheckFailed);
        if failed(x) || failed(y) {
            evidence.failed += 1;
            continue;
        }
        if x.status != RunStatus::Done || y.status != RunStatus::Done {
            continue;
        }
        let value = |r: &RunRecord| figure(input, r, name).and_then(|(v, _)| v.num());
        match (value(x), value(y)) {
            (Some(v), Some(base)) if base != 0.0 => evidence.values.push(super::Value::Num(scale * v / base)),
            _ => evidence.unjudged += 1,
        }
    }
    evidence
}
