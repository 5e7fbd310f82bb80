//! `storbench run [PLAN]`: an evaluation. Parses and checks the whole plan (or the built-in
//! quick plan), then runs every workload on every configuration, repetition after repetition:
//! settle, idle power, the run into its own bundle, its headline and power from the summary
//! it returns, `evaluation.json` rewritten. The terminal shows a line per run; each run's own
//! output is in its bundle's output.log. `--resume DIR` skips the runs that finished.

mod execute;
mod progress;
mod shard_step;

use crate::cluster::{Cluster, ClusterSetup};
use crate::plan::{self, Plan, QUICK_PLAN, expand, expand::PlannedRun};
use crate::root::RunArgs;
use crate::{console, output, power};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use storbench_bench::input::{DATA_LIMIT, TEXT_LIMIT, read_text};
use storbench_bench::run::Ending;
use storbench_bench::run::bundle;
use storbench_bench::run::{Rule, StopFlag};
use storbench_bench::target::lock::{self, Lock};
use storbench_report::evaluation::{self as ev, Evaluation, RunRecord, RunStatus};

/// What the evaluation directory holds besides the runs.
const EVALUATION_JSON: &str = "evaluation.json";
const PLAN_COPY: &str = "plan.toml";
const OVERRIDES: &str = "method.json";

pub fn run(a: &RunArgs, stop: &StopFlag) -> Result<Ending> {
    if let Some(run_id) = &a.cluster.shard_of {
        return shard_step::run(a, run_id, stop);
    }
    let cluster = ClusterSetup::of(&a.cluster, a.plan.as_deref())?;
    let start = match &a.resume {
        Some(dir) => resume_from(dir, a)?,
        None => fresh(a)?,
    };
    let places = match &cluster {
        Some(c) => {
            refuse_on_cluster(&start.plan)?;
            c.places(&start.plan, &start.text)?
        }
        None => Vec::new(),
    };
    // On a cluster the shards lock the targets, each on its own host.
    let _locks = lock_places(&start, cluster.is_none())?;
    let dir = match start.dir {
        Some(dir) => {
            // What this resume ran with, for the next one.
            let overrides = start.saved.overridden_by(&a.method);
            bundle::write_atomic(&dir.join(OVERRIDES), &serde_json::to_string_pretty(&overrides)?)?;
            dir
        }
        None => create_dir(a, &start.plan, &start.text)?,
    };
    let cluster = cluster.map(|c| c.into_cluster(&dir, &start.text, places));
    let eval = evaluate(&start.plan, &dir, start.previous, a.verbose, cluster.as_ref(), stop)?;
    finish(&dir, &eval, stop)
}

/// What a plan cannot do with its runs as shards: a latency search steers one host's load.
fn refuse_on_cluster(plan: &Plan) -> Result<()> {
    if let Some(run) = expand::runs(plan).iter().find(|r| r.search.is_some()) {
        bail!(
            "workload {} searches its load under a latency limit, which one host does; run the \
             search without --on, or leave `search` out of the plan to run it as shards",
            run.workload
        );
    }
    Ok(())
}

/// One evaluation at a time per bundle and per target: a second `--resume` of a running
/// evaluation, or another storbench on one of its targets, is refused before anything is
/// written. Held for the whole evaluation; its runs take the same locks again.
fn lock_places(start: &Start, targets: bool) -> Result<Vec<Lock>> {
    let mut locks = Vec::new();
    if let Some(dir) = &start.dir {
        locks.push(lock::lock(dir, "evaluation")?);
    }
    for c in start.plan.configurations.iter().filter(|_| targets) {
        for place in std::iter::once(&c.target).chain(c.log_target.as_ref()) {
            locks.push(lock::lock_place(place, "target")?);
        }
    }
    Ok(locks)
}

/// A plan ready to run, and where it runs (None: a new directory).
struct Start {
    plan: Plan,
    text: String,
    dir: Option<PathBuf>,
    previous: Option<Evaluation>,
    /// The command-line method options saved by the runs before (for a resume).
    saved: plan::method::Method,
}

