//! One database instance: its sessions, cache, log stream and maintenance, driven by one
//! thread over one engine. Sessions are state machines, not threads: a session that waits for
//! a page read, a free buffer or its commit costs nothing until the event it waits for.
//!
//! Each loop: read the clock, let every ready session run its operation until it waits,
//! issue the log write, maintenance writes, the next log file's creation and background
//! maintenance reads, then submit and reap, read the clock once, and hand completions to
//! whoever waits for them. Latency is completion minus issue, both from those clock reads.

use super::cache::{self, Cache, State};
use super::format::{Filler, check_page, filler_stream, write_page};
use super::layout::{DbFiles, open_direct};
use super::log::{LogGeometry, LogStream, LogWrite, RecordKind};
use super::preset::Profile;
use super::recorder::MailboxRecorder;
use crate::engine::{self, Completion, Dir, EngineKind, IoEngine, Request};
use crate::rng::{WorkerRng, below, stream, unit};
use crate::run::StopFlag;
use std::collections::VecDeque;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest coalesced database write (and background read): the engine's 512 KB.
pub const COALESCE_BYTES: u32 = 512 * 1024;
/// Maintenance writes in flight per database.
const WRITE_SLOTS: u32 = 64;
/// Checkpoint maintenance may hold at most this many of them, so that refilling the free
/// buffers (what stalled sessions wait for) always finds write slots.
const CHECKPOINT_SLOTS: u32 = WRITE_SLOTS / 2;
/// Lazy commits reach the log within this long even when no synchronous commit forces it.
const LAZY_FLUSH_NS: u64 = 200_000_000;
/// Longest wait in one reap, so that timers and stop requests are seen.
const MAX_WAIT: Duration = Duration::from_millis(20);
/// Engine file indexes.
const DB: u16 = 0;
const LOG: u16 = 1;
const NEXT_LOG: u16 = 2;

/// What the instance is told to do.
#[derive(Debug, Clone)]
pub struct InstanceConfig {
    pub db: u32,
    pub profile: Profile,
    pub sessions: u32,
    /// Transactional I/Os per second this database should deliver; None = as fast as it can.
    pub target_iops: Option<f64>,
    pub seed: u64,
    pub engine: EngineKind,
    pub files: DbFiles,
    /// Pages in the database file when the run starts.
    pub pages: u64,
    pub log_block: usize,
    pub first_generation: u32,
    /// Keep every log file (for a replay) instead of deleting those the checkpoint passed.
    pub keep_logs: bool,
    /// Stop after this many log files were filled (soft recovery's generation phase).
    pub log_files_limit: Option<u32>,
    /// Leave dirty pages unwritten at the end (an unclean stop, for soft recovery).
    pub crash_at_end: bool,
}

/// What the coordinator and the instance share.
#[derive(Default)]
pub struct InstanceShared {
    pub recorder: Mutex<MailboxRecorder>,
    /// Buffers holding pages, for the warm-up's cache-full condition.
    pub cache_used: AtomicU64,
    pub cache_target: AtomicU64,
    /// Set by the coordinator when the run is over: finish and shut down cleanly.
    pub end: AtomicBool,
    /// Set by the instance once every session started: the clock may start.
    pub ready: AtomicBool,
    pub log_files_done: AtomicU64,
    /// Set by the instance when it has stopped, for whatever reason.
    pub finished: AtomicBool,
}

/// How an instance ended.
#[derive(Debug, Clone, Default)]
pub struct InstanceEnd {
    pub pages: u64,
    pub next_generation: u32,
    /// Generations that hold the stream from the last checkpoint on (for a replay).
    pub replay_from: u32,
    pub shutdown: Duration,
    pub failure: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Insert,
    Delete,
    Replace,
    Read,
}

impl Op {
    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Between operations: starts the next one when the pacer allows.
    Idle,
    /// Has work to do now.
    Ready,
    Read,
    /// Another session is reading the page it needs.
    Page,
    FreeBuffer,
    Commit(u64),
    LogRoom,
}

#[derive(Debug, Clone, Copy)]
struct Session {
    wait: Wait,
    op: Op,
    /// Pages the operation touches, how many, and how many are in the cache so far.
    pages: [u64; 2],
    n: u8,
    have: u8,
    /// Whether the insert appends at the table's end (grows the database).
    append: bool,
    stalled: bool,
}

/// A slot's request in flight.
#[derive(Debug, Clone, Copy)]
enum InFlight {
    Free,
    SessionRead { session: u32, buf: u32, page: u64 },
    Write { first: u64, pages: u32, checkpoint: bool },
    Log(LogWrite),
    CreateLog,
    Bdm,
}

