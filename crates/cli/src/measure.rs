//! One run into its bundle, the same for every measuring command (io, oltp run, mailbox and
//! every one to come): the bundle directory and its `output.log`, the summary written as the
//! run starts, the system sampler, the per-second rows and histograms, the final summary with
//! the power warning, its warnings said once, and the summary and bundle path handed back.
//!
//! A workload brings only what differs: its started summary ([`Start`]), the call to the
//! library's run with an interval callback that writes into the [`Recording`], and its
//! finished summary ([`Finished`]).

use crate::args::OutputArgs;
use crate::background::{self, Background};
use crate::subcommand::Ending;
use crate::{console, output, power};
use anyhow::Result;
use std::path::{Path, PathBuf};
use storbench_bench::monitor::SystemSampler;
use storbench_bench::run::bundle::{self, Bundle, Hooks};
use storbench_bench::run::record::{self, End, Line};
use storbench_bench::run::{StopFlag, Streams, WithStreams};
use storbench_report::{DatabaseInfo, Summary};

/// What every workload's summary holds when its run starts: the schema, the tool and the host,
/// the workload's name for itself, its placeholder `results`, nothing measured yet. Each
/// workload sets its own name, seed, parameters, target and engine over it.
pub fn started_summary(workload: &str, started_at: &str, results: storbench_report::Results) -> Summary {
    use storbench_report::{CpuUsage, Phases, SCHEMA_VERSION, TargetInfo, Tool};
    Summary {
        schema_version: SCHEMA_VERSION,
        tool: Tool { name: "storbench".into(), version: env!("CARGO_PKG_VERSION").into() },
        workload: workload.into(),
        name: String::new(),
        complete: false,
        started_at: started_at.into(),
        ended_at: None,
        seed: 0,
        host: storbench_bench::monitor::host(),
        parameters: serde_json::Value::Null,
        target: TargetInfo::default(),
        engine: String::new(),
        phases: Phases::default(),
        results,
        cpu: CpuUsage::default(),
        warnings: Vec::new(),
        steady_state: None,
        background: Vec::new(),
        search: None,
        shard: None,
    }
}

/// Where a run's bundle goes.
pub enum BundleDir {
    /// A new directory `<time>-<name>` under `root`: a command's own run.
    New { root: PathBuf, name: String },
    /// A directory the caller made for it: a job of a profile set, a run of an evaluation.
    Given(PathBuf),
}

impl BundleDir {
    /// `given`, or else a new directory named after the run under --output-dir.
    pub fn choose(given: Option<&Path>, out: &OutputArgs, name: &str) -> Result<BundleDir> {
        Ok(match given {
            Some(dir) => BundleDir::Given(dir.to_path_buf()),
            None => BundleDir::New {
                root: crate::subcommand::results_root(out.output_dir.as_deref())?,
                name: name.into(),
            },
        })
    }

    fn make(&self) -> Result<PathBuf> {
        match self {
            BundleDir::New { root, name } => Ok(bundle::new_dir(root, name)?),
            BundleDir::Given(dir) => Ok(dir.clone()),
        }
    }
}

/// A run measured into its bundle.
pub struct Measured {
    /// The summary as written to `summary.json`.
    pub summary: Summary,
    /// The bundle directory.
    pub bundle: PathBuf,
    /// Average power over the seconds the results cover, from the run's readings.
    pub active_watts: Option<f64>,
}

/// How a measuring command's run ended: its exit status, and the run itself when it got as
/// far as measuring (an interrupt while preparing ends it before).
pub struct Ran {
    pub ending: Ending,
    pub measured: Option<Measured>,
}

/// What a run's bundle starts with.
pub struct Start<'a> {
    /// When the run starts: the time series and histograms count from here.
    pub at: jiff::Timestamp,
    /// The summary with no results yet (`complete: false`).
    pub summary: Summary,
    /// The paths whose devices `disclosure.json` describes and the sampler counts, each on its
    /// own (data and log, a database's data and WAL directories), with the rebuild activity
    /// of the md arrays and btrfs filesystems under them.
    pub targets: Vec<&'a Path>,
    /// The database the workload runs on, for the disclosure.
    pub database: DatabaseInfo,
    /// The block device the sampler reads every second where `targets` have none.
    pub device: Option<&'a str>,
    /// The run's result table, for its log.
    pub table: fn(&Summary) -> String,
    /// The streams to run beside the workload (`--background`).
    pub background: &'a [Background],
    /// Where their files go unless a stream names its own `dir`: None for a run with no
    /// directory of its own (a database server's), where a stream must name one.
    pub background_dir: Option<&'a Path>,
    /// The run's end waits for its background commands (`--background-wait`).
    pub background_wait: bool,
}

