//! `storbench run PLAN --on ENGINE`: every run of an evaluation as shards on a cluster engine
//! (Slurm job steps, a Kubernetes Indexed Job), started together and merged into the run's
//! bundle, after which the evaluation goes on as usual (repetitions, medians, the report).
//!
//! A shard is `storbench run --resume DIR [PLAN] --shard-of RUN --shard env`: the evaluation's
//! own saved plan, so that every shard runs exactly the planned run, with `{shard}` in the plan
//! made its index (its own target directory, its own database). Each run takes two steps:
//! every shard's setup (`--setup-only`: preconditioning where the evaluation does it, the io
//! file's fill, the database's load), then the measured runs, all given one `--start-at` a few
//! seconds ahead. Each shard writes its bundle to `runs/<id>/shards/<index>/`; the run's own
//! bundle is their merge (`storbench merge`, with `shards.json`). The evaluation's directory
//! must be on storage every node sees, and storbench at the same path on every node.

use storbench_bench::cluster::{Step, kubernetes, slurm};

use crate::measure::{Measured, Ran};
use crate::plan::Plan;
use crate::plan::expand::PlannedRun;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;

/// The options of `--on`, of `storbench run`.
#[derive(Args, Debug, Clone, Default)]
pub struct ClusterArgs {
    /// Run every run of the evaluation as shards on a cluster engine, started together and
    /// merged into the run's bundle (as `storbench merge` does), the evaluation going on as
    /// usual: slurm (srun job steps: every shard's setup, then the measured runs at one start
    /// time; a shard's failure fails that run, not the evaluation) or kubernetes (an Indexed
    /// Job per run, applied with kubectl where a cluster answers, else written out with the
    /// commands to run). `{shard}` in the plan becomes each shard's index (1..N): give each
    /// its own target directory or database. The bundle directory must be on storage every
    /// node sees, and storbench at the same path on every node (or in --image).
    #[arg(long, value_name = "ENGINE")]
    pub on: Option<Engine>,

    /// Nodes per run (srun --nodes; on kubernetes, pods = nodes x tasks-per-node). Default: 1.
    #[arg(long, value_name = "N", requires = "on", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub nodes: Option<u32>,

    /// Shards on each node (srun --ntasks-per-node). Default: 1.
    #[arg(long, value_name = "M", requires = "on", value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub tasks_per_node: Option<u32>,

    /// The Slurm partition to run in (srun --partition). Default: the cluster's default.
    #[arg(long, value_name = "PARTITION", requires = "on", value_parser = storbench_bench::units::plain_text)]
    pub partition: Option<String>,

    /// How far ahead of the measured step's submission its shards start, all at one instant:
    /// time for the engine to start every shard's process (more for many nodes or a busy
    /// controller; on Kubernetes, for a pod to pull its image). A shard that starts later is
    /// refused and fails the run, saying so. From 1s to 1h. Default: 10s on slurm, 60s on
    /// kubernetes.
    #[arg(long, value_name = "DURATION", requires = "on", value_parser = parse_ahead)]
    pub start_ahead: Option<Duration>,

    /// The container image with storbench in it, for --on kubernetes (the repository's
    /// Dockerfile builds one).
    #[arg(long, value_name = "IMAGE", requires = "on", value_parser = storbench_bench::units::plain_text)]
    pub image: Option<String>,

    /// A shard's own: the run of the evaluation in --resume's directory this process runs as
    /// one shard of (with --shard and --start-at). Set by --on.
    #[arg(long, value_name = "RUN", hide = true, requires = "resume", conflicts_with = "on")]
    pub shard_of: Option<String>,

    /// A shard's own: only the run's setup (preconditioning, an io file's fill, a database's
    /// load), no measured run. Set by --on.
    #[arg(long, hide = true, requires = "shard_of")]
    pub setup_only: bool,

    /// A shard's own: with --setup-only, the run's configuration is preconditioned first (the
    /// evaluation's first io run on it).
    #[arg(long, hide = true, requires = "setup_only")]
    pub precondition_first: bool,

    /// A shard's own: its bundle goes to DIR/<index>/. Set by --on.
    #[arg(long, value_name = "DIR", hide = true, requires = "shard_of")]
    pub into: Option<PathBuf>,

    /// A shard's own: read by the shard gate before the command line is parsed.
    #[arg(long, value_name = "I/N", hide = true, requires = "shard_of", value_parser = crate::shard::parse_shard)]
    pub shard: Option<crate::shard::ShardArg>,