/// Which sessions wait for what, so that each loop touches only the sessions an event
/// concerns, however many sessions there are.
#[derive(Debug, Default)]
struct Queues {
    /// To be stepped now.
    ready: VecDeque<u32>,
    /// Between operations, waiting for the pacer (or for nothing, once the run ends).
    idle: VecDeque<u32>,
    /// Waiting for their commit to reach the log, in log order.
    commits: VecDeque<(u64, u32)>,
    /// Waiting for a free buffer, log buffer room or a page another session is reading:
    /// woken by any completion that may have changed that.
    blocked: Vec<u32>,
    /// Sessions inside an operation.
    active: u32,
}

/// The next log file: being created, ready, or not started.
enum NextLog {
    None,
    Creating(File),
    Ready(File),
}

pub struct Instance {
    cfg: InstanceConfig,
    shared: Arc<InstanceShared>,
    stop: StopFlag,
    engine: Box<dyn IoEngine>,
    rng: WorkerRng,
    filler: Filler,
    cache: Cache,
    log: LogStream,
    sessions: Vec<Session>,
    queues: Queues,
    slots: Vec<(InFlight, u64)>,
    free_write_slots: Vec<u32>,
    /// First slot of each kind.
    log_slot: u32,
    create_slot: u32,
    bdm_slot: u32,
    next_log: NextLog,
    /// The log's current file index 1 holds the file being written; a closed file waits for
    /// the next to be ready.
    log_needs_roll: bool,
    pages: u64,
    tail_page: u64,
    tail_fill: u64,
    stamp: u64,
    bdm_at: u64,
    bdm_next_ns: u64,
    pace_next_ns: u64,
    pace_interval_ns: u64,
    oldest_lazy_ns: Option<u64>,
    pending_evictions: u32,
    checkpoint_writes: u32,
    /// Transactional I/Os and operations since the start, for the pacer.
    paced_counts: (u64, u64),
    in_flight: u32,
    start: Instant,
    now: u64,
    failure: Option<String>,
}

impl Instance {
    /// Opens the database and the first log file; fails before any I/O when they cannot be.
    pub fn open(cfg: InstanceConfig, shared: Arc<InstanceShared>, stop: StopFlag) -> crate::Result<Self> {
        let p = cfg.profile;
        let db = open_direct(&cfg.files.db, false)?;
        let first_log =
            create_log_file(&cfg.files.log_path(cfg.first_generation), p.log_file_size, cfg.log_block)?;
        let scratch = open_direct(&cfg.files.db, false)?;
        let page = p.page_size;
        let coalesce = COALESCE_BYTES.max(page);
        let mut lens = vec![page; cfg.sessions as usize];
        lens.extend(std::iter::repeat_n(coalesce, WRITE_SLOTS as usize));
        lens.extend([p.log_file_size, p.log_file_size, coalesce]);
        let opened = engine::open_files(cfg.engine, &[&db, &first_log, &scratch], &lens)
            .map_err(|source| crate::Error::Setup { what: "opening the I/O engine", source })?;
        let write_base = cfg.sessions;
        let log_slot = write_base + WRITE_SLOTS;
        // Validation keeps the cache within what the map indexes; saturate rather than wrap.
        let cache_buffers = u32::try_from(cache::buffers_for(p.cache_max, page)).unwrap_or(u32::MAX);
        let geo = LogGeometry { block: cfg.log_block, file_size: p.log_file_size as usize };
        let log = LogStream::new(geo, cfg.first_generation, Filler::new(cfg.seed, filler_stream(cfg.db, 2)));
        shared.cache_target.store(u64::from(cache_buffers).min(cfg.pages) * 9 / 10, Relaxed);
        let session = Session {
            wait: Wait::Idle,
            op: Op::Read,
            pages: [0; 2],
            n: 0,
            have: 0,
            append: false,
            stalled: false,
        };
        Ok(Instance {
            rng: stream(cfg.seed, u64::from(cfg.db) << 20),
            filler: Filler::new(cfg.seed, filler_stream(cfg.db, 1)),
            cache: Cache::new(cache_buffers),
            log,
            sessions: vec![session; cfg.sessions as usize],
            queues: Queues { ready: (0..cfg.sessions).collect(), ..Default::default() },
            slots: vec![(InFlight::Free, 0); lens.len()],
            free_write_slots: (write_base..log_slot).rev().collect(),
            log_slot,
            create_slot: log_slot + 1,
            bdm_slot: log_slot + 2,
            next_log: NextLog::None,
            log_needs_roll: false,
            pages: cfg.pages,
            tail_page: cfg.pages.saturating_sub(1),
            tail_fill: 0,
            stamp: 1,
            bdm_at: 0,
            bdm_next_ns: 0,
            pace_next_ns: 0,
            pace_interval_ns: 0,
            oldest_lazy_ns: None,
            pending_evictions: 0,
            checkpoint_writes: 0,
            paced_counts: (0, 0),
            in_flight: 0,
            start: Instant::now(),
            now: 0,
            failure: None,
            engine: opened.engine,
            cfg,
            shared,
            stop,
        })
    }

