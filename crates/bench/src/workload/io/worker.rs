//! One worker thread of the synthetic I/O job: keeps `iodepth` requests in flight on its own
//! engine, times them (one clock read per submit batch and one per reap batch), and reports
//! its counters at every interval boundary, with the I/Os it still has in flight then (for the
//! run driver's no-progress rule). Nothing here is shared with other workers. Under a rate cap
//! its share of the rate is the run's pacer (`run::pace`), every intended start kept: latency
//! counts from the intended start, and each I/O's lag behind it goes into the interval. A
//! worker replaying a trace (`IoSpec::trace`) takes its requests from it instead, each due at
//! its recorded time (the same lag and latency from it) or at once when fast.

use super::blocksize::SizeDraws;
use super::offsets::OffsetGen;
use super::spec::{End, IoSpec};
use super::verify::{self, BadBlock};
use crate::blocktrace::replay::TraceFeed;
use crate::engine::{Completion, Dir, IoEngine, Request};
use crate::metrics::Recorder;
use crate::rng::{ExactShares, WorkerRng};
use crate::run::pace::{CatchUp, Pacer};
use crate::run::{IntervalClock, Schedule, StopFlag};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// What a worker tells the coordinator.
pub enum Msg {
    Interval {
        worker: usize,
        index: u64,
        end_ns: u64,
        data: Box<Recorder>,
    },
    /// The measured phase is over for this worker (the verify pass may follow).
    Measured {
        worker: usize,
    },
    Verified {
        report: VerifyReport,
    },
}

/// What a worker's `--verify` checking found.
#[derive(Debug, Default, Clone)]
pub struct VerifyReport {
    pub checked: u64,
    /// Read-back I/Os of the verify pass that failed (after the measured phase).
    pub failed_reads: u64,
    pub mismatches: u64,
    pub first: Vec<(u64, BadBlock)>,
}

const MAX_MISMATCHES_KEPT: usize = 100;

#[derive(Clone, Copy, Default)]
struct Slot {
    /// When the I/O was meant to start: its paced issue time under a rate cap, else when it
    /// was issued.
    start_ns: u64,
    /// When it was actually issued (later than `start_ns` when the worker fell behind).
    issued_ns: u64,
    offset: u64,
    len: u32,
    dir: Option<Dir>,
    /// Under `--verify`, the generation a write puts on its block.
    generation: u32,
    /// A write that a flush follows once it completed.
    flush_after: bool,
}

/// A rate profile the pacer follows (`--rate-profile`): the rates a second over all workers,
/// this worker's part of them, when the measured phase starts (ns since the run's), and the
/// second of it the pacer's next start falls in.
struct Profile {
    rates: Arc<[f64]>,
    workers: f64,
    from_ns: u64,
    second: Option<u64>,
}

const NS_PER_S: u64 = 1_000_000_000;

/// Per-block generations for `--verify`: 0 = not written by this run.
struct VerifyState {
    seed: u64,
    block: u64,
    generations: Vec<u32>,
    next_generation: u32,
    report: VerifyReport,
}

pub struct Worker<'a> {
    id: usize,
    spec: &'a IoSpec,
    /// Start of this worker's region; verify generations are indexed from here.
    base: u64,
    /// End of this worker's region.
    end: u64,
    engine: Box<dyn IoEngine>,
    rng: WorkerRng,
    offsets: OffsetGen,
    sizes: SizeDraws,
    /// Reads or writes, each its exact share (a mix only).
    dirs: ExactShares,
    /// Random or continuing where the request before ended (`--percentage-random` below 100).
    randoms: Option<ExactShares>,
    /// Where this worker's request before ended.
    prev_end: u64,
    /// Whether a write is followed by a flush (`--fdatasync`), and the flushes owed: writes
    /// that completed and wait for theirs.
    flushes: Option<ExactShares>,
    flushes_due: u32,
    /// How a flush is made: fdatasync, or fsync (`IoSpec::fsync`).
    flush: Dir,
    slots: Vec<Slot>,
    free: Vec<u32>,
    clock: IntervalClock,
    start: Instant,
    interval: Recorder,
    pacer: Option<Pacer>,
    profile: Option<Profile>,
    /// The trace it replays, opened as it starts.
    trace: Option<TraceFeed>,
    /// Whether its requests have intended starts (a rate cap, a trace as recorded): their
    /// service time is then kept beside the latency from the intended start.
    paced: bool,
    verify: Option<VerifyState>,
    budget: Option<u64>,
    writes: u64,
    tx: Sender<Msg>,
    completions: Vec<Completion>,
    link: Link,
}

