//! One database instance: its sessions, cache, log stream and maintenance, driven by one
//! thread over one engine. Sessions are state machines, not threads: a session that waits for
//! a page read, a free buffer or its commit costs nothing until the event it waits for.
//!
//! Each loop: read the clock, let every ready session run its operation until it waits,
//! issue the log write, maintenance writes, the next log file's creation and background
//! maintenance reads, then submit and reap, read the clock once, and hand completions to
//! whoever waits for them. Latency is completion minus issue, both from those clock reads.
//!
//! This file holds the instance's state and its loop; `sessions` the users' operations,
//! `log_files` the log stream's I/O, `maintenance` the page write-back and background reads,
//! `completions` what happens when a request completes, and the shutdown.

use super::cache::{self, Cache, State};
use super::format::{Filler, check_page, filler_stream, write_page};
use super::layout::{DbFiles, open_direct};
use super::log::{LogGeometry, LogStream, LogWrite, RecordKind};
use super::preset::Profile;
use super::recorder::MailboxRecorder;
use crate::engine::{self, Completion, Dir, EngineKind, IoEngine, Request};
use crate::rng::{WorkerRng, below, stream, unit};
use crate::run::StopFlag;
use crate::run::pace::Pacer;
use std::collections::VecDeque;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod completions;
mod log_files;
mod maintenance;
mod sessions;

use log_files::create_log_file;
#[cfg(test)]
pub(crate) use log_files::unused_log_pattern;

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
    /// Requests in flight after the instance's last wait (the run's no-progress rule).
    pub in_flight: AtomicU64,
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
    /// Under a target: when operations begin.
    pacer: Option<Pacer>,
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
        let first_log = create_log_file(
            &cfg.files.log_path(cfg.first_generation),
            cfg.first_generation,
            p.log_file_size,
            cfg.log_block,
        )?;
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
            pacer: None,
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
        self.pacer = self.cfg.target_iops.map(sessions::target_pacer);
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
        self.shared.in_flight.store(u64::from(self.in_flight), Relaxed);
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
        if let Some(p) = self.pacer.as_ref().filter(|_| !self.queues.idle.is_empty() && !self.ending()) {
            at = at.min(p.next_ns());
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
}
