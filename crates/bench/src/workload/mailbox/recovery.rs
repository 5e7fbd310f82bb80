//! The soft recovery test's replay: after an unclean stop, each database's log files are read
//! in order and every change redone, as crash recovery does: each page a record names is read
//! (once while it stays cached) and written back with the change. The figure is seconds per
//! log file.
//!
//! Pages are read in batches of the pages one log file names that are not cached, many in
//! flight (the engine pre-reads for redo the same way); the cache holds `cache_max` worth of
//! pages and is written out, coalesced, whenever it fills, and at the end.
//!
//! The replayers are the workers of a run on the run driver (`finite`): an interval every
//! second, the measured phase ending when the last database is replayed (or a stop request).
//! Each interval carries each database's log files, records, pages read and written and
//! corruptions as counts, so the record holds the replay; each database's own replay time and
//! the first corruptions come with the outcome.

use super::finite::{self, Counter, Work};
use super::format::{
    Filler, LOG_BLOCK_HEADER, PageFault, check_log_block, check_page, filler_stream, write_page,
};
use super::instance::COALESCE_BYTES;
use super::layout::{DbFiles, Manifest, open_direct};
use super::log::{LogGeometry, records};
use super::recorder::{Corruption, MAX_CORRUPTIONS_KEPT};
use crate::engine::{self, Dir, EngineKind, IoEngine, Request};
use crate::run::{Beside, Closed, IntervalData, Outcome, Parts, Progress, SeriesColumn, StopFlag};
use std::collections::BTreeSet;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

const READ_DEPTH: u32 = 32;
const WRITE_DEPTH: u32 = 8;

/// What one database's replay did over an interval (or the whole replay): counts only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryTally {
    /// Log files replayed to their end (or to a damaged block, which ends the log).
    pub logs: u64,
    /// Log records redone.
    pub records: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    /// Damaged log blocks, pages that failed their check and writes that failed.
    pub corruptions: u64,
}

impl IntervalData for RecoveryTally {
    fn merge(&mut self, o: &Self) {
        self.logs += o.logs;
        self.records += o.records;
        self.pages_read += o.pages_read;
        self.pages_written += o.pages_written;
        self.corruptions += o.corruptions;
    }

    fn ops(&self) -> u64 {
        self.pages_read + self.pages_written
    }
}

/// What only the replay has in its outcome: each database's replay time, from its first log
/// file to its last page written, and the first corruptions.
pub type RecoveryDetail = finite::PerDatabase;

/// What a replay did: its measured phase (no warm-up) per database in `totals.parts`.
pub type RecoveryOutcome = Outcome<Parts<RecoveryTally>, RecoveryDetail>;

/// One second of a replay as the caller sees it; its row has the host's columns only (the
/// replay's counts are the interval's data).
pub type RecoveryInterval<'a> = Closed<'a, Parts<RecoveryTally>>;

/// Replays, for every database, the log generations from `from[i]` on; then marks the
/// databases clean in the manifest when every one was replayed. `on_interval` gets each
/// second as it ends, on the calling thread.
#[allow(clippy::too_many_arguments)]
pub fn replay(
    db_dir: &Path,
    manifest: &mut Manifest,
    from: &[u32],
    cache_bytes: u64,
    engine_kind: EngineKind,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&RecoveryInterval),
) -> crate::Result<RecoveryOutcome> {
    let files = manifest.files(db_dir);
    let (m, their_files, from) = (manifest.clone(), files.clone(), from.to_vec());
    let replay_one = move |i: usize, counts: &Counts, halted: &dyn Fn() -> bool| {
        Replayer::new(&their_files[i], &m, cache_bytes, engine_kind, counts)?.run(from[i], halted)
    };
    let (driven, results) = finite::drive("replay", files.len(), sampler, stop, replay_one, on_interval);
    let mut detail = RecoveryDetail::default();
    let page_size = manifest.page_size;
    for ((r, d), f) in results.into_iter().zip(&mut manifest.databases).zip(&files) {
        let end = r?;
        detail.add(end.seconds, end.first);
        // Pages the crashed run allocated but whose records never reached the log do not
        // exist after recovery: the database is what is on disk plus what was replayed.
        let on_disk = std::fs::metadata(&f.db).map_or(0, |m| m.len() / u64::from(page_size));
        d.pages = on_disk.max(end.pages);
    }
    let out = driven.with(detail);
    manifest.clean = out.complete;
    manifest.note_logs(db_dir);
    manifest.save(db_dir).map_err(|source| crate::Error::Io {
        op: "writing",
        path: Manifest::path(db_dir),
        source,
    })?;
    Ok(out)
}

/// One database's replay as the driver sees it: what it counted since the last interval.
#[derive(Default)]
struct Counts {
    logs: AtomicU64,
    records: AtomicU64,
    pages_read: AtomicU64,
    pages_written: AtomicU64,
    corruptions: AtomicU64,
    /// Reads and writes asked and not yet completed (a log file being read counts as one).
    in_flight: AtomicU64,
}

