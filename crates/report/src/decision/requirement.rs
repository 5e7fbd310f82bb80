//! Requirements: limits on reported figures, as a plan's `[requirements]` table gives them
//! (`"oltp.order_p99_ms" = "<= 50"`): a workload label or kind (or `power`, every workload),
//! a figure of its own (`figures`), a comparison and a limit. Written back as one line each
//! (`oltp.order_p99_ms <= 50`), the form `evaluation.json` keeps and this module reads again.
//!
//! A limit may be relative: to the same storage under its normal condition (`"oltp.opm" = ">=
//! 50 % of normal during vol-rebuild"`: the storage keeps half its OPM during the rebuild), or
//! to another workload's same figure on the same configuration (`"fire-hose.iops" = ">= 4 x
//! time-sync"`). Each is judged on repetitions paired by number, as the runs take turns.
//!
//! A mailbox demand as the Exchange calculators state it, `mailbox.mailboxes = 2000` with
//! `mailbox.iops_per_mailbox = 0.5`, is one requirement: transactional IOPS of at least
//! 2,000 x 0.5.

use super::figures::{FiguresOf, Value};
use serde::{Deserialize, Serialize};

/// How a figure must compare with its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    #[serde(rename = ">=")]
    AtLeast,
    #[serde(rename = ">")]
    Above,
    #[serde(rename = "<=")]
    AtMost,
    #[serde(rename = "<")]
    Below,
    #[serde(rename = "=")]
    Equal,
    #[serde(rename = "!=")]
    NotEqual,
}

const OPS: [(&str, Op); 7] = [
    (">=", Op::AtLeast),
    ("<=", Op::AtMost),
    ("!=", Op::NotEqual),
    ("==", Op::Equal),
    (">", Op::Above),
    ("<", Op::Below),
    ("=", Op::Equal),
];

impl Op {
    pub fn symbol(self) -> &'static str {
        match self {
            Op::AtLeast => ">=",
            Op::Above => ">",
            Op::AtMost => "<=",
            Op::Below => "<",
            Op::Equal => "=",
            Op::NotEqual => "!=",
        }
    }

    /// Whether `value` meets `limit` this way; None where they cannot be compared (a word
    /// against a number, or a word ordered).
    pub fn holds(self, value: &Value, limit: &Value) -> Option<bool> {
        match (value, limit) {
            (Value::Num(v), Value::Num(l)) => Some(match self {
                Op::AtLeast => v >= l,
                Op::Above => v > l,
                Op::AtMost => v <= l,
                Op::Below => v < l,
                Op::Equal => v == l,
                Op::NotEqual => v != l,
            }),
            (Value::Text(v), Value::Text(l)) => match self {
                Op::Equal => Some(v.eq_ignore_ascii_case(l)),
                Op::NotEqual => Some(!v.eq_ignore_ascii_case(l)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Higher values are better under this limit (`>=`, `>`), lower (`<=`, `<`), or neither.
    pub fn higher_is_better(self) -> Option<bool> {
        match self {
            Op::AtLeast | Op::Above => Some(true),
            Op::AtMost | Op::Below => Some(false),
            Op::Equal | Op::NotEqual => None,
        }
    }
}

/// One requirement.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// A workload label or kind, or `power` for every workload.
    pub workload: String,
    pub figure: String,
    pub op: Op,
    pub limit: Value,
    /// How the user stated it where that was not this line (a mailbox demand).
    pub stated: Option<String>,
    /// What the limit is relative to, where it is.
    pub relative: Option<Relative>,
}

/// What a relative limit compares the figure with.
#[derive(Debug, Clone, PartialEq)]
pub enum Relative {
    /// The same storage's figure under its normal condition: the figure under this condition
    /// is a percentage of it (`>= 50 % of normal during vol-rebuild`).
    Condition(String),
    /// Workload `label`'s same figure on the same configuration: the figure is a multiple of
    /// it (`>= 4 x time-sync`).
    Workload(String),
}

/// The workload name that puts a requirement on every workload's run (`power.active_w`).
pub const EVERY_WORKLOAD: &str = "power";

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let limit = match &self.limit {
            Value::Num(v) => v.to_string(),
            Value::Text(t) => format!("\"{t}\""),
        };
        write!(f, "{}.{} {} {limit}", self.workload, self.figure, self.op.symbol())?;
        match &self.relative {
            Some(Relative::Condition(c)) => write!(f, " % of normal during {c}"),
            Some(Relative::Workload(w)) => write!(f, " x {w}"),
            None => Ok(()),
        }
    }
}

