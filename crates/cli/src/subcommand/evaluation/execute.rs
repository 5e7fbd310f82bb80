//! An evaluation's runs from the command's side: every check before anything runs,
//! preconditioning, and a planned run handed to the library's evaluation step
//! (`run::planned`: its bundle under `runs/<id>/`, settle, idle power, the run, its record)
//! with this command around it (the terminal and log, the live view, the power meter, a
//! cluster's shards).

use crate::args::oltp::OltpJob;
use crate::cluster::Cluster;
use crate::console;
use crate::plan::Plan;
use crate::plan::configuration::Configuration;
use crate::plan::expand::{self, PlannedRun};
use crate::power;
use crate::subcommand;
use crate::subcommand::io::args::IoJob;
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::time::Duration;
use storbench_bench::engine::EngineKind;
use storbench_bench::monitor::resolve_device;
use storbench_bench::run::StopFlag;
use storbench_bench::run::bundle;
use storbench_bench::run::planned::{self, Host, Planned};
use storbench_bench::run::{Ending, Ran};
use storbench_bench::units::{ByteSize, Seconds};
use storbench_bench::workload::io::options::IoOptions;
use storbench_report::evaluation::{self as ev, RunRecord};

/// Every run's options as its command would check them, so that a mistake in the last
/// workload stops the evaluation before the first run, not hours into it: every problem, in
/// the plan's order, each once (places, options, searches, database servers, streams). The
/// caller adds the power meters' and lists them all with [`all_of`].
pub fn problems(plan: &Plan) -> Vec<anyhow::Error> {
    let mut found: Vec<anyhow::Error> = check_kept_once(plan).err().into_iter().collect();
    for c in &plan.configurations {
        // Its streams' files and programs (a rebuild's destination, a command's program).
        let place = storbench_bench::background::Place {
            dir: c.target.is_dir().then_some(&*c.target),
            target: Some(&c.target),
            bundle: None,
            null: false,
            wait: false,
            say: &crate::console::say_line,
        };
        let checked = storbench_bench::background::check(&c.background, place);
        found.extend(
            checked.with_context(|| format!("in the plan, configuration {}'s background", c.name)).err(),
        );
    }
    let runs = expand::runs(plan);
    for (i, run) in runs.iter().enumerate().filter(|(_, r)| r.repetition == 1) {
        let made = made_before(&runs[..i], run.configuration);
        let checked = check_place(plan, run).and_then(|()| {
            let checked = run.args.check_after(&made).and_then(|()| check_search(run));
            let point = run.sweep.as_ref().map(|(k, v)| format!(" at {k} = {v}")).unwrap_or_default();
            checked.map_err(|e| anyhow::anyhow!(in_plan(&e))).with_context(|| {
                format!("in the plan, workload {}{point} on {}", run.workload, config_name(plan, run))
            })
        });
        found.extend(checked.err());
    }
    // Which database each URL is can only be asked of servers that answered their runs' checks.
    if found.is_empty() {
        let oltp =
            runs.iter().filter_map(|r| Some((config_name(plan, r).to_owned(), r.args.get::<OltpJob>()?)));
        let apart = subcommand::oltp::check_databases_apart(oltp);
        found.extend(apart.map_err(|e| anyhow::anyhow!("in the plan, {}", in_plan(&e))).err());
    }
    for i in 0..plan.configurations.len() {
        if let Some(args) = precondition_args(plan, i) {
            let checked = subcommand::io::check(&args);
            found.extend(
                checked
                    .with_context(|| format!("in the plan, preconditioning {}", plan.configurations[i].name))
                    .err(),
            );
        }
    }
    // One problem once, whichever runs and streams meet it.
    let mut seen: Vec<String> = Vec::new();
    found.retain(|e| {
        let cause = e.root_cause().to_string();
        !seen.contains(&cause) && {
            seen.push(cause);
            true
        }
    });
    found
}

/// The files the runs `before` on configuration `c` make and keep for the runs after them.
fn made_before(before: &[PlannedRun], c: usize) -> Vec<std::path::PathBuf> {
    before.iter().filter(|r| r.configuration == c).filter_map(|r| r.args.leaves()).collect()
}

/// One error from `found`: itself where there is one, else every problem numbered.
pub fn all_of(mut found: Vec<anyhow::Error>) -> Result<()> {
    match found.len() {
        0 => Ok(()),
        1 => Err(found.remove(0)),
        n => {
            let list: Vec<String> =
                found.iter().enumerate().map(|(i, e)| format!("  {}. {}", i + 1, in_plan(e))).collect();
            bail!("the plan has {n} problems; fix each, then run it again:\n{}", list.join("\n"))
        }
    }
}

