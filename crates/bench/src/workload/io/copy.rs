//! The copy loop of an emulated mirror rebuild (the `rebuild` background stream): one thread
//! that reads the source's blocks in order and writes the same bytes at the same offset of the
//! destination, wrapping around at the end, as md or a RAID controller copies a member onto
//! its replacement. Under a rate the run's pacer (`run::pace`) schedules each block's read,
//! every intended start kept, and its lag recorded. Its I/Os are timed as io's worker times
//! its own (a read from its intended start, its write from the read's completion) into the
//! same `Recorder` intervals, sent to the same `IoWork` as an io stream's worker, so the stream
//! has io's columns and figures.

use super::worker::{Link, Msg};
use crate::engine::{Completion, Dir, EngineKind, IoEngine, Request};
use crate::metrics::Recorder;
use crate::run::pace::{CatchUp, Pacer};
use crate::run::{IntervalClock, Schedule, StopFlag};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// The engine's file index of the source and of the destination.
const SOURCE: u16 = 0;
const DEST: u16 = 1;

/// What a copy loop does.
#[derive(Debug, Clone, PartialEq)]
pub struct CopySpec {
    /// Bytes per read and per write.
    pub block: u32,
    /// Bytes copied before the loop wraps to offset 0: a whole number of blocks, at least one.
    pub len: u64,
    /// Blocks in flight (each a read, then its write).
    pub depth: u32,
    /// Blocks a second; None copies as fast as the storage goes.
    pub blocks_per_sec: Option<f64>,
    pub engine: EngineKind,
}

impl CopySpec {
    /// The engine's buffer of each slot: one block.
    pub fn slot_lens(&self) -> Vec<u32> {
        vec![self.block; self.depth as usize]
    }
}

/// One block on its way: read from the source, then written to the destination.
#[derive(Clone, Copy, Default)]
struct Slot {
    offset: u64,
    /// What is in flight: the read, then the write; None when the slot is free.
    stage: Option<Dir>,
    /// Where its latency counts from: the read's intended start, the write's issue.
    start_ns: u64,
    issued_ns: u64,
}

pub(super) struct CopyWorker {
    spec: CopySpec,
    engine: Box<dyn IoEngine>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    next_offset: u64,
    clock: IntervalClock,
    start: Instant,
    interval: Recorder,
    pacer: Option<Pacer>,
    tx: Sender<Msg>,
    link: Link,
    completions: Vec<Completion>,
}

