//! One run into its bundle, the same for every workload: the summary written as the run
//! starts, the record's start line, the host's sampler with the streams beside the workload,
//! the workload's own run (whose intervals go into the [`Recording`]), then the final summary
//! with every warning of the run, the record's end line and the run's active power.
//!
//! What belongs to the program around the run and not to the measurement (a shard's common
//! start, how the streams are built from what the user asked, the terminal's log, the live
//! endpoint, the power source) comes through [`Edges`]. A workload brings its started summary
//! ([`Start`]) and its run, which hands back a [`Finished`] summary.

use crate::monitor::SystemSampler;
use crate::run::bundle::{Bundle, BundleError, Hooks};
use crate::run::record::{self, End, Line, StreamEntry};
use crate::run::{StopFlag, Streams, WithStreams};
use std::path::{Path, PathBuf};
use storbench_report::{DatabaseInfo, ShardInfo, Summary};

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
        host: crate::monitor::host(),
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
}

/// The open bundle and the sampler, for the workload's run and its interval callback.
pub struct Recording {
    pub bundle: Bundle,
    /// The host's sampler with the background streams, for the driver.
    pub sampler: WithStreams<SystemSampler>,
}

/// What a workload hands back once it ran.
pub struct Finished {
    /// Built by the workload's summary builder (`record::summary`).
    pub summary: Summary,
    /// The record's end: what the summary was built from besides the intervals, with the
    /// warnings the workload added to the built summary (`added_warnings`). None where
    /// the figures are not recorded.
    pub end: Option<End>,
    /// Warnings for the summary that the terminal shows elsewhere (under the result table).
    pub unsaid: Vec<String>,
    /// Why the run failed although it measured: the summary is written all the same.
    pub failure: Option<String>,
}

