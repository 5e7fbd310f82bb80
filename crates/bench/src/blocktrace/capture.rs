//! Capturing a block device's requests from the kernel's block tracepoints
//! (`block_rq_issue`, `block_rq_complete`) through a tracefs instance of storbench's own,
//! filtered in the kernel to the one device: a thread reads the instance's per-CPU binary
//! buffers (`raw`; its text `trace_pipe` where those cannot be opened), pairs
//! each completion with its issue and writes the requests in issue order as they complete,
//! so memory holds only the requests in flight however long the capture. Only the requests'
//! time, place, size, kind, latency and issuing process are seen, never their data.
//!
//! A capture records from an instant on (`Capture::record_from`): one armed before a run's
//! workers start drops what comes before its measured phase by the events' own times (the
//! trace clock is CLOCK_MONOTONIC, as `Instant` is), so no request of the phase is lost to
//! the time tracing takes to switch on.

use super::format::{FUA, Header, META, NO_LATENCY, Op, Record, SYNC, TraceWriter};
use super::raw;
use crate::files::tracefs;
use crate::run::StopFlag;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a request may wait for its completion before it is written without one: twenty
/// times the longest latency seen so far, from 1 s to 30 s (a disk's command timeout). A
/// completion the kernel dropped (its buffer overran) must not hold every later request in
/// memory for long, nor leave its place to be paired with a later request's completion.
const GIVE_UP_MIN_NS: u64 = 1_000_000_000;
const GIVE_UP_MAX_NS: u64 = 30_000_000_000;
const GIVE_UP_TIMES_LONGEST: u64 = 20;

/// The instance's buffer per CPU: room for bursts while the reader catches up.
const BUFFER_KB: &str = "16384";

/// What a capture counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaptureStats {
    /// Requests written.
    pub records: u64,
    /// Completions with no issue seen (the second half of a flush-and-write request, or an
    /// issue before the capture began).
    pub unmatched_completions: u64,
    /// Requests written without a completion (still in flight at the end, or lost).
    pub never_completed: u64,
    /// CPU time of the reading thread, ns: the capture's cost in storbench.
    pub cpu_ns: u64,
    /// Events the kernel dropped or overwrote because its buffer was full (the reader fell
    /// behind): each is a request or a completion missing from the trace.
    pub kernel_dropped: u64,
}

impl CaptureStats {
    /// The reading thread's CPU per request written, µs.
    /// None when it recorded no request: there is nothing to divide its cost by.
    pub fn cpu_us_per_request(&self) -> Option<f64> {
        (self.records > 0).then(|| self.cpu_ns as f64 / 1e3 / self.records as f64)
    }
}

/// A capture running on its own thread until [`Capture::stop`].
pub struct Capture {
    instance: PathBuf,
    /// The monotonic time from which requests are recorded (`u64::MAX`: not yet).
    from_ns: Arc<AtomicU64>,
    stop: StopFlag,
    thread: Option<JoinHandle<std::io::Result<CaptureStats>>>,
}

/// Why a capture could not start.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{0}")]
    Unavailable(String),
    #[error("{0} is not a block device")]
    NotADevice(PathBuf),
    #[error("setting up the kernel's tracing: {0}")]
    Setup(String),
    #[error("the trace file {0}")]
    Output(String),
}

/// The kernel's device number of a block device node, as the tracepoints give it
/// (major << 20 | minor), and its `major,minor`.
pub fn device_number(device: &Path) -> Result<(u64, String), CaptureError> {
    let st = rustix::fs::stat(device).map_err(|_| CaptureError::NotADevice(device.to_path_buf()))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::BlockDevice {
        return Err(CaptureError::NotADevice(device.to_path_buf()));
    }
    let (major, minor) = (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev));
    Ok(((u64::from(major) << 20) | u64::from(minor), format!("{major},{minor}")))
}