/// What the coordinator and one worker share besides its messages.
pub struct Link {
    /// Set by the coordinator when the job is done before its planned end (steady state, no
    /// progress); one flag for every worker.
    pub done: StopFlag,
    /// The worker's I/Os in flight at its last interval boundary, read by the coordinator.
    pub outstanding: Arc<AtomicU64>,
}

impl<'a> Worker<'a> {
    pub fn new(
        id: usize,
        spec: &'a IoSpec,
        mut engine: Box<dyn IoEngine>,
        schedule: Schedule,
        start: Instant,
        tx: Sender<Msg>,
        link: Link,
    ) -> Self {
        let depth = if engine.capabilities().synchronous { 1 } else { spec.iodepth };
        let region = spec.worker_region(id as u32);
        for slot in 0..depth {
            verify::fill_random(engine.buffer(slot), spec.seed ^ ((id as u64) << 32 | slot as u64));
        }
        let workers = spec.workers as u64;
        Worker {
            id,
            spec,
            base: region.start,
            end: region.start + region.len,
            engine,
            rng: crate::rng::stream(spec.seed, id as u64),
            offsets: OffsetGen::new(spec.pattern, region, spec.block_sizes.min()),
            sizes: SizeDraws::new(&spec.block_sizes),
            dirs: {
                let reads = u64::from(spec.reads.hundredths());
                ExactShares::new(&[reads, 10_000 - reads])
            },
            randoms: (spec.random < super::Share::ALL).then(|| {
                let random = u64::from(spec.random.hundredths());
                ExactShares::new(&[random, 10_000 - random])
            }),
            prev_end: region.start,
            flushes: spec
                .writes_per_flush
                .map(|n| ExactShares::new(&[100, u64::from(n).saturating_sub(100)])),
            flushes_due: 0,
            flush: if spec.fsync { Dir::Fsync } else { Dir::Flush },
            slots: vec![Slot::default(); depth as usize],
            free: (0..depth).rev().collect(),
            clock: IntervalClock::new(schedule),
            start,
            interval: Recorder::default(),
            pacer: spec.rate_iops.map(|r| Pacer::at_rate(r / workers as f64, CatchUp::Every)),
            profile: spec.rate_profile.clone().filter(|_| spec.rate_iops.is_some()).map(|rates| Profile {
                rates,
                workers: workers as f64,
                from_ns: spec.ramp.as_nanos() as u64,
                second: None,
            }),
            trace: None,
            paced: spec.rate_iops.is_some()
                || spec.trace.as_ref().is_some_and(|t| t.pace != crate::blocktrace::replay::Pace::Fast),
            verify: spec
                .verify
                .then(|| VerifyState::new(spec.seed, spec.block_sizes.max() as u64, region.len)),
            budget: match spec.end {
                End::Bytes(total) | End::BytesWithin(total, _) => Some(total.div_ceil(workers)),
                End::Time(_) | End::Trace => None,
            },
            writes: 0,
            tx,
            completions: Vec::with_capacity(depth as usize),
            link,
        }
    }

    #[inline]
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Runs the job until its end, a stop request, or a failure of the engine itself.
    pub fn run(mut self, stop: &StopFlag) -> std::io::Result<()> {
        let end_ns = self.clock.schedule().end_ns;
        let result = self
            .engine
            .start()
            .and_then(|()| self.open_trace())
            .and_then(|()| self.main_loop(stop, end_ns))
            .and_then(|()| self.trace.as_mut().and_then(|t| t.failure.take()).map_or(Ok(()), Err));
        let end = end_ns.map_or(self.now(), |e| self.now().min(e));
        self.flush(end);
        let _ = self.tx.send(Msg::Measured { worker: self.id });
        if result.is_ok() && self.verify.is_some() && !stop.is_stopped() {
            self.verify_pass(stop)?;
        }
        if let Some(v) = self.verify.take() {
            let _ = self.tx.send(Msg::Verified { report: v.report });
        }
        result
    }

