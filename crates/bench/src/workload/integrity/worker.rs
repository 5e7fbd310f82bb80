//! One activity's thread: it picks its next request (`Activity` decides which pages), takes
//! the pages, writes new generations or reads and checks every page it gets back, times each
//! request (one clock read per submit batch and one per reap batch), throttles its outstanding
//! I/O when a request takes longer than the target duration, and hands its acknowledged writes
//! to the syncer. Failed requests never count as I/O done: they are errors of their class.
//! A page a read finds damaged is noted as a suspect page and taken out of use: no activity
//! reads or writes it again and a shrink stops above it, so it stays as it was found.

use std::fs::File;
use std::os::fd::AsFd;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::journal::{Journal, JournalError};
use super::layout::{DATA_ID, LOG_ID};
use super::page::{Checked, PAGE, PageId, check_page, write_page};
use super::recorder::{Activity, IntegrityRecorder};
use super::state::{DirtyMap, Generations, PageState, PageTable};
use super::suspects::Suspects;
use super::verdict::{ErrorClass, ErrorRecord, Verdict, classify};
use crate::engine::{Completion, Dir, IoEngine, Request};
use crate::rng::{Rng, WorkerRng, below, between};

/// One acknowledged request: `pages` pages of `file` from `first`, generations from
/// `generation`.
#[derive(Debug, Clone, Copy)]
pub struct Ack {
    pub file: u16,
    pub first: u64,
    pub generation: u64,
    pub pages: u64,
}

/// What a worker shares with the driver and the syncer.
#[derive(Default)]
pub struct WorkerOut {
    pub recorder: Mutex<IntegrityRecorder>,
    pub acks: Mutex<Vec<Ack>>,
    /// Per slot: when its request was issued (ns since the start; 0 = free), and where it
    /// went (file << 56 | byte offset), for the delayed-I/O watchdog.
    pub issued_ns: Box<[AtomicU64]>,
    pub place: Box<[AtomicU64]>,
    pub in_flight: AtomicU64,
    /// Set when the worker ended on its own (a failure).
    pub failure: Mutex<Option<String>>,
}

impl WorkerOut {
    pub fn new(slots: usize) -> WorkerOut {
        WorkerOut {
            issued_ns: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            place: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            ..Default::default()
        }
    }
}

/// Everything the activities share.
pub struct Shared {
    pub data: PageTable,
    pub log: PageTable,
    pub dirty: DirtyMap,
    pub gens: Generations,
    pub journal: Arc<Mutex<Journal>>,
    pub data_file: File,
    pub log_file: File,
    /// The data file's current size, pages; no request goes past it.
    pub data_pages: AtomicU64,
    pub initial_pages: u64,
    /// Where the log's page 0 lies on its file (after the data region on a device).
    pub log_base: u64,
    /// The data and the log are regions of a block device: they neither grow nor shrink on
    /// disk, only the data's end moves.
    pub on_device: bool,
    pub growth_pages: u64,
    /// Where bulk inserts append next.
    pub append_at: AtomicU64,
    /// Log bytes committed and waiting for the log writer.
    pub log_pending: AtomicU64,
    pub grows: AtomicU64,
    pub shrinks: AtomicU64,
    /// Shrinks that stopped short of (or left out) the increment they were due to cut,
    /// because a damaged page lies in it.
    pub shrinks_held: AtomicU64,
    /// Every page found damaged, once.
    pub suspects: Suspects,
    /// At the maximum, the file shrinks at most this often (ns), and at the last shrink.
    pub shrink_every_ns: u64,
    pub last_shrink_ns: AtomicU64,
    pub outs: Vec<Arc<WorkerOut>>,
    pub seed: u64,
    pub end: AtomicBool,
    pub start: Instant,
    pub target_io_ns: u64,
    pub delay_ns: u64,
}