impl Requirement {
    /// How a sentence names it: as stated, or as its line.
    pub fn said(&self) -> String {
        self.stated.clone().unwrap_or_else(|| self.to_string())
    }
}

/// A requirement from a key (`oltp.opm`) and its rule (`>= 20000`, `"pass"`, `0`): a rule
/// without a comparison means equal.
pub fn parse(key: &str, rule: &str) -> Result<Requirement, String> {
    let example = "as in \"oltp.opm\" = \">= 20000\" or \"mailbox.result\" = \"pass\"";
    let Some((workload, figure)) = key.rsplit_once('.').filter(|(w, f)| !w.is_empty() && !f.is_empty())
    else {
        return Err(format!("requirement `{key}`: name a workload (label or kind) and a figure, {example}"));
    };
    let rule = rule.trim();
    let (op, rest) = OPS
        .iter()
        .find_map(|(s, op)| rule.strip_prefix(s).map(|rest| (*op, rest)))
        .unwrap_or((Op::Equal, rule));
    let rest = rest.trim().trim_matches('"');
    if rest.is_empty() {
        return Err(format!("requirement `{key}`: `{rule}` has no limit, {example}"));
    }
    let (rest, relative) = relative_of(key, rest)?;
    let limit = match rest.replace('_', "").parse::<f64>() {
        Ok(v) if v.is_finite() => Value::Num(v),
        Ok(_) => return Err(format!("requirement `{key}`: `{rest}` is not a finite number")),
        Err(_) if rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => {
            Value::Text(rest.to_string())
        }
        Err(_) => {
            return Err(format!("requirement `{key}`: `{rest}` is neither a number nor a word, {example}"));
        }
    };
    if matches!(limit, Value::Text(_)) && op.higher_is_better().is_some() {
        return Err(format!(
            "requirement `{key}`: `{rule}` orders a word; a word can only be equal (`= \"pass\"`) or not (`!=`)"
        ));
    }
    if relative.is_some() && (op.higher_is_better().is_none() || !matches!(limit, Value::Num(_))) {
        return Err(format!(
            "requirement `{key}`: a relative limit is a number to be at least or at most, as in \
             \">= 50 % of normal during rebuild\" or \">= 4 x time-sync\""
        ));
    }
    Ok(Requirement {
        workload: workload.to_string(),
        figure: figure.to_string(),
        op,
        limit,
        stated: None,
        relative,
    })
}

/// A limit's number and what it is relative to: `50 % of normal during vol-rebuild` or
/// `4 x time-sync`; a plain limit as it is.
fn relative_of<'a>(key: &str, rest: &'a str) -> Result<(&'a str, Option<Relative>), String> {
    let name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if let Some((number, tail)) = rest.split_once('%') {
        let tail = tail.trim();
        let Some(condition) = tail.strip_prefix("of normal during ").map(str::trim).filter(|c| name(c))
        else {
            return Err(format!(
                "requirement `{key}`: `{rest}`: a percentage is of the normal condition, as in \
                 \">= 50 % of normal during vol-rebuild\""
            ));
        };
        return Ok((number.trim(), Some(Relative::Condition(condition.to_string()))));
    }
    if let Some((number, label)) = rest.split_once(" x ") {
        let label = label.trim();
        if !name(label) {
            return Err(format!(
                "requirement `{key}`: `{label}` is not a workload label, as in \">= 4 x time-sync\""
            ));
        }
        return Ok((number.trim(), Some(Relative::Workload(label.to_string()))));
    }
    Ok((rest, None))
}