    fn open_trace(&mut self) -> std::io::Result<()> {
        if let Some(source) = &self.spec.trace {
            let region = super::Region { start: self.base, len: self.end - self.base };
            self.trace = Some(TraceFeed::open(source, region, self.spec.block_sizes.max())?);
        }
        Ok(())
    }

    fn main_loop(&mut self, stop: &StopFlag, end_ns: Option<u64>) -> std::io::Result<()> {
        let mut now = self.now();
        loop {
            let ending = stop.is_stopped()
                || self.link.done.is_stopped()
                || end_ns.is_some_and(|e| now >= e)
                || self.budget == Some(0)
                || self.trace.as_ref().is_some_and(|t| t.peek().is_none());
            // A write's flush goes out even as the job ends: the write asked for it.
            self.issue_flushes(now);
            if !ending {
                self.issue(now);
            }
            let in_flight = self.slots.len() - self.free.len();
            if ending && in_flight == 0 {
                return Ok(());
            }
            let timeout = self.wait_limit(now, end_ns);
            let min = u32::from(in_flight > 0);
            self.engine.submit_and_reap(min, timeout, &mut self.completions)?;
            now = self.now();
            self.roll_intervals(now, end_ns);
            let counted = end_ns.is_none_or(|e| now < e);
            let mut done = std::mem::take(&mut self.completions);
            for c in done.drain(..) {
                self.complete(c, now, counted);
            }
            self.completions = done;
        }
    }

    /// How long a reap may wait: until the next interval boundary, paced issue or the end.
    fn wait_limit(&self, now: u64, end_ns: Option<u64>) -> Option<Duration> {
        let mut until = self.clock.schedule().boundary(self.clock.index());
        if let Some(p) = &self.pacer {
            until = until.min(p.next_ns());
        }
        if let Some(due) = self.trace.as_ref().and_then(|t| t.peek()?.due_ns) {
            until = until.min(due);
        }
        if let Some(e) = end_ns {
            until = until.min(e);
        }
        Some(Duration::from_nanos(until.saturating_sub(now).max(1_000)))
    }

    /// Puts the flushes owed into free slots (they are not paced: each follows its write).
    fn issue_flushes(&mut self, now: u64) {
        while self.flushes_due > 0
            && let Some(slot) = self.free.pop()
        {
            self.flushes_due -= 1;
            self.slots[slot as usize] =
                Slot { start_ns: now, issued_ns: now, dir: Some(self.flush), ..Slot::default() };
            self.engine.queue(Request { slot, file: 0, dir: self.flush, offset: 0, len: 0 });
        }
    }

    /// Fills free slots: all of them, or under a rate cap those whose issue time has come
    /// (each I/O's lag behind it recorded).
    fn issue(&mut self, now: u64) {
        if self.trace.is_some() {
            return self.issue_traced(now);
        }
        while let Some(&slot) = self.free.last() {
            self.follow_profile();
            if self.pacer.as_ref().is_some_and(|p| !p.due(now)) {
                break;
            }
            let Some((req, generation)) = self.next_request(slot) else {
                break;
            };
            let start_ns = match &mut self.pacer {
                Some(p) => p.start(now, &mut self.interval.lag),
                None => now,
            };
            self.free.pop();
            let flush_after =
                req.dir == Dir::Write && self.flushes.as_mut().is_some_and(|f| f.draw(&mut self.rng) == 0);
            self.slots[slot as usize] = Slot {
                start_ns,
                issued_ns: now,
                offset: req.offset,
                len: req.len,
                dir: Some(req.dir),
                generation,
                flush_after,
            };
            self.engine.queue(req);
            if let Some(b) = &mut self.budget {
                *b = b.saturating_sub(req.len as u64);
                if *b == 0 {
                    break;
                }
            }
        }
    }

    /// Fills free slots with the trace's requests that are due (each one's lag behind its
    /// recorded time recorded).
    fn issue_traced(&mut self, now: u64) {
        while let Some(&slot) = self.free.last() {
            let Some(trace) = &mut self.trace else { return };
            if trace.peek().is_none_or(|n| n.due_ns.is_some_and(|due| due > now)) {
                return;
            }
            let Some(next) = trace.take() else { return };
            self.free.pop();
            let start_ns = next.due_ns.map_or(now, |due| {
                self.interval.lag.record(now - due);
                due
            });
            if next.dir == Dir::Write {
                self.prepare_write(slot, next.offset, next.len);
            }
            let crate::blocktrace::replay::Next { dir, offset, len, .. } = next;
            self.slots[slot as usize] =
                Slot { start_ns, issued_ns: now, offset, len, dir: Some(dir), ..Slot::default() };
            self.engine.queue(Request { slot, file: 0, dir, offset, len });
        }
    }