impl Shared {
    pub fn now_ns(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Notes `record` among the suspect pages, `now_ns` into the run.
    fn suspect(&self, record: &ErrorRecord, now_ns: u64) {
        self.suspects.note(record, now_ns as f64 / 1e9);
    }

    /// Makes every write acknowledged so far durable and journals it: the workers' acks are
    /// taken first, then the files are synced, then the acks are written and the journal
    /// synced, so the journal never names a write the disk may not have.
    pub fn sync_point(&self) -> Result<(), JournalError> {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let acks: Vec<Ack> = self
            .outs
            .iter()
            .flat_map(|o| std::mem::take(&mut *o.acks.lock().unwrap_or_else(|p| p.into_inner())))
            .collect();
        let sync = |file: &File| {
            rustix::fs::fdatasync(file.as_fd())
                .map_err(|e| crate::Error::Setup { what: "fdatasync", source: e.into() })
        };
        sync(&self.data_file)?;
        sync(&self.log_file)?;
        for a in acks {
            journal.record_run(PageId { file: a.file, page: a.first }, a.generation, a.pages)?;
        }
        journal.sync()
    }

    /// Whether a shrink is due (the first one a period after the start).
    pub fn shrink_due(&self) -> bool {
        self.now_ns().saturating_sub(self.last_shrink_ns.load(Relaxed)) >= self.shrink_every_ns
    }

    /// Grows the data file by one increment, or at its maximum cuts the last increment off
    /// (after taking its pages and journalling the cut). Called with no request of the caller
    /// in flight.
    pub fn resize(&self, max_pages: u64) -> Result<(), String> {
        let pages = self.data_pages.load(SeqCst);
        if pages < max_pages {
            let new = (pages + self.growth_pages).min(max_pages);
            let (at, len) = (pages * PAGE as u64, (new - pages) * PAGE as u64);
            if !self.on_device {
                rustix::fs::fallocate(self.data_file.as_fd(), rustix::fs::FallocateFlags::empty(), at, len)
                    .map_err(|e| format!("growing the data file: {e}"))?;
            }
            self.data_pages.store(new, SeqCst);
            self.grows.fetch_add(1, Relaxed);
            return Ok(());
        }
        let due = pages.saturating_sub(self.growth_pages).max(self.initial_pages);
        if due == pages {
            return Ok(());
        }
        self.data_pages.store(due, SeqCst);
        let new = self.take_cut(due, pages);
        if new > due {
            self.shrinks_held.fetch_add(1, Relaxed);
        }
        if new == pages {
            self.last_shrink_ns.store(self.now_ns(), Relaxed);
            return Ok(());
        }
        self.sync_point().map_err(|e| e.to_string())?;
        self.journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .truncate(DATA_ID, new)
            .map_err(|e| e.to_string())?;
        if !self.on_device {
            self.data_file.set_len(new * PAGE as u64).map_err(|e| format!("shrinking the data file: {e}"))?;
        }
        for page in new..pages {
            self.data.release(page, PageState::UNWRITTEN);
        }
        self.append_at.fetch_min(new, SeqCst);
        self.shrinks.fetch_add(1, Relaxed);
        self.last_shrink_ns.store(self.now_ns(), Relaxed);
        Ok(())
    }

    /// Takes the pages from `due` to `pages` for a cut (the data's end already at `due`), and
    /// returns where the cut may go: `due`, or just above the last damaged page among them,
    /// which the cut must not take away. Pages below that are given back, and the end is
    /// moved back up to it.
    fn take_cut(&self, due: u64, pages: u64) -> u64 {
        let taken: Vec<Option<PageState>> = (due..pages).map(|page| self.data.take_waiting(page)).collect();
        let keep = taken.iter().rposition(Option::is_none).map_or(0, |last| last + 1);
        for (page, state) in (due..).zip(&taken[..keep]) {
            if let Some(state) = state {
                self.data.release(page, *state);
            }
        }
        let new = due + keep as u64;
        for page in new..pages {
            self.dirty.clear(page);
        }
        self.data_pages.store(new, SeqCst);
        new
    }
}

/// How large each activity's requests are, in pages, and how many it keeps in flight.
pub fn shape(activity: Activity) -> (u64, u64, u32) {
    match activity {
        Activity::Random => (1, 100, 4),
        Activity::ReadAhead => (32, 64, 4),
        Activity::Bulk => (64, 128, 4),
        Activity::LazyWriter => (1, 32, 8),
        Activity::Log => (1, 8, 1),
    }
}

/// Log records are 64 to 8,192 bytes (SQL Server's range).
const LOG_RECORD: (u64, u64) = (64, 8192);
/// The lazy writer's rest when no page is dirty.
const IDLE: Duration = Duration::from_millis(1);

/// A request in flight.
struct InFlight {
    file: u16,
    first: u64,
    dir: Dir,
    /// Writes: the first page's generation.
    generation: u64,
    /// The pages' states when taken.
    states: Vec<PageState>,
    issued_ns: u64,
}

/// The log writer's place: the page it writes next and the bytes already in it.
#[derive(Default)]
struct LogCursor {
    page: u64,
    partial: u64,
}

pub struct Worker {
    activity: Activity,
    engine: Box<dyn IoEngine>,
    shared: Arc<Shared>,
    out: Arc<WorkerOut>,
    slots: Vec<Option<InFlight>>,
    free: Vec<u32>,
    depth: u32,
    max_depth: u32,
    credit: u32,
    rng: WorkerRng,
    states: Vec<PageState>,
    completions: Vec<Completion>,
    checked: Vec<Checked>,
    log: LogCursor,
    lazy_cursor: u64,
    data_max_pages: u64,
    resize_due: bool,
}

impl Worker {
    pub fn new(
        activity: Activity,
        engine: Box<dyn IoEngine>,
        shared: Arc<Shared>,
        out: Arc<WorkerOut>,
        rng: WorkerRng,
        data_max_pages: u64,
    ) -> Worker {
        let (_, _, depth) = shape(activity);
        Worker {
            activity,
            engine,
            shared,
            slots: (0..depth).map(|_| None).collect(),
            free: (0..depth).rev().collect(),
            out,
            depth,
            max_depth: depth,
            credit: 0,
            rng,
            states: Vec::new(),
            completions: Vec::new(),
            checked: Vec::new(),
            log: LogCursor::default(),
            lazy_cursor: 0,
            data_max_pages,
            resize_due: false,
        }
    }