/// A run's search with the options the configuration and the method gave it (the method's
/// steady-state window would refuse it, as `--steady-state` does on the command line).
fn check_search(run: &PlannedRun) -> Result<()> {
    match &run.search {
        Some(s) => crate::search::check_options(&*run.args, s).map_err(|(_, e)| e),
        None => Ok(()),
    }
}

/// An integrity run with `keep = true` leaves its files, and the next integrity run on that
/// configuration would find them and refuse to start: such a plan could never finish.
fn check_kept_once(plan: &Plan) -> Result<()> {
    let all = expand::runs(plan);
    for first in all.iter().filter(|r| r.args.keeps_files()) {
        let mut others = all.iter().filter(|r| std::ptr::eq(r.args.kind(), first.args.kind()));
        if let Some(next) = others.find(|r| r.configuration == first.configuration && r.id != first.id) {
            bail!(
                "in the plan, workload {} keeps its files (keep = true) on {}, so run {} would find them \
                 there and could not start; set repetitions = 1 and run one integrity workload per \
                 configuration with keep, or leave keep out",
                first.workload,
                config_name(plan, first),
                next.id
            );
        }
    }
    Ok(())
}

/// A workload's error as a plan's user reads it: remedies and options named by their plan keys.
fn in_plan(e: &anyhow::Error) -> String {
    crate::plan::terms::in_plan_terms(&crate::output::reason_worded(e, &crate::plan::configuration::key_for))
}

/// What a run needs of its configuration's target that the workload's own checks cannot see.
fn check_place(plan: &Plan, run: &PlannedRun) -> Result<()> {
    let c = &plan.configurations[run.configuration];
    if run.args.needs_files(c) && !c.target.is_dir() {
        bail!(
            "in the plan, workload {} needs a filesystem, but configuration {}'s target {} is a \
             device; give it a configuration whose target is a directory on that storage{}",
            run.workload,
            c.name,
            c.target.display(),
            if run.args.targets_on(c).is_some() { ", or database servers in `url`" } else { "" }
        );
    }
    if let (Some((key, n)), Some(there)) = (&run.sweep, run.args.targets_on(c))
        && key == crate::plan::parse::TARGETS
        && n.as_u64().unwrap_or(0) as usize > there
    {
        bail!(
            "in the plan, workload {} sweeps targets = {n}, but configuration {} has {} url(s); \
             give it at least {n} database servers in `url`",
            run.workload,
            c.name,
            c.url.len()
        );
    }
    Ok(())
}

fn config_name<'a>(plan: &'a Plan, run: &PlannedRun) -> &'a str {
    &plan.configurations[run.configuration].name
}

/// The record of a run not yet made.
pub fn pending(plan: &Plan, run: &PlannedRun) -> RunRecord {
    RunRecord {
        id: run.id.clone(),
        workload: run.workload.clone(),
        kind: run.args.kind().name.to_string(),
        configuration: config_name(plan, run).to_string(),
        sweep: run.sweep.clone().map(|(param, value)| ev::SweepPoint { param, value }),
        repetition: run.repetition,
        ..RunRecord::default()
    }
}

/// The preconditioning job of configuration `ci`: sequential 128 KiB writes over the whole of
/// its io target (file or device), `precondition` times; None without passes or an io workload.
pub fn precondition_args(plan: &Plan, ci: usize) -> Option<IoJob> {
    let passes = plan.method.precondition.filter(|&p| p > 0)?;
    let io = expand::runs(plan).into_iter().find_map(|r| {
        let a = r
            .args
            .get::<IoJob>()
            .filter(|a| r.configuration == ci && a.options.engine != Some(EngineKind::Null));
        a.cloned()
    })?;
    let whole = subcommand::io::check(&io).ok().and_then(|(_, target)| target.map(|t| t.size));
    let size =
        whole.unwrap_or_else(|| io.options.size.map_or(subcommand::io::validate::DEFAULT_SIZE, |s| s.0));
    let options = IoOptions {
        rw: Some(crate::subcommand::io::args::Rw::Write),
        bs: Some(crate::subcommand::io::args::BlockSizes::single(128 << 10)),
        iodepth: Some(16),
        workers: Some(1),
        runtime: None,
        ramp: Some(Seconds(Duration::ZERO)),
        io_size: Some(ByteSize(size * u64::from(passes))),
        steady_state: None,
        rate_iops: None,
        rate_bw: None,
        verify: false,
        ..io.options.clone()
    };
    Some(IoJob { options, ..io })
}