/// `storbench plan check PLAN`: everything `run` checks before its first run (the plan's
/// keys and requirements, places, database servers, background streams, power meters), every
/// problem listed; nothing runs and nothing is written.
pub fn check(file: &Path) -> Result<Ending> {
    let text = read_plan(file)?;
    let mut plan = crate::plan::parse::parse_as_shard(&file.display().to_string(), &text, false)?;
    plan.method = checked(plan.method)?;
    let mut found = execute::problems(&plan);
    found.extend(power::check(plan.method.power.as_deref(), &plan.own_meters()));
    execute::all_of(found)?;
    let runs = expand::runs(&plan);
    let all: Vec<usize> = (0..runs.len()).collect();
    tell!(
        "{}: ready to run: {} runs of {} workload(s) on {} configuration(s), about {} without settling and idle power",
        file.display(),
        runs.len(),
        plan.workloads.len(),
        plan.configurations.len(),
        short(runs.iter().map(|r| r.expected).sum())
    );
    for line in what_it_writes(&plan, &runs, &all) {
        tell!("{line}");
    }
    Ok(Ending::Ok)
}

/// Every check before the first run, with the power meters started as the runs will read
/// them (each opened once): every problem listed at once.
fn check_and_start_meters(plan: &Plan) -> Result<()> {
    let mut found = execute::problems(plan);
    found.extend(power::start(plan.method.power.as_deref()).err());
    found.extend(power::start_own(&plan.own_meters()).err());
    execute::all_of(found)
}

fn read_plan(p: &Path) -> Result<String> {
    read_text(p, TEXT_LIMIT)
        .map_err(|e| anyhow::anyhow!("the plan {e} (`storbench plan init` writes an example)"))
}

fn fresh(a: &RunArgs) -> Result<Start> {
    let (file, text) = match &a.plan {
        Some(p) => (p.display().to_string(), read_plan(p)?),
        None if a.targets.is_empty() => ("(built-in quick plan)".to_string(), QUICK_PLAN.to_string()),
        None => ("(built-in quick plan on --target)".to_string(), plan::quick::plan_for(&a.targets)?),
    };
    let mut plan = crate::plan::parse::parse_as_shard(&file, &text, a.cluster.on.is_some())?;
    plan.method = checked(plan.method.overridden_by(&a.method))?;
    check_and_start_meters(&plan)?;
    Ok(Start { plan, text, dir: None, previous: None, saved: plan::method::Method::default() })
}

fn resume_from(dir: &Path, a: &RunArgs) -> Result<Start> {
    let dir = &storbench_bench::files::resolve(dir)?;
    let read = |name: &str| {
        read_text(&dir.join(name), DATA_LIMIT)
            .map_err(|e| anyhow::anyhow!("{e} (--resume takes a directory `storbench run` made)"))
    };
    let (file, text) = plan_to_resume(dir, &read(PLAN_COPY)?, a.plan.as_deref())?;
    let previous: Evaluation = serde_json::from_str(&read(EVALUATION_JSON)?)
        .with_context(|| format!("{} is not an evaluation", dir.join(EVALUATION_JSON).display()))?;
    let saved: plan::method::Method =
        serde_json::from_str(&read(OVERRIDES)?).context("reading method.json")?;
    // Read as what storbench wrote: the resume may replace them.
    for name in [EVALUATION_JSON, OVERRIDES] {
        storbench_bench::files::claim_at(&dir.join(name));
    }
    let mut plan = crate::plan::parse::parse_as_shard(&file, &text, a.cluster.on.is_some())?;
    plan.method = checked(plan.method.overridden_by(&saved).overridden_by(&a.method))?;
    if let Some(power) =
        plan.method.power.as_deref().filter(|p| storbench_bench::secret::holds_hidden_secret(p))
    {
        bail!(
            "the power meter {power} saved in {} has its password hidden; give it again with --power, \
             or its credentials in STORBENCH_REDFISH_USER and STORBENCH_REDFISH_PASSWORD",
            dir.join(OVERRIDES).display()
        );
    }
    // The storage the evaluation started on, wherever the resume is run from (a shard's is
    // its own, from `{shard}` in the plan).
    for c in plan.configurations.iter_mut().filter(|_| a.cluster.shard_of.is_none()) {
        if let Some(first) = previous.configurations.iter().find(|p| p.name == c.name) {
            c.target = PathBuf::from(&first.target);
        }
    }
    check_and_start_meters(&plan)?;
    Ok(Start { plan, text, dir: Some(dir.to_path_buf()), previous: Some(previous), saved })
}