/// The device whose requests carry `path`'s I/O, as the block tracepoints name it: a disk or
/// a loop device itself, a partition's disk (the kernel issues a partition's requests on
/// its disk), the disk under a file or directory. A device-mapper or md device issues its
/// requests on its members, each a capture of its own: refused, naming them.
pub fn request_device(path: &Path) -> Result<PathBuf, CaptureError> {
    let info = crate::monitor::device::resolve_device(path)
        .map_err(|e| CaptureError::Setup(format!("{}: {e}", path.display())))?
        .ok_or_else(|| CaptureError::NotADevice(path.to_path_buf()))?;
    match info.kind.as_str() {
        "dm" | "md" => Err(CaptureError::Unavailable(format!(
            "{} is on {} ({}), whose requests the kernel issues on its members ({}): capture one of \
             them by name",
            path.display(),
            info.name,
            info.kind,
            info.members.join(", ")
        ))),
        _ => Ok(Path::new("/dev").join(info.parent.unwrap_or(info.name))),
    }
}

/// Starts capturing `device`'s requests into the new trace file `out` (one storbench makes:
/// an existing file is refused), its header written first: the one start of `storbench
/// capture`, a replay's check and a run's capture stream.
pub fn begin(device: &Path, out: &Path) -> Result<(Capture, Header), CaptureError> {
    let (capture, header) = armed(device, out)?;
    capture.record_from(Instant::now());
    Ok((capture, header))
}

/// As [`begin`], but recording nothing until [`Capture::record_from`] says from when: a run's
/// capture, armed before its workers start.
pub fn armed(device: &Path, out: &Path) -> Result<(Capture, Header), CaptureError> {
    if let Some(why) = tracefs::unavailable(Path::new(tracefs::ROOT)) {
        return Err(CaptureError::Unavailable(why));
    }
    let (_, major_minor) = device_number(device)?;
    let output = |e: &dyn std::fmt::Display| CaptureError::Output(format!("{}: {e}", out.display()));
    let file = crate::files::create(out, crate::files::How::WRITE).map_err(|e| output(&e))?;
    let header = Header {
        device: device.display().to_string(),
        kernel_name: device.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        major_minor,
        size_bytes: crate::target::device::geometry(device).map_or(0, |g| g.size_bytes),
        started_at: jiff::Timestamp::now().to_string(),
        method: "tracefs block_rq_issue and block_rq_complete, filtered in the kernel to the device".into(),
    };
    let writer = TraceWriter::new(file, &header).map_err(|e| output(&e))?;
    Ok((Capture::start(device, writer)?, header))
}

impl Capture {
    /// Starts capturing `device`'s requests into `writer` (the trace's header already
    /// written). Refused, saying what to enable, without root or tracefs.
    pub fn start(device: &Path, writer: TraceWriter<File>) -> Result<Capture, CaptureError> {
        if let Some(why) = tracefs::unavailable(Path::new(tracefs::ROOT)) {
            return Err(CaptureError::Unavailable(why));
        }
        let (dev, _) = device_number(device)?;
        let setup = |e: crate::files::FileError| CaptureError::Setup(e.to_string());
        let instance = tracefs::make_instance(Path::new(tracefs::ROOT), "capture").map_err(setup)?;
        let source = configure(&instance, dev).and_then(|()| source(&instance));
        let source = match source {
            Ok(s) => s,
            Err(e) => {
                let _ = tracefs::remove_instance(&instance);
                return Err(setup(e));
            }
        };
        let from_ns = Arc::new(AtomicU64::new(u64::MAX));
        let stop = StopFlag::new();
        let (until, from) = (stop.clone(), from_ns.clone());
        let thread = std::thread::Builder::new()
            .name("capture".into())
            .spawn(move || follow(source, writer, from, &until))
            .map_err(|e| CaptureError::Setup(e.to_string()))?;
        Ok(Capture { instance, from_ns, stop, thread: Some(thread) })
    }

    /// Records the requests issued from `at` on (a time past or to come); those before are
    /// dropped, and their completions too. Its trace's times count from `at`.
    pub fn record_from(&self, at: Instant) {
        // The two clocks are one, read one after the other: the monotonic reading first, so
        // that a pause between the reads makes the start early (nothing of the run's is
        // before `at`), never late (its first request lost).
        let mono = monotonic_ns();
        let now = Instant::now();
        let at_ns = match at.checked_duration_since(now) {
            Some(ahead) => mono + ahead.as_nanos() as u64,
            None => mono.saturating_sub(now.duration_since(at).as_nanos() as u64),
        };
        self.from_ns.store(at_ns, Relaxed);
    }

