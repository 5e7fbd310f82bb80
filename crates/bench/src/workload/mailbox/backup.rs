//! The database backup test: every database read from start to end at once, one sequential
//! stream each (as a streaming backup reads), every page's checksum checked on the way.
//! The figure is MB/s per database and in all.
//!
//! The readers are the workers of a run on the run driver (`finite`): an interval every
//! second, no warm-up, the measured phase ending when the last reader has read its database
//! (or a stop request). Each interval carries each database's reads, bytes,
//! pages and corruptions as counts, so the record holds the backup and its summary is built
//! from it; each database's own reading time and the first corruptions come with the outcome.

use super::finite::{self, Counter, Work};
use super::format::check_page;
use super::layout::{Manifest, open_direct};
use super::recorder::{Corruption, MAX_CORRUPTIONS_KEPT};
use crate::engine::{self, Dir, EngineKind, Request};
use crate::run::{Beside, Closed, Interval, IntervalData, Outcome, Parts, Progress, SeriesColumn, StopFlag};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;
use storbench_report::columns::backup as col;

/// Bytes per read and reads in flight per database.
pub const BACKUP_READ: u32 = 1024 * 1024;
const BACKUP_DEPTH: u32 = 2;

/// What one database's reader did over an interval (or the whole backup): counts only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackupTally {
    /// Reads that returned data.
    pub reads: u64,
    pub bytes: u64,
    /// Pages whose checksum was checked.
    pub pages: u64,
    /// Pages that failed their check, and reads that failed.
    pub corruptions: u64,
    /// Reads that failed (each is a corruption too).
    pub failed_reads: u64,
}

impl IntervalData for BackupTally {
    fn merge(&mut self, o: &Self) {
        self.reads += o.reads;
        self.bytes += o.bytes;
        self.pages += o.pages;
        self.corruptions += o.corruptions;
        self.failed_reads += o.failed_reads;
    }

    fn ops(&self) -> u64 {
        self.reads
    }
}

/// What only the backup has in its outcome: each database's reading time, from its first read
/// to its last, and the first corruptions.
pub type BackupDetail = finite::PerDatabase;

/// What a backup read: its measured phase (no warm-up) per database in `totals.parts`.
pub type BackupOutcome = Outcome<Parts<BackupTally>, BackupDetail>;

/// One second of a backup as the caller sees it; its row holds a column per database (up to
/// the columns there are).
pub type BackupInterval<'a> = Closed<'a, Parts<BackupTally>>;

/// Reads every database of `manifest` in parallel; `on_interval` gets each second as it ends,
/// on the calling thread.
pub fn backup(
    db_dir: &Path,
    manifest: &Manifest,
    engine_kind: EngineKind,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&BackupInterval),
) -> crate::Result<BackupOutcome> {
    let files = manifest.files(db_dir);
    let (page, databases) = (manifest.page_size, files.len());
    let read_one = move |i: usize, counts: &Reader, halted: &dyn Fn() -> bool| {
        read_database(&files[i].db, files[i].id, page, engine_kind, counts, halted)
    };
    let (driven, results) = finite::drive("backup", databases, sampler, stop, read_one, &mut |c| {
        on_interval(&with_databases(c, databases))
    });
    let mut detail = BackupDetail::default();
    for r in results {
        let t = r?;
        detail.add(t.seconds, t.first);
    }
    Ok(driven.with(detail))
}

/// `c` with the columns of the databases there are: the backup's own and one per database.
fn with_databases<'a>(
    c: &Closed<'a, Parts<BackupTally>>,
    databases: usize,
) -> Closed<'a, Parts<BackupTally>> {
    let mut row = c.row.clone();
    row.workload.truncate(1 + databases.min(col::DB_MB_PER_SEC.len()));
    Closed { row, interval: Interval { ..c.interval }, streams: c.streams }
}