impl Finished {
    pub fn new(summary: Summary) -> Finished {
        Finished { summary, end: None, unsaid: Vec::new(), failure: None }
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

/// A run as it ended: what it measured, with what the program around it says of it.
pub struct Ended {
    pub measured: Measured,
    /// How many of the summary's warnings are for the terminal to say; the rest it shows
    /// elsewhere ([`Finished::unsaid`]).
    pub to_say: usize,
    /// Why the run failed although it measured ([`Finished::failure`]).
    pub failure: Option<String>,
    /// What [`Edges::opened`] made for the run, for the program to keep while it says the
    /// run's end (the terminal's log in the bundle takes the result table).
    pub opened: Box<dyn std::any::Any>,
}

/// The program around a run, at the run's edges. `E` is the program's error.
pub trait Edges<E> {
    /// Before anything is made: a shard waits here for its common start, and says which it is.
    fn shard_start(&self, stop: &StopFlag) -> Option<ShardInfo>;
    /// Checks the streams to run beside the workload against what they name, writing nothing.
    fn check_streams(&self, targets: &[&Path]) -> Result<(), E>;
    /// Builds them once the bundle's directory exists (a capture writes into it).
    fn streams(
        &self,
        targets: &[&Path],
        bundle: &Path,
        stop: &StopFlag,
    ) -> Result<(Streams, Vec<StreamEntry>), E>;
    /// The bundle is made: what lives for the run (the terminal's log into the bundle).
    fn opened(&self, dir: &Path, summary: &Summary) -> Result<Box<dyn std::any::Any>, E>;
    /// What the bundle tells as the run goes.
    fn hooks(&self) -> Hooks;
    /// The host's sampler for `targets` (or `device`), with the power source where there is one.
    fn sampler(&self, targets: &[&Path], device: Option<&str>) -> SystemSampler;
    /// The workload's run is over (well or not); `logs` are the streams' own output.
    fn ended(&self, logs: Vec<String>);
    /// Warnings of the program's own for the summary (a power source that failed).
    fn warnings(&self) -> Vec<String>;
}

/// Runs `work` into the bundle at `dir` (which `dir` makes, after every check): the bundle
/// opened with `start`'s summary, then `work`, given the recording and that summary, runs the
/// workload and finishes the summary, which is written with every warning of the run.
pub fn measure<E: From<BundleError>>(
    dir: impl FnOnce() -> Result<PathBuf, E>,
    start: Start,
    edges: &dyn Edges<E>,
    stop: &StopFlag,
    work: impl FnOnce(&mut Recording, Summary) -> Result<Finished, E>,
) -> Result<Ended, E> {
    let mut start = start;
    if let Some(shard) = edges.shard_start(stop) {
        // A shard's setup is done: the run counts from the common start.
        start.at = jiff::Timestamp::now();
        start.summary.started_at = start.at.to_string();
        start.summary.shard = Some(shard);
    }
    let rebuilding = rebuilding(&start.targets, stop);
    // Every stream checked before anything is made; then the bundle, where a capture writes.
    edges.check_streams(&start.targets)?;
    let dir = dir()?;
    let (streams, entries) = edges.streams(&start.targets, &dir, stop)?;
    let opened = edges.opened(&dir, &start.summary)?;
    let epoch_s = start.at.as_millisecond() as f64 / 1e3;
    let mut bundle = Bundle::create(dir.clone(), epoch_s, &start.targets, start.database, edges.hooks())?;
    bundle.write_summary(&start.summary)?;
    bundle.record(
        &Line::Start(Box::new(record::Start {
            version: record::RECORD_VERSION,
            workload: start.summary.workload.clone(),
            epoch_ns: start.at.as_nanosecond(),
            summary: start.summary.clone(),
            streams: entries.clone(),
        })),
        None,
    );
    let sampler = WithStreams { host: edges.sampler(&start.targets, start.device), streams };
    let mut recording = Recording { bundle, sampler };
    let done = work(&mut recording, start.summary);
    edges.ended(recording.sampler.streams.logs());
    let done = done?;
    let mut summary = done.summary;
    summary.background = background_results(&recording.sampler.streams, &entries);
    let first_added = summary.warnings.len();
    summary.warnings.extend(rebuilding);
    summary.warnings.extend(recording.bundle.rebuild_warnings());
    summary.warnings.extend(recording.sampler.streams.warnings().iter().cloned());
    summary.warnings.extend(edges.warnings());
    let to_say = summary.warnings.len();
    summary.warnings.extend(done.unsaid);
    if let Some(mut end) = done.end {
        end.added_warnings.extend_from_slice(&summary.warnings[first_added..]);
        end.streams = recording.sampler.streams.findings();
        recording.bundle.record(&Line::End(end), None);
    }
    recording.bundle.write_summary(&summary)?;
    let active_watts = recording.bundle.active_watts(&summary);
    let measured = Measured { summary, bundle: dir, active_watts };
    Ok(Ended { measured, to_say, failure: done.failure, opened })
}

/// Each background stream's figures, with the spec it was given.
fn background_results(streams: &Streams, entries: &[StreamEntry]) -> Vec<storbench_report::BackgroundResult> {
    let results = streams.results().into_iter().zip(entries);
    results.map(|(r, e)| storbench_report::BackgroundResult { spec: e.spec.clone(), ..r }).collect()
}

/// A warning for each rebuild, resync, scrub or degraded array under the run's `targets` as it
/// starts (md from /proc and sysfs, btrfs from its status commands): its figures are those of
/// storage doing other work, not of normal storage. What cannot be read is not a warning.
fn rebuilding(targets: &[&Path], stop: &StopFlag) -> Vec<String> {
    use crate::monitor::rebuild::{Watched, describe};
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
pub fn database_info(db: &dyn crate::db::Database) -> (DatabaseInfo, Option<String>) {
    match db.server_info() {
        Ok(info) => (info, None),
        Err(e) => {
            let kind = Some(db.kind().as_str().to_owned());
            let why = format!("{}'s version and settings are not in disclosure.json: {e}", db.describe());
            (DatabaseInfo { kind, ..DatabaseInfo::default() }, Some(why))
        }
    }
}