    /// Runs until the end flag, then finishes what is in flight.
    pub fn run(mut self) {
        if let Err(e) = self.engine.start() {
            self.fail(format!("{}: starting the engine: {e}", self.activity.name()));
            return;
        }
        if let Err(why) = self.drive() {
            self.fail(why);
        }
        self.out.in_flight.store(0, Relaxed);
    }

    fn fail(&self, why: String) {
        *self.out.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
    }

    fn in_flight(&self) -> u32 {
        self.max_depth - self.free.len() as u32
    }

    fn drive(&mut self) -> Result<(), String> {
        loop {
            let ending = self.shared.end.load(Relaxed);
            if !ending {
                self.issue()?;
            }
            if self.in_flight() == 0 {
                if ending {
                    return Ok(());
                }
                if self.resize_due {
                    self.shared.resize(self.data_max_pages)?;
                    self.resize_due = false;
                } else {
                    std::thread::sleep(IDLE);
                }
                self.out.in_flight.store(0, Relaxed);
                continue;
            }
            self.completions.clear();
            let mut done = std::mem::take(&mut self.completions);
            self.engine
                .submit_and_reap(1, Some(Duration::from_millis(50)), &mut done)
                .map_err(|e| format!("{}: {e}", self.activity.name()))?;
            let now = self.shared.now_ns();
            // The batch is counted straight into the recorder the driver takes each second:
            // one uncontended lock per batch, nothing to merge or reset.
            let out = self.out.clone();
            let mut rec = out.recorder.lock().unwrap_or_else(|p| p.into_inner());
            for c in done.drain(..) {
                self.complete(c, now, &mut rec);
            }
            drop(rec);
            self.completions = done;
            self.out.in_flight.store(u64::from(self.in_flight()), Relaxed);
        }
    }

