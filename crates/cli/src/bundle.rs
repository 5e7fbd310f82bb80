//! A result bundle: one directory per run holding `summary.json`, `timeseries.csv` (a row per
//! second), `latency.hlog` (HDR histograms per second and for the measured phase) and
//! `disclosure.json` (the system under test: CPU, memory, every device layer under the
//! targets, mounts, kernel, distribution, and the database's version and settings).
//!
//! Everything is written as the run goes: the summary first with `complete: false`, each row
//! and histogram when its interval ends, the final summary at the end (atomically, by rename),
//! so an interrupted or killed run leaves what it measured.
//!
//! No password is written: every file that can hold user text (summaries, disclosures, the
//! evaluation's plan copy, method and evaluation) goes through `write_atomic`, which hides
//! secrets (`storbench_bench::secret`). The time series and histograms hold numbers only.

use anyhow::{Context, Result};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use storbench_bench::metrics::{HlogWriter, LatencyHistogram};
use storbench_report::{DatabaseInfo, Summary, export, series::SeriesRow};

pub struct Bundle {
    pub dir: PathBuf,
    csv: BufWriter<File>,
    csv_header: bool,
    hlog: HlogWriter<BufWriter<File>>,
}

/// A new directory under `parent` named `<stamp>-<name>`; never reuses an existing one.
pub fn new_dir(parent: &Path, stamp: &str, name: &str) -> Result<PathBuf> {
    fs::create_dir_all(parent)
        .with_context(|| format!("creating the results directory {}", parent.display()))?;
    let base = format!("{stamp}-{}", sanitize(name));
    for n in 1.. {
        let dir = if n == 1 { parent.join(&base) } else { parent.join(format!("{base}-{n}")) };
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
        }
    }
    unreachable!("the loop returns")
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

/// Writes `path`, its secrets hidden, through a temporary file beside it, so a reader never
/// sees half of it.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let text = storbench_bench::secret::redact(text);
    fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

impl Bundle {
    /// Opens the bundle's files in `dir` (which exists and is empty) and records the system
    /// under test, with the devices under `targets`.
    pub fn create(dir: PathBuf, start_epoch_s: f64, targets: &[&Path]) -> Result<Self> {
        Self::create_disclosing(dir, start_epoch_s, targets, DatabaseInfo::default())
    }

    /// `create` for a workload on a database, which `database` describes in the disclosure.
    pub fn create_disclosing(
        dir: PathBuf,
        start_epoch_s: f64,
        targets: &[&Path],
        database: DatabaseInfo,
    ) -> Result<Self> {
        let mut disclosure = storbench_bench::monitor::disclosure::gather(targets);
        disclosure.database = database;
        let text = serde_json::to_string_pretty(&disclosure).context("describing the system")? + "\n";
        write_atomic(&dir.join("disclosure.json"), &text)?;
        let open = |name: &str| -> Result<BufWriter<File>> {
            let path = dir.join(name);
            Ok(BufWriter::new(File::create(&path).with_context(|| format!("creating {}", path.display()))?))
        };
        let csv = open("timeseries.csv")?;
        let hlog = HlogWriter::new(open("latency.hlog")?, start_epoch_s).context("writing latency.hlog")?;
        Ok(Bundle { dir, csv, csv_header: false, hlog })
    }

    /// Writes `summary.json` through a temporary file, so a reader never sees half of it.
    pub fn write_summary(&self, summary: &Summary) -> Result<()> {
        write_atomic(&self.dir.join("summary.json"), &export::summary_json(summary))
    }

    /// Appends one interval: its CSV row and its histograms.
    pub fn interval(
        &mut self,
        row: &SeriesRow,
        start_s: f64,
        hists: &[(&str, &LatencyHistogram)],
    ) -> Result<()> {
        if !self.csv_header {
            self.csv.write_all(export::series_header(row).as_bytes())?;
            self.csv_header = true;
        }
        self.csv.write_all(export::series_line(row).as_bytes())?;
        self.csv.flush().context("writing timeseries.csv")?;
        for (tag, h) in hists {
            self.hlog.write(tag, start_s, row.t_s - start_s, h)?;
        }
        self.hlog.flush().context("writing latency.hlog")
    }

    /// The measured phase's histograms, tagged `<tag>-total`.
    pub fn totals(&mut self, start_s: f64, length_s: f64, hists: &[(&str, &LatencyHistogram)]) -> Result<()> {
        for (tag, h) in hists {
            self.hlog.write(&format!("{tag}-total"), start_s, length_s, h)?;
        }
        self.hlog.flush().context("writing latency.hlog")
    }
}
