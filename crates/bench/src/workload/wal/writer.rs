//! The writers of one point: each commits in a loop (a write of the point's size at the log's
//! next offset, made durable by the point's method) and times the commit, write and sync
//! together, from one clock read before the write to one after the sync. Offsets come from one
//! atomic counter, so concurrent writers append one after another as group commit does; each
//! writer records into its own slot, which the run driver takes once a second (the only time
//! another thread touches it).

use super::method::SyncMethod;
use super::spec::{Layout, Point};
use crate::metrics::LatencyHistogram;
use crate::run::{IntervalData, StopFlag};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// What the writers did over an interval (or a phase, merged).
#[derive(Debug, Clone, Default)]
pub struct WalRecorder {
    pub commits: u64,
    pub bytes: u64,
    /// Commit latency: the write and its sync, in ns.
    pub latency: LatencyHistogram,
    /// Commits whose write or sync failed.
    pub errors: u64,
    /// The first failure's errno and what failed, as the run reports it.
    pub first_error: Option<String>,
}

impl WalRecorder {
    fn commit(&mut self, ns: u64, bytes: u32) {
        self.commits += 1;
        self.bytes += u64::from(bytes);
        self.latency.record(ns);
    }

    fn failed(&mut self, what: &str, e: &std::io::Error) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(format!("{what}: {e}"));
        }
    }
}

impl IntervalData for WalRecorder {
    const HEADLINE: crate::run::Headline = crate::run::Headline { name: "commits/s", per_op_per_s: 1.0 };

    fn merge(&mut self, other: &Self) {
        self.commits += other.commits;
        self.bytes += other.bytes;
        self.latency.merge(&other.latency);
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
    }

    fn ops(&self) -> u64 {
        self.commits
    }
}

/// What the writers of one point share.
pub struct Shared {
    /// Bytes handed out so far: each commit takes the next `size` of them.
    next: AtomicU64,
    /// The part of the file the commits cycle through: whole commits of the point's size.
    region: u64,
    /// Each writer's slot, taken by the driver at each interval's end.
    pub slots: Vec<Mutex<WalRecorder>>,
    /// Set when the point ends.
    pub done: AtomicBool,
}

impl Shared {
    pub fn new(point: &Point, file_bytes: u64) -> Shared {
        let size = u64::from(point.size);
        Shared {
            next: AtomicU64::new(0),
            region: file_bytes / size * size,
            slots: (0..point.writers).map(|_| Mutex::new(WalRecorder::default())).collect(),
            done: AtomicBool::new(false),
        }
    }

    /// Where the next commit goes, and whether it starts the file over (a growing file is
    /// then cut back to nothing first).
    fn offset(&self, size: u64) -> (u64, bool) {
        let taken = self.next.fetch_add(size, Ordering::Relaxed);
        let at = taken % self.region;
        (at, at == 0 && taken > 0)
    }

    /// Every slot's interval taken, leaving fresh ones.
    pub fn take(&self) -> WalRecorder {
        let mut total = WalRecorder::default();
        for slot in &self.slots {
            let rec = std::mem::take(&mut *slot.lock().unwrap_or_else(|p| p.into_inner()));
            total.merge(&rec);
        }
        total
    }
}

/// One writer's part of a point.
pub struct Writer<'a> {
    pub id: usize,
    pub point: Point,
    pub file: &'a File,
    /// The bytes each commit writes (aligned for O_DIRECT).
    pub data: &'a [u8],
    pub shared: &'a Shared,
    pub stop: &'a StopFlag,
}

impl Writer<'_> {
    /// Commits until the point ends, a stop is asked, or a commit fails (said in its slot;
    /// the driver's no-progress rule ends a point whose commits all fail).
    pub fn run(self) {
        let size = self.point.size;
        let method: SyncMethod = self.point.method;
        while !self.shared.done.load(Ordering::Relaxed) && !self.stop.is_stopped() {
            let (offset, wrapped) = self.shared.offset(u64::from(size));
            if wrapped && self.point.layout == Layout::Growing {
                // The log starts a new generation: an empty file again.
                if let Err(e) = self.file.set_len(0) {
                    self.fail("cutting the log back to empty", &e);
                    return;
                }
            }
            let start = Instant::now();
            let written = self.file.write_all_at(self.data, offset);
            let synced = written.and_then(|()| method.after_write(self.file));
            let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            match synced {
                Ok(()) => self.slot().commit(ns, size),
                Err(e) => {
                    self.fail(&format!("committing {size} B at offset {offset} ({method})"), &e);
                    return;
                }
            }
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, WalRecorder> {
        self.shared.slots[self.id].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fail(&self, what: &str, e: &std::io::Error) {
        self.slot().failed(what, e);
    }
}
