//! A result bundle: one directory per run holding `summary.json`, `timeseries.csv` (a row per
//! second), `latency.hlog` (HDR histograms per second and for the measured phase),
//! `record.jsonl` (the exact record the summary is built from: per interval and stream its
//! counts, histogram tags and place on the run's wall-clock epoch; format in
//! `run::record`),
//! `disclosure.json` (the system under test: CPU, memory, every device layer under the
//! targets, mounts, kernel, distribution, and the database's version and settings) and
//! `output.log` (what the run said, written by the command line's console).
//!
//! Everything is written as the run goes: the summary first with `complete: false`, each row,
//! histogram and record line when its interval ends, the record's end, the final summary at the end (atomically, by rename),
//! so an interrupted or killed run leaves what it measured.
//!
//! A full output disk must not lose the results: a write that fails stops that file (noted,
//! not fatal), and the final summary, small and written first, has room kept for it by a
//! reserve file freed when nothing else fits. The run then ends with an error naming what
//! could not be written.
//!
//! No password is written: every file that can hold user text (summaries, disclosures, the
//! evaluation's plan copy, method and evaluation) goes through `write_atomic`, which hides
//! secrets (`crate::secret`). The time series and histograms hold numbers only.
//!
//! The library writes and says nothing itself: the caller's [`Hooks`] are told each row (the
//! live metrics endpoint) and each file that stopped being written, as the run goes.

use crate::files::{self, FileError, How};
use crate::metrics::{HlogWriter, LatencyHistogram};
use crate::run::Closed;
use crate::run::record::{self, Line, Tally};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use storbench_report::render::timeseries::Series;
use storbench_report::series::{Phase, SeriesRow};
use storbench_report::{DatabaseInfo, Summary, export};

/// Why a bundle could not be made or finished, with the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    // The file error is in the message, not a source: it is said once.
    #[error("creating the results directory {}: {cause}", path.display())]
    Directory { path: PathBuf, cause: FileError },
    #[error("writing {}: {cause}", path.display())]
    Write { path: PathBuf, cause: FileError },
    #[error("describing the system: {0}")]
    Describe(serde_json::Error),
    #[error("writing latency.hlog: {0}")]
    Hlog(std::io::Error),
    /// Files stopped being written; summary.json was written with the results.
    #[error(
        "the bundle in {} is incomplete: {lost}. summary.json holds the results; free space on that \
         filesystem or write the results to another directory",
        dir.display()
    )]
    Incomplete { dir: PathBuf, lost: String },
}

/// What a bundle tells its caller as the run goes.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// Each row of the series with the interval's tally, as it is written.
    pub observe: fn(&SeriesRow, &Tally<'_>),
    /// A warning in a sentence: a file that stopped being written, and why.
    pub warn: fn(&str),
}

pub struct Bundle {
    pub dir: PathBuf,
    csv: BufWriter<File>,
    csv_header: bool,
    hlog: HlogWriter<BufWriter<File>>,
    record: BufWriter<File>,
    /// Each row's end, phase and power reading, for the run's active power.
    power: Vec<(f64, Phase, Option<f64>)>,
    /// Each row's end and rebuild samples, for the warnings of a rebuild during the run.
    rebuild: Vec<(f64, Vec<storbench_report::RebuildSample>)>,
    /// The record's last interval line (a tail follows it).
    last_interval: Option<record::IntervalLine>,
    /// Files that stopped being written, with when and why.
    lost: Vec<Lost>,
    /// Room kept for the final summary on a filling disk.
    reserve: Option<PathBuf>,
    hooks: Hooks,
}

/// A bundle file that could not be written from some point on.
struct Lost {
    file: &'static str,
    at_s: Option<f64>,
    why: String,
}

/// Bytes kept free for the final summary (a summary is a few KiB; a mailbox run's, with a
/// row per database, some tens).
const RESERVE_BYTES: u64 = 256 << 10;
const RESERVE_NAME: &str = ".storbench-reserve";

/// A new directory under `parent` named `<time now>-<name>` (`20261122-101500-name`); never
/// reuses an existing one.
pub fn new_dir(parent: &Path, name: &str) -> Result<PathBuf, BundleError> {
    files::create_dirs(parent).map_err(|cause| BundleError::Directory { path: parent.into(), cause })?;
    let stamp = jiff::Zoned::now().strftime("%Y%m%d-%H%M%S");
    let base = format!("{stamp}-{}", sanitize(name));
    for n in 1.. {
        let dir = if n == 1 { parent.join(&base) } else { parent.join(format!("{base}-{n}")) };
        match files::create_dir(&dir) {
            Ok(_) => return Ok(dir),
            // Whatever holds the name, a link included, is left as it is: the next name.
            Err(files::FileError::Exists { .. }) => continue,
            Err(files::FileError::Link { path }) if path == dir => continue,
            Err(cause) => return Err(BundleError::Write { path: dir, cause }),
        }
    }
    unreachable!("the loop returns")
}

