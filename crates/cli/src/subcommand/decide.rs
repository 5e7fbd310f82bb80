//! `storbench decide BUNDLE [--requirements FILE] [--json]`: an evaluation judged against
//! requirements (the plan's, kept in evaluation.json, or a file's), printed as the decision
//! (`storbench_report::decision`) in words or JSON. Reads; runs and writes nothing.

use crate::args::report::DecideArgs;
use crate::plan::requirements::{Named, read_file};
use anyhow::{Context, Result, anyhow};
use storbench_bench::input::{TEXT_LIMIT, read_text};
use storbench_bench::run::Ending;
use storbench_report::decision::requirement::{Requirement, parse_line};
use storbench_report::decision::{Decision, decide, failing};
use storbench_report::evaluation::Evaluation;

pub fn run(args: &DecideArgs) -> Result<Ending> {
    let mut input = crate::subcommand::report::read_bundle(&args.bundle)?;
    if let Some(w) = args.window.window {
        crate::subcommand::report::narrow(&mut input, &args.bundle, w)?;
    }
    let requirements = match &args.requirements {
        Some(file) => {
            let text = read_text(file, TEXT_LIMIT).with_context(|| format!("reading {}", file.display()))?;
            let (requirements, facts) = from_file(&input.evaluation, &file.display().to_string(), &text)?;
            apply(&mut input.evaluation, &facts);
            requirements
        }
        None => kept(&input.evaluation)?,
    };
    let d = decide(&input, &requirements);
    if args.json {
        tell_raw!("{}\n", serde_json::to_string_pretty(&d).context("writing the decision as JSON")?);
    } else {
        tell_raw!("{}", words(&d));
    }
    Ok(ending(&input.evaluation, d.unmet(), "see the decision above"))
}

/// How an evaluation ends, for `run` and `decide` alike: exit 1 saying why where it fails
/// (`decision::failing`: runs that did not finish or failed, requirements unmet), else 0.
pub fn ending(e: &Evaluation, unmet: bool, see: &str) -> Ending {
    let why = failing(e, unmet);
    if why.is_empty() {
        return Ending::Ok;
    }
    say!("the evaluation fails: {} ({see})", why.join("; "));
    Ending::CheckFailed
}

/// The decision over evaluation `dir` under its plan's requirements: what `storbench run`
/// says after its table.
pub fn of_evaluation(dir: &std::path::Path) -> Result<Decision> {
    let input = crate::subcommand::report::read_bundle(dir)?;
    let requirements = kept(&input.evaluation)?;
    Ok(decide(&input, &requirements))
}

fn from_file(e: &Evaluation, file: &str, text: &str) -> Result<(Vec<Requirement>, Vec<Named>)> {
    let mut workloads: Vec<(&str, &str)> = Vec::new();
    for r in &e.runs {
        if !workloads.iter().any(|(label, _)| *label == r.workload) {
            workloads.push((&r.workload, &r.kind));
        }
    }
    let names: Vec<&str> = e.configurations.iter().map(|c| c.name.as_str()).collect();
    read_file(file, text, &workloads, &names).map_err(|e| anyhow!("{e}"))
}

/// The plan's requirements as evaluation.json keeps them.
fn kept(e: &Evaluation) -> Result<Vec<Requirement>> {
    e.requirements
        .iter()
        .map(|line| {
            parse_line(line).map_err(|why| {
                anyhow!("evaluation.json's requirement `{line}` cannot be read ({why}); give the requirements with --requirements FILE")
            })
        })
        .collect()
}

/// A requirements file's facts over the evaluation's configurations.
fn apply(e: &mut Evaluation, facts: &[Named]) {
    for n in facts {
        if let Some(c) = e.configurations.iter_mut().find(|c| c.name == n.name) {
            n.facts.write_into(c);
        }
    }
}

/// The decision as the terminal shows it: the choice and why, then each configuration's
/// verdicts, costs, the best of each kind and the pairs.
fn words(d: &Decision) -> String {
    let mut out = format!("Chosen: {}\n{}\n", d.chosen.as_deref().unwrap_or("none"), d.why);
    for c in &d.configurations {
        let meets = match c.meets {
            Some(true) => "meets every requirement",
            Some(false) => "fails",
            None => "not shown either way",
        };
        out.push_str(&format!("\n{}: {meets}\n", c.name));
        for v in &c.verdicts {
            let mark = match v.met {
                Some(true) => "met ",
                Some(false) => "FAIL",
                None => " ?  ",
            };
            let at = v.at.as_deref().map(|a| format!(" at {a}")).unwrap_or_default();
            out.push_str(&format!("  {mark} {}{at}: {}\n", v.requirement, v.text));
        }
        for cost in &c.costs {
            out.push_str(&format!("  {cost}\n"));
        }
    }
    if !d.best.is_empty() {
        out.push('\n');
        for b in &d.best {
            out.push_str(&format!("{}: {} ({})\n", b.what, b.configuration, b.value));
        }
    }
    if !d.comparisons.is_empty() {
        out.push('\n');
        for c in &d.comparisons {
            out.push_str(&format!("{c}\n"));
        }
    }
    out
}
