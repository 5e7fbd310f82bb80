//! A seeded fault-injecting engine wrapper, to prove the integrity checker: wrapped around any
//! engine, `FaultyEngine` makes the faults of a `FaultRules` as a failing device, controller or
//! cache would (a write acknowledged but never made, a read served from before the last write,
//! a write torn after some sectors, a write landing on the wrong block, a late completion, an
//! EIO), and logs each fault it made with its request, so a test can match every injected fault
//! with the error the checker reports, by class and by place.
//!
//! Requests are numbered from 0 in the order they are queued, reads and writes alike; whether
//! a rule faults a request is a pure function of the seed, the rule's index and the request's
//! number, so the same seed and plan fault the same requests of the same sequence.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs::File;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::page::{PAGE, SECTOR};
use super::verdict::ErrorClass;
use crate::engine::{Capabilities, Completion, Dir, IoEngine, Request};
use crate::rng::mix;

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A write is acknowledged but never made.
    DropWrite,
    /// A read returns what its pages held before their last write. Injected only where the
    /// wrapper saw that content: pages written whole through it at least twice.
    StaleRead,
    /// A write makes only its first `sectors` 512-byte sectors and is acknowledged whole. Not
    /// injected on a write no longer than that.
    Tear { sectors: u32 },
    /// A write lands on the neighbouring block of its own length (`misdirected_offset`).
    Misdirect,
    /// The request completes intact, this long after it was queued; other requests
    /// complete meanwhile.
    Delay(Duration),
    /// The request fails with EIO without reaching the device.
    Eio,
}

impl Fault {
    fn applies_to(self, dir: Dir) -> bool {
        match self {
            Fault::DropWrite | Fault::Tear { .. } | Fault::Misdirect => dir == Dir::Write,
            Fault::StaleRead => dir == Dir::Read,
            Fault::Delay(_) | Fault::Eio => true,
        }
    }
}

/// Which requests a rule faults, among those its fault applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum When {
    /// These request numbers.
    Requests(Vec<u64>),
    /// Each request with probability 1/n, drawn from the seed (never for 0).
    OneIn(u64),
}

impl When {
    fn picks(&self, seed: u64, rule: u64, number: u64) -> bool {
        match self {
            When::Requests(numbers) => numbers.contains(&number),
            When::OneIn(n) => *n > 0 && mix(seed ^ mix(number ^ (rule << 56))).is_multiple_of(*n),
        }
    }
}

/// The faults to inject: rules tried in order; the first that picks a request faults it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultRules {
    rules: Vec<(Fault, When)>,
}

impl FaultRules {
    /// This plan with one more rule: `fault` on the requests `when` picks.
    pub fn with(mut self, fault: Fault, when: When) -> FaultRules {
        self.rules.push((fault, when));
        self
    }

    fn pick(&self, seed: u64, number: u64, dir: Dir) -> Option<Fault> {
        let mut rules = self.rules.iter().enumerate();
        rules
            .find(|(rule, (fault, when))| fault.applies_to(dir) && when.picks(seed, *rule as u64, number))
            .map(|(_, (fault, _))| *fault)
    }

    fn may_serve_stale_reads(&self) -> bool {
        self.rules.iter().any(|(fault, _)| *fault == Fault::StaleRead)
    }
}

/// Where a misdirected write lands: the block of the request's length before it, or after it
/// for a request at offset 0, so it stays inside the file and hits another page.
pub fn misdirected_offset(request: &Request) -> u64 {
    let len = u64::from(request.len);
    if request.offset >= len { request.offset - len } else { request.offset + len }
}

/// One fault made: the request's number, the fault and the request as it was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injection {
    pub number: u64,
    pub fault: Fault,
    pub request: Request,
}

impl Injection {
    /// The error class the checker must report for this fault when it reads the faulted place
    /// before it is written again; None for a delay, which must read back intact. A
    /// misdirected write is `MisplacedPages` where it landed (`misdirected_offset`); the page
    /// it was meant for reads as a lost write.
    pub fn class(&self) -> Option<ErrorClass> {
        match self.fault {
            Fault::DropWrite => Some(ErrorClass::LostWrites),
            Fault::StaleRead => Some(ErrorClass::StaleReads),
            Fault::Tear { .. } => Some(ErrorClass::TornPages),
            Fault::Misdirect => Some(ErrorClass::MisplacedPages),
            Fault::Delay(_) => None,
            Fault::Eio if self.request.dir == Dir::Read => Some(ErrorClass::ReadErrors),
            Fault::Eio => Some(ErrorClass::WriteErrors),
        }
    }
}