    /// Runs until the coordinator ends the run (or a stop request), then shuts down: every
    /// operation in progress finishes and, unless a crash was asked for, every dirty page and
    /// the log are written.
    pub fn run(mut self) -> InstanceEnd {
        if let Err(e) = self.engine.start() {
            self.failure = Some(format!("starting the engine: {e}"));
        }
        self.start = Instant::now();
        self.set_pace(self.cfg.target_iops.map(|t| t / 1.5));
        self.shared.ready.store(true, Relaxed);
        let mut done = Vec::with_capacity(256);
        let mut last_second = 0;
        while self.failure.is_none() && !self.ending() {
            self.now = self.clock();
            if self.now / 1_000_000_000 != last_second {
                last_second = self.now / 1_000_000_000;
                self.retune_pace();
            }
            self.step_sessions();
            self.issue_background();
            self.wait(&mut done);
        }
        let shutdown = Instant::now();
        self.shut_down(&mut done);
        self.shared.finished.store(true, Relaxed);
        InstanceEnd {
            pages: self.pages,
            next_generation: self.log.generation_of(self.log.lgpos) + 1,
            replay_from: self.log.generation_of(self.cache.oldest_dirty().unwrap_or(self.log.flushed)),
            shutdown: shutdown.elapsed(),
            failure: self.failure,
        }
    }

    fn ending(&self) -> bool {
        let limit = self
            .cfg
            .log_files_limit
            .is_some_and(|n| self.shared.log_files_done.load(Relaxed) >= u64::from(n));
        self.stop.is_stopped() || self.shared.end.load(Relaxed) || limit
    }