    /// A shard's own: read by the shard gate before the command line is parsed.
    #[arg(long, value_name = "TIME", hide = true, requires = "shard_of", value_parser = crate::shard::parse_start_at)]
    pub start_at: Option<jiff::Timestamp>,
}

/// The engines `--on` runs shards on.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Slurm,
    Kubernetes,
}

/// How far ahead of the measured step's submission its start time lies: time for the engine
/// to start every shard's process (srun starts a step in well under a second on an idle
/// cluster, a busy controller or many nodes take longer; a pod may first pull its image). A
/// shard that starts after it is refused (its start time has passed) and fails the run.
const SLURM_AHEAD: Duration = Duration::from_secs(10);
const KUBERNETES_AHEAD: Duration = Duration::from_secs(60);

/// `--start-ahead`: a duration from 1 s to an hour.
fn parse_ahead(text: &str) -> Result<Duration, String> {
    let d = text.parse::<storbench_bench::units::Seconds>()?.0;
    if !(Duration::from_secs(1)..=Duration::from_secs(3600)).contains(&d) {
        return Err(format!(
            "'{text}' is not from 1s to 1h; give how long the engine needs to start every shard, e.g. 10s"
        ));
    }
    Ok(d)
}

/// What a setup step may take at most: a large database's load.
const SETUP_LIMIT: Duration = Duration::from_secs(24 * 3600);

/// How much longer than its planned length a measured step may take before it is ended: the
/// start time, the workload's own stop and the bundle's writing.
const MEASURE_SLACK: Duration = Duration::from_secs(600);

/// An evaluation's engine, checked: how it runs a run's shards.
pub struct Cluster {
    engine: Runner,
    /// What the shards must see where this host sees it: the evaluation's directory and each
    /// configuration's place (a Kubernetes pod's volumes).
    /// How far ahead of its submission a measured step starts.
    ahead: Duration,
    places: Vec<PathBuf>,
    /// How each shard starts storbench: this executable, the evaluation's directory and the
    /// plan file given (a plan with passwords is read from it, never from the saved copy).
    exe: PathBuf,
    dir: PathBuf,
    plan: Option<PathBuf>,
}

enum Runner {
    Slurm(slurm::Slurm),
    Kubernetes(kubernetes::Kubernetes),
}

impl ClusterSetup {
    /// The engine `args` ask for, checked before anything runs: the engine's tools are there
    /// and its options fit it. None without `--on`.
    pub fn of(args: &ClusterArgs, plan: Option<&Path>) -> Result<Option<ClusterSetup>> {
        let Some(engine) = args.on else { return Ok(None) };
        let nodes = args.nodes.unwrap_or(1);
        let per_node = args.tasks_per_node.unwrap_or(1);
        let ahead = args.start_ahead.unwrap_or(match engine {
            Engine::Slurm => SLURM_AHEAD,
            Engine::Kubernetes => KUBERNETES_AHEAD,
        });
        let engine = match engine {
            Engine::Slurm => {
                if args.image.is_some() {
                    bail!("--image is for --on kubernetes; Slurm runs storbench from its path on every node");
                }
                Runner::Slurm(slurm::Slurm::check(nodes, per_node, args.partition.clone())?)
            }
            Engine::Kubernetes => {
                if args.partition.is_some() {
                    bail!("--partition is Slurm's; leave it out with --on kubernetes");
                }
                let Some(image) = args.image.clone() else {
                    bail!(
                        "--on kubernetes needs --image IMAGE, a container image with storbench in it \
                         (the repository's Dockerfile builds one)"
                    );
                };
                Runner::Kubernetes(kubernetes::Kubernetes::new(image, nodes * per_node))
            }
        };
        let exe = std::env::current_exe().context("finding storbench's own path for the shards")?;
        let plan = plan.map(storbench_bench::files::resolve).transpose()?;
        Ok(Some(ClusterSetup { engine, ahead, exe, plan }))
    }

