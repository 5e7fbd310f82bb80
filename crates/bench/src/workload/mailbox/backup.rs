//! The database backup test: every database read from start to end at once, one sequential
//! stream each (as a streaming backup reads), every page's checksum checked on the way.
//! The figure is MB/s per database and in all.

use super::format::check_page;
use super::layout::{Manifest, open_direct};
use super::recorder::{Corruption, MAX_CORRUPTIONS_KEPT};
use crate::engine::{self, Dir, EngineKind, Request};
use crate::run::StopFlag;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Bytes per read and reads in flight per database.
pub const BACKUP_READ: u32 = 1024 * 1024;
const BACKUP_DEPTH: u32 = 2;

/// What a backup read.
#[derive(Debug, Clone, Default)]
pub struct BackupOutcome {
    /// Per database: bytes read and seconds taken.
    pub bytes: Vec<u64>,
    pub seconds: Vec<f64>,
    pub pages_checked: u64,
    pub corruptions: u64,
    pub first: Vec<Corruption>,
    /// Whole run (all databases in parallel).
    pub elapsed_s: f64,
    pub complete: bool,
}

impl BackupOutcome {
    pub fn mb_per_sec(&self) -> Vec<f64> {
        self.bytes.iter().zip(&self.seconds).map(|(b, s)| *b as f64 / 1e6 / s.max(1e-9)).collect()
    }

    pub fn total_mb_per_sec(&self) -> f64 {
        self.bytes.iter().sum::<u64>() as f64 / 1e6 / self.elapsed_s.max(1e-9)
    }
}

#[derive(Default)]
struct DbTally {
    pages: u64,
    corruptions: u64,
    first: Vec<Corruption>,
    seconds: f64,
}

/// Reads every database of `manifest` in parallel; `every_second` gets the bytes read so far
/// per database once a second, on the calling thread.
pub fn backup(
    db_dir: &Path,
    manifest: &Manifest,
    engine_kind: EngineKind,
    stop: &StopFlag,
    every_second: &mut dyn FnMut(&[u64]),
) -> crate::Result<BackupOutcome> {
    let files = manifest.files(db_dir);
    let done: Arc<Vec<AtomicU64>> = Arc::new(files.iter().map(|_| AtomicU64::new(0)).collect());
    let start = Instant::now();
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let done = done.clone();
                let page = manifest.page_size;
                scope.spawn(move || read_database(&f.db, f.id, page, engine_kind, &done[i], stop))
            })
            .collect();
        let mut next = start + Duration::from_secs(1);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
            if Instant::now() >= next {
                next += Duration::from_secs(1);
                every_second(&done.iter().map(|d| d.load(Relaxed)).collect::<Vec<_>>());
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| Err(crate::Error::InvalidJob("a backup thread panicked".into())))
            })
            .collect::<Vec<_>>()
    });
    let elapsed_s = start.elapsed().as_secs_f64();
    let mut out = BackupOutcome { elapsed_s, complete: !stop.is_stopped(), ..Default::default() };
    for (i, r) in results.into_iter().enumerate() {
        let t = r?;
        out.bytes.push(done[i].load(Relaxed));
        out.seconds.push(t.seconds);
        out.pages_checked += t.pages;
        out.corruptions += t.corruptions;
        let room = MAX_CORRUPTIONS_KEPT.saturating_sub(out.first.len());
        out.first.extend(t.first.into_iter().take(room));
    }
    Ok(out)
}

fn read_database(
    path: &Path,
    id: u32,
    page: u32,
    kind: EngineKind,
    done: &AtomicU64,
    stop: &StopFlag,
) -> crate::Result<DbTally> {
    let file = open_direct(path, false)?;
    let size = file
        .metadata()
        .map_err(|source| crate::Error::Io { op: "reading", path: path.to_path_buf(), source })?
        .len();
    let setup = |source| crate::Error::Setup { what: "reading a database", source };
    let mut e =
        engine::open_files(kind, &[&file], &[BACKUP_READ; BACKUP_DEPTH as usize]).map_err(setup)?.engine;
    e.start().map_err(setup)?;
    let start = Instant::now();
    let mut t = DbTally::default();
    let (mut next, mut in_flight) = (0u64, 0u32);
    let mut offsets = [0u64; BACKUP_DEPTH as usize];
    let mut free: Vec<u32> = (0..BACKUP_DEPTH).collect();
    let mut out = Vec::new();
    while (next < size && !stop.is_stopped()) || in_flight > 0 {
        while next < size && !stop.is_stopped() {
            let Some(slot) = free.pop() else { break };
            let len = u64::from(BACKUP_READ).min(size - next) as u32;
            offsets[slot as usize] = next;
            e.queue(Request { slot, file: 0, dir: Dir::Read, offset: next, len });
            next += u64::from(len);
            in_flight += 1;
        }
        out.clear();
        e.submit_and_reap(1, None, &mut out).map_err(setup)?;
        for c in &out {
            in_flight -= 1;
            free.push(c.slot);
            let at = offsets[c.slot as usize];
            if c.result <= 0 {
                record(&mut t, path, at, format!("read failed ({})", engine::error_kind(c.result)));
                continue;
            }
            let buf = &e.buffer(c.slot)[..c.result as usize];
            for (i, p) in buf.chunks_exact(page as usize).enumerate() {
                let offset = at + (i * page as usize) as u64;
                t.pages += 1;
                if let Err(fault) = check_page(p, id, offset / u64::from(page)) {
                    record(&mut t, path, offset, fault.to_string());
                }
            }
            done.fetch_add(c.result as u64, Relaxed);
        }
    }
    t.seconds = start.elapsed().as_secs_f64();
    Ok(t)
}

fn record(t: &mut DbTally, path: &Path, offset: u64, what: String) {
    t.corruptions += 1;
    if t.first.len() < MAX_CORRUPTIONS_KEPT {
        t.first.push(Corruption { file: path.display().to_string(), offset, what });
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::created;
    use super::super::*;
    use super::*;

    #[test]
    fn a_backup_reads_every_page_of_every_database_and_names_a_corrupt_one() {
        let (dir, m) = created(Preset::V2013, 2, 64);
        let ps = u64::from(m.page_size);
        let out = backup(dir.path(), &m, EngineKind::IoUring, &StopFlag::new(), &mut |_| {}).unwrap();
        assert_eq!(out.bytes, vec![64 * ps, 64 * ps]);
        assert_eq!((out.pages_checked, out.corruptions), (128, 0));
        assert!(out.mb_per_sec().iter().all(|&x| x > 0.0) && out.total_mb_per_sec() > 0.0);
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(dir.path().join("mailbox2.edb")).unwrap();
        f.write_all_at(b"x", 9 * ps + 100).unwrap();
        let out = backup(dir.path(), &m, EngineKind::Psync, &StopFlag::new(), &mut |_| {}).unwrap();
        assert_eq!(out.corruptions, 1);
        assert_eq!(out.first[0].offset, 9 * ps);
        assert!(out.first[0].file.ends_with("mailbox2.edb") && out.first[0].what.contains("checksum"));
    }
}
