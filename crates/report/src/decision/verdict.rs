//! The rule that judges one requirement over the repetitions of one workload on one
//! configuration: met where every measured run meets it, not met where none does, and "not
//! shown either way" where the runs disagree, so a spread that straddles the limit never
//! passes or fails. The margin is the figure's median against the limit.

use super::figures::Value;
use super::requirement::{Op, Requirement};
use crate::format::{given, num, pct};
use serde::{Deserialize, Serialize};

/// One requirement judged on one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The requirement as a line (`oltp.opm >= 20000`), or as the user stated it (a mailbox
    /// demand: `mailbox: 2,000 mailboxes at 0.5 IOPS each`).
    pub requirement: String,
    /// The workload label judged (a kind or `power` names several).
    pub workload: String,
    /// The sweep point judged, where the workload has a sweep (`iodepth = 8`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The median over the measured runs (for a word, the word every run gave, or how many
    /// runs gave which); None where no run measured it.
    pub value: Option<Value>,
    pub limit: Value,
    /// The runs it was judged on.
    pub runs: usize,
    /// True or false only where every run agrees; None where they do not (or none measured).
    pub met: Option<bool>,
    /// How far the median is on the good side of the limit, percent of the limit (negative:
    /// short of it); None for a word, an equality or a limit of 0.
    pub margin_pct: Option<f64>,
    /// The verdict in a sentence.
    pub text: String,
}

/// What the finished runs of one group give a requirement. A run meets a requirement only
/// where it is done and measured the figure: one that failed, or measured nothing of it, is
/// evidence against, never for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// The figure in each run that is done and measured it.
    pub values: Vec<Value>,
    /// Runs that failed (their I/Os or their workload's own check): they meet nothing.
    pub failed: usize,
    /// Runs that are done but have no sample of the figure (no database read reached
    /// storage): the limit is not judged there, so not met.
    pub unjudged: usize,
}

impl Evidence {
    /// Every run done with these values.
    pub fn measured(values: Vec<Value>) -> Evidence {
        Evidence { values, ..Evidence::default() }
    }

    fn against(&self) -> usize {
        self.failed + self.unjudged
    }
}

/// Judges `r` on the evidence of a group's runs (`unit` as sentences show it).
pub fn judge(
    r: &Requirement,
    workload: &str,
    at: Option<String>,
    evidence: &Evidence,
    unit: &str,
) -> Verdict {
    let values = &evidence.values;
    let mut each: Vec<Option<bool>> = values.iter().map(|v| r.op.holds(v, &r.limit)).collect();
    each.extend(std::iter::repeat_n(Some(false), evidence.against()));
    let met = if each.is_empty() || each.contains(&None) {
        None
    } else if each.iter().all(|m| *m == Some(true)) {
        Some(true)
    } else if each.iter().all(|m| *m == Some(false)) {
        Some(false)
    } else {
        None
    };
    let value = median(values, r.op);
    let margin_pct = match (&value, &r.limit, r.op.higher_is_better()) {
        (Some(Value::Num(v)), Value::Num(l), Some(higher)) if *l != 0.0 => {
            let m = 100.0 * (v - l) / l.abs();
            Some(if higher { m } else { -m })
        }
        _ => None,
    };
    let mut v = Verdict {
        requirement: r.said(),
        workload: workload.to_string(),
        at,
        value,
        limit: r.limit.clone(),
        runs: values.len() + evidence.against(),
        met,
        margin_pct,
        text: String::new(),
    };
    v.text = sentence(&v, r.op, values, unit) + &against(evidence, v.runs);
    v
}

/// What the runs that meet nothing add to the sentence, or the sentence where no run measured
/// the figure.
fn against(e: &Evidence, runs: usize) -> String {
    let (failed, unjudged) = (e.failed, e.unjudged);
    let what = match (failed, unjudged) {
        (0, 0) => return String::new(),
        (f, 0) => format!("{f} of {runs} runs failed (their I/Os or their own check)"),
        (0, u) => format!("{u} of {runs} runs have no sample of this figure (not judged)"),
        (f, u) => format!("{f} of {runs} runs failed and {u} have no sample of this figure"),
    };
    if e.values.is_empty() {
        format!("not met: {what}, and meet nothing")
    } else {
        format!("; {what}: they meet nothing")
    }
}