    /// Stops the capture: tracing off, what the kernel still holds read, every request in
    /// flight written, the instance removed. What it counted.
    pub fn stop(mut self) -> std::io::Result<CaptureStats> {
        let _ = tracefs::set(&self.instance, "tracing_on", "0");
        self.stop.stop();
        let stats = self.thread.take().map_or(Ok(CaptureStats::default()), |t| {
            t.join().unwrap_or_else(|_| Err(std::io::Error::other("the capture thread failed")))
        });
        let dropped = kernel_dropped(&self.instance);
        let _ = tracefs::remove_instance(&self.instance);
        stats.map(|s| CaptureStats { kernel_dropped: dropped, ..s })
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.stop();
            let _ = t.join();
            let _ = tracefs::remove_instance(&self.instance);
        }
    }
}

/// The instance's settings: the monotonic clock, a buffer, the two events filtered in the
/// kernel to device `dev`, tracing on.
fn configure(instance: &Path, dev: u64) -> Result<(), crate::files::FileError> {
    tracefs::set(instance, "trace_clock", "mono")?;
    tracefs::set(instance, "buffer_size_kb", BUFFER_KB)?;
    for event in ["block_rq_issue", "block_rq_complete"] {
        tracefs::set(instance, &format!("events/block/{event}/filter"), &format!("dev == {dev}"))?;
        tracefs::set(instance, &format!("events/block/{event}/enable"), "1")?;
    }
    tracefs::set(instance, "tracing_on", "1")
}

/// Events the instance's per-CPU buffers lost: overwritten (`overrun`) or refused
/// (`dropped events`), summed over the CPUs.
fn kernel_dropped(instance: &Path) -> u64 {
    let cpus = tracefs::cpu_dirs(instance).unwrap_or_default();
    let stats = cpus.iter().filter_map(|cpu| tracefs::read_small(&cpu.join("stats")).ok());
    stats.map(|text| dropped_in(&text)).sum()
}

/// The lost events one CPU's `stats` counts.
fn dropped_in(stats: &str) -> u64 {
    let count = |line: &str, name: &str| line.strip_prefix(name).and_then(|v| v.trim().parse::<u64>().ok());
    stats.lines().filter_map(|l| count(l, "overrun:").or_else(|| count(l, "dropped events:"))).sum()
}

fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Where the events are read from.
enum Source {
    /// The per-CPU binary buffers, with the events' layout on this kernel.
    Raw(Vec<File>, raw::Layout),
    /// The text pipe.
    Text(File),
}

/// The per-CPU binary buffers where they open and their layout reads, else the text pipe.
fn source(instance: &Path) -> Result<Source, crate::files::FileError> {
    let layout = raw::Layout::read(&instance.join("events"));
    match (tracefs::open_raw_pipes(instance), layout) {
        (Ok(cpus), Ok(layout)) if !cpus.is_empty() => Ok(Source::Raw(cpus, layout)),
        _ => tracefs::open_pipe(instance).map(Source::Text),
    }
}

/// How far behind the last read of every CPU an event must be to be released in order: an
/// event committed just after its CPU was read, with an earlier time, arrives in the next read.
const REORDER_NS: u64 = 2_000_000;

impl Source {
    /// Reads what the kernel holds now into `pairs`; whether anything was read.
    fn read(
        &mut self,
        pairs: &mut Pairs,
        w: &mut TraceWriter<File>,
        buf: &mut Reading,
    ) -> std::io::Result<bool> {
        match self {
            Source::Text(pipe) => match pipe.read(&mut buf.bytes) {
                Ok(0) => Ok(false),
                Ok(n) => {
                    buf.carry.extend_from_slice(&buf.bytes[..n]);
                    let whole = buf.carry.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                    for line in buf.carry[..whole].split(|&b| b == b'\n') {
                        if let Some(e) = parse_line(&String::from_utf8_lossy(line)) {
                            pairs.event(e, w)?;
                        }
                    }
                    buf.carry.drain(..whole);
                    Ok(true)
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                    Ok(false)
                }
                Err(e) => Err(e),
            },
            Source::Raw(cpus, layout) => {
                let mut any = false;
                let mut read_to = u64::MAX;
                let page = &mut buf.bytes[..buf.page];
                for cpu in cpus.iter_mut() {
                    read_to = read_to.min(monotonic_ns());
                    loop {
                        match cpu.read(page) {
                            Ok(0) => break,
                            Ok(n) => {
                                raw::page_events(&page[..n], layout, &mut buf.events);
                                buf.ordered.add(&mut buf.events);
                                any = true;
                            }
                            Err(e) if e.kind() == ErrorKind::Interrupted => {}
                            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                            Err(e) => return Err(e),
                        }
                    }
                }
                for (_, e) in buf.ordered.release(read_to.saturating_sub(REORDER_NS)) {
                    pairs.event(e, w)?;
                }
                Ok(any)
            }
        }
    }