    /// What the shards must see of this host, checked before anything is made: each
    /// configuration's own target and log target (a directory or a device) as every shard
    /// names it (`{shard}` made each shard's index in the plan's text `plan_text`), never a
    /// parent of one. Kubernetes mounts them into every pod, so `/` and the system's own
    /// directories are refused, naming the configuration and what to do.
    pub fn places(&self, plan: &Plan, plan_text: &str) -> Result<Vec<PathBuf>> {
        let shards = match &self.engine {
            Runner::Kubernetes(k) => k.shards(),
            Runner::Slurm(_) => return Ok(Vec::new()),
        };
        // The plan as written: another shard's place need not exist on this host (it is on
        // the node that shard runs on), so it is read as text, not checked as a target.
        let written: toml::Value = toml::from_str(plan_text).context("reading the plan's configurations")?;
        let configurations = written.get("configuration").and_then(toml::Value::as_array);
        let mut places = Vec::new();
        for (c, raw) in plan.configurations.iter().zip(configurations.into_iter().flatten()) {
            for key in ["target", "log_target"] {
                let Some(text) = raw.get(key).and_then(toml::Value::as_str) else { continue };
                for shard in 1..=shards {
                    let place = std::path::absolute(text.replace("{shard}", &shard.to_string()))?;
                    mountable(&c.name, &place)?;
                    places.push(place);
                }
            }
        }
        Ok(places)
    }

    /// The engine for the evaluation in `dir`, whose plan has the text `plan_text`, its
    /// shards seeing `places` (from [`ClusterSetup::places`]) and `dir`: the shards read the
    /// plan's copy saved there, or where that has its passwords hidden, the plan file given.
    pub fn into_cluster(self, dir: &Path, plan_text: &str, places: Vec<PathBuf>) -> Cluster {
        let hidden = storbench_bench::secret::redact(plan_text) != plan_text;
        let given = self.plan.filter(|_| hidden);
        let mut wanted: Vec<PathBuf> = Vec::new();
        for place in std::iter::once(dir.to_path_buf()).chain(places) {
            // One volume for a place and all under it (a place is never widened to a parent).
            if !wanted.iter().any(|p| place.starts_with(p)) {
                wanted.retain(|p| !p.starts_with(&place));
                wanted.push(place);
            }
        }
        Cluster {
            engine: self.engine,
            ahead: self.ahead,
            places: wanted,
            exe: self.exe,
            dir: dir.to_path_buf(),
            plan: given,
        }
    }
}

/// Directories of the system itself, never mounted into a pod (nor `/`).
const SYSTEM_DIRS: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/root", "/run", "/sbin", "/sys",
    "/usr", "/var",
];

/// Refuses a configuration's place that a pod must not be given: `/` or a system directory.
fn mountable(configuration: &str, place: &Path) -> Result<()> {
    let normal: PathBuf = place.components().collect();
    let system = normal == Path::new("/") || SYSTEM_DIRS.iter().any(|d| normal == Path::new(d));
    if system {
        bail!(
            "configuration {configuration}: its target {} would be mounted read-write into every \
             shard's pod, and that is the system's own directory; give a directory of its own for \
             the storage under test (such as /mnt/ssd/storbench)",
            place.display()
        );
    }
    Ok(())
}

impl Cluster {
    /// Before the first run: an engine that cannot run here says so. Kubernetes without kubectl
    /// or a cluster that answers it writes every run's Jobs into the evaluation's directory
    /// and stops with what to run, the evaluation left to resume.
    pub fn ready(&self, runs: &[PlannedRun]) -> Result<()> {
        let Runner::Kubernetes(k) = &self.engine else { return Ok(()) };
        if kubernetes::Kubernetes::reachable() {
            return Ok(());
        }
        for run in runs {
            let into = self.dir.join("runs").join(&run.id);
            storbench_bench::files::create_dirs(&shards_dir(&into))?;
            for (step, more) in [("setup", &["--setup-only"][..]), ("run", &[][..])] {
                let argv = self.argv(&run.id, &into, more);
                let step_of = Step { run_id: &run.id, shards: self.shards(), argv, time_limit: SETUP_LIMIT };
                k.manifest(&step_of, &self.dir, step, &self.places)?;
            }
        }
        let dir = self.dir.display();
        bail!(
            "no Kubernetes cluster answers here (kubectl is missing, or `kubectl version` cannot reach \
             one): wrote the Jobs of the {} run(s) to {dir}/{}/, each run's -setup Job then its -run Job. \
             On a host whose kubectl reaches the cluster, run them with `storbench run --resume {dir} \
             --on kubernetes --image IMAGE`; or apply them yourself in order (kubectl apply -f FILE, \
             then kubectl wait --for=condition=complete job/NAME) and merge each run's shards with \
             `storbench merge {dir}/runs/RUN/shards/* --out {dir}/runs/RUN/merged`",
            runs.len(),
            kubernetes::MANIFESTS
        )
    }

    /// How many shards each run has.
    pub fn shards(&self) -> u32 {
        match &self.engine {
            Runner::Slurm(s) => s.shards(),
            Runner::Kubernetes(k) => k.shards(),
        }
    }

