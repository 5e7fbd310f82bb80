//! The report's first screen where the evaluation states requirements: the configuration to
//! choose and why, each configuration's verdicts with their margins, what a unit of work
//! costs, the best of each kind and each pair compared (`crate::decision` decides; this file
//! only lays it out).

use super::ReportInput;
use super::doc::{Block, Row, Table, num};
use crate::decision::requirement::parse_line;
use crate::decision::{Decision, decide};

/// The decision's blocks, or none where the evaluation states no requirement.
pub(super) fn blocks(input: &ReportInput) -> Vec<Block> {
    let lines = &input.evaluation.requirements;
    if lines.is_empty() {
        return Vec::new();
    }
    let mut unread = Vec::new();
    let requirements: Vec<_> = lines
        .iter()
        .filter_map(|l| parse_line(l).map_err(|e| unread.push(format!("Requirement not judged: {e}"))).ok())
        .collect();
    let d = decide(input, &requirements);
    let mut out =
        vec![Block::Heading(2, "Decision".into()), Block::Para(headline(&d)), Block::Para(d.why.clone())];
    out.push(Block::Table(summary(&d)));
    out.push(Block::List(d.requirements.iter().map(|r| format!("Requirement: {r}")).chain(unread).collect()));
    for c in &d.configurations {
        out.push(Block::Heading(3, format!("{}: the verdicts", c.name)));
        out.push(Block::Table(verdicts(c)));
    }
    let mut more: Vec<String> =
        d.best.iter().map(|b| format!("{}: {} ({})", capital(&b.what), b.configuration, b.value)).collect();
    more.extend(d.comparisons.iter().cloned());
    if !more.is_empty() {
        out.push(Block::Heading(3, "Side by side".into()));
        out.push(Block::List(more));
    }
    out
}

fn headline(d: &Decision) -> String {
    match &d.chosen {
        Some(c) => format!("Chosen: {c}."),
        None => "Chosen: none: no configuration is shown to meet every requirement.".into(),
    }
}

/// One row per configuration: whether it meets everything, what binds, its facts and costs.
fn summary(d: &Decision) -> Table {
    let mut t = Table::new(&[
        "Configuration",
        "Meets every requirement",
        "Binding requirement",
        "Price",
        "Active power",
        "Cost",
    ]);
    for c in &d.configurations {
        let meets = match c.meets {
            Some(true) => "yes",
            Some(false) => "no",
            None => "not shown either way",
        };
        let price = match (c.price, &c.currency) {
            (Some(p), Some(cur)) => format!("{} {cur}", super::doc::given(p)),
            (Some(p), None) => super::doc::given(p),
            _ => "—".into(),
        };
        let watts = c.active_w.map_or_else(|| "—".into(), |w| format!("{} W", num(w)));
        let costs = if c.costs.is_empty() { "—".into() } else { c.costs.join("; ") };
        let cells = vec![
            c.name.clone(),
            meets.into(),
            c.binding.clone().unwrap_or_else(|| "—".into()),
            price,
            watts,
            costs,
        ];
        t.rows.push(Row { cells, marked: d.chosen.as_ref() == Some(&c.name) });
    }
    t
}

fn verdicts(c: &crate::decision::ConfigurationDecision) -> Table {
    let mut t = Table::new(&["Requirement", "Workload", "Verdict", "Measured"]);
    for v in &c.verdicts {
        let verdict = match v.met {
            Some(true) => "met",
            Some(false) => "not met",
            None => "not shown either way",
        };
        let workload = match &v.at {
            Some(at) => format!("{} at {at}", v.workload),
            None => v.workload.clone(),
        };
        t.push(vec![v.requirement.clone(), workload, verdict.into(), v.text.clone()]);
    }
    t
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}