/// The open bundle and the sampler, for the workload's run and its interval callback.
pub struct Recording {
    pub bundle: Bundle,
    /// The host's sampler with the background streams, for the driver.
    pub sampler: WithStreams<SystemSampler>,
}

/// What a workload hands back once it ran.
pub struct Finished {
    /// Built by the workload's summary builder (`storbench_bench::run::record::summary`).
    pub summary: Summary,
    /// The record's end: what the summary was built from besides the intervals, with the
    /// warnings the workload added to the built summary (`added_warnings`). None where
    /// the figures are not recorded (no workload today).
    pub end: Option<End>,
    /// Warnings for the summary that the terminal shows elsewhere (under the result table).
    pub unsaid: Vec<String>,
    /// Why the run failed although it measured: the summary is written, then this is the error.
    pub failure: Option<String>,
}

impl Finished {
    pub fn new(summary: Summary) -> Finished {
        Finished { summary, end: None, unsaid: Vec::new(), failure: None }
    }
}

/// Each background stream's figures, with the spec it was given.
fn background_results(streams: &Streams, specs: &[Background]) -> Vec<storbench_report::BackgroundResult> {
    let results = streams.results().into_iter().zip(specs);
    results.map(|(r, b)| storbench_report::BackgroundResult { spec: b.text.clone(), ..r }).collect()
}

/// Runs `work` into its bundle at `dir`: the bundle opened with `start`'s summary, then
/// `work` (given the recording and that summary) runs the workload and finishes the summary,
/// which is written with the power warning. The warnings are said (each once per command),
/// the table and the bundle's path go to the run's log.
pub fn measure(
    dir: &BundleDir,
    start: Start,
    stop: &StopFlag,
    work: impl FnOnce(&mut Recording, Summary) -> Result<Finished>,
) -> Result<Measured> {
    let mut start = start;
    // A shard's setup is done: wait for the common start, then count the run from there.
    if let Some(shard) = crate::shard::at_run_start(stop) {
        start.at = jiff::Timestamp::now();
        start.summary.started_at = start.at.to_string();
        start.summary.shard = Some(shard);
    }
    let null = start.targets.is_empty();
    let rebuilding = rebuilding(&start.targets, stop);
    let place = background::Place {
        dir: start.background_dir,
        target: start.targets.first().copied(),
        bundle: None,
        null,
        wait: start.background_wait,
    };
    // Every stream checked before anything is made; then the bundle, where a capture writes.
    background::check(start.background, place)?;
    let dir = dir.make()?;
    let place = background::Place { bundle: Some(&dir), ..place };
    let (streams, entries) = background::build(start.background, place, stop)?;
    let _log = console::log_run(&dir)?;
    crate::live::begin_run(&run_name(&start.summary, &dir), &start.summary.workload);
    let epoch_s = start.at.as_millisecond() as f64 / 1e3;
    let hooks = Hooks { observe: crate::live::observe, warn: |w| alert!("warning: {w}") };
    let mut bundle = Bundle::create(dir.clone(), epoch_s, &start.targets, start.database, hooks)?;
    bundle.write_summary(&start.summary)?;
    bundle.record(
        &Line::Start(Box::new(record::Start {
            version: record::RECORD_VERSION,
            workload: start.summary.workload.clone(),
            epoch_ns: start.at.as_nanosecond(),
            summary: start.summary.clone(),
            streams: entries,
        })),
        None,
    );
    let sampler = WithStreams { host: power::system_sampler(&start.targets, start.device), streams };
    let mut recording = Recording { bundle, sampler };
    let done = work(&mut recording, start.summary);
    crate::live::set_phase("done");
    let done = done?;
    let mut summary = done.summary;
    summary.background = background_results(&recording.sampler.streams, start.background);
    for text in recording.sampler.streams.logs() {
        console::log_only(&text);
    }
    let first_added = summary.warnings.len();
    summary.warnings.extend(rebuilding);
    summary.warnings.extend(recording.bundle.rebuild_warnings());
    summary.warnings.extend(recording.sampler.streams.warnings().iter().cloned());
    summary.warnings.extend(power::warning());
    let said = summary.warnings.len();
    summary.warnings.extend(done.unsaid);
    if let Some(mut end) = done.end {
        end.added_warnings.extend_from_slice(&summary.warnings[first_added..]);
        end.streams = recording.sampler.streams.findings();
        recording.bundle.record(&Line::End(end), None);
    }
    recording.bundle.write_summary(&summary)?;
    if let Some(why) = done.failure {
        anyhow::bail!("{why}; the bundle in {} keeps what was measured", dir.display());
    }
    output::say_warnings(&summary.warnings[..said]);
    console::log_only(&(start.table)(&summary));
    say!("bundle: {}", dir.display());
    let active_watts = recording.bundle.active_watts(&summary);
    Ok(Measured { summary, bundle: dir, active_watts })
}

