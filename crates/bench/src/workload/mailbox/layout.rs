//! Where the databases and logs live, the manifest that marks them as storbench's, sizing
//! rules, and creating the databases: every page written with its checksum, in large
//! sequential writes, all databases in parallel.
//!
//! Layout: `DB_DIR/storbench-mailbox.json` (the manifest), `DB_DIR/mailbox<N>.edb` (database
//! N, from 1), `LOG_DIR/log<N>/E<NN><generation:08X>.log` and, while it is being made, the
//! next file `LOG_DIR/log<N>/E<NN>tmp.log`. Nothing else in either directory is touched.

use super::format::{Filler, filler_stream, write_page};
use crate::engine::{self, Dir, EngineKind, Request};
use crate::files::input::{InputError, TEXT_LIMIT, read_own};
use crate::files::{self, FileId, How};
use crate::run::StopFlag;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub const MANIFEST: &str = "storbench-mailbox.json";
pub const MANIFEST_VERSION: u32 = 1;
/// Size of each creation write.
const CREATE_CHUNK: u32 = 1024 * 1024;
const CREATE_DEPTH: u32 = 4;

/// The files of database `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbFiles {
    pub id: u32,
    pub db: PathBuf,
    pub log_dir: PathBuf,
}

impl DbFiles {
    pub fn new(db_dir: &Path, log_dir: &Path, id: u32) -> Self {
        DbFiles { id, db: db_dir.join(format!("mailbox{id}.edb")), log_dir: log_dir.join(format!("log{id}")) }
    }

    pub fn log_path(&self, generation: u32) -> PathBuf {
        self.log_dir.join(format!("E{:02}{generation:08X}.log", self.id))
    }

    pub fn tmp_log_path(&self) -> PathBuf {
        self.log_dir.join(format!("E{:02}tmp.log", self.id))
    }

    /// Claims the log file `path` (of `generation`; 0 for the file being made) as storbench's
    /// when its first block of `block` bytes is storbench's log block of that generation, or the
    /// unused pattern a new log file starts with, or it is empty (made, not yet written, when a
    /// run was killed). False, and left alone, otherwise.
    pub fn claim_log_file(path: &Path, generation: u32, block: usize) -> bool {
        use std::io::Read;
        let Ok(file) = files::open(path, How::READ) else { return false };
        let mut first = vec![0u8; block];
        let read = (&file).take(block as u64).read(&mut first);
        let ours = match read {
            Ok(0) => file.metadata().is_ok_and(|m| m.len() == 0),
            Ok(n) if n == block => {
                super::format::check_log_block(&first, generation, 0).is_ok()
                    || super::format::check_log_block(&first, 0, 0).is_ok()
            }
            _ => false,
        };
        if ours && let Ok(id) = files::FileId::of(&file) {
            files::claim(id);
        }
        ours
    }

    /// Removes log file `path` of `generation` when it is storbench's (see [`Self::claim_log_file`]).
    pub fn remove_log_file(path: &Path, generation: u32, block: usize) -> std::io::Result<()> {
        if !files::is_own_at(path) && !Self::claim_log_file(path, generation, block) {
            return Err(files::FileError::NotOurs { path: path.to_path_buf() }.into());
        }
        files::remove_own(path).map(|_| ()).map_err(Into::into)
    }

    /// The log files present, by generation, oldest first.
    pub fn log_generations(&self) -> Vec<u32> {
        let prefix = format!("E{:02}", self.id);
        let mut gens: Vec<u32> = std::fs::read_dir(&self.log_dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let hex = name.strip_prefix(&prefix)?.strip_suffix(".log")?;
                (hex.len() == 8).then(|| u32::from_str_radix(hex, 16).ok()).flatten()
            })
            .collect();
        gens.sort_unstable();
        gens
    }
}

/// What a set of databases is: written when they are created, updated after every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub preset: String,
    pub page_size: u32,
    pub log_file_size: u32,
    /// Bytes per log block: the log's sector, the unit of every log write.
    #[serde(default = "default_log_block")]
    pub log_block: u32,
    /// Absolute (a relative one, written by earlier versions, is resolved by `load`).
    pub log_dir: PathBuf,
    pub seed: u64,
    /// Per database: pages now, and the next log generation.
    pub databases: Vec<DbState>,
    /// False while a run is using the databases (an interrupted run leaves it false only if
    /// it could not shut down).
    pub clean: bool,
}