/// Checks that `r` names a workload among `workloads` (label and kind of each) and a figure
/// that workload reports (its kind's figures as `figures_of` gives them); the error names what
/// exists.
pub fn check(r: &Requirement, workloads: &[(&str, &str)], figures_of: FiguresOf) -> Result<(), String> {
    if let Some(Relative::Workload(base)) = &r.relative {
        let other = Requirement { workload: base.clone(), relative: None, ..r.clone() };
        check(&other, workloads, figures_of).map_err(|e| format!("`{r}`: its base: {e}"))?;
    }
    let kinds: Vec<&str> = if r.workload == EVERY_WORKLOAD {
        let names = super::figures::names(super::figures::POWER);
        if names.iter().any(|f| f.name == r.figure) {
            return Ok(());
        }
        let list: Vec<&str> = names.iter().map(|f| f.name).collect();
        return Err(format!("`{r}`: `power` has no figure `{}`; its figures: {}", r.figure, list.join(", ")));
    } else if workloads.iter().any(|(label, _)| *label == r.workload) {
        workloads.iter().filter(|(label, _)| *label == r.workload).map(|(_, kind)| *kind).collect()
    } else {
        workloads.iter().filter(|(_, kind)| *kind == r.workload).map(|(_, kind)| *kind).collect()
    };
    if kinds.is_empty() {
        let list: Vec<String> = workloads.iter().map(|(label, kind)| format!("{label} ({kind})")).collect();
        return Err(format!(
            "`{r}`: no workload is labelled or of kind `{}`; the workloads are {}, and `power` puts a \
             requirement on every one",
            r.workload,
            list.join(", ")
        ));
    }
    for kind in kinds {
        let figures = super::figures::of_kind(figures_of, kind).unwrap_or_default();
        let Some(figure) = figures.iter().find(|f| f.name == r.figure) else {
            let list: Vec<&str> = figures.iter().map(|f| f.name).collect();
            return Err(format!(
                "`{r}`: {} ({kind}) reports no figure `{}`; its figures: {}",
                r.workload,
                r.figure,
                list.join(", ")
            ));
        };
        fits(r, figure)?;
    }
    Ok(())
}

/// Refuses a limit of the wrong sort for its figure: a word on a number (`opm = "pass"`) or a
/// number on a word (`result = 1`), which no run could ever meet.
fn fits(r: &Requirement, figure: &super::figures::Named) -> Result<(), String> {
    match (&r.limit, figure.is_word()) {
        (Value::Text(_), false) => Err(format!(
            "`{r}`: `{}` is a number ({}), not a word; give a number, as in `>= 1000` or `<= 20`",
            r.figure,
            figure.unit.trim()
        )),
        (Value::Num(_), true) => Err(format!(
            "`{r}`: `{}` is the workload's own verdict, a word; give `= \"pass\"` (or `!= \"fail\"`)",
            r.figure
        )),
        _ => Ok(()),
    }
}

/// A line as `Requirement`'s Display writes it (`oltp.opm >= 20000`).
pub fn parse_line(line: &str) -> Result<Requirement, String> {
    let line = line.trim();
    let at = line.find(|c: char| c.is_whitespace() || "<>=!".contains(c)).unwrap_or(line.len());
    parse(&line[..at], &line[at..])
}