/// How a set of runs names each job: its bundle's name (`<n>-<name>`) and its line's title.
pub struct SetJob {
    pub name: String,
    pub title: String,
}

/// A set of runs (io's profile set, wal's points): a directory `<time>-<set>` under the results
/// root with a numbered bundle per job, each job's output in its bundle's output.log (the
/// terminal too with `verbose`), and a line per job with its result. `measure` runs job `i`
/// into the bundle directory given, under the label given. Stops after the job a stop
/// request interrupted.
pub fn run_set<J>(
    out: &OutputArgs,
    set: &str,
    jobs: &[(SetJob, J)],
    verbose: bool,
    stop: &StopFlag,
    mut measure: impl FnMut(&J, BundleDir, &str) -> Result<Measured>,
) -> Result<Vec<Summary>> {
    let root = crate::subcommand::results_root(out.output_dir.as_deref())?;
    let set_dir = bundle::new_dir(&root, set)?;
    power::announce(true);
    let mut summaries = Vec::new();
    for (i, (named, job)) in jobs.iter().enumerate() {
        let dir = set_dir.join(format!("{}-{}", i + 1, named.name));
        storbench_bench::files::create_dir(&dir)
            .map_err(anyhow::Error::from)
            .map_err(|e| e.context(format!("creating {}", dir.display())))?;
        let label = format!("[{}/{}] {}", i + 1, jobs.len(), named.title);
        let line = console::RunLine::start(&label);
        let measured =
            console::capture(&dir, verbose).and_then(|_log| measure(job, BundleDir::Given(dir), &label));
        line.end(&measured.as_ref().map_or_else(|_| "failed".into(), |m| output::result_text(&m.summary)));
        summaries.push(measured?.summary);
        if stop.is_stopped() {
            break;
        }
    }
    say!("results: {}", set_dir.display());
    Ok(summaries)
}

/// The run's name for its metrics' labels: the summary's, else its bundle directory's.
fn run_name(summary: &Summary, dir: &Path) -> String {
    let dir_name = || dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if summary.name.is_empty() { dir_name() } else { summary.name.clone() }
}

/// A warning for each rebuild, resync, scrub or degraded array under the run's `targets` as it
/// starts (md from /proc and sysfs, btrfs from its status commands): its figures are those of
/// storage doing other work, not of normal storage. What cannot be read is not a warning.
fn rebuilding(targets: &[&Path], stop: &StopFlag) -> Vec<String> {
    use storbench_bench::monitor::rebuild::{Watched, describe};
    let Ok(watched) = Watched::for_paths(targets) else { return Vec::new() };
    let (active, _unread) = watched.active_at_start(stop);
    active
        .iter()
        .map(|r| {
            format!(
                "{} was under way when the run started: these figures are of storage rebuilding, \
                 not of normal storage",
                describe(r)
            )
        })
        .collect()
}

/// A database's version and settings for `disclosure.json`; a server that will not tell them
/// is not a reason to skip the run, so that becomes a warning (the second value).
pub fn database_info(db: &dyn storbench_bench::db::Database) -> (DatabaseInfo, Option<String>) {
    match db.server_info() {
        Ok(info) => (info, None),
        Err(e) => {
            let kind = Some(db.kind().as_str().to_owned());
            let why = format!("{}'s version and settings are not in disclosure.json: {e}", db.describe());
            (DatabaseInfo { kind, ..DatabaseInfo::default() }, Some(why))
        }
    }
}