/// Runs configuration `ci`'s preconditioning job, if the plan asks for one, into a bundle
/// under `precondition/` whose output.log has its output (the terminal too with `verbose`).
pub fn precondition(plan: &Plan, ci: usize, dir: &Path, verbose: bool, stop: &StopFlag) -> Result<()> {
    let Some(mut args) = precondition_args(plan, ci) else { return Ok(()) };
    let c = &plan.configurations[ci];
    crate::live::set_configuration(&c.name);
    say!(
        "preconditioning {}: {} pass(es) of sequential 128 KiB writes",
        c.name,
        plan.method.precondition.unwrap_or(0)
    );
    let name = format!("precondition-{}", c.name);
    args.out.name = Some(name.clone());
    let ran = bundle::new_dir(&dir.join("precondition").join(&c.name), &name)
        .map_err(anyhow::Error::from)
        .and_then(|bundle| {
            let _log = console::capture(&bundle, verbose)?;
            subcommand::io::measure(&args, Some(&bundle), stop)
        })
        .with_context(|| format!("preconditioning {}", c.name))?;
    if matches!(ran.ending, Ending::CheckFailed) {
        // Its writes failed (said in its log): the runs after it would measure storage that
        // is neither preconditioned nor sound.
        bail!("preconditioning {} failed: its writes did not all complete", c.name);
    }
    Ok(())
}

/// A run's shards on a cluster engine, and whether their setup preconditions first.
pub struct OnCluster<'a> {
    pub cluster: &'a Cluster,
    pub precondition: bool,
}

/// A planned run as the library's evaluation step runs it: here, or `on` a cluster, where its
/// setup and measured run are its shards', and its bundle their merge.
struct Here<'a> {
    run: &'a PlannedRun,
    on: Option<OnCluster<'a>>,
}

impl Planned<anyhow::Error> for Here<'_> {
    fn prepare(&self, bundle: &Path, stop: &StopFlag) -> Result<()> {
        match &self.on {
            Some(on) => on.cluster.setup(&self.run.id, on.precondition, bundle, stop),
            None => self.run.args.prepare(stop),
        }
    }

    fn settles_itself(&self) -> bool {
        self.run.args.settles_itself()
    }

    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        match &self.on {
            Some(on) => on.cluster.measure(&self.run.id, self.run.args.expected(), bundle, stop),
            None => launch(self.run, bundle, stop),
        }
    }

    fn none_held(&self) -> Option<String> {
        self.run.search.as_ref().map(crate::search::none_held)
    }
}

/// The command around an evaluation's run: its terminal and log, the live view, the meter.
struct Command {
    verbose: bool,
}

impl Host<anyhow::Error> for Command {
    fn open_log(&self, bundle: &Path) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(console::capture(bundle, self.verbose)?))
    }

    fn phase(&self, phase: &str) {
        crate::live::set_phase(phase);
    }

    fn say(&self, line: &str) {
        console::say_line(line);
    }

    fn worded(&self, e: &anyhow::Error) -> String {
        in_plan(e)
    }

    fn power_reading(&self) -> Option<f64> {
        power::latest()
    }

    fn has_power(&self) -> bool {
        power::describe().is_some()
    }

    fn records_warning(&self, warning: &str) -> bool {
        !power::is_no_source_warning(warning)
    }
}

/// Settles, measures idle power, then runs into a new bundle under `runs/<id>/`, whose
/// output.log has everything the run says from the start (the terminal too with `verbose`):
/// the library's evaluation step (`run::planned`) with this command around it. `on` a
/// cluster, the run's setup and measured run are its shards', and its bundle their merge.
pub fn one(
    plan: &Plan,
    run: &PlannedRun,
    c: &Configuration,
    dir: &Path,
    verbose: bool,
    on: Option<OnCluster>,
    stop: &StopFlag,
) -> RunRecord {
    crate::live::set_configuration(&c.name);
    power::use_meter_of(&c.name);
    let device = resolve_device(&c.target).ok().flatten().map(|d| d.name);
    let place = planned::Place {
        root: dir,
        device: device.as_deref(),
        settle: plan.method.idle_settle_or_default(),
        idle_power: plan.method.idle_power_or_default(),
    };
    planned::run(pending(plan, run), &Here { run, on }, place, &Command { verbose }, stop)
}

/// The workload's run into `bundle`, named after the run; a search's steps each into a bundle
/// of its own inside it.
pub fn launch(run: &PlannedRun, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
    let mut args = run.args.clone();
    args.name(run.id.clone());
    match &run.search {
        Some(s) => crate::search::in_evaluation(&*args, s, bundle, stop),
        None => args.measure(bundle, stop),
    }
}