/// The plan a resume runs, and its name for errors: the copy saved in `dir`, unless that has
/// passwords hidden (storbench never writes one); then the plan the evaluation started
/// with, given again, which must be the same but for its passwords.
fn plan_to_resume(dir: &Path, saved: &str, given: Option<&Path>) -> Result<(String, String)> {
    let copy = dir.join(PLAN_COPY);
    let hidden = storbench_bench::secret::holds_hidden_secret(saved);
    match given {
        None if hidden => bail!(
            "{} has its passwords hidden (storbench writes none to disk); give the plan the evaluation \
             started with: storbench run --resume {} PLAN",
            copy.display(),
            dir.display()
        ),
        None => Ok((copy.display().to_string(), saved.to_string())),
        Some(_) if !hidden => {
            bail!("--resume takes the plan saved in {}; leave out the plan file", dir.display())
        }
        Some(p) => {
            let text =
                read_text(p, TEXT_LIMIT).with_context(|| format!("reading the plan {}", p.display()))?;
            if storbench_bench::secret::redact(&text) != saved {
                bail!(
                    "{} is not the plan {} ran (it differs from {} beyond its passwords); give the plan \
                     the evaluation started with",
                    p.display(),
                    dir.display(),
                    copy.display()
                );
            }
            Ok((p.display().to_string(), text))
        }
    }
}

/// The method once the command line's options are in.
fn checked(m: plan::method::Method) -> Result<plan::method::Method> {
    match m.check() {
        Ok(()) => Ok(m),
        Err((key, message, hint)) => bail!("{message} (--{}); {hint}", key.replace('_', "-")),
    }
}

/// `<output dir>/<time>-<name>/` with the plan, the command-line overrides and the system's
/// disclosure.
fn create_dir(a: &RunArgs, plan: &Plan, text: &str) -> Result<PathBuf> {
    let root = crate::preflight::results_root(a.output_dir.as_deref())?;
    let dir = bundle::new_dir(&root, &plan.name)?;
    bundle::write_atomic(&dir.join(PLAN_COPY), text)?;
    bundle::write_atomic(&dir.join(OVERRIDES), &serde_json::to_string_pretty(&a.method)?)?;
    let targets: Vec<&Path> = plan.configurations.iter().map(|c| c.target.as_path()).collect();
    let disclosure = storbench_bench::monitor::disclosure::gather(&targets);
    bundle::write_atomic(&dir.join("disclosure.json"), &serde_json::to_string_pretty(&disclosure)?)?;
    Ok(dir)
}

/// Before the first run: what the runs still to do will write on each configuration, each
/// thing once, a paragraph per configuration.
fn what_it_writes(plan: &Plan, runs: &[expand::PlannedRun], todo: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for (ci, c) in plan.configurations.iter().enumerate() {
        let mut lines: Vec<String> = Vec::new();
        for run in todo.iter().map(|&i| &runs[i]).filter(|r| r.configuration == ci) {
            let line = run.args.will_write().map(|w| format!("  {}: {w}", run.args.kind().name));
            if let Some(line) = line.filter(|l| !lines.contains(l)) {
                lines.push(line);
            }
        }
        lines.extend(
            c.background.iter().enumerate().map(|(i, b)| format!("  background: {}", b.will_write(i))),
        );
        if !lines.is_empty() {
            out.push(format!("on {} it writes:\n{}", c.name, lines.join("\n")));
        }
    }
    out
}