    /// Under a rate profile, the rate of the second the next start falls in; a second with
    /// none is passed over. The warm-up keeps the profile's mean.
    fn follow_profile(&mut self) {
        let (Some(p), Some(pacer)) = (&mut self.profile, &mut self.pacer) else { return };
        loop {
            let Some(since) = pacer.next_ns().checked_sub(p.from_ns) else { return };
            let second = since / NS_PER_S;
            if p.second == Some(second) {
                return;
            }
            p.second = Some(second);
            let rate = p.rates[(second % p.rates.len() as u64) as usize] / p.workers;
            if rate > 0.0 {
                pacer.set_rate(rate);
                return;
            }
            pacer.skip_to(p.from_ns + (second + 1) * NS_PER_S);
        }
    }

    /// The next request for `slot`, with the generation it writes (0 for a read).
    fn next_request(&mut self, slot: u32) -> Option<(Request, u32)> {
        let len = self.sizes.next(&mut self.rng);
        let dir = match self.spec.reads.hundredths() {
            10_000 => Dir::Read,
            0 => Dir::Write,
            _ if self.dirs.draw(&mut self.rng) == 0 => Dir::Read,
            _ => Dir::Write,
        };
        let offset = self.pick_offset(len)?;
        let generation = if dir == Dir::Write { self.prepare_write(slot, offset, len) } else { 0 };
        Some((Request { slot, file: 0, dir, offset, len }, generation))
    }

    /// Under `--verify`, never two requests on one block at once: a read racing a write of
    /// the same block could see either version.
    fn pick_offset(&mut self, len: u32) -> Option<u64> {
        let offset = if let Some(next) = self.continued(len) {
            next
        } else if self.verify.is_none() {
            self.offsets.next(&mut self.rng, len)
        } else {
            (0..8)
                .map(|_| self.offsets.next(&mut self.rng, len))
                .find(|off| self.slots.iter().all(|s| s.dir.is_none() || s.offset != *off))?
        };
        self.prev_end = offset + u64::from(len);
        Some(offset)
    }

    /// Under `--percentage-random`, where a request that is not random goes: where the one
    /// before ended, when the region has room for it there (and, under verify, no request in
    /// flight holds it).
    fn continued(&mut self, len: u32) -> Option<u64> {
        let randoms = self.randoms.as_mut()?;
        let next = self.prev_end;
        let fits = next + u64::from(len) <= self.end;
        let busy = self.verify.is_some() && self.slots.iter().any(|s| s.dir.is_some() && s.offset == next);
        (randoms.draw(&mut self.rng) == 1 && fits && !busy).then_some(next)
    }

    /// Fills the slot's buffer for a write; returns the generation it carries under verify.
    fn prepare_write(&mut self, slot: u32, offset: u64, len: u32) -> u32 {
        self.writes += 1;
        let buf = &mut self.engine.buffer(slot)[..len as usize];
        match &mut self.verify {
            Some(v) => {
                let generation = v.next_generation;
                v.next_generation = generation.wrapping_add(1).max(1);
                verify::write_block(buf, v.seed, offset, generation as u64);
                generation
            }
            None => {
                verify::stamp_unique(buf, offset, self.writes);
                0
            }
        }
    }

