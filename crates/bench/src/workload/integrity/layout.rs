//! The workload's files in its target directory and the manifest that says they are
//! storbench's: a data file (id 0), a log file (id 1), the journal of acknowledged writes, and
//! `storbench-integrity.json` (sizes, seed, run id, whether the last run ended cleanly). The
//! manifest is written first and removed last, so a set of files without one is not ours.
//!
//! On a block device the data and the log are regions of the device (the data from byte 0 up
//! to its largest size, the log after it), and the journal and the manifest go in a directory
//! of their own, apart from the data.

use std::path::{Path, PathBuf};

use super::audit::Region;
use super::page::PAGE;

pub const DATA_FILE: &str = "storbench-integrity.mdf";
pub const LOG_FILE: &str = "storbench-integrity.ldf";
pub const JOURNAL_FILE: &str = "storbench-integrity.journal";
pub const MANIFEST_FILE: &str = "storbench-integrity.json";
pub const DATA_ID: u16 = 0;
pub const LOG_ID: u16 = 1;

/// The sizes of the files, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sizes {
    pub data_pages: u64,
    pub data_max_pages: u64,
    pub growth_pages: u64,
    pub log_pages: u64,
}

impl Sizes {
    /// Sizes from bytes, each rounded down to whole pages.
    pub fn from_bytes(data: u64, data_max: u64, growth: u64, log: u64) -> Sizes {
        let pages = |b: u64| b / PAGE as u64;
        Sizes {
            data_pages: pages(data),
            data_max_pages: pages(data_max),
            growth_pages: pages(growth),
            log_pages: pages(log),
        }
    }

    /// What is wrong with these sizes, worded with `name` for each option.
    pub fn problem(&self) -> Option<String> {
        let mb = |pages: u64| pages * PAGE as u64 / 1_000_000;
        if self.data_pages < 64 {
            Some(format!(
                "the data file must be at least 64 pages (512 KiB); it is {} pages",
                self.data_pages
            ))
        } else if self.log_pages < 16 {
            Some(format!("the log file must be at least 16 pages (128 KiB); it is {} pages", self.log_pages))
        } else if self.data_max_pages < self.data_pages {
            Some(format!(
                "the data file's maximum ({} MB) is below its initial size ({} MB)",
                mb(self.data_max_pages),
                mb(self.data_pages)
            ))
        } else if self.growth_pages == 0 && self.data_max_pages > self.data_pages {
            Some("a growth of zero can never take the data file to its maximum".to_string())
        } else if self.data_max_pages > self.data_pages
            && self.growth_pages > self.data_max_pages - self.data_pages
        {
            Some(format!(
                "the growth ({} MB) is larger than the room between initial size and maximum ({} MB)",
                mb(self.growth_pages),
                mb(self.data_max_pages - self.data_pages)
            ))
        } else {
            None
        }
    }

    /// Bytes the files take at most (the journal aside).
    pub fn max_bytes(&self) -> u64 {
        (self.data_max_pages + self.log_pages) * PAGE as u64
    }
}

/// `storbench-integrity.json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub run_id: u64,
    pub seed: u64,
    pub page_size: u32,
    pub sizes: Sizes,
    /// The data file's size when the manifest was last written, in pages.
    pub data_pages_now: u64,
    /// False while a run writes (and after a run that was killed).
    pub clean: bool,
    /// The block device holding the data and the log, when they are not files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<PathBuf>,
    /// The data file, the log file and the journal by device and inode, as the run made them:
    /// what storbench may remove (a file put at one of those names later is not theirs). Empty
    /// in earlier manifests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<crate::files::FileId>,
}

/// The workload's files in `dir`, or its regions of `device` with the journal and the
/// manifest in `dir`.
#[derive(Debug, Clone)]
pub struct Layout {
    pub dir: PathBuf,
    pub device: Option<PathBuf>,
}

impl Layout {
    pub fn new(dir: &Path) -> Layout {
        Layout { dir: dir.to_path_buf(), device: None }
    }

    /// The data and the log on `device`, the journal and the manifest in `dir`.
    pub fn on_device(dir: &Path, device: &Path) -> Layout {
        Layout { dir: dir.to_path_buf(), device: Some(device.to_path_buf()) }
    }