impl Counter for Counts {
    type Tally = RecoveryTally;
    /// None of its own: the replay's seconds are counts in the record.
    const COLUMNS: &'static [&'static [SeriesColumn<Work<Self>>]] = &[];

    fn take(&self) -> RecoveryTally {
        RecoveryTally {
            logs: self.logs.swap(0, Relaxed),
            records: self.records.swap(0, Relaxed),
            pages_read: self.pages_read.swap(0, Relaxed),
            pages_written: self.pages_written.swap(0, Relaxed),
            corruptions: self.corruptions.swap(0, Relaxed),
        }
    }

    fn in_flight(&self) -> u64 {
        self.in_flight.load(Relaxed)
    }

    /// Stuck when no log file was finished and no page read or written, with work asked.
    fn progress(t: &RecoveryTally, outstanding: u64) -> Progress {
        Progress::of_requests(t.logs + t.pages_read + t.pages_written, [], outstanding)
    }
}

/// What a replayer keeps besides its counts.
struct ReplayEnd {
    first: Vec<Corruption>,
    seconds: f64,
    /// The database's page count now.
    pages: u64,
}

struct Replayer<'a> {
    files: &'a DbFiles,
    geo: LogGeometry,
    page: u32,
    engine: Box<dyn IoEngine>,
    cached: BTreeSet<u64>,
    capacity: usize,
    filler: Filler,
    stamp: u64,
    max_page: u64,
    counts: &'a Counts,
    first: Vec<Corruption>,
}

impl<'a> Replayer<'a> {
    fn new(
        files: &'a DbFiles,
        m: &Manifest,
        cache_bytes: u64,
        kind: EngineKind,
        counts: &'a Counts,
    ) -> crate::Result<Self> {
        let db = open_direct(&files.db, false)?;
        let mut lens = vec![m.page_size; READ_DEPTH as usize];
        lens.extend([COALESCE_BYTES.max(m.page_size); WRITE_DEPTH as usize]);
        let setup = |source| crate::Error::Setup { what: "opening a database for recovery", source };
        let mut engine = engine::open_files(kind, &[&db], &lens).map_err(setup)?.engine;
        engine.start().map_err(setup)?;
        Ok(Replayer {
            files,
            geo: LogGeometry { block: m.log_block as usize, file_size: m.log_file_size as usize },
            page: m.page_size,
            engine,
            cached: BTreeSet::new(),
            capacity: (cache_bytes / u64::from(m.page_size)).max(64) as usize,
            filler: Filler::new(m.seed, filler_stream(files.id, 3)),
            stamp: u64::MAX / 2,
            max_page: 0,
            counts,
            first: Vec::new(),
        })
    }

    /// Replays generations from `from` on, until done or `halted`.
    fn run(mut self, from: u32, halted: &dyn Fn() -> bool) -> crate::Result<ReplayEnd> {
        let start = Instant::now();
        let mut carry: Vec<u8> = Vec::new();
        for g in self.files.log_generations().into_iter().filter(|&g| g >= from) {
            if halted() {
                break;
            }
            let (payload, intact) = self.payload(g)?;
            carry.extend(payload);
            let (recs, used) = records(&carry);
            carry.drain(..used);
            let redone = recs.len() as u64;
            let pages: BTreeSet<u64> = recs.into_iter().flat_map(|(_, p)| p).collect();
            if !self.redo(&pages, halted)? {
                // Stopped within the file: it is not replayed.
                break;
            }
            self.counts.records.fetch_add(redone, Relaxed);
            self.counts.logs.fetch_add(1, Relaxed);
            if !intact {
                // As the engine's recovery does: the log ends at the first damaged block. What
                // follows could not be framed into records, so nothing after it is redone.
                break;
            }
        }
        self.flush()?;
        Ok(ReplayEnd { first: self.first, seconds: start.elapsed().as_secs_f64(), pages: self.max_page + 1 })
    }

    /// The used payload of every block of generation `g`'s file, up to the end of the log, and
    /// whether the file was intact (false: a damaged block ended it, and it is recorded).
    fn payload(&mut self, g: u32) -> crate::Result<(Vec<u8>, bool)> {
        let path = self.files.log_path(g);
        let file = open_direct(&path, false)?;
        let mut buf = engine::AlignedBuf::new(self.geo.file_size)
            .map_err(|source| crate::Error::Setup { what: "allocating a log buffer", source })?;
        self.counts.in_flight.fetch_add(1, Relaxed);
        let read = file.read_exact_at(buf.as_mut_slice(), 0);
        self.counts.in_flight.fetch_sub(1, Relaxed);
        read.map_err(|source| crate::Error::Io { op: "reading", path: path.clone(), source })?;
        let mut payload = Vec::with_capacity(self.geo.file_size);
        for (i, block) in
            buf.as_mut_slice().chunks_exact(self.geo.block).enumerate().skip(self.geo.header_blocks())
        {
            match check_log_block(block, g, i as u32) {
                Ok(used) => {
                    payload.extend_from_slice(&block[LOG_BLOCK_HEADER..LOG_BLOCK_HEADER + used as usize])
                }
                Err(PageFault::Misplaced { .. }) if check_log_block(block, 0, i as u32).is_ok() => break,
                Err(f) => {
                    self.corrupt(&path, (i * self.geo.block) as u64, f.to_string());
                    return Ok((payload, false));
                }
            }
        }
        Ok((payload, true))
    }