/// One database's reader as the driver sees it: what it counted since the last interval.
#[derive(Default)]
struct Reader {
    reads: AtomicU64,
    bytes: AtomicU64,
    pages: AtomicU64,
    corruptions: AtomicU64,
    failed_reads: AtomicU64,
    in_flight: AtomicU64,
}

impl Counter for Reader {
    type Tally = BackupTally;
    const COLUMNS: &'static [&'static [SeriesColumn<Work<Self>>]] = &[COLUMNS];

    fn take(&self) -> BackupTally {
        BackupTally {
            reads: self.reads.swap(0, Relaxed),
            bytes: self.bytes.swap(0, Relaxed),
            pages: self.pages.swap(0, Relaxed),
            corruptions: self.corruptions.swap(0, Relaxed),
            failed_reads: self.failed_reads.swap(0, Relaxed),
        }
    }

    fn in_flight(&self) -> u64 {
        self.in_flight.load(Relaxed)
    }

    /// Stuck when no read returned data: every one failed, or none came back.
    fn progress(t: &BackupTally, outstanding: u64) -> Progress {
        Progress::of_requests(t.reads, [("failed reads", t.failed_reads)], outstanding)
    }
}

type Of<'a> = Interval<'a, Parts<BackupTally>>;

fn mb_per_sec(t: &BackupTally, i: &Of) -> Option<f64> {
    Some(t.bytes as f64 / 1e6 / i.span_s())
}

/// Database `n`'s MB/s (None where there is no such database).
fn db_mb_per_sec(n: usize, i: &Of) -> Option<f64> {
    i.data.parts.get(n).and_then(|t| mb_per_sec(t, i))
}

/// The backup's columns of `timeseries.csv`: MB/s in all, then per database (the rows keep
/// those of the databases there are).
const COLUMNS: &[SeriesColumn<Work<Reader>>] = &[
    SeriesColumn { column: col::MB_PER_SEC, value: |_, i| mb_per_sec(&i.data.total, i) },
    SeriesColumn { column: col::DB_MB_PER_SEC[0], value: |_, i| db_mb_per_sec(0, i) },
    SeriesColumn { column: col::DB_MB_PER_SEC[1], value: |_, i| db_mb_per_sec(1, i) },
    SeriesColumn { column: col::DB_MB_PER_SEC[2], value: |_, i| db_mb_per_sec(2, i) },
    SeriesColumn { column: col::DB_MB_PER_SEC[3], value: |_, i| db_mb_per_sec(3, i) },
    SeriesColumn { column: col::DB_MB_PER_SEC[4], value: |_, i| db_mb_per_sec(4, i) },
    SeriesColumn { column: col::DB_MB_PER_SEC[5], value: |_, i| db_mb_per_sec(5, i) },
    SeriesColumn { column: col::DB_MB_PER_SEC[6], value: |_, i| db_mb_per_sec(6, i) },
    SeriesColumn { column: col::DB_MB_PER_SEC[7], value: |_, i| db_mb_per_sec(7, i) },
];

/// What a reader keeps besides its counts.
#[derive(Default)]
struct ReadEnd {
    first: Vec<Corruption>,
    seconds: f64,
}