    /// Every event still held, in order (the end of the capture).
    fn drain(
        &mut self,
        pairs: &mut Pairs,
        w: &mut TraceWriter<File>,
        buf: &mut Reading,
    ) -> std::io::Result<()> {
        for (_, e) in buf.ordered.release(u64::MAX) {
            pairs.event(e, w)?;
        }
        Ok(())
    }
}

/// What reading reuses: the bytes read, a text line's start, the events of a page and the
/// events held for their order; and a ring-buffer page's size (the system's page).
struct Reading {
    page: usize,
    bytes: Vec<u8>,
    carry: Vec<u8>,
    events: Vec<(u64, Event)>,
    ordered: raw::Ordered,
}

/// Reads the source until stopped and drained, pairing and writing.
fn follow(
    mut source: Source,
    mut writer: TraceWriter<File>,
    from_ns: Arc<AtomicU64>,
    stop: &StopFlag,
) -> std::io::Result<CaptureStats> {
    let cpu_at = thread_cpu_ns();
    let mut pairs = Pairs::new(from_ns.clone());
    let page = crate::monitor::memory::page_size();
    let mut buf = Reading {
        page,
        bytes: vec![0u8; (1 << 20).max(page)],
        carry: Vec::new(),
        events: Vec::new(),
        ordered: raw::Ordered::default(),
    };
    if let Source::Text(pipe) = &source {
        rustix::fs::fcntl_setfl(pipe, rustix::fs::OFlags::NONBLOCK)?;
    }
    let mut quiet = 0;
    loop {
        // Armed and not yet told from when: the kernel's buffer holds the events meanwhile,
        // so none of the measured phase is read (and dropped) before its start is known.
        if from_ns.load(Relaxed) == u64::MAX && !stop.is_stopped() {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        if source.read(&mut pairs, &mut writer, &mut buf)? {
            quiet = 0;
            if matches!(source, Source::Text(_)) {
                continue;
            }
        }
        writer.flush_if_due()?;
        // Stopped, the pipe is drained only once it stayed empty for 50 ms: a read can find
        // it empty while another CPU's buffer still holds the run's last events.
        if stop.is_stopped() {
            quiet += 1;
            if quiet >= 10 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    source.drain(&mut pairs, &mut writer, &mut buf)?;
    pairs.finish(&mut writer)?;
    let mut stats = pairs.stats;
    stats.records = writer.records;
    stats.cpu_ns = thread_cpu_ns().saturating_sub(cpu_at);
    writer.finish()?.sync_all()?;
    Ok(stats)
}

/// A request waiting for its completion, in issue order.
struct Waiting {
    record: Record,
    issued_ns: u64,
    done: bool,
    /// The issue number of the next request waiting at the same place ([`NONE`] if none).
    next: u64,
}

/// No issue number: the end of a place's chain.
const NONE: u64 = u64::MAX;

/// Where a request is: its sector, its length in sectors, and whether it is a flush.
type Place = (u64, u32, bool);

/// The requests waiting at one place, oldest first, as a chain through the queue's `next`.
#[derive(Clone, Copy)]
struct Chain {
    head: u64,
    tail: u64,
}

/// A map by place with a hash of a few multiplications: a request's place is looked up twice
/// per request, where the default hash (SipHash) cost more than the pairing.
type ByPlace<V> = HashMap<Place, V, std::hash::BuildHasherDefault<PlaceHasher>>;

/// Folds each number written into one word by a multiply (Fx-style): places are not chosen
/// by an adversary, and a collision costs a probe, not correctness.
#[derive(Default)]
struct PlaceHasher(u64);

impl std::hash::Hasher for PlaceHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
}

/// Completions paired with issues, requests written in issue order.
struct Pairs {
    /// Requests issued before this monotonic time are not recorded.
    from_ns: Arc<AtomicU64>,
    /// By place: the requests issued before `from_ns` whose completion is still to come.
    before: ByPlace<u32>,
    queue: VecDeque<Waiting>,
    /// The issue number of the queue's front.
    front: u64,
    /// By place: the requests waiting there (only places with one waiting are kept, so the
    /// map holds what is in flight, not every place the run touched).
    by_place: ByPlace<Chain>,
    /// The longest issue-to-complete time paired so far.
    longest_ns: u64,
    stats: CaptureStats,
}

impl Pairs {
    fn new(from_ns: Arc<AtomicU64>) -> Pairs {
        Pairs {
            from_ns,
            before: ByPlace::default(),
            queue: VecDeque::new(),
            front: 0,
            by_place: ByPlace::default(),
            longest_ns: 0,
            stats: CaptureStats::default(),
        }
    }

    /// One line of `trace_pipe` (the tests' way in).
    #[cfg(test)]
    fn line(&mut self, line: &str, w: &mut TraceWriter<File>) -> std::io::Result<()> {
        parse_line(line).map_or(Ok(()), |e| self.event(e, w))
    }

    fn event(&mut self, event: Event, w: &mut TraceWriter<File>) -> std::io::Result<()> {
        match event {
            Event::Issue { at_ns, pid, sector, sectors, bytes, op, flags } => {
                let from_ns = self.from_ns.load(Relaxed);
                if at_ns < from_ns {
                    *self.before.entry(key(sector, sectors, op)).or_default() += 1;
                    return Ok(());
                }
                let issue_ns = at_ns - from_ns;
                let record = Record { issue_ns, sector, bytes, latency_us: NO_LATENCY, op, flags, pid };
                let n = self.front + self.queue.len() as u64;
                self.queue.push_back(Waiting { record, issued_ns: at_ns, done: false, next: NONE });
                self.chain(key(sector, sectors, op), n);
            }
            Event::Complete { at_ns, sector, sectors, op } => {
                match self.waiting_for(at_ns, key(sector, sectors, op)) {
                    Some(i) => {
                        let w = &mut self.queue[i];
                        let ns = at_ns.saturating_sub(w.issued_ns);
                        self.longest_ns = self.longest_ns.max(ns);
                        w.record.latency_us = (ns / 1000).min(u64::from(NO_LATENCY - 1)) as u32;
                        w.done = true;
                    }
                    None => self.unmatched(key(sector, sectors, op)),
                }
                self.write_ready(at_ns, w)?;
            }
        }
        Ok(())
    }

    /// A completion paired with no recorded issue: one issued before the capture recorded,
    /// or one whose issue the kernel did not show (counted).
    fn unmatched(&mut self, place: Place) {
        match self.before.get_mut(&place) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => drop(self.before.remove(&place)),
            None => self.stats.unmatched_completions += 1,
        }
    }

    /// How long a request may wait for its completion now.
    fn give_up_ns(&self) -> u64 {
        (self.longest_ns.saturating_mul(GIVE_UP_TIMES_LONGEST)).clamp(GIVE_UP_MIN_NS, GIVE_UP_MAX_NS)
    }

    /// Adds issue `n` at the end of `place`'s chain.
    fn chain(&mut self, place: Place, n: u64) {
        match self.by_place.get_mut(&place) {
            Some(chain) => {
                let i = (chain.tail - self.front) as usize;
                self.queue[i].next = n;
                chain.tail = n;
            }
            None => drop(self.by_place.insert(place, Chain { head: n, tail: n })),
        }
    }

    /// Takes the oldest request off `place`'s chain: its issue number, None if none waits.
    fn unchain(&mut self, place: Place) -> Option<u64> {
        let chain = self.by_place.get_mut(&place)?;
        let n = chain.head;
        match self.queue[(n - self.front) as usize].next {
            NONE => drop(self.by_place.remove(&place)),
            next => chain.head = next,
        }
        Some(n)
    }

    /// The queue index of the oldest request at `place` a completion at `at_ns` can be for:
    /// one waiting longer than [`Pairs::give_up_ns`] lost its own completion and is passed
    /// over (it is written without one when it reaches the front).
    fn waiting_for(&mut self, at_ns: u64, place: Place) -> Option<usize> {
        let give_up = self.give_up_ns();
        while let Some(n) = self.unchain(place) {
            let i = (n - self.front) as usize;
            if at_ns.saturating_sub(self.queue[i].issued_ns) <= give_up {
                return Some(i);
            }
        }
        None
    }

    /// Writes the requests at the front that completed, or that waited too long (`now_ns`).
    fn write_ready(&mut self, now_ns: u64, w: &mut TraceWriter<File>) -> std::io::Result<()> {
        let give_up = self.give_up_ns();
        while let Some(front) = self.queue.front() {
            let given_up = now_ns.saturating_sub(front.issued_ns) > give_up;
            if !front.done && !given_up {
                break;
            }
            if !front.done {
                self.stats.never_completed += 1;
                // Its place is free again for a later request's completion. The front is
                // the oldest request, so where it still waits it heads its place's chain.
                let place = key(front.record.sector, front.record.bytes / 512, front.record.op);
                if self.by_place.get(&place).is_some_and(|c| c.head == self.front) {
                    self.unchain(place);
                }
            }
            let front = self.queue.pop_front().expect("a front");
            self.front += 1;
            w.write(&front.record)?;
        }
        Ok(())
    }

    fn finish(&mut self, w: &mut TraceWriter<File>) -> std::io::Result<()> {
        self.write_ready(u64::MAX, w)
    }
}

fn key(sector: u64, sectors: u32, op: Op) -> Place {
    // A flush's completion names no sector (the kernel prints -1): flushes pair in order.
    match op {
        Op::Flush => (0, 0, true),
        _ => (sector, sectors, false),
    }
}

/// One event: a line of `trace_pipe`, or an event of a per-CPU buffer (`raw`).
#[derive(Debug, PartialEq)]
pub(super) enum Event {
    Issue { at_ns: u64, pid: u32, sector: u64, sectors: u32, bytes: u32, op: Op, flags: u8 },
    Complete { at_ns: u64, sector: u64, sectors: u32, op: Op },
}

/// `dd-14744 [000] ..... 2345.538140: block_rq_issue: 7,0 RS 4096 () 0 + 8 be,0,4 [dd]` or
/// `ksoftirqd/1-22 [001] ..s.. 2345.539851: block_rq_complete: 7,0 RS () 0 + 8 be,0,4 [0]`.
fn parse_line(line: &str) -> Option<Event> {
    let (head, name, rest) = ["block_rq_issue: ", "block_rq_complete: "]
        .iter()
        .find_map(|n| line.split_once(n).map(|(h, r)| (h, *n, r)))?;
    let at = head.trim_end().trim_end_matches(':').rsplit(' ').next()?;
    let at_ns = seconds_to_ns(at)?;
    let mut words = rest.split_whitespace();
    let _dev = words.next()?;
    let rwbs = words.next()?;
    let bytes: Option<u32> =
        if name.starts_with("block_rq_issue") { Some(words.next()?.parse().ok()?) } else { None };
    // The command in parentheses (empty for ordinary requests), then `sector + sectors`.
    let after = rest.split_once(") ")?.1;
    let mut place = after.split_whitespace();
    let sector = place.next()?.parse::<u64>().unwrap_or(u64::MAX);
    let _plus = place.next()?;
    let sectors: u32 = place.next()?.parse().ok()?;
    let (op, flags) = classify(rwbs, sectors);
    Some(match bytes {
        Some(bytes) => {
            let task = head.split(" [").next()?.trim();
            let pid = task.rsplit_once('-').and_then(|(_, p)| p.parse().ok()).unwrap_or(0);
            Event::Issue { at_ns, pid, sector, sectors, bytes, op, flags }
        }
        None => Event::Complete { at_ns, sector, sectors, op },
    })
}

fn seconds_to_ns(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, "0"));
    let frac_ns: u64 = format!("{frac:0<9}").get(..9)?.parse().ok()?;
    Some(whole.parse::<u64>().ok()? * 1_000_000_000 + frac_ns)
}