    fn complete(&mut self, c: Completion, now: u64, counted: bool) {
        let slot = self.slots[c.slot as usize];
        self.slots[c.slot as usize].dir = None;
        self.free.push(c.slot);
        let Some(dir) = slot.dir else { return };
        if slot.flush_after {
            self.flushes_due += 1;
        }
        if let Some(kind) = c.failure(slot.len) {
            self.interval.errors.count(kind);
            if let (Some(v), Dir::Write) = (&mut self.verify, dir) {
                // A failed write leaves the block's content unknown: stop checking it.
                v.written(slot.offset - self.base, 0);
            }
            return;
        }
        if let Some(v) = &mut self.verify {
            match dir {
                Dir::Write => v.written(slot.offset - self.base, slot.generation),
                Dir::Read => v.check(self.engine.buffer(c.slot), slot, self.base),
                Dir::Flush | Dir::Fsync => {}
            }
        }
        if !counted {
            return;
        }
        let latency = now.saturating_sub(slot.start_ns);
        let counters = match dir {
            Dir::Read => &mut self.interval.read,
            Dir::Write => &mut self.interval.write,
            Dir::Flush | Dir::Fsync => &mut self.interval.flush,
        };
        counters.record(slot.len as u64, latency);
        if self.paced {
            counters.service.record(now.saturating_sub(slot.issued_ns));
        }
    }

    /// Sends every interval that ended by `now`.
    fn roll_intervals(&mut self, now: u64, end_ns: Option<u64>) {
        while self.clock.due(now) {
            let boundary = self.clock.schedule().boundary(self.clock.index());
            if end_ns.is_some_and(|e| boundary >= e) {
                return;
            }
            self.flush(boundary);
        }
    }

    /// Sends the current interval as ending at `end_ns` and starts the next.
    fn flush(&mut self, end_ns: u64) {
        self.link.outstanding.store((self.slots.len() - self.free.len()) as u64, Relaxed);
        let data = Box::new(std::mem::take(&mut self.interval));
        let msg = Msg::Interval { worker: self.id, index: self.clock.index(), end_ns, data };
        let _ = self.tx.send(msg);
        self.clock.advance();
    }

    /// Reads back every block this run wrote and checks it.
    fn verify_pass(&mut self, stop: &StopFlag) -> std::io::Result<()> {
        let base = self.base;
        let Some(v) = self.verify.as_ref() else {
            return Ok(());
        };
        let block = v.block;
        let written: Vec<u64> = v
            .generations
            .iter()
            .enumerate()
            .filter(|(_, g)| **g > 0)
            .map(|(i, _)| i as u64 * block)
            .collect();
        for chunk in written.chunks(self.slots.len()) {
            if stop.is_stopped() {
                break;
            }
            for (slot, rel) in chunk.iter().enumerate() {
                let req = Request {
                    slot: slot as u32,
                    file: 0,
                    dir: Dir::Read,
                    offset: base + rel,
                    len: block as u32,
                };
                self.slots[slot] =
                    Slot { offset: req.offset, len: req.len, dir: Some(Dir::Read), ..Slot::default() };
                self.engine.queue(req);
            }
            let mut got = Vec::with_capacity(chunk.len());
            while got.len() < chunk.len() {
                self.engine.submit_and_reap((chunk.len() - got.len()) as u32, None, &mut got)?;
            }
            for c in got {
                self.check_verified_read(c, base);
            }
        }
        Ok(())
    }

    fn check_verified_read(&mut self, c: Completion, base: u64) {
        let slot = self.slots[c.slot as usize];
        self.slots[c.slot as usize].dir = None;
        if c.failure(slot.len).is_some() {
            if let Some(v) = &mut self.verify {
                v.report.failed_reads += 1;
            }
            return;
        }
        let buf = self.engine.buffer(c.slot);
        if let Some(v) = &mut self.verify {
            v.check(buf, slot, base);
        }
    }
}

impl VerifyState {
    fn new(seed: u64, block: u64, region_len: u64) -> Self {
        let blocks = (region_len / block) as usize;
        VerifyState {
            seed,
            block,
            generations: vec![0; blocks],
            next_generation: 1,
            report: VerifyReport::default(),
        }
    }

    /// A write of `generation` completed at region offset `rel`.
    fn written(&mut self, rel: u64, generation: u32) {
        self.generations[(rel / self.block) as usize] = generation;
    }

    fn check(&mut self, buf: &[u8], slot: Slot, base: u64) {
        let generation = self.generations[((slot.offset - base) / self.block) as usize];
        if generation == 0 {
            return;
        }
        self.report.checked += 1;
        if let Err(bad) =
            verify::check_block(&buf[..slot.len as usize], self.seed, slot.offset, generation as u64)
        {
            self.report.mismatches += 1;
            if self.report.first.len() < MAX_MISMATCHES_KEPT {
                self.report.first.push((slot.offset, bad));
            }
        }
    }
}