    /// Reads the pages not cached (to see their state, as redo must), then holds them dirty;
    /// false when `halted` came first (the reads in flight are waited for, nothing is held).
    fn redo(&mut self, pages: &BTreeSet<u64>, halted: &dyn Fn() -> bool) -> crate::Result<bool> {
        let missing: Vec<u64> = pages.iter().copied().filter(|p| !self.cached.contains(p)).collect();
        if self.cached.len() + missing.len() > self.capacity {
            self.flush()?;
        }
        let ps = u64::from(self.page);
        let mut queue = missing.iter().copied();
        let (mut in_flight, mut at_slot) = (0u32, [0u64; READ_DEPTH as usize]);
        let mut free: Vec<u32> = (0..READ_DEPTH).collect();
        let mut done = Vec::new();
        loop {
            while let Some(slot) = free.last().copied() {
                let Some(p) = queue.next().filter(|_| !halted()) else { break };
                free.pop();
                at_slot[slot as usize] = p;
                self.engine.queue(Request { slot, file: 0, dir: Dir::Read, offset: p * ps, len: self.page });
                in_flight += 1;
            }
            self.counts.in_flight.store(u64::from(in_flight), Relaxed);
            if in_flight == 0 {
                break;
            }
            done.clear();
            self.io(1, &mut done)?;
            for c in &done {
                in_flight -= 1;
                free.push(c.slot);
                let p = at_slot[c.slot as usize];
                // A page beyond the end was added by the run and never written: redo creates it.
                if c.result == self.page as i32 {
                    self.counts.pages_read.fetch_add(1, Relaxed);
                    if let Err(f) =
                        check_page(&self.engine.buffer(c.slot)[..self.page as usize], self.files.id, p)
                    {
                        let path = self.files.db.clone();
                        self.corrupt(&path, p * ps, f.to_string());
                    }
                }
            }
        }
        if halted() {
            return Ok(false);
        }
        self.cached.extend(pages.iter().copied());
        self.max_page = self.max_page.max(pages.last().copied().unwrap_or(0));
        Ok(true)
    }

    fn io(&mut self, min: u32, done: &mut Vec<engine::Completion>) -> crate::Result<()> {
        self.engine.submit_and_reap(min, None, done).map_err(|source| crate::Error::Io {
            op: "replaying into",
            path: self.files.db.clone(),
            source,
        })
    }

    /// Writes every cached page, adjacent ones together, and empties the cache.
    fn flush(&mut self) -> crate::Result<()> {
        let ps = self.page as usize;
        let per_write = (COALESCE_BYTES as usize / ps).max(1);
        let pages: Vec<u64> = std::mem::take(&mut self.cached).into_iter().collect();
        let mut runs: Vec<(u64, usize)> = Vec::new();
        for p in pages {
            match runs.last_mut() {
                Some((first, n)) if *first + *n as u64 == p && *n < per_write => *n += 1,
                _ => runs.push((p, 1)),
            }
        }
        let mut free: Vec<u32> = (READ_DEPTH..READ_DEPTH + WRITE_DEPTH).collect();
        let (mut in_flight, mut done) = (0u32, Vec::new());
        let mut pages_at = [0u64; (READ_DEPTH + WRITE_DEPTH) as usize];
        let mut runs = runs.into_iter();
        loop {
            while let Some(&slot) = free.last() {
                let Some((first, n)) = runs.next() else { break };
                free.pop();
                for i in 0..n {
                    self.stamp += 1;
                    let (id, stamp) = (self.files.id, self.stamp);
                    let out = &mut self.engine.buffer(slot)[i * ps..(i + 1) * ps];
                    write_page(out, id, first + i as u64, stamp, &mut self.filler);
                }
                self.engine.queue(Request {
                    slot,
                    file: 0,
                    dir: Dir::Write,
                    offset: first * ps as u64,
                    len: (n * ps) as u32,
                });
                pages_at[slot as usize] = n as u64;
                in_flight += 1;
            }
            self.counts.in_flight.store(u64::from(in_flight), Relaxed);
            if in_flight == 0 {
                return Ok(());
            }
            done.clear();
            self.io(1, &mut done)?;
            for c in &done {
                in_flight -= 1;
                free.push(c.slot);
                self.counts.pages_written.fetch_add(pages_at[c.slot as usize], Relaxed);
                if c.result < 0 {
                    let path = self.files.db.clone();
                    self.corrupt(&path, 0, format!("replay write failed ({})", engine::error_kind(c.result)));
                }
            }
        }
    }

    fn corrupt(&mut self, path: &Path, offset: u64, what: String) {
        self.counts.corruptions.fetch_add(1, Relaxed);
        if self.first.len() < MAX_CORRUPTIONS_KEPT {
            self.first.push(Corruption { file: path.display().to_string(), offset, what });
        }
    }
}