/// The middle value; of two middle ones the less favourable under `op`; for words, the one
/// word every run gave, else a count of each.
fn median(values: &[Value], op: Op) -> Option<Value> {
    let mut nums: Vec<f64> = values.iter().filter_map(Value::num).collect();
    if nums.len() == values.len() && !nums.is_empty() {
        nums.sort_by(f64::total_cmp);
        let (lower, upper) = (nums[(nums.len() - 1) / 2], nums[nums.len() / 2]);
        return Some(Value::Num(if op.higher_is_better() == Some(false) { upper } else { lower }));
    }
    let first = values.first()?;
    if values.iter().all(|v| v == first) {
        return Some(first.clone());
    }
    let mut words: Vec<(String, usize)> = Vec::new();
    for v in values {
        let w = v.to_string();
        match words.iter_mut().find(|(x, _)| *x == w) {
            Some(e) => e.1 += 1,
            None => words.push((w, 1)),
        }
    }
    let said: Vec<String> = words.iter().map(|(w, n)| format!("{w} in {n}")).collect();
    Some(Value::Text(format!("{} of {} runs", said.join(", "), values.len())))
}

fn sentence(v: &Verdict, op: Op, values: &[Value], unit: &str) -> String {
    let limit = match &v.limit {
        Value::Num(l) => given(*l),
        Value::Text(t) => t.clone(),
    };
    let Some(value) = &v.value else {
        // Said by `against` where a run finished without meeting it.
        return if v.runs == 0 { "not measured: no run of it finished".into() } else { String::new() };
    };
    let shown = match value {
        Value::Num(x) if unit.is_empty() => num(*x),
        Value::Num(x) => format!("{} {unit}", num(*x)),
        Value::Text(t) => t.clone(),
    };
    let runs = match v.runs {
        1 => " (one run: its spread is unknown)".to_string(),
        n => format!(" (median of {n} runs)"),
    };
    if v.met.is_none() {
        let nums: Vec<f64> = values.iter().filter_map(Value::num).collect();
        let range = match (nums.iter().copied().reduce(f64::min), nums.iter().copied().reduce(f64::max)) {
            (Some(lo), Some(hi)) if nums.len() == values.len() => format!("{}–{} {unit}", num(lo), num(hi)),
            _ => shown.clone(),
        };
        return format!(
            "{} over {} runs, either side of {limit}: not shown either way",
            range.trim_end(),
            v.runs
        );
    }
    let good = v.met == Some(true);
    match (v.margin_pct, op.higher_is_better()) {
        (Some(m), Some(higher)) => {
            let side = match (good, higher) {
                (true, true) => "above",
                (true, false) => "under",
                (false, true) => "short of",
                (false, false) => "over",
            };
            format!("{shown}, {} {side} {limit}{runs}", pct(m))
        }
        // A word (a workload's own verdict) is the same in every run, or it would not be met
        // or failed; an equality on a number is its value.
        _ => match (value, v.runs) {
            (Value::Text(_), 1) => format!("{shown} (one run)"),
            (Value::Text(_), n) => format!("{shown} in all {n} runs"),
            _ => format!("{shown}{runs}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::requirement::parse;

    fn runs(v: &[f64]) -> Evidence {
        Evidence::measured(v.iter().map(|x| Value::Num(*x)).collect())
    }

    fn at_least(limit: &str, values: &[f64]) -> Verdict {
        judge(&parse("oltp.opm", &format!(">= {limit}")).unwrap(), "oltp", None, &runs(values), "OPM")
    }

    #[test]
    fn a_limit_is_met_or_not_only_where_every_run_agrees() {
        let v = at_least("20000", &[25_000.0, 24_000.0, 26_000.0]);
        assert_eq!((v.met, v.value.clone()), (Some(true), Some(Value::Num(25_000.0))));
        assert!((v.margin_pct.unwrap() - 25.0).abs() < 1e-9);
        assert_eq!(v.text, "25,000.0 OPM, 25 % above 20,000 (median of 3 runs)");
        let v = at_least("20000", &[18_200.0, 18_000.0, 19_000.0]);
        assert_eq!(v.met, Some(false));
        assert_eq!(v.text, "18,200.0 OPM, 9.0 % short of 20,000 (median of 3 runs)");
        // The median meets the limit but one run does not: never a pass.
        let v = at_least("20000", &[21_000.0, 19_500.0, 22_000.0]);
        assert_eq!(v.met, None);
        assert_eq!(v.text, "19,500.0–22,000.0 OPM over 3 runs, either side of 20,000: not shown either way");
        // The median fails but one run passes: never a fail either.
        assert_eq!(at_least("20000", &[19_000.0, 19_500.0, 20_001.0]).met, None);
    }

    #[test]
    fn a_run_exactly_at_the_limit_meets_an_inclusive_one_and_equal_medians_judge_alike() {
        assert_eq!(at_least("20000", &[20_000.0, 20_000.0]).met, Some(true));
        let above = judge(&parse("oltp.opm", "> 20000").unwrap(), "oltp", None, &runs(&[20_000.0]), "OPM");
        assert_eq!(above.met, Some(false));
        // Two configurations with the same median, one spread across the limit, one not.
        let tight = at_least("20000", &[20_500.0, 20_400.0, 20_600.0]);
        let wide = at_least("20000", &[20_500.0, 15_000.0, 26_000.0]);
        assert_eq!((tight.value, tight.met), (wide.value, Some(true)));
        assert_eq!(wide.met, None);
    }

    #[test]
    fn one_run_decides_but_says_its_spread_is_unknown() {
        let v = at_least("20000", &[20_001.0]);
        assert_eq!(v.met, Some(true));
        assert!(v.text.ends_with("(one run: its spread is unknown)"), "{}", v.text);
        assert_eq!(at_least("20000", &[]).met, None);
        assert!(at_least("20000", &[]).text.starts_with("not measured"));
    }

    #[test]
    fn a_failed_run_or_a_figure_without_samples_meets_nothing() {
        let r = parse("mailbox.transactional_iops", ">= 100").unwrap();
        // Three runs that all failed their own check: not met, whatever they measured.
        let failed = Evidence { failed: 3, ..Evidence::default() };
        let v = judge(&r, "mailbox", None, &failed, "IOPS");
        assert_eq!((v.met, v.runs, v.value.clone()), (Some(false), 3, None));
        assert_eq!(v.text, "not met: 3 of 3 runs failed (their I/Os or their own check), and meet nothing");
        // Two good runs beside a failed one: the runs disagree, so not shown either way.
        let mixed = Evidence { failed: 1, ..Evidence::measured(vec![Value::Num(150.0), Value::Num(160.0)]) };
        let v = judge(&r, "mailbox", None, &mixed, "IOPS");
        assert_eq!((v.met, v.runs), (None, 3));
        assert!(
            v.text.ends_with("; 1 of 3 runs failed (their I/Os or their own check): they meet nothing"),
            "{}",
            v.text
        );
        // A limit on a figure no run has a sample of is not judged: not met.
        let low = parse("mailbox.db_read_avg_ms", "<= 0.0001").unwrap();
        let v = judge(&low, "mailbox", None, &Evidence { unjudged: 2, ..Evidence::default() }, "ms");
        assert_eq!(v.met, Some(false));
        assert_eq!(
            v.text,
            "not met: 2 of 2 runs have no sample of this figure (not judged), and meet nothing"
        );
    }

    #[test]
    fn an_upper_limit_reports_the_less_favourable_middle_run_and_headroom_under_it() {
        let r = parse("oltp.order_p99_ms", "<= 50").unwrap();
        let v = judge(&r, "oltp", None, &runs(&[40.0, 45.0]), "ms");
        assert_eq!((v.met, v.value.clone()), (Some(true), Some(Value::Num(45.0))));
        assert!((v.margin_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(v.text, "45.00 ms, 10 % under 50 (median of 2 runs)");
        let v = judge(&r, "oltp", None, &runs(&[60.0, 62.0, 61.0]), "ms");
        assert_eq!(v.met, Some(false));
        assert!(v.text.contains("22 % over 50"), "{}", v.text);
    }

    #[test]
    fn words_pass_only_when_every_run_passed() {
        let r = parse("mailbox.result", "pass").unwrap();
        let word = |w: &[&str]| Evidence::measured(w.iter().map(|x| Value::Text(x.to_string())).collect());
        let all = judge(&r, "mailbox", None, &word(&["pass", "pass", "pass"]), "");
        assert_eq!((all.met, all.text.as_str()), (Some(true), "pass in all 3 runs"));
        assert_eq!(judge(&r, "mailbox", None, &word(&["fail", "fail"]), "").text, "fail in all 2 runs");
        let some = judge(&r, "mailbox", None, &word(&["pass", "fail", "pass"]), "");
        assert_eq!(some.met, None);
        assert_eq!(some.value, Some(Value::Text("pass in 2, fail in 1 of 3 runs".into())));
        assert_eq!(judge(&r, "mailbox", None, &word(&["fail"]), "").met, Some(false));
        let zero = judge(
            &parse("integrity.errors", "= 0").unwrap(),
            "integrity",
            None,
            &runs(&[0.0, 0.0]),
            "errors",
        );
        assert_eq!((zero.met, zero.margin_pct), (Some(true), None));
    }
}