/// The faults an engine made, in order; a handle that stays valid after the engine is boxed
/// and handed to a workload. It grows by one entry per fault made.
#[derive(Debug, Clone, Default)]
pub struct InjectionLog(Arc<Mutex<Vec<Injection>>>);

impl InjectionLog {
    pub fn all(&self) -> Vec<Injection> {
        self.0.lock().expect("injection log").clone()
    }

    fn push(&self, injection: Injection) {
        self.0.lock().expect("injection log").push(injection);
    }
}

/// Wraps an engine and makes the faults of a plan; see the module docs.
pub struct FaultyEngine {
    inner: Box<dyn IoEngine>,
    plan: FaultRules,
    seed: u64,
    queued: u64,
    /// Kept only when the plan can serve stale reads: two copies of every page written.
    shadow: Option<Shadow>,
    on_completion: HashMap<u32, OnCompletion>,
    /// Completions made here (dropped writes, EIO), handed out at the next reap.
    made: Vec<Completion>,
    /// Completions held back by a delay, with when they are due.
    late: Vec<(Instant, Completion)>,
    reaped: Vec<Completion>,
    log: InjectionLog,
}

/// What to do with a faulted request's completion from the inner engine.
enum OnCompletion {
    /// A torn write: report the whole length as written.
    Acknowledge(u32),
    /// A stale read: overwrite these pieces of the buffer (offset in it, bytes).
    Serve(Vec<(usize, Box<[u8]>)>),
    /// A delayed request: hold the completion until then.
    Due(Instant),
}

impl FaultyEngine {
    pub fn new(inner: Box<dyn IoEngine>, plan: FaultRules, seed: u64) -> FaultyEngine {
        let shadow = plan.may_serve_stale_reads().then(Shadow::default);
        FaultyEngine {
            inner,
            plan,
            seed,
            queued: 0,
            shadow,
            on_completion: HashMap::new(),
            made: Vec::new(),
            late: Vec::new(),
            reaped: Vec::new(),
            log: InjectionLog::default(),
        }
    }

    /// The log of the faults this engine makes.
    pub fn log(&self) -> InjectionLog {
        self.log.clone()
    }

    /// Makes `fault` on `req`; false when it does not apply to this request (a tear no shorter
    /// than the write, a stale read of pages with no earlier content known), which then runs
    /// as asked.
    fn inject(&mut self, fault: Fault, req: Request) -> bool {
        match fault {
            Fault::DropWrite => self.made.push(Completion { slot: req.slot, result: req.len as i32 }),
            Fault::Eio => self.made.push(Completion { slot: req.slot, result: -libc::EIO }),
            Fault::Misdirect => self.pass(Request { offset: misdirected_offset(&req), ..req }),
            Fault::Delay(by) => self.pass_then(req, OnCompletion::Due(Instant::now() + by)),
            Fault::Tear { sectors } => {
                let torn = sectors.saturating_mul(SECTOR as u32);
                if torn >= req.len {
                    return false;
                }
                self.on_completion.insert(req.slot, OnCompletion::Acknowledge(req.len));
                self.pass(Request { len: torn, ..req });
            }
            Fault::StaleRead => {
                let before = self.shadow.as_ref().map(|s| s.before(&req)).unwrap_or_default();
                if before.is_empty() {
                    return false;
                }
                self.pass_then(req, OnCompletion::Serve(before));
            }
        }
        true
    }

    fn pass_then(&mut self, req: Request, then: OnCompletion) {
        self.on_completion.insert(req.slot, then);
        self.pass(req);
    }

    /// Hands `req` to the inner engine, noting what a write puts in the pages it covers.
    fn pass(&mut self, req: Request) {
        if let (Dir::Write, Some(shadow)) = (req.dir, self.shadow.as_mut()) {
            shadow.written(req.file, req.offset, &self.inner.buffer(req.slot)[..req.len as usize]);
        }
        self.inner.queue(req);
    }