/// A manifest that does not say (one written before the field existed): 512-byte blocks, the
/// sector size of most log volumes.
fn default_log_block() -> u32 {
    512
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbState {
    pub id: u32,
    pub initial_pages: u64,
    pub pages: u64,
    pub next_generation: u32,
    /// The oldest log generation kept: with a clean shutdown, every generation from it to
    /// `next_generation - 1` must be there; after a dirty end, the first log file of the run
    /// that ended so (where a replay starts). None in manifests of earlier versions and
    /// before the first run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_from: Option<u32>,
    /// The database file and its log directory by device and inode: what storbench may
    /// remove (a file put at either name later is not theirs). None in earlier manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<[FileId; 2]>,
}

impl DbState {
    /// Records the identities of `f`'s database file and log directory.
    fn record(&mut self, f: &DbFiles) {
        let id = |p: &Path| files::entry(p).ok().flatten().map(|e| e.id);
        if let (Some(db), Some(logs)) = (id(&f.db), id(&f.log_dir)) {
            self.files = Some([db, logs]);
        }
    }

    /// Claims `f`'s database file and log directory where they are the ones recorded.
    fn claim_recorded(&self, f: &DbFiles) {
        let Some(recorded) = self.files else { return };
        for (path, id) in [(&f.db, recorded[0]), (&f.log_dir, recorded[1])] {
            if files::entry(path).ok().flatten().is_some_and(|e| e.id == id) {
                files::claim(id);
            }
        }
    }
}

impl Manifest {
    pub fn path(db_dir: &Path) -> PathBuf {
        db_dir.join(MANIFEST)
    }

    /// The manifest in `db_dir`; None when there is none. It is read only as a regular file
    /// of at most 16 MiB, following no link. A manifest that reads as one is storbench's, and
    /// so are the files it records by device and inode ([`DbState::files`]).
    pub fn load(db_dir: &Path) -> Result<Option<Manifest>, InputError> {
        let path = Self::path(db_dir);
        let bytes = match read_own(&path, TEXT_LIMIT) {
            Ok(bytes) => bytes,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut m: Manifest = serde_json::from_slice(&bytes).map_err(|e| InputError::Io {
            op: "reading",
            path: path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        })?;
        m.log_dir = m.resolved_log_dir(db_dir);
        if let Ok(Some(e)) = files::entry(&path) {
            files::claim(e.id);
        }
        for (f, d) in m.files(db_dir).iter().zip(&m.databases) {
            d.claim_recorded(f);
        }
        Ok(Some(m))
    }

    /// Earlier versions wrote the log directory as given, relative to where they ran: it is
    /// taken from the manifest's directory or the nearest of its parents that holds the first
    /// database's log directory (the manifest's directory itself when none does, so that the
    /// missing logs are reported).
    fn resolved_log_dir(&self, db_dir: &Path) -> PathBuf {
        let Ok(home) = std::path::absolute(db_dir) else { return self.log_dir.clone() };
        if self.log_dir.is_absolute() {
            return self.log_dir.clone();
        }
        let id = self.databases.first().map_or(1, |d| d.id);
        home.ancestors()
            .map(|at| at.join(&self.log_dir))
            .find(|logs| DbFiles::new(&home, logs, id).log_dir.is_dir())
            .unwrap_or_else(|| home.join(&self.log_dir))
    }

    /// Writes the manifest atomically (a new file renamed over the old), with the log
    /// directory as an absolute path, so that it is found from anywhere, and the device and
    /// inode of each database file and log directory.
    pub fn save(&self, db_dir: &Path) -> std::io::Result<()> {
        let mut m = self.clone();
        m.log_dir = std::path::absolute(&self.log_dir)?;
        for (f, d) in self.files(db_dir).iter().zip(&mut m.databases) {
            d.record(f);
        }
        let bytes = serde_json::to_vec_pretty(&m).map_err(std::io::Error::other)?;
        Ok(files::write_atomic(&Self::path(db_dir), &bytes)?)
    }

    /// Records, per database, the log stream now on disk: its first generation (`log_from`)
    /// and the one after its last (`next_generation`).
    pub fn note_logs(&mut self, db_dir: &Path) {
        for (f, d) in self.files(db_dir).iter().zip(&mut self.databases) {
            let present = f.log_generations();
            d.log_from = present.first().copied();
            if let Some(last) = present.last() {
                d.next_generation = last.saturating_add(1);
            }
        }
    }

    pub fn files(&self, db_dir: &Path) -> Vec<DbFiles> {
        self.databases.iter().map(|d| DbFiles::new(db_dir, &self.log_dir, d.id)).collect()
    }
}

/// Opens `path` for O_DIRECT reads and writes; `create` makes a new file and refuses an
/// existing one (or a link, or a special file, at that name).
pub fn open_direct(path: &Path, create: bool) -> crate::Result<File> {
    let how = How::READ_WRITE.direct(true);
    let opened = if create { files::create(path, how) } else { files::open(path, how) };
    opened.map_err(|e| crate::Error::Io { op: "opening", path: path.to_path_buf(), source: e.into() })
}

/// Jetstress's sizing from capacity: mailboxes filling `pct` % of the filesystem's formatted
/// capacity, rounded down to a multiple of 50 (at least 50).
pub fn mailboxes_for_capacity(capacity: u64, pct: u32, mailbox_bytes: u64) -> u64 {
    let n = capacity as u128 * u128::from(pct) / 100 / u128::from(mailbox_bytes.max(1));
    ((n as u64) / 50 * 50).max(50)
}

/// Formatted capacity of the filesystem holding `dir`.
pub fn capacity(dir: &Path) -> std::io::Result<u64> {
    let st = rustix::fs::statvfs(dir)?;
    Ok(st.f_blocks.saturating_mul(st.f_frsize))
}

/// Creates database `files` of `pages` pages: every page written with its checksum, 1 MiB at
/// a time with four writes in flight; `done` counts bytes written. The file is new (an
/// existing one is refused).
pub fn create_database(
    db_files: &DbFiles,
    pages: u64,
    page_size: u32,
    seed: u64,
    engine_kind: EngineKind,
    done: &AtomicU64,
    stop: &StopFlag,
) -> crate::Result<()> {
    files::create_dirs(&db_files.log_dir).map_err(|e| crate::Error::Io {
        op: "creating",
        path: db_files.log_dir.clone(),
        source: e.into(),
    })?;
    let file = open_direct(&db_files.db, true)?;
    let setup = |source| crate::Error::Setup { what: "creating a database", source };
    let mut engine = engine::open_files(engine_kind, &[&file], &[CREATE_CHUNK; CREATE_DEPTH as usize])
        .map_err(setup)?
        .engine;
    engine.start().map_err(setup)?;
    let mut filler = Filler::new(seed, filler_stream(db_files.id, 0));
    let total = pages * u64::from(page_size);
    let (mut next, mut in_flight) = (0u64, 0u32);
    let mut free: Vec<u32> = (0..CREATE_DEPTH).collect();
    let mut out = Vec::new();
    while next < total || in_flight > 0 {
        while next < total && !stop.is_stopped() {
            let Some(slot) = free.pop() else { break };
            let len = u64::from(CREATE_CHUNK).min(total - next) as u32;
            let buf = &mut engine.buffer(slot)[..len as usize];
            for (i, page) in buf.chunks_exact_mut(page_size as usize).enumerate() {
                write_page(page, db_files.id, next / u64::from(page_size) + i as u64, 0, &mut filler);
            }
            engine.queue(Request { slot, file: 0, dir: Dir::Write, offset: next, len });
            next += u64::from(len);
            in_flight += 1;
        }
        if stop.is_stopped() && in_flight == 0 {
            break;
        }
        out.clear();
        engine.submit_and_reap(1, None, &mut out).map_err(setup)?;
        for c in &out {
            if c.result < 0 {
                let source = std::io::Error::from_raw_os_error(-c.result);
                return Err(crate::Error::Io { op: "writing", path: db_files.db.clone(), source });
            }
            done.fetch_add(c.result as u64, Relaxed);
            free.push(c.slot);
            in_flight -= 1;
        }
    }
    file.sync_all().map_err(|source| crate::Error::Io { op: "syncing", path: db_files.db.clone(), source })
}

/// Creates every database in parallel, reporting (bytes done, bytes total) about five times
/// a second; writes the manifest once all are complete. An interrupted creation leaves no
/// manifest, so the partial files are not taken for databases.
pub fn create_all(
    db_dir: &Path,
    manifest: &Manifest,
    engine_kind: EngineKind,
    stop: &StopFlag,
    progress: &mut dyn FnMut(u64, u64),
) -> crate::Result<()> {
    let files = manifest.files(db_dir);
    let total: u64 = manifest.databases.iter().map(|d| d.pages * u64::from(manifest.page_size)).sum();
    let done = Arc::new(AtomicU64::new(0));
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .iter()
            .zip(&manifest.databases)
            .map(|(f, d)| {
                let done = done.clone();
                scope.spawn(move || {
                    create_database(f, d.pages, manifest.page_size, manifest.seed, engine_kind, &done, stop)
                })
            })
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            progress(done.load(Relaxed), total);
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        progress(done.load(Relaxed), total);
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(crate::Error::InvalidJob("a creation thread panicked".into())))
            })
            .collect::<Vec<_>>()
    });
    results.into_iter().collect::<crate::Result<Vec<()>>>()?;
    if stop.is_stopped() {
        return Ok(());
    }
    manifest.save(db_dir).map_err(|source| crate::Error::Io {
        op: "writing",
        path: Manifest::path(db_dir),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_sizing_rounds_down_to_fifty_mailboxes() {
        // 003: 60 % of 96 GB in 250 MB mailboxes = 235.9, so 200.
        assert_eq!(mailboxes_for_capacity(96 << 30, 60, 250 << 20), 200);
        assert_eq!(mailboxes_for_capacity(1 << 30, 60, 250 << 20), 50, "never fewer than 50");
    }

    #[test]
    fn log_files_are_named_by_database_and_generation_and_listed_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let f = DbFiles::new(dir.path(), dir.path(), 3);
        std::fs::create_dir_all(&f.log_dir).unwrap();
        for g in [0x1A, 2, 0x10] {
            std::fs::write(f.log_path(g), b"").unwrap();
        }
        std::fs::write(f.tmp_log_path(), b"").unwrap();
        std::fs::write(f.log_dir.join("E04000001.log"), b"").unwrap();
        assert_eq!(f.log_path(2).file_name().unwrap(), "E0300000002.log");
        assert_eq!(f.log_generations(), vec![2, 0x10, 0x1A]);
    }
}
