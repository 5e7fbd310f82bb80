//! SQLite's counters for the per-second series. SQLite runs inside storbench, so there is no
//! server to ask: sessions add their page-cache hits and misses and their commits and
//! rollbacks to shared atomics after each transaction (one relaxed add each, no lock), and
//! the blocks read and written are this process's own I/O from /proc/self/io.

use crate::db::CounterSampler;
use rusqlite::Connection;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Block size for /proc/self/io byte counts turned into blocks.
const BLOCK: u64 = 4096;

#[derive(Debug, Default)]
pub(crate) struct Stats {
    hits: AtomicU64,
    misses: AtomicU64,
    commits: AtomicU64,
    rollbacks: AtomicU64,
}

impl Stats {
    /// Adds the connection's cache hits and misses since the last call, and the transaction.
    pub(crate) fn after_transaction(&self, conn: &Connection, committed: bool) {
        let (hits, misses) = cache_counters(conn);
        self.hits.fetch_add(hits, Relaxed);
        self.misses.fetch_add(misses, Relaxed);
        let counter = if committed { &self.commits } else { &self.rollbacks };
        counter.fetch_add(1, Relaxed);
    }
}

/// The connection's page-cache hits and misses since the last call (and resets them).
fn cache_counters(conn: &Connection) -> (u64, u64) {
    use rusqlite::ffi;
    let read = |op| {
        let (mut cur, mut high) = (0, 0);
        // SAFETY: the handle belongs to `conn`, which outlives the call; db_status only reads
        // counters of that connection and writes the two ints we pass.
        let rc = unsafe { ffi::sqlite3_db_status(conn.handle(), op, &mut cur, &mut high, 1) };
        if rc == ffi::SQLITE_OK { cur.max(0) as u64 } else { 0 }
    };
    (read(ffi::SQLITE_DBSTATUS_CACHE_HIT), read(ffi::SQLITE_DBSTATUS_CACHE_MISS))
}

struct Snapshot {
    at: Instant,
    hits: u64,
    misses: u64,
    commits: u64,
    rollbacks: u64,
    io: Option<(u64, u64)>,
}

pub(super) struct Sampler {
    stats: Arc<Stats>,
    prev: Snapshot,
}

impl Sampler {
    pub(super) fn new(stats: Arc<Stats>) -> Self {
        let prev = snapshot(&stats);
        Sampler { stats, prev }
    }
}

fn snapshot(s: &Stats) -> Snapshot {
    Snapshot {
        at: Instant::now(),
        hits: s.hits.load(Relaxed),
        misses: s.misses.load(Relaxed),
        commits: s.commits.load(Relaxed),
        rollbacks: s.rollbacks.load(Relaxed),
        io: self_io(),
    }
}

/// (read_bytes, write_bytes) of this process: what reached the storage layer.
fn self_io() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| {
        text.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some((field("read_bytes:")?, field("write_bytes:")?))
}

impl CounterSampler for Sampler {
    fn sample(&mut self) -> [Option<f64>; 7] {
        let cur = snapshot(&self.stats);
        let prev = std::mem::replace(&mut self.prev, cur);
        let cur = &self.prev;
        let secs = cur.at.duration_since(prev.at).as_secs_f64().max(1e-9);
        let rate = |a: u64, b: u64| Some(b.saturating_sub(a) as f64 / secs);
        let (hits, misses) = (cur.hits - prev.hits, cur.misses - prev.misses);
        let hit_pct = (hits + misses > 0).then(|| 100.0 * hits as f64 / (hits + misses) as f64);
        let io = prev.io.zip(cur.io);
        [
            hit_pct,
            io.and_then(|(a, b)| rate(a.0 / BLOCK, b.0 / BLOCK)),
            io.and_then(|(a, b)| rate(a.1 / BLOCK, b.1 / BLOCK)),
            None,
            rate(prev.commits, cur.commits),
            rate(prev.rollbacks, cur.rollbacks),
            None,
        ]
    }
}