    fn finish(&mut self, c: Completion, out: &mut Vec<Completion>) {
        match self.on_completion.remove(&c.slot) {
            None => out.push(c),
            Some(OnCompletion::Acknowledge(len)) if c.result >= 0 => {
                out.push(Completion { result: len as i32, ..c })
            }
            Some(OnCompletion::Serve(pieces)) if c.result >= 0 => {
                let buf = self.inner.buffer(c.slot);
                for (at, bytes) in pieces {
                    buf[at..at + bytes.len()].copy_from_slice(&bytes);
                }
                out.push(c);
            }
            Some(OnCompletion::Due(at)) => self.late.push((at, c)),
            Some(_) => out.push(c),
        }
    }

    fn release_due(&mut self, out: &mut Vec<Completion>) {
        let now = Instant::now();
        let (due, later) = std::mem::take(&mut self.late).into_iter().partition(|(at, _)| *at <= now);
        self.late = later;
        out.extend(due.into_iter().map(|(_, c): (Instant, Completion)| c));
    }

    /// How long the inner engine may wait: until the caller's deadline or the next late
    /// completion, whichever comes first; None for as long as it takes.
    fn wait_until(&self, deadline: Option<Instant>) -> Option<Duration> {
        let next_late = self.late.iter().map(|(at, _)| *at).min();
        deadline.into_iter().chain(next_late).min().map(|at| at.saturating_duration_since(Instant::now()))
    }
}

impl IoEngine for FaultyEngine {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn start(&mut self) -> io::Result<()> {
        self.inner.start()
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.inner.buffer(slot)
    }

    fn replace_file(&mut self, index: u16, file: &File) -> io::Result<()> {
        if let Some(shadow) = self.shadow.as_mut() {
            shadow.pages.retain(|&(f, _), _| f != index);
        }
        self.inner.replace_file(index, file)
    }

    fn queue(&mut self, req: Request) {
        let number = self.queued;
        self.queued += 1;
        match self.plan.pick(self.seed, number, req.dir) {
            Some(fault) if self.inject(fault, req) => {
                self.log.push(Injection { number, fault, request: req })
            }
            _ => self.pass(req),
        }
    }

    /// As the inner engine's, with the completions made here first; held-back completions do
    /// not count toward `min` until they are due, and waiting for them ends at the timeout.
    fn submit_and_reap(
        &mut self,
        min: u32,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let first = out.len();
        out.append(&mut self.made);
        self.release_due(out);
        loop {
            let missing = min.saturating_sub((out.len() - first) as u32);
            let have_some = missing == 0 && out.len() > first;
            let wait = if have_some { Some(Duration::ZERO) } else { self.wait_until(deadline) };
            let mut reaped = std::mem::take(&mut self.reaped);
            self.inner.submit_and_reap(missing, wait, &mut reaped)?;
            for c in reaped.drain(..) {
                self.finish(c, out);
            }
            self.reaped = reaped;
            self.release_due(out);
            let enough = (out.len() - first) as u32 >= min;
            if enough || self.late.is_empty() || deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(());
            }
        }
    }
}

/// What each page written whole through the wrapper held before its last write, and since.
#[derive(Default)]
struct Shadow {
    pages: HashMap<(u16, u64), ShadowPage>,
}

struct ShadowPage {
    before: Option<Box<[u8]>>,
    last: Box<[u8]>,
}

impl Shadow {
    /// Notes that `bytes` go to `offset` of `file`: pages they cover whole take them as their
    /// last content; pages they cover in part are forgotten, their content no longer known.
    fn written(&mut self, file: u16, offset: u64, bytes: &[u8]) {
        let end = offset + bytes.len() as u64;
        for page in offset / PAGE as u64..end.div_ceil(PAGE as u64) {
            let start = page * PAGE as u64;
            if start < offset || start + PAGE as u64 > end {
                self.pages.remove(&(file, page));
                continue;
            }
            let at = (start - offset) as usize;
            let content: Box<[u8]> = bytes[at..at + PAGE].into();
            match self.pages.entry((file, page)) {
                Entry::Occupied(mut e) => {
                    let shadow = e.get_mut();
                    shadow.before = Some(std::mem::replace(&mut shadow.last, content));
                }
                Entry::Vacant(e) => {
                    e.insert(ShadowPage { before: None, last: content });
                }
            }
        }
    }