/// Reads database `id` at `path` from start to end, checking every page of `page` bytes,
/// counting into `counts`, until done or `halted`.
fn read_database(
    path: &Path,
    id: u32,
    page: u32,
    kind: EngineKind,
    counts: &Reader,
    halted: &dyn Fn() -> bool,
) -> crate::Result<ReadEnd> {
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
    let mut end = ReadEnd::default();
    let (mut next, mut in_flight) = (0u64, 0u32);
    let mut offsets = [0u64; BACKUP_DEPTH as usize];
    let mut free: Vec<u32> = (0..BACKUP_DEPTH).collect();
    let mut out = Vec::new();
    while (next < size && !halted()) || in_flight > 0 {
        while next < size && !halted() {
            let Some(slot) = free.pop() else { break };
            let len = u64::from(BACKUP_READ).min(size - next) as u32;
            offsets[slot as usize] = next;
            e.queue(Request { slot, file: 0, dir: Dir::Read, offset: next, len });
            next += u64::from(len);
            in_flight += 1;
        }
        counts.in_flight.store(u64::from(in_flight), Relaxed);
        out.clear();
        e.submit_and_reap(1, None, &mut out).map_err(setup)?;
        for c in &out {
            in_flight -= 1;
            free.push(c.slot);
            let at = offsets[c.slot as usize];
            if c.result <= 0 {
                counts.failed_reads.fetch_add(1, Relaxed);
                corrupt(
                    &mut end,
                    counts,
                    path,
                    at,
                    format!("read failed ({})", engine::error_kind(c.result)),
                );
                continue;
            }
            let buf = &e.buffer(c.slot)[..c.result as usize];
            for (i, p) in buf.chunks_exact(page as usize).enumerate() {
                let offset = at + (i * page as usize) as u64;
                counts.pages.fetch_add(1, Relaxed);
                if let Err(fault) = check_page(p, id, offset / u64::from(page)) {
                    corrupt(&mut end, counts, path, offset, fault.to_string());
                }
            }
            counts.bytes.fetch_add(c.result as u64, Relaxed);
            counts.reads.fetch_add(1, Relaxed);
        }
        counts.in_flight.store(u64::from(in_flight), Relaxed);
    }
    end.seconds = start.elapsed().as_secs_f64();
    Ok(end)
}

fn corrupt(end: &mut ReadEnd, counts: &Reader, path: &Path, offset: u64, what: String) {
    counts.corruptions.fetch_add(1, Relaxed);
    if end.first.len() < MAX_CORRUPTIONS_KEPT {
        end.first.push(Corruption { file: path.display().to_string(), offset, what });
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::created;
    use super::super::*;
    use super::*;
    use crate::testing::NoHost;

    #[test]
    fn a_backup_reads_every_page_of_every_database_and_names_a_corrupt_one() {
        let (dir, m) = created(Preset::V2013, 2, 64);
        let ps = u64::from(m.page_size);
        let mut rows = Vec::new();
        let out = backup(dir.path(), &m, EngineKind::IoUring, &mut NoHost, &StopFlag::new(), &mut |c| {
            rows.push(c.row.clone())
        })
        .unwrap();
        let bytes: Vec<u64> = out.totals.parts.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, vec![64 * ps, 64 * ps]);
        assert_eq!((out.totals.total.pages, out.totals.total.corruptions), (128, 0));
        assert!(out.complete && out.detail.seconds.len() == 2 && out.detail.seconds.iter().all(|&s| s > 0.0));
        // The last row ends where the last reader finished; a column per database.
        let last = rows.last().expect("a row");
        assert!(
            out.measured_s > 0.0 && (last.t_s - out.measured_s).abs() < 1e-9,
            "{} {}",
            last.t_s,
            out.measured_s
        );
        let names: Vec<&str> = last.workload.iter().map(|(c, _)| c.name).collect();
        assert_eq!(names, ["backup_mb_per_sec", "db1_mb_per_sec", "db2_mb_per_sec"]);
        if let [only] = &rows[..] {
            let mb = 128.0 * ps as f64 / 1e6 / out.measured_s;
            assert!((only.value(col::MB_PER_SEC).unwrap() - mb).abs() < 1e-6 * mb, "{mb}");
        }
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(dir.path().join("mailbox2.edb")).unwrap();
        f.write_all_at(b"x", 9 * ps + 100).unwrap();
        let out =
            backup(dir.path(), &m, EngineKind::Psync, &mut NoHost, &StopFlag::new(), &mut |_| {}).unwrap();
        assert_eq!((out.totals.total.corruptions, out.totals.parts[1].corruptions), (1, 1));
        assert_eq!(out.detail.first[0].offset, 9 * ps);
        let first = &out.detail.first[0];
        assert!(first.file.ends_with("mailbox2.edb") && first.what.contains("checksum"));
    }
}