    /// Queues requests while the throttle allows.
    fn issue(&mut self) -> Result<(), String> {
        let now = self.shared.now_ns();
        while self.in_flight() < self.depth && !self.resize_due {
            let Some((file, first, dir)) = self.next_request() else { break };
            self.queue(file, first, dir, now).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The next request's file, first page and direction, with its pages taken (their
    /// states in `self.states`); None when there is nothing to do now.
    fn next_request(&mut self) -> Option<(u16, u64, Dir)> {
        let (lo, hi, _) = shape(self.activity);
        match self.activity {
            Activity::Random | Activity::ReadAhead => {
                let first = self.take_random_run(lo, hi)?;
                Some((DATA_ID, first, Dir::Read))
            }
            Activity::Bulk => self.bulk_run(lo, hi).map(|first| (DATA_ID, first, Dir::Write)),
            Activity::LazyWriter => self.dirty_run(hi).map(|first| (DATA_ID, first, Dir::Write)),
            Activity::Log => self.log_run(hi).map(|first| (LOG_ID, first, Dir::Write)),
        }
    }

    /// Takes a run of `lo..=hi` pages (fewer where a page is held) at a random place.
    fn take_random_run(&mut self, lo: u64, hi: u64) -> Option<u64> {
        let pages = self.shared.data_pages.load(SeqCst);
        let len = between(&mut self.rng, lo, hi).min(pages);
        let first = below(&mut self.rng, pages - len + 1);
        self.take_data(first, len)
    }

    /// Takes up to `len` data pages from `first`, none past the file's end; None if none.
    fn take_data(&mut self, first: u64, len: u64) -> Option<u64> {
        self.shared.data.take_run(first, len, &mut self.states);
        let end = self.shared.data_pages.load(SeqCst);
        while !self.states.is_empty() && first + self.states.len() as u64 > end {
            let state = self.states.pop().expect("not empty");
            self.shared.data.release(first + self.states.len() as u64, state);
        }
        (!self.states.is_empty()).then_some(first)
    }

    /// Bulk: half the time appends at the end of the data (asking for a resize at the file's
    /// end), else rewrites a run at a random place.
    fn bulk_run(&mut self, lo: u64, hi: u64) -> Option<u64> {
        if self.rng.next_u64() & 1 == 0 {
            return self.take_random_run(lo, hi);
        }
        let len = between(&mut self.rng, lo, hi);
        let at = self.shared.append_at.load(SeqCst);
        let pages = self.shared.data_pages.load(SeqCst);
        if at + len > pages {
            if pages < self.data_max_pages || self.shared.shrink_due() {
                self.resize_due = true;
                return None;
            }
            // At the maximum between shrinks: inserts go on over the grown part.
            self.shared.append_at.store(self.shared.initial_pages, SeqCst);
            return None;
        }
        let Some(first) = self.take_data(at, len) else {
            // A damaged page is never written again: inserts go on after it.
            if self.shared.data.is_suspect(at) {
                self.shared.append_at.store(at + 1, SeqCst);
            }
            return None;
        };
        self.shared.append_at.store(first + self.states.len() as u64, SeqCst);
        Some(first)
    }

    /// The lazy writer: the next run of dirty pages (up to `hi`), taken and no longer dirty.
    fn dirty_run(&mut self, hi: u64) -> Option<u64> {
        let end = self.shared.data_pages.load(SeqCst);
        let first = self.shared.dirty.next_dirty(self.lazy_cursor, end)?;
        if self.shared.data.is_suspect(first) {
            // Found damaged after it was dirtied: it stays as it is.
            self.shared.dirty.clear(first);
            self.lazy_cursor = first + 1;
            return None;
        }
        let mut len = 0;
        while len < hi && first + len < end && self.shared.dirty.is_dirty(first + len) {
            len += 1;
        }
        let first = self.take_data(first, len)?;
        for page in first..first + self.states.len() as u64 {
            self.shared.dirty.clear(page);
        }
        self.lazy_cursor = first + self.states.len() as u64;
        Some(first)
    }

    /// The log writer: one group commit at a time, from the page holding the log's tail (it
    /// is written again with the new records), up to `hi` pages or the file's end.
    fn log_run(&mut self, hi: u64) -> Option<u64> {
        if self.in_flight() > 0 {
            return None;
        }
        let pending = self.shared.log_pending.swap(0, SeqCst);
        if pending == 0 {
            return None;
        }
        let room = (self.shared.log.pages() - self.log.page).min(hi) * PAGE as u64;
        let bytes = self.log.partial + pending;
        if bytes > room {
            self.shared.log_pending.fetch_add(bytes - room, SeqCst);
        }
        let pages = bytes.min(room).div_ceil(PAGE as u64);
        self.states.clear();
        for page in self.log.page..self.log.page + pages {
            let state = self.shared.log.take_waiting(page).expect("log pages are never taken out of use");
            self.states.push(state);
        }
        self.log.partial = bytes.min(room);
        Some(self.log.page)
    }

    fn queue(&mut self, file: u16, first: u64, dir: Dir, now: u64) -> Result<(), JournalError> {
        let pages = self.states.len() as u64;
        let slot = self.free.pop().expect("a free slot below the depth");
        let generation = if dir == Dir::Write { self.shared.gens.take(pages)? } else { 0 };
        if dir == Dir::Write {
            let buf = self.engine.buffer(slot);
            for (i, page) in buf[..pages as usize * PAGE].chunks_exact_mut(PAGE).enumerate() {
                let id = PageId { file, page: first + i as u64 };
                write_page(page, id, generation + i as u64, self.shared.seed);
            }
        }
        let base = if file == LOG_ID { self.shared.log_base } else { 0 };
        let offset = base + first * PAGE as u64;
        self.engine.queue(Request { slot, file, dir, offset, len: (pages as usize * PAGE) as u32 });
        self.out.issued_ns[slot as usize].store(now.max(1), Relaxed);
        self.out.place[slot as usize].store(u64::from(file) << 56 | offset, Relaxed);
        let states = std::mem::take(&mut self.states);
        self.slots[slot as usize] = Some(InFlight { file, first, dir, generation, states, issued_ns: now });
        Ok(())
    }

    fn complete(&mut self, c: Completion, now: u64, rec: &mut IntegrityRecorder) {
        let Some(req) = self.slots[c.slot as usize].take() else { return };
        self.free.push(c.slot);
        self.out.issued_ns[c.slot as usize].store(0, Relaxed);
        let pages = req.states.len() as u64;
        let len = (pages as usize * PAGE) as u32;
        let latency = now.saturating_sub(req.issued_ns);
        self.throttle(latency, rec);
        let id = PageId { file: req.file, page: req.first };
        let table = if req.file == LOG_ID { &self.shared.log } else { &self.shared.data };
        if let Some(why) = c.failure(len) {
            let record = ErrorRecord::of_failed_io(id, req.dir, why);
            self.shared.suspect(&record, now);
            rec.error(record);
            for (i, state) in req.states.iter().enumerate() {
                let after = if req.dir == Dir::Write { state.after_failed_write() } else { *state };
                table.release(req.first + i as u64, after);
            }
            self.after_log_write(&req, false);
            return;
        }
        let counters = rec.activity(self.activity);
        counters.io_time_ns += latency;
        counters.delayed += u64::from(latency > self.shared.delay_ns);
        match req.dir {
            Dir::Write => {
                counters.writes.record(u64::from(len), latency);
                // The syncer must see the acknowledgement before anyone can take the pages
                // again: a shrink syncs the journal once it holds them, then cuts the file.
                let ack = Ack { file: req.file, first: req.first, generation: req.generation, pages };
                self.out.acks.lock().unwrap_or_else(|p| p.into_inner()).push(ack);
                for i in 0..pages {
                    table.release(req.first + i, PageState::written(req.generation + i));
                }
                self.after_log_write(&req, true);
            }
            Dir::Read => {
                counters.reads.record(u64::from(len), latency);
                counters.pages_checked += pages;
                self.check_read(c.slot, &req, now, rec);
            }
            // The integrity workers make data durable with the syncer's fsync, never a flush
            // request of their own.
            Dir::Flush | Dir::Fsync => {}
        }
    }

    /// Moves the log writer past the pages it filled (wrapping at the file's end); a failed
    /// write is retried with the next commit.
    fn after_log_write(&mut self, req: &InFlight, written: bool) {
        if self.activity != Activity::Log {
            return;
        }
        if !written {
            self.log.partial = 0;
            return;
        }
        let full = self.log.partial / PAGE as u64;
        self.log.partial %= PAGE as u64;
        self.log.page = req.first + full;
        if self.log.page >= self.shared.log.pages() {
            self.log.page = 0;
            self.log.partial = 0;
        }
    }

    /// Checks every page a read returned (a damaged one is noted and taken out of use); a
    /// user then dirties the run and commits a record.
    fn check_read(&mut self, slot: u32, req: &InFlight, now: u64, rec: &mut IntegrityRecorder) {
        let limit = self.shared.gens.issued_limit();
        let buf = self.engine.buffer(slot);
        self.checked.clear();
        self.checked.extend(
            buf.chunks_exact(PAGE)
                .zip(req.first..)
                .take(req.states.len())
                .map(|(page, n)| check_page(page, PageId { file: req.file, page: n })),
        );
        let mut fine = true;
        for (i, state) in req.states.iter().enumerate() {
            let id = PageId { file: req.file, page: req.first + i as u64 };
            let checked = self.checked[i];
            let certain = !state.uncertain();
            let acknowledged = (certain && state.generation() > 0).then(|| state.generation());
            let seen = (certain && state.seen()).then(|| state.generation());
            let (class, expected) = match classify(acknowledged, checked, seen, limit) {
                Verdict::Fine => {
                    let after = match checked {
                        Checked::Ok { generation } => PageState::read_back(generation),
                        Checked::Unwritten => PageState::UNWRITTEN,
                        _ => *state,
                    };
                    self.shared.data.release(id.page, after);
                    continue;
                }
                Verdict::Error { class, expected } => (class, expected),
                // The writer's own limit: only garbage can show a generation past it.
                Verdict::NeverIssued { .. } => (ErrorClass::Checksum, acknowledged),
            };
            fine = false;
            let record = ErrorRecord::of_page(id, class, expected, &checked);
            self.shared.suspect(&record, now);
            rec.error(record);
            self.shared.data.quarantine(id.page);
            self.shared.dirty.clear(id.page);
        }
        if fine && self.activity == Activity::Random && self.rng.next_u64() & 1 == 0 {
            for page in req.first..req.first + req.states.len() as u64 {
                self.shared.dirty.mark(page);
            }
            let record = between(&mut self.rng, LOG_RECORD.0, LOG_RECORD.1);
            self.shared.log_pending.fetch_add(record, Relaxed);
        }
    }

    /// SQLIOSim's rule: a request over the target duration halves the outstanding I/O (a
    /// throttle event); quick ones earn it back one at a time.
    fn throttle(&mut self, latency: u64, rec: &mut IntegrityRecorder) {
        if latency > self.shared.target_io_ns {
            rec.activity(self.activity).throttled += 1;
            self.depth = (self.depth / 2).max(1);
            self.credit = 0;
        } else if self.depth < self.max_depth {
            self.credit += 1;
            if self.credit >= self.depth * 8 {
                self.depth += 1;
                self.credit = 0;
            }
        }
    }
}