    /// The earlier content of each whole page `req` covers that has one, by its offset in the
    /// request's buffer.
    fn before(&self, req: &Request) -> Vec<(usize, Box<[u8]>)> {
        let end = req.offset + u64::from(req.len);
        let first = req.offset.div_ceil(PAGE as u64);
        (first..end / PAGE as u64)
            .filter_map(|page| {
                let before = self.pages.get(&(req.file, page))?.before.clone()?;
                Some(((page * PAGE as u64 - req.offset) as usize, before))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::journal::Journal;
    use super::super::page::{Checked, PageId, SECTORS, check_page, write_page};
    use super::super::verdict::{ErrorRecord, Verdict, classify};
    use super::*;
    use crate::engine::{EngineKind, open_files};
    use std::path::PathBuf;

    const SEED: u64 = 0x5EED_0614;
    const PAGES: u64 = 16;

    /// Two files of `PAGES` pages behind a psync engine wrapped in a `FaultyEngine`, written
    /// and checked one page at a time the way the workload will: writes journalled once
    /// acknowledged, reads judged by `classify` against the journal and what was read before.
    struct Rig {
        _dir: tempfile::TempDir,
        engine: FaultyEngine,
        journal: Journal,
        journal_path: PathBuf,
        generation: u64,
        seen: HashMap<PageId, u64>,
    }

    impl Rig {
        fn new(plan: FaultRules) -> Rig {
            let dir = tempfile::tempdir().unwrap();
            let files: Vec<File> = (0..2).map(|i| data_file(&dir.path().join(format!("data{i}")))).collect();
            let inner =
                open_files(EngineKind::Psync, &[&files[0], &files[1]], &[PAGE as u32]).unwrap().engine;
            let journal_path = dir.path().join("journal");
            let mut journal = Journal::create(&journal_path, 1).unwrap();
            journal.reserve(1 << 20).unwrap();
            let engine = FaultyEngine::new(inner, plan, SEED);
            Rig { _dir: dir, engine, journal, journal_path, generation: 0, seen: HashMap::new() }
        }

        /// Writes the next generation of `id`, journalled when acknowledged if `journal`
        /// (false: a write whose acknowledgement is not journalled yet, as one in flight).
        fn write(&mut self, id: PageId, journal: bool) -> Result<u64, ErrorRecord> {
            self.generation += 1;
            write_page(&mut self.engine.buffer(0)[..PAGE], id, self.generation, SEED);
            if let Some(failure) = self.io(Dir::Write, id) {
                return Err(ErrorRecord::of_failed_io(id, Dir::Write, failure));
            }
            if journal {
                self.journal.record(id, self.generation).unwrap();
            }
            Ok(self.generation)
        }

        /// Reads `id` back and judges it: the error record, None when the page is fine.
        fn check(&mut self, id: PageId) -> Option<ErrorRecord> {
            if let Some(failure) = self.io(Dir::Read, id) {
                return Some(ErrorRecord::of_failed_io(id, Dir::Read, failure));
            }
            let checked = check_page(&self.engine.buffer(0)[..PAGE], id);
            self.journal.sync().unwrap();
            let expected = Journal::load(&self.journal_path).unwrap();
            let seen = self.seen.get(&id).copied();
            match classify(expected.acknowledged(id), checked, seen, expected.issued_limit) {
                Verdict::Fine => {
                    if let Checked::Ok { generation } = checked {
                        self.seen.insert(id, generation.max(seen.unwrap_or(0)));
                    }
                    None
                }
                Verdict::Error { class, expected } => {
                    Some(ErrorRecord::of_page(id, class, expected, &checked))
                }
                Verdict::NeverIssued { generation } => {
                    panic!("{id}: generation {generation} was never issued")
                }
            }
        }

        /// One page-sized request on `id` through slot 0; why it failed, None when it did not.
        fn io(&mut self, dir: Dir, id: PageId) -> Option<&'static str> {
            let req = Request { slot: 0, file: id.file, dir, offset: id.offset(), len: PAGE as u32 };
            self.engine.queue(req);
            let mut out = Vec::new();
            while out.is_empty() {
                self.engine.submit_and_reap(1, None, &mut out).unwrap();
            }
            assert_eq!(out.len(), 1);
            out[0].failure(PAGE as u32)
        }

        fn injected(&self) -> Vec<Injection> {
            self.engine.log().all()
        }
    }

    fn data_file(path: &std::path::Path) -> File {
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(path).unwrap();
        file.set_len(PAGES * PAGE as u64).unwrap();
        file
    }

    fn id(file: u16, page: u64) -> PageId {
        PageId { file, page }
    }

    fn at(numbers: &[u64]) -> When {
        When::Requests(numbers.to_vec())
    }

    /// The record's class and place, and what it says was expected and found.
    fn summary(record: &ErrorRecord) -> (ErrorClass, u16, u64, u64, &str, &str) {
        (record.class, record.file, record.page, record.offset, &record.expected, &record.found)
    }

    #[test]
    fn without_faults_many_pages_written_twice_read_back_with_no_error_and_nothing_injected() {
        let mut rig = Rig::new(FaultRules::default());
        let pages: Vec<PageId> = (0..2).flat_map(|f| (0..PAGES).map(move |p| id(f, p))).collect();
        for _ in 0..2 {
            for &page in &pages {
                rig.write(page, true).unwrap();
            }
        }
        let errors: Vec<ErrorRecord> = pages.iter().filter_map(|&page| rig.check(page)).collect();
        assert_eq!(errors, vec![]);
        assert_eq!(rig.seen.len(), pages.len(), "every page read back intact");
        assert!(rig.injected().is_empty());
    }

    #[test]
    fn a_dropped_write_after_a_journalled_one_is_a_lost_write_at_its_page() {
        let mut rig = Rig::new(FaultRules::default().with(Fault::DropWrite, at(&[1])));
        let page = id(1, 5);
        assert_eq!(rig.write(page, true), Ok(1));
        assert_eq!(rig.write(page, true), Ok(2), "the dropped write is acknowledged");
        let record = rig.check(page).expect("a lost write");
        let want = (ErrorClass::LostWrites, 1, 5, 5 * 8192, "generation 2 or newer", "generation 1");
        assert_eq!(summary(&record), want);
        let injected = rig.injected();
        assert_eq!(injected.len(), 1);
        assert_eq!(
            (injected[0].number, injected[0].fault, injected[0].class()),
            (1, Fault::DropWrite, Some(record.class))
        );
        assert_eq!((injected[0].request.file, injected[0].request.offset), (record.file, record.offset));
    }

    #[test]
    fn a_read_served_from_before_the_last_write_is_a_stale_read_once_the_newer_was_read() {
        // Requests: 0 write, 1 read (no earlier content known: not injected), 2 write,
        // 3 read, 4 read (stale), 5 read.
        let mut rig = Rig::new(FaultRules::default().with(Fault::StaleRead, at(&[1, 4])));
        let page = id(0, 9);
        rig.write(page, true).unwrap();
        assert_eq!(rig.check(page), None);
        // Generation 2 is acknowledged but not journalled yet, as a write in flight: a read
        // that goes back to 1 is stale, not lost.
        rig.write(page, false).unwrap();
        assert_eq!(rig.check(page), None);
        let record = rig.check(page).expect("a stale read");
        let want = (ErrorClass::StaleReads, 0, 9, 9 * 8192, "generation 2 or newer", "generation 1");
        assert_eq!(summary(&record), want);
        assert_eq!(rig.check(page), None, "the next read is served from the device again");
        let injected = rig.injected();
        assert_eq!(
            injected.iter().map(|i| (i.number, i.class())).collect::<Vec<_>>(),
            [(4, Some(ErrorClass::StaleReads))]
        );
    }

    #[test]
    fn a_write_torn_after_any_sector_is_a_torn_page_naming_the_sectors_of_each_write() {
        for sectors in 1..SECTORS as u32 {
            let mut rig = Rig::new(FaultRules::default().with(Fault::Tear { sectors }, at(&[1])));
            let page = id(1, 3);
            rig.write(page, true).unwrap();
            assert_eq!(rig.write(page, true), Ok(2), "a torn write is acknowledged whole");
            let record = rig.check(page).expect("a torn page");
            let found = format!("torn: sectors 0-{} generation 2, {sectors}-15 generation 1", sectors - 1);
            let want = (ErrorClass::TornPages, 1, 3, 3 * 8192, "generation 2 or newer", &found[..]);
            assert_eq!(summary(&record), want);
            assert_eq!(rig.injected()[0].class(), Some(ErrorClass::TornPages));
        }
    }

    #[test]
    fn a_tear_no_shorter_than_the_write_is_not_injected() {
        let mut rig = Rig::new(FaultRules::default().with(Fault::Tear { sectors: SECTORS as u32 }, at(&[0])));
        rig.write(id(0, 1), true).unwrap();
        assert_eq!(rig.check(id(0, 1)), None);
        assert!(rig.injected().is_empty());
    }

    #[test]
    fn a_misdirected_write_is_misplaced_where_it_landed_and_lost_where_it_was_meant() {
        // Requests: 0 write page 2, 1 write page 3, 2 write page 3 misdirected onto page 2.
        let mut rig = Rig::new(FaultRules::default().with(Fault::Misdirect, at(&[2])));
        let (meant, hit) = (id(0, 3), id(0, 2));
        rig.write(hit, true).unwrap();
        rig.write(meant, true).unwrap();
        assert_eq!(rig.write(meant, true), Ok(3));
        let injected = rig.injected();
        assert_eq!(misdirected_offset(&injected[0].request), hit.offset());
        let misplaced = rig.check(hit).expect("page 3's content on page 2");
        let want = (
            ErrorClass::MisplacedPages,
            0,
            2,
            2 * 8192,
            "generation 1 or newer",
            "file 0 page 3 generation 3",
        );
        assert_eq!(summary(&misplaced), want);
        assert_eq!(injected[0].class(), Some(misplaced.class));
        let lost = rig.check(meant).expect("page 3 kept its older generation");
        let want = (ErrorClass::LostWrites, 0, 3, 3 * 8192, "generation 3 or newer", "generation 2");
        assert_eq!(summary(&lost), want);
    }

    #[test]
    fn a_write_at_offset_zero_is_misdirected_to_the_next_block() {
        let req = Request { slot: 0, file: 0, dir: Dir::Write, offset: 0, len: 4 * PAGE as u32 };
        assert_eq!(misdirected_offset(&req), 4 * PAGE as u64);
        assert_eq!(misdirected_offset(&Request { offset: 5 * PAGE as u64, ..req }), PAGE as u64);
    }

    #[test]
    fn eio_fails_the_request_without_touching_the_device_as_a_read_or_write_error_at_its_page() {
        // Requests: 0 write, 1 write (EIO), 2 read (EIO), 3 read.
        let mut rig = Rig::new(FaultRules::default().with(Fault::Eio, at(&[1, 2])));
        let page = id(1, 15);
        rig.write(page, true).unwrap();
        let write_error = rig.write(page, true).expect_err("EIO");
        let want = (ErrorClass::WriteErrors, 1, 15, 15 * 8192, "a completed write", "EIO");
        assert_eq!(summary(&write_error), want);
        let read_error = rig.check(page).expect("EIO");
        let want = (ErrorClass::ReadErrors, 1, 15, 15 * 8192, "a completed read", "EIO");
        assert_eq!(summary(&read_error), want);
        assert_eq!(rig.check(page), None, "the failed write never reached the page");
        assert_eq!(rig.seen[&page], 1);
        let classes: Vec<_> = rig.injected().iter().map(Injection::class).collect();
        assert_eq!(classes, [Some(ErrorClass::WriteErrors), Some(ErrorClass::ReadErrors)]);
    }

    #[test]
    fn a_delayed_write_and_read_complete_late_but_intact() {
        let delay = Duration::from_millis(60);
        let mut rig = Rig::new(FaultRules::default().with(Fault::Delay(delay), at(&[0, 1])));
        let page = id(0, 7);
        let start = Instant::now();
        rig.write(page, true).unwrap();
        assert!(start.elapsed() >= delay, "the write completed after {:?}", start.elapsed());
        let start = Instant::now();
        assert_eq!(rig.check(page), None);
        assert!(start.elapsed() >= delay, "the read completed after {:?}", start.elapsed());
        assert_eq!(rig.seen[&page], 1);
        assert_eq!(rig.injected().iter().map(Injection::class).collect::<Vec<_>>(), [None, None]);
    }

    #[test]
    fn a_delayed_completion_lets_others_pass_and_a_reap_still_ends_at_its_timeout() {
        let delay = Duration::from_millis(200);
        let inner = open_files(EngineKind::Null, &[], &[PAGE as u32; 2]).unwrap().engine;
        let mut engine =
            FaultyEngine::new(inner, FaultRules::default().with(Fault::Delay(delay), at(&[0])), SEED);
        let start = Instant::now();
        for slot in 0..2 {
            engine.queue(Request { slot, file: 0, dir: Dir::Read, offset: 0, len: PAGE as u32 });
        }
        let mut out = Vec::new();
        engine.submit_and_reap(1, None, &mut out).unwrap();
        assert_eq!(out, [Completion { slot: 1, result: PAGE as i32 }]);
        engine.submit_and_reap(1, Some(Duration::from_millis(20)), &mut out).unwrap();
        assert_eq!(out.len(), 1, "the late one is not due at the timeout");
        assert!(start.elapsed() < delay);
        engine.submit_and_reap(1, None, &mut out).unwrap();
        assert_eq!(out[1], Completion { slot: 0, result: PAGE as i32 });
        assert!(start.elapsed() >= delay);
    }

    /// The faults a plan of one-in-n rules makes over 4,000 null-engine requests, half reads
    /// and half writes.
    fn one_in_n_injections(seed: u64) -> Vec<Injection> {
        let plan =
            FaultRules::default().with(Fault::DropWrite, When::OneIn(8)).with(Fault::Eio, When::OneIn(8));
        let inner = open_files(EngineKind::Null, &[], &[PAGE as u32]).unwrap().engine;
        let mut engine = FaultyEngine::new(inner, plan, seed);
        let mut out = Vec::new();
        for n in 0..4000u64 {
            let dir = if n % 2 == 0 { Dir::Read } else { Dir::Write };
            engine.queue(Request { slot: 0, file: 0, dir, offset: n * PAGE as u64, len: PAGE as u32 });
            engine.submit_and_reap(1, None, &mut out).unwrap();
        }
        assert_eq!(out.len(), 4000, "every request completes, faulted or not");
        engine.log().all()
    }

    #[test]
    fn the_same_seed_faults_the_same_requests_and_rates_follow_the_plan() {
        let injected = one_in_n_injections(SEED);
        assert_eq!(injected, one_in_n_injections(SEED));
        assert_ne!(injected, one_in_n_injections(SEED + 1));
        let count = |fault| injected.iter().filter(|i| i.fault == fault).count();
        // 2,000 writes at 1/8; then 1/8 of the other 3,750 or so requests.
        assert!((200..300).contains(&count(Fault::DropWrite)), "{}", count(Fault::DropWrite));
        assert!((400..540).contains(&count(Fault::Eio)), "{}", count(Fault::Eio));
        assert!(injected.iter().all(|i| i.fault != Fault::DropWrite || i.request.dir == Dir::Write));
    }

    #[test]
    fn every_fault_of_a_random_plan_is_detected_once_with_its_class_at_its_place() {
        let plan = FaultRules::default()
            .with(Fault::DropWrite, When::OneIn(11))
            .with(Fault::Tear { sectors: 7 }, When::OneIn(13))
            .with(Fault::Eio, When::OneIn(17))
            .with(Fault::Delay(Duration::from_millis(1)), When::OneIn(19));
        let mut rig = Rig::new(plan);
        let mut detected = Vec::new();
        for _ in 0..3 {
            for page in (0..2).flat_map(|f| (0..PAGES).map(move |p| id(f, p))) {
                detected.extend(rig.write(page, true).err());
                detected.extend(rig.check(page));
            }
        }
        let injected = rig.injected();
        let mut want: Vec<_> =
            injected.iter().filter_map(|i| Some((i.class()?, i.request.file, i.request.offset))).collect();
        let mut got: Vec<_> = detected.iter().map(|r| (r.class, r.file, r.offset)).collect();
        want.sort_by_key(|w| format!("{w:?}"));
        got.sort_by_key(|g| format!("{g:?}"));
        assert_eq!(got, want);
        for fault in
            [Fault::DropWrite, Fault::Tear { sectors: 7 }, Fault::Eio, Fault::Delay(Duration::from_millis(1))]
        {
            assert!(injected.iter().any(|i| i.fault == fault), "seed {SEED:#x} injects no {fault:?}");
        }
    }
}