/// `text` as `write_atomic` writes it to `path`: its secrets hidden, a histogram log's
/// histograms kept as they are (`secret::redact_hlog`).
pub fn as_written(path: &Path, text: &str) -> String {
    match path.file_name() {
        Some(name) if name == record::HLOG_FILE => crate::secret::redact_hlog(text),
        _ => crate::secret::redact(text),
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

/// Writes `path`, its secrets hidden (`as_written`), through a temporary file beside it, so
/// a reader never sees half of it.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), BundleError> {
    let text = as_written(path, text);
    files::write_atomic(path, text.as_bytes())
        .map_err(|cause| BundleError::Write { path: path.into(), cause })
}

impl Bundle {
    /// Opens the bundle's files in `dir` (which exists) and records the system under test,
    /// with the devices under `targets` and, for a workload on a database, `database`;
    /// `hooks` are told what happens as the run goes.
    pub fn create(
        dir: PathBuf,
        start_epoch_s: f64,
        targets: &[&Path],
        database: DatabaseInfo,
        hooks: Hooks,
    ) -> Result<Self, BundleError> {
        let mut disclosure = crate::monitor::disclosure::gather(targets);
        disclosure.database = database;
        let text = serde_json::to_string_pretty(&disclosure).map_err(BundleError::Describe)? + "\n";
        write_atomic(&dir.join("disclosure.json"), &text)?;
        let open = |name: &str| -> Result<BufWriter<File>, BundleError> {
            let path = dir.join(name);
            let file =
                files::create(&path, How::WRITE).map_err(|cause| BundleError::Write { path, cause })?;
            Ok(BufWriter::new(file))
        };
        let csv = open("timeseries.csv")?;
        let hlog = HlogWriter::new(open(record::HLOG_FILE)?, start_epoch_s).map_err(BundleError::Hlog)?;
        let record = open(record::RECORD_FILE)?;
        let reserve = make_reserve(&dir);
        Ok(Bundle {
            dir,
            csv,
            csv_header: false,
            hlog,
            record,
            power: Vec::new(),
            rebuild: Vec::new(),
            last_interval: None,
            lost: Vec::new(),
            reserve,
            hooks,
        })
    }

    /// The bundle's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `summary.json` through a temporary file, so a reader never sees half of it,
    /// with a warning for each bundle file that could not be written. Where the disk is full,
    /// the reserve is given up for it. Fails, once the summary is written, when a file was lost.
    pub fn write_summary(&mut self, summary: &Summary) -> Result<(), BundleError> {
        let mut summary = summary.clone();
        summary.warnings.extend(self.lost.iter().map(Lost::describe));
        let text = export::summary_json(&summary);
        let path = self.dir.join("summary.json");
        if write_atomic(&path, &text).is_err() {
            self.free_reserve();
            write_atomic(&path, &text)?;
        }
        if self.lost.is_empty() {
            return Ok(());
        }
        let lost: Vec<String> = self.lost.iter().map(Lost::describe).collect();
        Err(BundleError::Incomplete { dir: self.dir.clone(), lost: lost.join("; ") })
    }

    /// Appends one interval of `stream` (the workload's) with the background streams' beside
    /// it: the CSV row, then each stream's histograms and record line.
    pub fn recorded<T>(&mut self, closed: &Closed<'_, T>, stream: &str, tally: &Tally<'_>) {
        let (row, i) = (&closed.row, &closed.interval);
        self.row(row);
        (self.hooks.observe)(row, tally);
        let line = record::interval_line(stream, i, tally, row.system.power_watts);
        self.record_interval(record::IntervalLine { rebuild: row.system.rebuild.clone(), ..line }, tally);
        for s in closed.streams {
            self.record_interval(
                record::interval_line(&s.stream, i, &s.tally, row.system.power_watts),
                &s.tally,
            );
        }
    }

    /// Appends `stream`'s tail: what its workers counted after its last interval (no row of
    /// the series).
    pub fn recorded_tail(&mut self, stream: &str, tally: &Tally<'_>) {
        if let Some(last) = self.last_interval.take() {
            self.record_interval(record::tail_line(stream, &last, tally), tally);
        }
    }

    /// The interval's histograms, then its record line.
    fn record_interval(&mut self, line: record::IntervalLine, tally: &Tally<'_>) {
        let (start_s, end_s) = (line.start_ns as f64 / 1e9, line.end_ns as f64 / 1e9);
        let hists: Vec<(&str, &LatencyHistogram)> =
            tally.hists.iter().map(|(t, h)| (t.as_str(), h.as_ref())).collect();
        self.histograms(&hists, |tag| tag.to_string(), start_s, end_s - start_s, Some(end_s));
        let line = Line::Interval(line);
        self.record(&line, Some(end_s));
        if let Line::Interval(line) = line {
            self.last_interval = Some(line);
        }
    }

    /// Appends a line to the record (its start, its end).
    pub fn record(&mut self, line: &Line, at_s: Option<f64>) {
        if self.is_lost(record::RECORD_FILE) {
            return;
        }
        let text = serde_json::to_string(line).expect("a record line serializes") + "\n";
        let written = self.record.write_all(text.as_bytes()).and_then(|()| self.record.flush());
        self.note(record::RECORD_FILE, at_s, written);
    }

    /// Average power over the seconds `summary`'s results cover, from the rows as they were
    /// written (None without a power source).
    pub fn active_watts(&self, summary: &Summary) -> Option<f64> {
        Series::of_power(&self.power).active_watts(summary)
    }

    /// A warning for each md array or btrfs filesystem under the targets that rebuilt,
    /// resynced, scrubbed, balanced or ran degraded during the run, from the rows written.
    pub fn rebuild_warnings(&self) -> Vec<String> {
        crate::monitor::rebuild::during(&self.rebuild)
    }

    fn row(&mut self, row: &SeriesRow) {
        self.power.push((row.t_s, row.phase, row.system.power_watts));
        if !row.system.rebuild.is_empty() {
            self.rebuild.push((row.t_s, row.system.rebuild.clone()));
        }
        if self.is_lost("timeseries.csv") {
            return;
        }
        let header = (!self.csv_header).then(|| export::series_header(row));
        let written = header
            .map_or(Ok(()), |h| self.csv.write_all(h.as_bytes()))
            .and_then(|()| self.csv.write_all(export::series_line(row).as_bytes()))
            .and_then(|()| self.csv.flush());
        self.csv_header = true;
        self.note("timeseries.csv", Some(row.t_s), written);
    }

    /// The measured phase's histograms, tagged `<tag>-total`.
    pub fn totals(&mut self, start_s: f64, length_s: f64, hists: &[(&str, &LatencyHistogram)]) {
        self.histograms(hists, |tag| format!("{tag}-total"), start_s, length_s, None);
    }

    fn histograms(
        &mut self,
        hists: &[(&str, &LatencyHistogram)],
        tag: impl Fn(&str) -> String,
        start_s: f64,
        length_s: f64,
        at_s: Option<f64>,
    ) {
        if self.is_lost("latency.hlog") {
            return;
        }
        let mut written = Ok(());
        for (name, h) in hists {
            written = written.and_then(|()| self.hlog.write(&tag(name), start_s, length_s, h));
        }
        let written = written.and_then(|()| self.hlog.flush());
        self.note("latency.hlog", at_s, written);
    }

    fn is_lost(&self, file: &str) -> bool {
        self.lost.iter().any(|l| l.file == file)
    }

    fn note(&mut self, file: &'static str, at_s: Option<f64>, written: std::io::Result<()>) {
        if let Err(e) = written {
            let why = e.to_string();
            (self.hooks.warn)(&format!("{file} in {} stopped being written: {why}", self.dir.display()));
            self.lost.push(Lost { file, at_s, why });
        }
    }

    fn free_reserve(&mut self) {
        if let Some(path) = self.reserve.take() {
            let _ = files::remove_own(&path);
        }
    }
}

impl Drop for Bundle {
    fn drop(&mut self) {
        self.free_reserve();
    }
}

impl Lost {
    fn describe(&self) -> String {
        match self.at_s {
            Some(t) => format!("{} stops at {t:.0} s ({})", self.file, self.why),
            None if self.file == record::RECORD_FILE => {
                format!("{} lacks its start or end ({})", self.file, self.why)
            }
            None => format!("{} lacks the measured phase's histograms ({})", self.file, self.why),
        }
    }
}

/// A file of `RESERVE_BYTES` really allocated in `dir` (None where it cannot be made).
fn make_reserve(dir: &Path) -> Option<PathBuf> {
    let path = dir.join(RESERVE_NAME);
    let file = files::create(&path, How::WRITE).ok()?;
    match rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, RESERVE_BYTES) {
        Ok(()) => Some(path),
        Err(_) => {
            let _ = files::remove_own(&path);
            None
        }
    }
}