/// The request's kind and flags from the kernel's rwbs letters: F (a flush before the data, or
/// FUA after it), R, W, D (discard), E (secure erase), S (sync), M (metadata).
pub(super) fn classify(rwbs: &str, sectors: u32) -> (Op, u8) {
    let data = rwbs.find(['R', 'W', 'D', 'E']);
    let op = match data.map(|i| &rwbs[i..=i]) {
        Some("R") => Op::Read,
        Some("W") => Op::Write,
        Some("D" | "E") => Op::Discard,
        _ if rwbs.starts_with('F') && sectors == 0 => Op::Flush,
        _ => Op::Other,
    };
    let after = data.map_or("", |i| &rwbs[i + 1..]);
    let mut flags = 0;
    if after.contains('F') || (op == Op::Flush && rwbs.len() > 1) {
        flags |= FUA;
    }
    if rwbs.contains('S') {
        flags |= SYNC;
    }
    if rwbs.contains('M') {
        flags |= META;
    }
    (op, flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_pipe_lines_become_issues_and_completions() {
        let issue = "              dd-14744   [000] .....  2345.538140: block_rq_issue: 7,0 RS 4096 () 16 + 8 be,0,4 [dd]";
        assert_eq!(
            parse_line(issue),
            Some(Event::Issue {
                at_ns: 2_345_538_140_000,
                pid: 14744,
                sector: 16,
                sectors: 8,
                bytes: 4096,
                op: Op::Read,
                flags: SYNC
            })
        );
        let done = "     ksoftirqd/1-22      [001] ..s..  2345.539851: block_rq_complete: 7,0 WFS () 128 + 128 be,0,4 [0]";
        assert_eq!(
            parse_line(done),
            Some(Event::Complete { at_ns: 2_345_539_851_000, sector: 128, sectors: 128, op: Op::Write })
        );
        let flush = "    kworker/1:1H-44      [001] .....  2345.543122: block_rq_issue: 7,0 FF 0 () 0 + 0 none,0,0 [kworker/1:1H]";
        assert!(matches!(parse_line(flush), Some(Event::Issue { op: Op::Flush, pid: 44, .. })));
        let flushed = "     ksoftirqd/1-22      [001] ..s..  2345.548306: block_rq_complete: 7,0 FF () 18446744073709551615 + 0 none,0,0 [0]";
        assert!(matches!(parse_line(flushed), Some(Event::Complete { op: Op::Flush, .. })));
        assert_eq!(parse_line("# tracer: nop"), None);
        assert_eq!(classify("WFS", 8), (Op::Write, FUA | SYNC));
        assert_eq!(classify("DS", 8).0, Op::Discard);
    }

    #[test]
    fn requests_issued_before_the_capture_records_are_dropped_with_their_completions() {
        let file = tempfile::tempfile().unwrap();
        let mut w = TraceWriter::new(file.try_clone().unwrap(), &Header::default()).unwrap();
        let from = Arc::new(AtomicU64::new(u64::MAX));
        let mut pairs = Pairs::new(from.clone());
        let line = |secs: f64, event: &str, sector: u64| {
            format!("x-7 [000] ..... {secs:.6}: {event}: 7,0 W 4096 () {sector} + 8 be,0,4 [x]")
        };
        // Armed, not yet recording: a write at 10 s; from 10.5 s on: a write at 11 s; the
        // earlier one completes after the start, then the later one.
        pairs.line(&line(10.0, "block_rq_issue", 64), &mut w).unwrap();
        from.store(10_500_000_000, Relaxed);
        pairs.line(&line(11.0, "block_rq_issue", 128), &mut w).unwrap();
        pairs.line(&line(11.0005, "block_rq_complete", 64), &mut w).unwrap();
        pairs.line(&line(11.001, "block_rq_complete", 128), &mut w).unwrap();
        pairs.line(&line(11.002, "block_rq_complete", 256), &mut w).unwrap();
        pairs.finish(&mut w).unwrap();
        assert_eq!(w.records, 1, "only the request issued from the start");
        assert_eq!(pairs.stats.unmatched_completions, 1, "only the completion of no issue at all");
        drop(w);
        let mut file = file;
        std::io::Seek::rewind(&mut file).unwrap();
        let mut reader = super::super::format::TraceReader::new(std::io::BufReader::new(file)).unwrap();
        let r = reader.next_record().unwrap().unwrap();
        assert_eq!((r.sector, r.issue_ns, r.latency_us), (128, 500_000_000, 1000));
    }

    #[test]
    fn a_lost_completion_is_passed_over_not_paired_with_a_later_request_at_its_place() {
        let file = tempfile::tempfile().unwrap();
        let mut w = TraceWriter::new(file.try_clone().unwrap(), &Header::default()).unwrap();
        let mut pairs = Pairs::new(Arc::new(AtomicU64::new(0)));
        let line = |secs: f64, event: &str, flags: &str| {
            format!("x-7 [000] ..... {secs:.6}: {event}: 7,0 {flags} 4096 () 64 + 8 be,0,4 [x]")
        };
        // A read of sector 64 whose completion the kernel dropped, then 2 s later another read
        // of the same place, completed 1 ms after its issue.
        pairs.line(&line(10.0, "block_rq_issue", "R"), &mut w).unwrap();
        pairs.line(&line(12.0, "block_rq_issue", "R"), &mut w).unwrap();
        pairs.line(&line(12.001, "block_rq_complete", "R"), &mut w).unwrap();
        pairs.finish(&mut w).unwrap();
        assert_eq!((pairs.stats.never_completed, pairs.stats.unmatched_completions), (1, 0));
        drop(w);
        let mut file = file;
        std::io::Seek::rewind(&mut file).unwrap();
        let mut reader = super::super::format::TraceReader::new(std::io::BufReader::new(file)).unwrap();
        let first = reader.next_record().unwrap().unwrap();
        let second = reader.next_record().unwrap().unwrap();
        assert_eq!(first.latency_us, NO_LATENCY, "the request that lost its completion has none");
        assert_eq!(second.latency_us, 1000, "the later request keeps its own 1 ms");
    }

    /// Every record of the trace in `file`, in order.
    fn records_of(mut file: File) -> Vec<Record> {
        std::io::Seek::rewind(&mut file).unwrap();
        let mut reader = super::super::format::TraceReader::new(std::io::BufReader::new(file)).unwrap();
        std::iter::from_fn(|| reader.next_record().unwrap()).collect()
    }

    #[test]
    fn requests_at_one_place_pair_oldest_first_and_only_those_in_flight_are_kept() {
        let file = tempfile::tempfile().unwrap();
        let mut w = TraceWriter::new(file.try_clone().unwrap(), &Header::default()).unwrap();
        let mut pairs = Pairs::new(Arc::new(AtomicU64::new(0)));
        let (issue, done) = ("block_rq_issue", "block_rq_complete");
        let events = [
            // Three reads of sector 64 in flight at once and one of sector 128 among them.
            (10.000, issue, 64),
            (10.001, issue, 64),
            (10.0015, issue, 128),
            (10.002, issue, 64),
            (10.003, done, 64),
            (10.004, done, 128),
            (10.005, done, 64),
            (10.006, done, 64),
            // A read of 64 that loses its completion: given up at the front 2 s on (its
            // place freed), then a new read of 64 pairs with its own completion.
            (20.0, issue, 64),
            (21.999, issue, 128),
            (22.0, done, 128),
            (22.5, issue, 64),
            (22.501, done, 64),
        ];
        for (secs, event, sector) in events {
            let line = format!("x-7 [000] ..... {secs:.6}: {event}: 7,0 R 4096 () {sector} + 8 be,0,4 [x]");
            pairs.line(&line, &mut w).unwrap();
        }
        pairs.finish(&mut w).unwrap();
        assert!(pairs.by_place.is_empty(), "nothing is in flight after the last completion");
        assert_eq!((pairs.stats.never_completed, pairs.stats.unmatched_completions), (1, 0));
        drop(w);
        let got: Vec<(u64, u32)> = records_of(file).iter().map(|r| (r.sector, r.latency_us)).collect();
        let want =
            [(64, 3000), (64, 4000), (128, 2500), (64, 4000), (64, NO_LATENCY), (128, 1000), (64, 1000)];
        assert_eq!(got, want);
    }

    #[test]
    fn a_cpus_lost_events_are_its_overruns_and_dropped_events() {
        let stats =
            "entries: 3\noverrun: 12\ncommit overrun: 0\nbytes: 9\ndropped events: 5\nread events: 40\n";
        assert_eq!(dropped_in(stats), 17);
        assert_eq!(dropped_in(""), 0);
    }
}