    pub fn data(&self) -> PathBuf {
        self.device.clone().unwrap_or_else(|| self.dir.join(DATA_FILE))
    }

    pub fn log(&self) -> PathBuf {
        self.device.clone().unwrap_or_else(|| self.dir.join(LOG_FILE))
    }

    /// Where the log's page 0 lies: 0 in its own file, after the data's largest size on a
    /// device.
    pub fn log_base(&self, sizes: &Sizes) -> u64 {
        if self.device.is_some() { sizes.data_max_pages.saturating_mul(PAGE as u64) } else { 0 }
    }

    pub fn journal(&self) -> PathBuf {
        self.dir.join(JOURNAL_FILE)
    }

    pub fn manifest(&self) -> PathBuf {
        self.dir.join(MANIFEST_FILE)
    }

    /// The data and the log as the audit reads them: whole files, or on a device the data
    /// region at its largest (pages past the data's current end hold nothing acknowledged)
    /// and the log region.
    pub fn regions(&self, sizes: &Sizes) -> [Region; 2] {
        match &self.device {
            None => [Region::file(DATA_ID, &self.data()), Region::file(LOG_ID, &self.log())],
            Some(dev) => [
                Region { id: DATA_ID, path: dev.clone(), base: 0, pages: Some(sizes.data_max_pages) },
                Region {
                    id: LOG_ID,
                    path: dev.clone(),
                    base: self.log_base(sizes),
                    pages: Some(sizes.log_pages),
                },
            ],
        }
    }

    /// The workload's files that are there now (on a device: the journal and the manifest),
    /// whatever they are: a dangling link or a FIFO at one of their names is something too, and
    /// not this run's.
    pub fn existing(&self) -> Vec<PathBuf> {
        self.own_files().into_iter().filter(|p| !matches!(crate::files::entry(p), Ok(None))).collect()
    }

    /// The manifest first, then the journal, then the data and the log files.
    fn own_files(&self) -> Vec<PathBuf> {
        let mut ours = vec![self.manifest(), self.journal()];
        if self.device.is_none() {
            ours.extend([self.data(), self.log()]);
        }
        ours
    }

    /// Reads the manifest (a regular file, no link followed).
    pub fn load(&self) -> Result<Manifest, String> {
        let path = self.manifest();
        let text = crate::files::input::read_own_text(&path, 1 << 20).map_err(|e| e.to_string())?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a storbench integrity manifest: {e}", path.display()))
    }

    /// Writes the manifest (atomically: a new file renamed over the old), with the identities
    /// of the files made so far.
    pub fn save(&self, manifest: &Manifest) -> crate::Result<()> {
        let path = self.manifest();
        let mut manifest = manifest.clone();
        manifest.files = self
            .own_files()
            .iter()
            .skip(1)
            .filter_map(|p| crate::files::entry(p).ok().flatten())
            .filter(|e| crate::files::is_own(e.id))
            .map(|e| e.id)
            .collect();
        let text = serde_json::to_string_pretty(&manifest).expect("a manifest serializes");
        crate::files::write_atomic(&path, text.as_bytes()).map_err(|e| crate::Error::Io {
            op: "writing",
            path,
            source: e.into(),
        })
    }

    /// Claims the files the manifest records as storbench's (made by another process: a
    /// crash cycle's writer, or a run whose files were kept), and the manifest itself.
    fn claim_recorded(&self) {
        let Ok(manifest) = self.load() else { return };
        crate::files::claim_at(&self.manifest());
        for path in self.own_files().iter().skip(1) {
            if let Ok(Some(e)) = crate::files::entry(path)
                && manifest.files.contains(&e.id)
            {
                crate::files::claim(e.id);
            }
        }
    }

    /// Removes the workload's files, the manifest last (a device is left as it is): only the
    /// ones this process made or the manifest records by device and inode.
    pub fn remove(&self) {
        self.claim_recorded();
        let mut files = self.own_files();
        files.rotate_left(1);
        for path in files {
            let _ = crate::files::remove_own(&path);
        }
    }
}