    #[inline]
    fn clock(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Submits what is queued and reaps, waiting when nothing is ready to run; then hands the
    /// completions out.
    fn wait(&mut self, done: &mut Vec<Completion>) {
        let busy = !self.queues.ready.is_empty() || self.pacer_due();
        let timeout = if busy { Duration::ZERO } else { self.next_timer() };
        let min = u32::from(!busy && self.in_flight > 0);
        done.clear();
        if let Err(e) = self.engine.submit_and_reap(min, Some(timeout), done) {
            self.failure = Some(format!("the engine failed: {e}"));
            return;
        }
        if done.is_empty() {
            return;
        }
        self.now = self.clock();
        // Recorded straight into the shared recorder: the lock is this thread's own except
        // once a second, when the coordinator swaps the recorder out.
        let shared = self.shared.clone();
        let mut rec = shared.recorder.lock().unwrap_or_else(|p| p.into_inner());
        for c in done.iter() {
            self.complete(*c, &mut rec);
        }
        self.shared.cache_used.store(u64::from(self.cache.used()), Relaxed);
    }

    fn next_timer(&self) -> Duration {
        let mut at = self.now + MAX_WAIT.as_nanos() as u64;
        // Only timers that can fire: a due timer whose work cannot start yet would make every
        // wait a 1 µs spin.
        if self.pace_interval_ns > 0 && !self.queues.idle.is_empty() && !self.ending() {
            at = at.min(self.pace_next_ns);
        }
        let log_can_write = !self.log.write_in_flight()
            && (!self.log_needs_roll || matches!(self.next_log, NextLog::Ready(_)));
        if let Some(t) = self.oldest_lazy_ns.filter(|_| log_can_write) {
            at = at.min(t + LAZY_FLUSH_NS);
        }
        if self.cfg.profile.bdm_bytes_per_sec > 0
            && matches!(self.slots[self.bdm_slot as usize].0, InFlight::Free)
        {
            at = at.min(self.bdm_next_ns);
        }
        Duration::from_nanos(at.saturating_sub(self.now).max(1_000))
    }

    // ---- sessions ----

    /// Steps the sessions that are ready (those that became ready before this call; one that
    /// finishes and starts again waits for the next loop), then the paced ones that are due.
    fn step_sessions(&mut self) {
        let shared = self.shared.clone();
        let mut rec = shared.recorder.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..self.queues.ready.len() {
            let Some(i) = self.queues.ready.pop_front() else { break };
            self.step(i as usize, &mut rec);
            self.park(i);
        }
        while self.pacer_due() {
            let Some(i) = self.queues.idle.pop_front() else { break };
            self.step(i as usize, &mut rec);
            self.park(i);
        }
    }

    /// Whether an idle session may start an operation now.
    fn pacer_due(&self) -> bool {
        self.pace_interval_ns > 0
            && !self.queues.idle.is_empty()
            && self.now >= self.pace_next_ns
            && !self.ending()
    }

    /// Files session `i` under what it now waits for.
    fn park(&mut self, i: u32) {
        let unpaced = self.pace_interval_ns == 0 && !self.ending();
        let q = &mut self.queues;
        match self.sessions[i as usize].wait {
            Wait::Idle if unpaced => q.ready.push_back(i),
            Wait::Idle => q.idle.push_back(i),
            Wait::Ready => q.ready.push_back(i),
            Wait::Read => {}
            Wait::Commit(lgpos) => q.commits.push_back((lgpos, i)),
            Wait::Page | Wait::FreeBuffer | Wait::LogRoom => q.blocked.push(i),
        }
    }

    /// Something that blocked sessions wait for may have changed: let them look again.
    fn wake_blocked(&mut self) {
        let q = &mut self.queues;
        q.ready.extend(q.blocked.drain(..));
    }

    /// Commits now in the log release their sessions.
    fn wake_committed(&mut self) {
        while let Some(&(lgpos, i)) = self.queues.commits.front() {
            if lgpos > self.log.flushed {
                break;
            }
            self.queues.commits.pop_front();
            self.queues.ready.push_back(i);
        }
    }

    /// Moves session `i` on as far as it can go now.
    fn step(&mut self, i: usize, rec: &mut MailboxRecorder) {
        loop {
            let s = self.sessions[i];
            match s.wait {
                Wait::Idle => {
                    if self.ending() || !self.pace_allows() {
                        return;
                    }
                    self.begin(i);
                }
                Wait::Ready | Wait::Page | Wait::FreeBuffer => {
                    if s.have < s.n {
                        if !self.fetch(i, rec) {
                            return;
                        }
                    } else if !self.apply(i, rec) {
                        return;
                    }
                }
                Wait::Commit(lgpos) => {
                    if self.log.flushed < lgpos {
                        return;
                    }
                    rec.sync_commits += 1;
                    self.finish(i, rec);
                    return;
                }
                Wait::LogRoom => {
                    if self.log.unflushed() >= self.log_room() {
                        return;
                    }
                    self.sessions[i].wait = Wait::Ready;
                }
                Wait::Read => return,
            }
        }
    }

    fn pace_allows(&mut self) -> bool {
        if self.pace_interval_ns == 0 {
            return true;
        }
        if self.now < self.pace_next_ns {
            return false;
        }
        // Behind schedule by more than a second: do not try to catch up in a burst.
        self.pace_next_ns =
            self.pace_next_ns.max(self.now.saturating_sub(1_000_000_000)) + self.pace_interval_ns;
        true
    }

    fn set_pace(&mut self, tps: Option<f64>) {
        self.pace_interval_ns = tps.map_or(0, |t| (1e9 / t.max(0.01)) as u64);
    }

    /// Under a target, sets the transaction rate from the I/Os per transaction seen lately:
    /// the counts halve every second, so the last few seconds weigh most (writes start late,
    /// once the cache fills) while low rates still have enough to go on.
    fn retune_pace(&mut self) {
        let Some(target) = self.cfg.target_iops else { return };
        let (ios, ops) = self.paced_counts;
        if ops >= 20 && ios > 0 {
            self.set_pace(Some(target * ops as f64 / ios as f64));
            self.paced_counts = (ios / 2, ops / 2);
        }
    }

    /// Picks the next operation and the pages it needs (mailbox.md §2.8).
    fn begin(&mut self, i: usize) {
        let mix = self.cfg.profile.mix;
        let roll = below(&mut self.rng, u64::from(mix.total())) as u32;
        let op = if roll < mix.insert {
            Op::Insert
        } else if roll < mix.insert + mix.delete {
            Op::Delete
        } else if roll < mix.insert + mix.delete + mix.replace {
            Op::Replace
        } else {
            Op::Read
        };
        let mut s = self.sessions[i];
        s.op = op;
        s.have = 0;
        s.stalled = false;
        s.append = false;
        let leaf = self.random_page();
        s.pages = [leaf, 0];
        s.n = 1;
        match op {
            Op::Replace => {
                s.pages[1] = self.random_page();
                s.n = 2;
            }
            // Inserts beyond what deletes free go to the end of the table and grow it; the
            // rest reuse space in an existing leaf and put their long value in an existing
            // long-value page (mailbox.md §2.8: an insert dirties its leaf and LV pages).
            Op::Insert => {
                let grow = mix.insert.saturating_sub(mix.delete) as f64 / mix.insert.max(1) as f64;
                if unit(&mut self.rng) < grow {
                    s.append = true;
                    s.pages[0] = self.tail_page;
                } else {
                    s.pages[1] = self.random_page();
                    s.n = 2;
                }
            }
            _ => {}
        }
        s.wait = Wait::Ready;
        self.sessions[i] = s;
        self.queues.active += 1;
    }

    fn random_page(&mut self) -> u64 {
        below(&mut self.rng, self.pages.max(1))
    }

    /// Brings the session's next page into the cache; false when it has to wait.
    fn fetch(&mut self, i: usize, rec: &mut MailboxRecorder) -> bool {
        let s = self.sessions[i];
        let page = s.pages[s.have as usize];
        if let Some(buf) = self.cache.lookup(page) {
            if self.cache.state(buf) == State::Reading {
                self.sessions[i].wait = Wait::Page;
                return false;
            }
            self.cache.touch(buf);
            let s = &mut self.sessions[i];
            s.have += 1;
            s.wait = Wait::Ready;
            return true;
        }
        let Some(buf) = self.cache.reserve(page, State::Reading) else {
            if !s.stalled {
                rec.page_fault_stalls += 1;
                self.sessions[i].stalled = true;
            }
            self.sessions[i].wait = Wait::FreeBuffer;
            return false;
        };
        let slot = i as u32;
        let len = self.cfg.profile.page_size;
        self.issue(
            slot,
            InFlight::SessionRead { session: i as u32, buf, page },
            Dir::Read,
            DB,
            page * u64::from(len),
            len,
        );
        self.sessions[i].wait = Wait::Read;
        false
    }

    /// Changes the pages, logs the change and commits; false when it has to wait.
    fn apply(&mut self, i: usize, rec: &mut MailboxRecorder) -> bool {
        let s = self.sessions[i];
        if s.op == Op::Read {
            self.finish(i, rec);
            return false;
        }
        if self.log.unflushed() >= self.log_room() {
            rec.log_stalls += 1;
            self.sessions[i].wait = Wait::LogRoom;
            return false;
        }
        let p = self.cfg.profile;
        let lgpos = self.log.lgpos;
        let (kind, len) = match s.op {
            Op::Insert => (RecordKind::Insert, p.record_bytes + p.long_value_bytes),
            Op::Delete => (RecordKind::Delete, 64),
            _ => (RecordKind::Replace, p.short_pad_bytes + p.long_value_bytes),
        };
        let mut touched = [s.pages[0], s.pages[1], 0];
        let mut n = s.n as usize;
        if s.append {
            match self.append_to_tail(u64::from(len), lgpos) {
                Some(Some(new_page)) => {
                    touched[n] = new_page;
                    n += 1;
                }
                Some(None) => {}
                None => {
                    if !s.stalled {
                        rec.page_fault_stalls += 1;
                    }
                    let s = &mut self.sessions[i];
                    s.stalled = true;
                    s.wait = Wait::FreeBuffer;
                    return false;
                }
            }
        }
        for &page in &touched[..s.n as usize] {
            if let Some(buf) = self.cache.lookup(page) {
                self.cache.dirty(buf, lgpos);
            }
        }
        self.log.append(kind, &touched[..n], len as usize);
        let end = self.log.append(RecordKind::Commit, &[], 32);
        if below(&mut self.rng, 100) < u64::from(p.lazy_commit_pct) {
            rec.lazy_commits += 1;
            self.oldest_lazy_ns.get_or_insert(self.now);
            self.finish(i, rec);
            return false;
        }
        self.sessions[i].wait = Wait::Commit(end);
        false
    }

    /// Adds `bytes` to the table's last page; when it is full, a new page is allocated at the
    /// end (Some(Some(page))). None when no buffer is free for the new page.
    fn append_to_tail(&mut self, bytes: u64, lgpos: u64) -> Option<Option<u64>> {
        self.tail_fill += bytes;
        if self.tail_fill < u64::from(self.cfg.profile.page_size) {
            return Some(None);
        }
        let page = self.pages;
        let Some(buf) = self.cache.reserve(page, State::Clean) else {
            self.tail_fill -= bytes;
            return None;
        };
        self.cache.dirty(buf, lgpos);
        self.pages += 1;
        self.tail_page = page;
        self.tail_fill %= u64::from(self.cfg.profile.page_size);
        Some(Some(page))
    }

    fn finish(&mut self, i: usize, rec: &mut MailboxRecorder) {
        rec.ops[self.sessions[i].op.index()] += 1;
        self.paced_counts.1 += 1;
        self.sessions[i].wait = Wait::Idle;
        self.queues.active -= 1;
    }

    /// Unwritten log the buffer can hold: the log file less its header.
    fn log_room(&self) -> u64 {
        self.log.geo.payload_per_file()
    }

    // ---- log, maintenance, background ----

    fn issue_background(&mut self) {
        self.issue_log_write();
        self.checkpoint();
        self.refill_avail_pool();
        self.create_next_log();
        self.background_read();
    }

    fn issue_log_write(&mut self) {
        if self.log.write_in_flight() || self.log.unflushed() == 0 {
            return;
        }
        let waiting = !self.queues.commits.is_empty()
            || self.queues.blocked.iter().any(|&i| self.sessions[i as usize].wait == Wait::LogRoom);
        let lazy_due = self.oldest_lazy_ns.is_some_and(|t| self.now >= t + LAZY_FLUSH_NS);
        let full = self.log.unflushed() >= self.log_room() / 2;
        if !(waiting || lazy_due || full || self.ending()) {
            return;
        }
        if self.log_needs_roll && !self.roll_log() {
            return;
        }
        let slot = self.log_slot;
        let Some((w, bytes)) = self.log.next_write() else { return };
        self.engine.buffer(slot)[..w.len].copy_from_slice(bytes);
        self.oldest_lazy_ns = None;
        self.issue(slot, InFlight::Log(w), Dir::Write, LOG, w.offset as u64, w.len as u32);
    }

    /// Moves the log to its next file, once that file exists; false while it is being made.
    fn roll_log(&mut self) -> bool {
        let NextLog::Ready(file) = std::mem::replace(&mut self.next_log, NextLog::None) else {
            return false;
        };
        let generation = self.log.writing_generation();
        let files = &self.cfg.files;
        if let Err(e) = std::fs::rename(files.tmp_log_path(), files.log_path(generation))
            .and_then(|_| self.engine.replace_file(LOG, &file))
        {
            self.failure = Some(format!("moving to log generation {generation}: {e}"));
            return false;
        }
        self.log_needs_roll = false;
        self.delete_passed_logs();
        true
    }

    /// Circular logging: files wholly before the checkpoint are no longer needed.
    fn delete_passed_logs(&mut self) {
        if self.cfg.keep_logs {
            return;
        }
        let checkpoint = self.cache.oldest_dirty().unwrap_or(self.log.flushed);
        let keep_from = self.log.generation_of(checkpoint);
        let mut g = keep_from.saturating_sub(1);
        while g >= self.cfg.first_generation {
            let path = self.cfg.files.log_path(g);
            if std::fs::remove_file(&path).is_err() {
                break;
            }
            g = match g.checked_sub(1) {
                Some(x) => x,
                None => break,
            };
        }
    }

    fn create_next_log(&mut self) {
        if !matches!(self.next_log, NextLog::None)
            || matches!(self.slots[self.create_slot as usize].0, InFlight::CreateLog)
        {
            return;
        }
        let path = self.cfg.files.tmp_log_path();
        let created = std::fs::remove_file(&path)
            .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
            .and_then(|_| open_direct(&path, true).map_err(std::io::Error::other))
            .and_then(|f| self.engine.replace_file(NEXT_LOG, &f).map(|_| f));
        match created {
            Ok(file) => {
                let slot = self.create_slot;
                let len = self.cfg.profile.log_file_size;
                unused_log_pattern(self.engine.buffer(slot), self.cfg.log_block);
                self.next_log = NextLog::Creating(file);
                self.issue(slot, InFlight::CreateLog, Dir::Write, NEXT_LOG, 0, len);
            }
            Err(e) => self.failure = Some(format!("creating the next log file {}: {e}", path.display())),
        }
    }

    /// Writes dirty pages whose first change is older than the checkpoint depth.
    fn checkpoint(&mut self) {
        let depth = self.cfg.profile.checkpoint_depth;
        let before = self.log.lgpos.saturating_sub(depth);
        if self.log.lgpos < depth {
            return;
        }
        while !self.free_write_slots.is_empty() && self.checkpoint_writes < CHECKPOINT_SLOTS {
            let Some(buf) = self.cache.aged_before(before, self.log.flushed) else { return };
            self.write_run(buf, false);
        }
    }

    /// Keeps between 1 % and 2 % of the buffers free: clean pages from the LRU tail are freed
    /// at once, dirty ones are written and freed when the write completes.
    fn refill_avail_pool(&mut self) {
        let cap = self.cache.capacity();
        let (start, stop) = ((cap / 100).max(1), (cap / 50).max(2));
        if self.cache.available() + self.pending_evictions >= start {
            return;
        }
        let before = self.cache.available();
        for buf in self.cache.lru_tail(2 * stop as usize) {
            if self.cache.available() + self.pending_evictions >= stop {
                break;
            }
            // A buffer may have joined a write of one of the victims before it in this list.
            if self.cache.writing(buf) {
                continue;
            }
            match self.cache.state(buf) {
                State::Clean => self.cache.evict(buf),
                // Write-ahead logging: a page whose latest change is not yet durable waits.
                State::Dirty
                    if !self.free_write_slots.is_empty() && self.cache.logged(buf, self.log.flushed) =>
                {
                    self.pending_evictions += 1;
                    self.write_run(buf, true);
                }
                _ => {}
            }
        }
        if self.cache.available() > before {
            self.wake_blocked();
        }
    }

    /// Writes the dirty page in `buf` with its dirty neighbours, up to the coalescing limit.
    fn write_run(&mut self, buf: u32, evict: bool) {
        let Some(slot) = self.free_write_slots.pop() else { return };
        let page = self.cache.page_of(buf);
        let max = u64::from((COALESCE_BYTES / self.cfg.profile.page_size).max(1));
        let (mut lo, mut hi) = (page, page);
        let flushed = self.log.flushed;
        while hi - lo + 1 < max && self.cache.writable(hi + 1, flushed).is_some() {
            hi += 1;
        }
        while hi - lo + 1 < max && lo > 0 && self.cache.writable(lo - 1, flushed).is_some() {
            lo -= 1;
        }
        let ps = self.cfg.profile.page_size as usize;
        let db = self.cfg.db;
        for p in lo..=hi {
            let b = self.cache.writable(p, flushed).expect("checked above");
            self.cache.start_write(b, evict && b == buf);
            self.stamp += 1;
            let off = (p - lo) as usize * ps;
            let out = &mut self.engine.buffer(slot)[off..off + ps];
            write_page(out, db, p, self.stamp, &mut self.filler);
        }
        let n = (hi - lo + 1) as u32;
        self.checkpoint_writes += u32::from(!evict);
        self.issue(
            slot,
            InFlight::Write { first: lo, pages: n, checkpoint: !evict },
            Dir::Write,
            DB,
            lo * ps as u64,
            n * ps as u32,
        );
    }

    /// Background database maintenance: a sequential read of the whole file at a set rate.
    fn background_read(&mut self) {
        let rate = self.cfg.profile.bdm_bytes_per_sec;
        if rate == 0
            || self.now < self.bdm_next_ns
            || !matches!(self.slots[self.bdm_slot as usize].0, InFlight::Free)
        {
            return;
        }
        let ps = u64::from(self.cfg.profile.page_size);
        let end = self.pages * ps;
        if self.bdm_at >= end {
            self.bdm_at = 0;
        }
        let len = u64::from(COALESCE_BYTES.max(self.cfg.profile.page_size)).min(end - self.bdm_at);
        self.bdm_next_ns = self.now + len * 1_000_000_000 / rate;
        let slot = self.bdm_slot;
        self.issue(slot, InFlight::Bdm, Dir::Read, DB, self.bdm_at, len as u32);
        self.bdm_at += len;
    }

    fn issue(&mut self, slot: u32, what: InFlight, dir: Dir, file: u16, offset: u64, len: u32) {
        self.slots[slot as usize] = (what, self.now);
        self.in_flight += 1;
        self.engine.queue(Request { slot, file, dir, offset, len });
    }

    // ---- completions ----

    fn complete(&mut self, c: Completion, rec: &mut MailboxRecorder) {
        let (what, issued) = std::mem::replace(&mut self.slots[c.slot as usize], (InFlight::Free, 0));
        self.in_flight -= 1;
        let lat = self.now.saturating_sub(issued);
        // A short transfer is as much an error as a failed one; neither counts as an I/O of
        // its stream (only completed transfers are throughput).
        let failure = c.failure(expected_len(&what, self));
        if let Some(kind) = failure {
            rec.errors.count(kind);
        }
        let failed = failure.is_some();
        if matches!(what, InFlight::SessionRead { .. } | InFlight::Write { .. }) {
            self.paced_counts.0 += 1;
        }
        match what {
            InFlight::SessionRead { session, buf, page } => self.read_done(c, session, buf, page, lat, rec),
            InFlight::Write { first, pages, checkpoint } => {
                self.checkpoint_writes -= u32::from(checkpoint);
                if !failed {
                    rec.db_writes.record(c.result as u64, lat);
                }
                self.write_done(first, pages, failed);
                self.free_write_slots.push(c.slot);
            }
            InFlight::Log(w) => {
                if failed {
                    self.log.failed();
                    return;
                }
                rec.log_writes.record(w.len as u64, lat);
                self.log.completed();
                self.wake_committed();
                self.wake_blocked();
                if w.closes_file {
                    self.log_needs_roll = true;
                    self.shared.log_files_done.fetch_add(1, Relaxed);
                }
            }
            InFlight::CreateLog => {
                if !failed {
                    rec.log_creates.record(c.result as u64, lat);
                }
                if let NextLog::Creating(f) = std::mem::replace(&mut self.next_log, NextLog::None) {
                    self.next_log = if failed { NextLog::None } else { NextLog::Ready(f) };
                }
            }
            InFlight::Bdm if !failed => rec.bdm_reads.record(c.result as u64, lat),
            InFlight::Bdm => {}
            InFlight::Free => {}
        }
    }

    fn read_done(
        &mut self,
        c: Completion,
        session: u32,
        buf: u32,
        page: u64,
        lat: u64,
        rec: &mut MailboxRecorder,
    ) {
        self.queues.ready.push_back(session);
        // Sessions waiting for this page (or for anything) look again.
        self.wake_blocked();
        if c.result != self.cfg.profile.page_size as i32 {
            // A failed read fails the operation; the session starts another.
            self.cache.abandon(buf);
            self.sessions[session as usize].wait = Wait::Idle;
            self.queues.active -= 1;
            return;
        }
        rec.db_reads.record(c.result as u64, lat);
        let ps = self.cfg.profile.page_size as usize;
        if let Err(fault) = check_page(&self.engine.buffer(c.slot)[..ps], self.cfg.db, page) {
            let file = self.cfg.files.db.display().to_string();
            rec.corrupt(&file, page * ps as u64, fault.to_string());
        }
        self.cache.loaded(buf);
        let s = &mut self.sessions[session as usize];
        s.have += 1;
        s.wait = Wait::Ready;
    }

    fn write_done(&mut self, first: u64, pages: u32, failed: bool) {
        for p in first..first + u64::from(pages) {
            let Some(buf) = self.cache.lookup(p) else { continue };
            if failed {
                // Not on disk: the page stays dirty and is written again.
                self.cache.dirty_again(buf, self.log.lgpos);
            }
            if self.cache.written(buf) {
                self.pending_evictions = self.pending_evictions.saturating_sub(1);
            }
        }
        // Freed buffers may unblock stalled sessions.
        self.wake_blocked();
    }

    // ---- shutdown ----

    /// Lets operations in progress finish, then (unless crashing) writes every dirty page and
    /// the rest of the log, as a clean database shutdown does.
    fn shut_down(&mut self, done: &mut Vec<Completion>) {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut finished = false;
        while Instant::now() < deadline {
            if self.failure.is_some() {
                // Nothing more is written, but requests in flight must complete before their
                // buffers go away.
                if self.in_flight == 0 {
                    break;
                }
                self.wait(done);
                continue;
            }
            self.now = self.clock();
            self.step_sessions();
            // Sessions waiting for a free buffer finish only if the pool is refilled.
            self.refill_avail_pool();
            let sessions_busy = self.queues.active > 0;
            if !self.cfg.crash_at_end {
                self.issue_log_write();
                self.create_next_log();
                if !sessions_busy {
                    self.flush_all();
                }
            }
            let log_busy = !self.cfg.crash_at_end && self.log.unflushed() > 0;
            // A crash abandons the sessions (their commits never reach the log); only the
            // I/O in flight is waited for.
            let idle = if self.cfg.crash_at_end {
                self.in_flight == 0
            } else {
                !sessions_busy && self.in_flight == 0 && !log_busy && self.cache.dirty == 0
            };
            if idle {
                finished = true;
                break;
            }
            self.wait(done);
        }
        if !finished && self.failure.is_none() {
            self.failure = Some(format!(
                "database {} did not shut down within 120 s ({} I/Os in flight, {} dirty pages)",
                self.cfg.db, self.in_flight, self.cache.dirty
            ));
        }
        let _ = std::fs::remove_file(self.cfg.files.tmp_log_path());
    }

    fn flush_all(&mut self) {
        while !self.free_write_slots.is_empty() {
            let Some(buf) = self.cache.aged_before(u64::MAX, self.log.flushed) else { return };
            self.write_run(buf, false);
        }
    }
}

/// Bytes a request of this kind asks for (0 where any count is fine).
fn expected_len(what: &InFlight, inst: &Instance) -> u32 {
    let ps = inst.cfg.profile.page_size;
    match what {
        InFlight::SessionRead { .. } => ps,
        InFlight::Write { pages, .. } => pages * ps,
        InFlight::Log(w) => w.len as u32,
        InFlight::CreateLog => inst.cfg.profile.log_file_size,
        InFlight::Bdm | InFlight::Free => 0,
    }
}

/// A new log file's content before use: blocks of generation 0 holding nothing.
pub(super) fn unused_log_pattern(buf: &mut [u8], block: usize) {
    for (i, b) in buf.chunks_exact_mut(block).enumerate() {
        b.fill(0x5A);
        super::format::seal_log_block(b, 0, i as u32, 0);
    }
}

/// Creates a log file filled with the unused pattern (the first file of a stream).
fn create_log_file(path: &std::path::Path, size: u32, block: usize) -> crate::Result<File> {
    use std::os::unix::fs::FileExt;
    let _ = std::fs::remove_file(path);
    let file = open_direct(path, true)?;
    let mut buf = engine::AlignedBuf::new(size as usize)
        .map_err(|source| crate::Error::Setup { what: "allocating a log buffer", source })?;
    unused_log_pattern(buf.as_mut_slice(), block);
    file.write_all_at(buf.as_mut_slice(), 0).map_err(|source| crate::Error::Io {
        op: "writing",
        path: path.to_path_buf(),
        source,
    })?;
    Ok(file)
}