/// The requirements as judged: each mailbox demand (`mailboxes = N` with `iops_per_mailbox =
/// X` on one workload) made one requirement of transactional IOPS.
pub fn judged(given: &[Requirement]) -> Vec<Requirement> {
    let equal = |r: &Requirement, figure: &str| r.figure == figure && r.op == Op::Equal;
    let mut out = Vec::new();
    for r in given {
        let partner = |figure: &str| given.iter().find(|o| o.workload == r.workload && equal(o, figure));
        if equal(r, "iops_per_mailbox") && partner("mailboxes").is_some() {
            continue;
        }
        if equal(r, "mailboxes")
            && let Some(each) = partner("iops_per_mailbox")
            && let (Some(count), Some(rate)) = (r.limit.num(), each.limit.num())
        {
            out.push(Requirement {
                workload: r.workload.clone(),
                figure: "transactional_iops".into(),
                op: Op::AtLeast,
                limit: Value::Num(count * rate),
                relative: None,
                stated: Some(format!(
                    "{}: {} mailboxes at {} IOPS each",
                    r.workload,
                    crate::format::given(count),
                    rate
                )),
            });
            continue;
        }
        out.push(r.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_with_or_without_a_comparison_and_write_back_as_they_read() {
        let r = parse("oltp.order_p99_ms", "<= 50").unwrap();
        assert_eq!(
            (r.workload.as_str(), r.figure.as_str(), r.op, &r.limit),
            ("oltp", "order_p99_ms", Op::AtMost, &Value::Num(50.0))
        );
        assert_eq!(r.to_string(), "oltp.order_p99_ms <= 50");
        assert_eq!(parse_line(&r.to_string()).unwrap(), r);
        let pass = parse("mailbox.result", "pass").unwrap();
        assert_eq!((pass.op, &pass.limit), (Op::Equal, &Value::Text("pass".into())));
        assert_eq!(parse_line(&pass.to_string()).unwrap(), pass);
        assert_eq!(parse("sqlio-8k.qd4.iops", ">=5_000").unwrap().workload, "sqlio-8k.qd4");
        assert_eq!(parse("integrity.errors", "0").unwrap().limit, Value::Num(0.0));
    }

    #[test]
    fn a_bad_rule_is_refused_with_what_to_write() {
        for (key, rule, says) in [
            ("opm", ">= 1", "name a workload"),
            ("oltp.opm", ">=", "has no limit"),
            ("oltp.opm", ">= 1e999", "not a finite number"),
            ("oltp.opm", ">= 5 ms", "neither a number nor a word"),
            ("mailbox.result", ">= pass", "orders a word"),
        ] {
            let e = parse(key, rule).unwrap_err();
            assert!(e.contains(says) && e.contains(key), "{key} {rule}: {e}");
        }
    }

    #[test]
    fn a_requirement_must_name_a_workload_and_one_of_its_figures() {
        let plan = [("randread", "io"), ("oltp", "oltp")];
        let figures_of = |kind: &str| match kind {
            "io" => Some((crate::render::io::REPORTED.figures)()),
            "oltp" => Some((crate::render::oltp::REPORTED.figures)()),
            _ => None,
        };
        let ok = |k: &str| check(&parse(k, "1").unwrap(), &plan, figures_of);
        assert_eq!(ok("randread.iops"), Ok(()));
        assert_eq!(ok("io.read_p99_ms"), Ok(()));
        assert_eq!(ok("power.active_w"), Ok(()));
        assert_eq!(ok("oltp.active_w"), Ok(()));
        let e = ok("oltp.iops").unwrap_err();
        assert!(e.contains("oltp (oltp) reports no figure `iops`; its figures: opm, order_mean_ms"), "{e}");
        let e = ok("mailbox.result").unwrap_err();
        assert!(
            e.contains(
                "no workload is labelled or of kind `mailbox`; the workloads are randread (io), oltp (oltp)"
            ),
            "{e}"
        );
        assert!(ok("power.watts").unwrap_err().contains("its figures: active_w, idle_w, per_watt"));
        // A limit of the wrong sort for its figure is refused, naming the sort.
        let plan = [("randread", "io")];
        let sort = |k: &str, rule: &str| check(&parse(k, rule).unwrap(), &plan, figures_of);
        let e = sort("randread.iops", "pass").unwrap_err();
        assert!(e.contains("`iops` is a number") && e.contains("give a number"), "{e}");
        let e = sort("io.verify", "1").unwrap_err();
        assert!(e.contains("`verify` is the workload's own verdict, a word"), "{e}");
        assert_eq!(sort("io.verify", "pass"), Ok(()));
    }

    #[test]
    fn a_mailbox_demand_is_one_requirement_of_transactional_iops() {
        let given = vec![
            parse("mailbox.mailboxes", "2000").unwrap(),
            parse("mailbox.iops_per_mailbox", "= 0.5").unwrap(),
            parse("mailbox.result", "pass").unwrap(),
        ];
        let j = judged(&given);
        assert_eq!(j.len(), 2);
        assert_eq!(j[0].to_string(), "mailbox.transactional_iops >= 1000");
        assert_eq!(j[0].said(), "mailbox: 2,000 mailboxes at 0.5 IOPS each");
        assert_eq!(j[1], given[2]);
        // Alone, each is the figure it names.
        assert_eq!(judged(&given[..1]), given[..1]);
    }
}