/// Runs what is still to do, a line per run on the terminal (each run's own output in its
/// bundle's output.log, and on the terminal too with `verbose`).
fn evaluate(
    plan: &Plan,
    dir: &Path,
    previous: Option<Evaluation>,
    verbose: bool,
    cluster: Option<&Cluster>,
    stop: &StopFlag,
) -> Result<Evaluation> {
    let runs = expand::runs(plan);
    let mut eval = new_evaluation(plan, &runs, previous);
    save(dir, &eval)?;
    if let Some(cluster) = cluster {
        cluster.ready(&runs)?;
    }
    let todo: Vec<usize> = (0..runs.len()).filter(|&i| !finished(&eval.runs[i])).collect();
    say!(
        "evaluation {}: {} runs ({} to do) of {} workload(s) on {} configuration(s); bundle {}",
        plan.name,
        runs.len(),
        todo.len(),
        plan.workloads.len(),
        plan.configurations.len(),
        dir.display()
    );
    for paragraph in what_it_writes(plan, &runs, &todo) {
        say!("{paragraph}");
    }
    power::announce(false);
    let mut clock = progress::Eta::new(&runs, &todo, &plan.method);
    let mut preconditioned = vec![false; plan.configurations.len()];
    for &i in &todo {
        let run = &runs[i];
        let config = &plan.configurations[run.configuration];
        let mut precondition = false;
        if run.args.get::<crate::subcommand::io::args::IoJob>().is_some()
            && !preconditioned[run.configuration]
        {
            // On a cluster every shard preconditions its own target in its setup.
            precondition = execute::precondition_args(plan, run.configuration).is_some();
            if cluster.is_none() {
                execute::precondition(plan, run.configuration, dir, verbose, stop)?;
            }
            preconditioned[run.configuration] = true;
        }
        if stop.is_stopped() {
            break;
        }
        let line = console::RunLine::start(&clock.line(run, config));
        let started = Instant::now();
        let on = cluster.map(|cluster| execute::OnCluster { cluster, precondition });
        let record = execute::one(plan, run, config, dir, verbose, on, stop);
        line.end(&run_result(&record));
        eval.runs[i] = RunRecord { seconds: Some(started.elapsed().as_secs_f64()), ..record };
        clock.done(i, started.elapsed());
        eval.mark_reported();
        save(dir, &eval)?;
        if stop.is_stopped() {
            break;
        }
    }
    eval.complete = eval.runs.iter().all(finished);
    if eval.complete {
        eval.ended_at = Some(jiff::Timestamp::now().to_string());
    }
    eval.notes = notes(&eval);
    save(dir, &eval)?;
    Ok(eval)
}

fn finished(r: &RunRecord) -> bool {
    matches!(r.status, RunStatus::Done | RunStatus::CheckFailed)
}

/// The evaluation with every planned run; finished ones of an earlier attempt are kept.
fn new_evaluation(plan: &Plan, runs: &[PlannedRun], previous: Option<Evaluation>) -> Evaluation {
    let old = previous.as_ref().map(|p| p.runs.as_slice()).unwrap_or_default();
    let records = runs
        .iter()
        .map(|r| match old.iter().find(|o| o.id == r.id && finished(o)) {
            Some(kept) => kept.clone(),
            None => execute::pending(plan, r),
        })
        .collect();
    let m = &plan.method;
    let steady = m.window.as_deref() == Some("steady_state");
    Evaluation {
        evaluation_version: ev::EVALUATION_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        name: plan.name.clone(),
        complete: false,
        started_at: previous.map_or_else(|| jiff::Timestamp::now().to_string(), |p| p.started_at),
        ended_at: None,
        method: ev::Method {
            repetitions: m.repetitions.unwrap_or(expand::DEFAULT_REPETITIONS),
            idle_settle_s: m.idle_settle_or_default().as_secs_f64(),
            idle_power_s: if power::describe().is_some() || power::any_own() {
                m.idle_power_or_default().as_secs_f64()
            } else {
                0.0
            },
            precondition_passes: m.precondition.unwrap_or(0),
            window: if steady { "steady_state" } else { "fixed" }.to_string(),
            steady_state: steady.then(|| ev::SteadyStateRule {
                round_s: m.round_or_default().as_secs_f64(),
                rounds: Rule::SNIA_PTS.window as u32,
                range_pct: Rule::SNIA_PTS.max_range_pct,
                slope_pct: Rule::SNIA_PTS.max_slope_pct,
                max_rounds: m.measure.map_or(Rule::SNIA_PTS_MAX_ROUNDS, |t| {
                    (t.0.as_secs_f64() / m.round_or_default().as_secs_f64()).floor() as u32
                }),
            }),
            power_source: power::describe(),
            seed: m.seed.unwrap_or(storbench_bench::rng::DEFAULT_SEED),
        },
        configurations: plan
            .configurations
            .iter()
            .map(|c| {
                let mut out = ev::Configuration {
                    name: c.name.clone(),
                    target: c.target.display().to_string(),
                    description: c.description.clone(),
                    own_values: c.own_values.clone(),
                    background: c.background.iter().map(ToString::to_string).collect(),
                    condition: Some(c.condition().to_string()),
                    storage: Some(c.storage().to_string()),
                    power_source: power::own_meter(&c.name),
                    ..ev::Configuration::default()
                };
                c.facts.write_into(&mut out);
                out
            })
            .collect(),
        runs: records,
        notes: Vec::new(),
        requirements: plan.requirements.iter().map(ToString::to_string).collect(),
    }
}

