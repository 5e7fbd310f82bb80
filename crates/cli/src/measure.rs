//! The command's side of a run into its bundle (the library's `run::measure`): where the bundle
//! goes, the edges of the run that belong to the command (a shard's start, the `--background`
//! streams, the terminal's log, the live endpoint, the power source), the warnings said once
//! and the bundle's path, and the sets of runs (io's profile set, wal's points).

use crate::args::OutputArgs;
use crate::{console, output, power};
use anyhow::Result;
use std::path::{Path, PathBuf};
use storbench_bench::background::{self, Background};
use storbench_bench::monitor::SystemSampler;
use storbench_bench::run::bundle::{self, Hooks};
use storbench_bench::run::measure as run;
use storbench_bench::run::record::StreamEntry;
use storbench_bench::run::{StopFlag, Streams};
use storbench_report::Summary;

pub use storbench_bench::run::Ran;
pub use storbench_bench::run::measure::{Finished, Measured, Recording, database_info, started_summary};

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
                root: crate::preflight::results_root(out.output_dir.as_deref())?,
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

/// What a run's bundle starts with: the library's start, and what the command adds.
pub struct Start<'a> {
    pub run: run::Start<'a>,
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

/// The command around a run: a shard's start, the `--background` streams, the terminal's log
/// in the bundle, the live endpoint and the power source.
struct Around<'a> {
    background: &'a [Background],
    dir: Option<&'a Path>,
    wait: bool,
}

impl Around<'_> {
    fn place<'p>(&'p self, targets: &'p [&'p Path], bundle: Option<&'p Path>) -> background::Place<'p> {
        background::Place {
            dir: self.dir,
            target: targets.first().copied(),
            bundle,
            null: targets.is_empty(),
            wait: self.wait,
            say: &crate::console::say_line,
        }
    }
}

impl run::Edges<anyhow::Error> for Around<'_> {
    fn shard_start(&self, stop: &StopFlag) -> Option<storbench_report::ShardInfo> {
        crate::shard::at_run_start(stop)
    }

    fn check_streams(&self, targets: &[&Path]) -> Result<()> {
        Ok(background::check(self.background, self.place(targets, None))?)
    }

    fn streams(
        &self,
        targets: &[&Path],
        bundle: &Path,
        stop: &StopFlag,
    ) -> Result<(Streams, Vec<StreamEntry>)> {
        Ok(background::build(self.background, self.place(targets, Some(bundle)), stop)?)
    }

    fn opened(&self, dir: &Path, summary: &Summary) -> Result<Box<dyn std::any::Any>> {
        let log = console::log_run(dir)?;
        crate::live::begin_run(&run_name(summary, dir), &summary.workload);
        Ok(Box::new(log))
    }

    fn hooks(&self) -> Hooks {
        Hooks { observe: crate::live::observe, warn: |w| alert!("warning: {w}") }
    }

    fn sampler(&self, targets: &[&Path], device: Option<&str>) -> SystemSampler {
        power::system_sampler(targets, device)
    }

    fn ended(&self, logs: Vec<String>) {
        crate::live::set_phase("done");
        for text in logs {
            console::log_only(&text);
        }
    }

    fn warnings(&self) -> Vec<String> {
        power::warning().into_iter().collect()
    }
}

/// Runs `work` into its bundle at `dir` (the library's `measure`), then says the run's
/// warnings (each once per command) and its bundle, and logs its table; a run that failed
/// although it measured is an error naming the bundle that keeps it.
pub fn measure(
    dir: &BundleDir,
    start: Start,
    stop: &StopFlag,
    work: impl FnOnce(&mut Recording, Summary) -> Result<Finished>,
) -> Result<Measured> {
    let around =
        Around { background: start.background, dir: start.background_dir, wait: start.background_wait };
    let ended = run::measure(|| dir.make(), start.run, &around, stop, work)?;
    // The run's log stays open for its table and its bundle's path.
    let _log = ended.opened;
    let m = ended.measured;
    if let Some(why) = &ended.failure {
        anyhow::bail!("{why}; the bundle in {} keeps what was measured", m.bundle.display());
    }
    output::say_warnings(&m.summary.warnings[..ended.to_say]);
    console::log_only(&(start.table)(&m.summary));
    say!("bundle: {}", m.bundle.display());
    Ok(m)
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
    let root = crate::preflight::results_root(out.output_dir.as_deref())?;
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
