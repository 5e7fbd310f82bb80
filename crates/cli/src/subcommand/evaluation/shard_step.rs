//! One shard of an evaluation's run on a cluster engine (`--shard-of RUN`, which `--on` gives
//! each shard with `--shard env`): the evaluation's saved plan, read as `--resume` reads it,
//! with `{shard}` made this shard's index; then either the run's setup (`--setup-only`) or its
//! measured run into `<--into>/<index>/`, started at `--start-at`.

use super::{execute, resume_from};
use crate::root::RunArgs;
use crate::{console, power};
use anyhow::{Context, Result, anyhow};
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;

pub fn run(a: &RunArgs, run_id: &str, stop: &StopFlag) -> Result<Ending> {
    let dir = a.resume.as_deref().context("--shard-of needs --resume DIR")?;
    let index = crate::shard::index().context("--shard-of needs --shard")?;
    let into = a.cluster.into.as_deref().context("--shard-of needs --into DIR")?;
    let start = resume_from(dir, a)?;
    let runs = crate::plan::expand::runs(&start.plan);
    let run = runs
        .iter()
        .find(|r| r.id == run_id)
        .ok_or_else(|| anyhow!("run {run_id} is not in the plan of {}", dir.display()))?;
    // The meters started with the plan's checks (`resume_from`).
    power::use_meter_of(&start.plan.configurations[run.configuration].name);
    if a.cluster.setup_only {
        if a.cluster.precondition_first {
            let own = into.join(format!("setup-{index}"));
            execute::precondition(&start.plan, run.configuration, &own, false, stop)?;
        }
        run.args.prepare(stop)?;
        return Ok(if stop.is_stopped() { Ending::InterruptedBeforeRun } else { Ending::Ok });
    }
    let bundle = into.join(index.to_string());
    // Its own directory only: `into` is the evaluation's, made before the shards started.
    storbench_bench::files::create_dir(&bundle)
        .with_context(|| format!("creating the shard's bundle {}", bundle.display()))?;
    let _log = console::capture(&bundle, false)?;
    Ok(execute::launch(run, &bundle, stop)?.ending)
}