fn notes(eval: &Evaluation) -> Vec<String> {
    let mut notes = Vec::new();
    if eval.method.power_source.is_none() && power::not_asked() {
        notes.push("power was not measured (power source: none)".to_string());
    } else if eval.method.power_source.is_none() {
        notes.push(
            "no power source on this machine (no readable RAPL, no IPMI): power and performance per watt \
             were not measured; for an external meter give --power file:PATH or --power cmd:COMMAND, or \
             power = \"file:PATH\" in a plan's [method]"
                .to_string(),
        );
    }
    for r in &eval.runs {
        notes.extend(r.warnings.iter().map(|w| format!("run {}: {w}", r.id)));
    }
    for r in eval.runs.iter().filter(|r| matches!(r.status, RunStatus::Failed | RunStatus::CheckFailed)) {
        // A run's record names each failed check (`record_measured`); one made by an older
        // storbench may not.
        let why = r
            .error
            .as_deref()
            .unwrap_or("its record names no check; its bundle's summary.json has the figures");
        notes.push(format!("run {} {}: {why}", r.id, r.status));
    }
    notes
}

/// How a run ended, completing its line: its headline and status.
fn run_result(r: &RunRecord) -> String {
    let status = match (r.status, &r.error) {
        (RunStatus::Failed, Some(e)) => format!("FAILED: {e}"),
        (RunStatus::CheckFailed, Some(e)) => format!("{}: {e}", r.status),
        (s, _) => s.to_string(),
    };
    match &r.headline {
        Some(h) => format!("{}, {status}", output::headline(h)),
        None => status,
    }
}

fn save(dir: &Path, eval: &Evaluation) -> Result<()> {
    Ok(bundle::write_atomic(&dir.join(EVALUATION_JSON), &(serde_json::to_string_pretty(eval)? + "\n"))?)
}

fn finish(dir: &Path, eval: &Evaluation, stop: &StopFlag) -> Result<Ending> {
    tell!("{}", output::evaluation_table(eval));
    for n in &eval.notes {
        say!("note: {n}");
    }
    // What the report's findings say first of the evidence: configurations that measured one
    // disk, results whose runs disagree widely (with their likely cause).
    if let Ok(input) = super::report::read_bundle(dir) {
        for (a, b, disk) in input.shared_disks() {
            say!("warning: {a} and {b} ran on one disk ({disk}): no difference between them is a finding");
        }
        for u in storbench_report::stability::unstable(&input) {
            say!("warning: {}", u.text);
        }
    }
    // Exit 1 where the requirements are not met, as `storbench decide` on this directory.
    let mut unmet = false;
    if !eval.requirements.is_empty() {
        match super::decide::of_evaluation(dir) {
            Ok(d) => {
                unmet = d.unmet();
                tell!(
                    "decision: {}\n{}",
                    d.chosen.as_deref().unwrap_or("none meets every requirement"),
                    d.why
                )
            }
            Err(e) => say!(
                "warning: no decision ({}); try storbench decide {}",
                crate::output::reason(&e),
                dir.display()
            ),
        }
    }
    say!("evaluation: {}", dir.display());
    say_what_stays(eval);
    match super::report::write_report(dir, dir) {
        Ok(files) => files.iter().for_each(|f| say!("report: {}", f.display())),
        Err(e) => {
            say!(
                "warning: the report could not be written ({}); try storbench report {}",
                crate::output::reason(&e),
                dir.display()
            )
        }
    }
    if !eval.complete {
        say!(
            "to finish it (runs that did not finish are run again): storbench run --resume {}",
            dir.display()
        );
    }
    if stop.is_stopped() {
        return Ok(Ending::Interrupted);
    }
    Ok(super::decide::ending(eval, unmet, "see the notes above and evaluation.json"))
}

/// The data files the workloads keep for the next evaluation to reuse, so the user knows
/// what to delete.
fn say_what_stays(eval: &Evaluation) {
    const KEPT: [&str; 3] = ["storbench-io.dat", "storbench-ds3.db", "storbench-ds3.db.pristine"];
    for c in &eval.configurations {
        let here: Vec<String> = KEPT
            .iter()
            .map(|f| Path::new(&c.target).join(f))
            .filter_map(|p| std::fs::metadata(&p).ok().map(|m| (p, m.len())))
            .map(|(p, len)| format!("{} ({})", p.display(), storbench_bench::units::human_bytes(len)))
            .collect();
        if !here.is_empty() {
            say!("kept for later runs (delete when done): {}", here.join(", "));
        }
    }
}

/// Seconds as a short duration for progress lines.
fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}