    /// The run `run_id`'s shards' setup (`precondition`: the configuration's preconditioning
    /// first), every shard's done before this returns. A shard that fails fails the run.
    pub fn setup(&self, run_id: &str, precondition: bool, bundle: &Path, stop: &StopFlag) -> Result<()> {
        // Made here, once: the shards, started together, each make only their own directory in it.
        storbench_bench::files::create_dirs(&shards_dir(bundle))?;
        let mut argv = self.argv(run_id, bundle, &["--setup-only"]);
        if precondition {
            argv.push("--precondition-first".into());
        }
        let step = Step { run_id, shards: self.shards(), argv, time_limit: SETUP_LIMIT };
        self.run_step(&step, "setup", stop)
    }

    /// The run `run_id`'s measured runs, started together a few seconds from now, merged into
    /// `bundle`. A shard that fails fails the run, with its error; the others' figures are
    /// merged into the bundle all the same.
    pub fn measure(&self, run_id: &str, expected: Duration, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        let at = jiff::Timestamp::now() + self.ahead;
        let start_at = at.to_string();
        let argv = self.argv(run_id, bundle, &["--start-at", &start_at]);
        let step = Step { run_id, shards: self.shards(), argv, time_limit: expected + MEASURE_SLACK };
        let ran = self.run_step(&step, "measured run", stop);
        let merged = collect(&shards_dir(bundle), self.shards(), bundle);
        let ending = if stop.is_stopped() { Ending::Interrupted } else { Ending::Ok };
        match (ran, merged) {
            (Ok(()), Ok(measured)) => Ok(Ran { ending, measured: Some(measured) }),
            (Err(e), _) | (Ok(()), Err(e)) => Err(e),
        }
    }

    fn run_step(&self, step: &Step, what: &str, stop: &StopFlag) -> Result<()> {
        let ran = match &self.engine {
            Runner::Slurm(s) => s.run(step, &crate::console::log_only, stop),
            Runner::Kubernetes(k) => k.run(step, &self.dir, &self.places, stop),
        };
        ran.with_context(|| format!("the shards' {what}"))
    }

    /// A shard's command line: this storbench, resuming the evaluation as one shard of the run.
    fn argv(&self, run_id: &str, bundle: &Path, more: &[&str]) -> Vec<String> {
        let into = shards_dir(bundle);
        let mut argv = vec![self.exe.display().to_string(), "run".into()];
        argv.extend(["--resume".into(), self.dir.display().to_string()]);
        argv.extend(self.plan.iter().map(|p| p.display().to_string()));
        argv.extend(["--shard-of".into(), run_id.into(), "--into".into(), into.display().to_string()]);
        argv.extend(more.iter().map(|s| s.to_string()));
        argv
    }
}

/// `--on` checked, before the evaluation's directory exists.
pub struct ClusterSetup {
    engine: Runner,
    ahead: Duration,
    exe: PathBuf,
    plan: Option<PathBuf>,
}

/// Where a run's shards write their bundles: `<run bundle>/shards/<index>/`.
pub fn shards_dir(run_bundle: &Path) -> PathBuf {
    run_bundle.join("shards")
}

/// The shards' bundles under `dir` merged into `bundle`; an error naming the shards that wrote
/// no bundle, after merging the others (their figures stay in the bundle for the report).
fn collect(dir: &Path, shards: u32, bundle: &Path) -> Result<Measured> {
    let found: Vec<(u32, PathBuf)> = (1..=shards)
        .map(|i| (i, dir.join(i.to_string())))
        .filter(|(_, b)| b.join(storbench_bench::run::record::RECORD_FILE).is_file())
        .collect();
    let missing: Vec<String> =
        (1..=shards).filter(|i| !found.iter().any(|(f, _)| f == i)).map(|i| i.to_string()).collect();
    let bundles: Vec<PathBuf> = found.into_iter().map(|(_, b)| b).collect();
    if bundles.is_empty() {
        bail!("no shard of {shards} wrote its bundle");
    }
    let (summary, _) = crate::subcommand::merge::merge_into(&bundles, bundle)?;
    if !missing.is_empty() {
        bail!("shard(s) {} of {shards} wrote no bundle; the merge has the others", missing.join(", "));
    }
    let series =
        storbench_bench::input::read_text(&bundle.join("timeseries.csv"), storbench_bench::input::DATA_LIMIT)
            .ok()
            .and_then(|t| storbench_report::render::Series::parse(&t).ok());
    let active_watts = series.and_then(|s| s.active_watts(&summary));
    Ok(Measured { summary, bundle: bundle.to_path_buf(), active_watts })
}