impl CopyWorker {
    /// A copy loop on `engine` (opened on the source, then the destination) on the run's
    /// `schedule`, which started at `start`.
    pub(super) fn new(
        spec: CopySpec,
        engine: Box<dyn IoEngine>,
        schedule: Schedule,
        start: Instant,
        tx: Sender<Msg>,
        link: Link,
    ) -> CopyWorker {
        let depth = if engine.capabilities().synchronous { 1 } else { spec.depth.max(1) };
        CopyWorker {
            pacer: spec.blocks_per_sec.map(|r| Pacer::at_rate(r, CatchUp::Every)),
            spec,
            engine,
            slots: vec![Slot::default(); depth as usize],
            free: (0..depth).rev().collect(),
            next_offset: 0,
            clock: IntervalClock::new(schedule),
            start,
            interval: Recorder::default(),
            tx,
            link,
            completions: Vec::with_capacity(depth as usize),
        }
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Copies until the run stops it or the engine itself fails.
    pub(super) fn run(mut self, stop: &StopFlag) -> std::io::Result<()> {
        let result = self.engine.start().and_then(|()| self.main_loop(stop));
        self.flush(self.now());
        let _ = self.tx.send(Msg::Measured { worker: 0 });
        result
    }

    fn main_loop(&mut self, stop: &StopFlag) -> std::io::Result<()> {
        let mut now = self.now();
        loop {
            let ending = stop.is_stopped() || self.link.done.is_stopped();
            if !ending {
                self.issue_reads(now);
            }
            let in_flight = self.slots.len() - self.free.len();
            if ending && in_flight == 0 {
                return Ok(());
            }
            let timeout = self.wait_limit(now);
            self.engine.submit_and_reap(u32::from(in_flight > 0), Some(timeout), &mut self.completions)?;
            now = self.now();
            while self.clock.due(now) {
                self.flush(self.clock.schedule().boundary(self.clock.index()));
            }
            let mut done = std::mem::take(&mut self.completions);
            for c in done.drain(..) {
                self.complete(c, now, ending);
            }
            self.completions = done;
        }
    }

    /// Until the next interval boundary or paced read.
    fn wait_limit(&self, now: u64) -> Duration {
        let mut until = self.clock.schedule().boundary(self.clock.index());
        if let Some(p) = &self.pacer {
            until = until.min(p.next_ns());
        }
        Duration::from_nanos(until.saturating_sub(now).max(1_000))
    }

    /// Starts the next blocks' reads in free slots: all of them, or under a rate those due.
    fn issue_reads(&mut self, now: u64) {
        while let Some(&slot) = self.free.last() {
            if self.pacer.as_ref().is_some_and(|p| !p.due(now)) {
                break;
            }
            let start_ns = match &mut self.pacer {
                Some(p) => p.start(now, &mut self.interval.lag),
                None => now,
            };
            self.free.pop();
            let offset = self.next_offset;
            self.next_offset = (offset + u64::from(self.spec.block)) % self.spec.len;
            self.slots[slot as usize] = Slot { offset, stage: Some(Dir::Read), start_ns, issued_ns: now };
            self.engine.queue(Request { slot, file: SOURCE, dir: Dir::Read, offset, len: self.spec.block });
        }
    }

    /// A read completed: its block goes to the destination (unless the loop is ending); a
    /// write completed: the slot is free. A failed request is counted and its block skipped.
    fn complete(&mut self, c: Completion, now: u64, ending: bool) {
        let slot = self.slots[c.slot as usize];
        let Some(dir) = slot.stage else { return };
        let len = self.spec.block;
        let ok = match c.failure(len) {
            Some(kind) => {
                self.interval.errors.count(kind);
                false
            }
            None => true,
        };
        if ok {
            let counters = if dir == Dir::Read { &mut self.interval.read } else { &mut self.interval.write };
            counters.record(u64::from(len), now.saturating_sub(slot.start_ns));
            if self.pacer.is_some() {
                counters.service.record(now.saturating_sub(slot.issued_ns));
            }
        }
        if ok && dir == Dir::Read && !ending {
            let write = Slot { stage: Some(Dir::Write), start_ns: now, issued_ns: now, ..slot };
            self.slots[c.slot as usize] = write;
            let req = Request { slot: c.slot, file: DEST, dir: Dir::Write, offset: slot.offset, len };
            self.engine.queue(req);
            return;
        }
        self.slots[c.slot as usize].stage = None;
        self.free.push(c.slot);
    }

    /// Sends the current interval as ending at `end_ns` and starts the next.
    fn flush(&mut self, end_ns: u64) {
        self.link.outstanding.store((self.slots.len() - self.free.len()) as u64, Relaxed);
        let data = Box::new(std::mem::take(&mut self.interval));
        let _ = self.tx.send(Msg::Interval { worker: 0, index: self.clock.index(), end_ns, data });
        self.clock.advance();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Stream;
    use crate::workload::io::IoStream;

    /// A copy of `source` onto `dest` by a rebuild stream on psync, run for `run_for`: its
    /// figures.
    fn copied(
        spec: CopySpec,
        source: &std::path::Path,
        dest: &std::path::Path,
        run_for: Duration,
    ) -> Recorder {
        let open = |p: &std::path::Path| std::fs::OpenOptions::new().read(true).write(true).open(p).unwrap();
        let mut stream = IoStream::rebuild(spec, Some((open(source), open(dest))));
        let schedule = Schedule { ramp_ns: 0, end_ns: None, interval_ns: 100_000_000 };
        let stop = StopFlag::new();
        stream.start(schedule, Instant::now(), &stop).unwrap();
        let mut totals = Recorder::default();
        let intervals = (run_for.as_nanos() / 100_000_000) as u64;
        for i in 0..intervals {
            std::thread::sleep(Duration::from_millis(100));
            let end = (i + 1) * 100_000_000;
            if let Some((_, tally)) =
                stream.take(i, storbench_report::series::Phase::Measure, end - 100_000_000, end)
            {
                totals.merge(&<Recorder as crate::run::record::Recordable>::from_tally(&tally).unwrap());
            }
        }
        stop.stop();
        assert!(stream.stop().is_empty());
        totals
    }

    #[test]
    fn the_copy_puts_every_block_of_the_source_at_its_offset_of_the_destination_and_wraps() {
        let dir = tempfile::tempdir().unwrap();
        let (source, dest) = (dir.path().join("source"), dir.path().join("dest"));
        let data: Vec<u8> = (0..40_960u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&source, &data).unwrap();
        std::fs::write(&dest, vec![0u8; 65_536]).unwrap();
        let spec =
            CopySpec { block: 4096, len: 40_960, depth: 3, blocks_per_sec: None, engine: EngineKind::Psync };
        let totals = copied(spec, &source, &dest, Duration::from_millis(300));
        let after = std::fs::read(&dest).unwrap();
        assert_eq!(&after[..40_960], &data[..], "each block at its own offset");
        assert!(after[40_960..].iter().all(|&b| b == 0), "nothing past the copy's length");
        assert_eq!(std::fs::read(&source).unwrap(), data, "the source is only read");
        assert!(totals.read.ios > 10, "it wrapped around and went on: {} blocks", totals.read.ios);
        assert!(totals.write.ios + 3 >= totals.read.ios && totals.write.ios <= totals.read.ios);
        assert_eq!(totals.errors.total(), 0);
    }

    #[test]
    fn under_a_rate_the_copy_moves_its_blocks_a_second_and_keeps_their_lag() {
        let dir = tempfile::tempdir().unwrap();
        let (source, dest) = (dir.path().join("source"), dir.path().join("dest"));
        std::fs::write(&source, vec![1u8; 8192]).unwrap();
        std::fs::write(&dest, vec![0u8; 8192]).unwrap();
        let spec = CopySpec {
            block: 4096,
            len: 8192,
            depth: 2,
            blocks_per_sec: Some(200.0),
            engine: EngineKind::Psync,
        };
        let totals = copied(spec, &source, &dest, Duration::from_millis(1000));
        assert!((190..=202).contains(&totals.read.ios), "200 blocks a second: {}", totals.read.ios);
        assert_eq!(totals.lag.count(), totals.read.ios, "each paced read's lag is kept");
    }
}
