//! The final audit pass, after a run and for `integrity verify`: reads every whole page of the
//! workload's files in order (O_DIRECT where the filesystem allows it, so the device is read
//! and not the page cache, with a reader thread a few chunks ahead of the checks), judges each against the journal (`verdict::classify`, with no
//! generation read before), and names each acknowledged page that lies past its file's end as
//! a lost write. Counts errors by class, lists every damaged page and keeps the first error
//! records.
//!
//! A page holding a generation the journal never reserved cannot be storage's doing (a
//! sector's seal binds its generation to its page): the journal is short or damaged, and the
//! audit says so (`JournalError::Behind`) instead of blaming every such page on the storage.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::journal::{Expected, JournalError};
use super::page::{PAGE, PageId, check_page};
use super::verdict::{ErrorClass, ErrorRecord, Verdict, classify};
use crate::engine::AlignedBuf;
use crate::engine::{Dir, error_kind};
use crate::run::StopFlag;

/// Bytes read at once: large sequential reads, so the audit runs at the device's bandwidth.
const CHUNK: usize = 1 << 20;
/// Reads in flight: two, so that the device never waits for the next request (a single
/// reader at a time reached about 0.9 of a 1 MiB sequential read's rate).
const READERS: usize = 2;
/// Chunks the readers may be ahead of the checks, plus the one being checked.
const BUFFERS: usize = 4;
/// How many error records a report keeps; the counts go on.
pub const MAX_ERRORS_KEPT: usize = 1000;
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// What the audit found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct AuditReport {
    /// Pages read and judged (a page whose read failed counts: it is a read error).
    pub pages_checked: u64,
    /// Errors by class; a class without errors is absent.
    pub errors_by_class: BTreeMap<ErrorClass, u64>,
    /// The first errors found (at most `MAX_ERRORS_KEPT`), in file order and by offset within a
    /// file.
    pub first_errors: Vec<ErrorRecord>,
    /// Every page found damaged and its class, in file and page order (the suspect pages).
    #[serde(skip)]
    pub damaged: Vec<(PageId, ErrorClass)>,
    /// False when a stop request ended the audit before every page was read.
    pub complete: bool,
    /// Pages holding a generation the journal never reserved, and the first of them with its
    /// generation (see the module docs).
    #[serde(skip)]
    pub(super) beyond_journal: (u64, Option<(PageId, u64)>),
}

impl AuditReport {
    /// Errors of all classes.
    pub fn errors(&self) -> u64 {
        self.errors_by_class.values().sum()
    }

    /// Every page was checked and none was wrong.
    pub fn ok(&self) -> bool {
        self.complete && self.errors() == 0
    }

    fn add(&mut self, record: ErrorRecord) {
        *self.errors_by_class.entry(record.class).or_default() += 1;
        self.damaged.push((PageId { file: record.file, page: record.page }, record.class));
        if self.first_errors.len() < MAX_ERRORS_KEPT {
            self.first_errors.push(record);
        }
    }

    /// Refuses the judgement when pages hold writes the journal never reserved.
    fn check_journal(self, expected: &Expected) -> Result<AuditReport, JournalError> {
        match self.beyond_journal {
            (pages, Some((first, generation))) => Err(JournalError::Behind {
                path: expected.path.clone(),
                pages,
                first,
                generation,
                limit: expected.issued_limit,
            }),
            _ => Ok(self),
        }
    }
}

/// Where one of the workload's files lies: a file of its own (base 0, all of it), or a region
/// of a block device (its first byte and its length in pages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub id: u16,
    pub path: std::path::PathBuf,
    pub base: u64,
    /// None: every whole page of the file.
    pub pages: Option<u64>,
}

impl Region {
    /// A file of its own.
    pub fn file(id: u16, path: &Path) -> Region {
        Region { id, path: path.to_path_buf(), base: 0, pages: None }
    }
}

/// Audits `files` against `expected`; `progress` gets (bytes read, bytes
/// total) about five times a second and once at the end. A file that cannot be opened or sized
/// is an error, and so is a journal shown short or damaged by the pages (`JournalError::Behind`);
/// a read that fails is a `read_errors` record of each page it failed on.
pub fn audit(
    files: &[Region],
    expected: &Expected,
    stop: &StopFlag,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<AuditReport, JournalError> {
    let opened = files.iter().map(DataFile::open).collect::<crate::Result<Vec<_>>>()?;
    let mut meter = Meter::new(opened.iter().map(|f| f.pages * PAGE as u64).sum(), progress);
    let mut report = AuditReport::default();
    let mut complete = true;
    for file in &opened {
        let buffers = (0..BUFFERS)
            .map(|_| AlignedBuf::new(CHUNK))
            .collect::<io::Result<Vec<_>>>()
            .map_err(|source| crate::Error::Setup { what: "allocating audit buffers", source })?;
        let read_all = audit_file(file, expected, stop, buffers, &mut report, &mut meter);
        if !read_all {
            complete = false;
            break;
        }
        report_past_end(file, expected, &mut report);
    }
    report.complete = complete;
    // The readers' chunks arrive in any order: the records go in file and offset order.
    report.first_errors.sort_by_key(|e| (e.file, e.offset));
    report.damaged.sort_unstable();
    meter.report();
    report.check_journal(expected)
}

/// One file of the workload, open for reading.
struct DataFile {
    id: u16,
    file: File,
    /// Where page 0 lies.
    base: u64,
    /// Whole pages in the file.
    pages: u64,
}

impl DataFile {
    /// Opens `path` with O_DIRECT, or buffered where the filesystem refuses it (tmpfs).
    fn open(region: &Region) -> crate::Result<DataFile> {
        let (id, path) = (region.id, region.path.as_path());
        let failed = |op| move |source| crate::Error::Io { op, path: path.to_path_buf(), source };
        // A region on a device is the device; in a directory, a regular file (a FIFO or a link
        // put in its place is refused, never waited on or followed).
        let open = |how| match region.pages {
            Some(_)
                if crate::files::entry(path)
                    .ok()
                    .flatten()
                    .is_some_and(|e| e.kind == crate::files::FileKind::BlockDevice) =>
            {
                crate::files::open_device(path, how)
            }
            _ => crate::files::open(path, how),
        };
        let file = match open(crate::files::How::READ.direct(true)) {
            Ok(f) => f,
            Err(e) if e.os_error() == Some(libc::EINVAL) => {
                open(crate::files::How::READ).map_err(|e| failed("open")(e.into()))?
            }
            Err(e) => return Err(failed("open")(e.into())),
        };
        let len = file.metadata().map_err(failed("stat"))?.len();
        let pages = region.pages.unwrap_or(len / PAGE as u64);
        Ok(DataFile { id, file, base: region.base, pages })
    }
}

/// Checks every whole page of `file`, a chunk at a time, while `READERS` reader threads read
/// the next chunks (reader r takes chunks r, r + READERS, ...) into their own buffers; false
/// when a stop request came first.
fn audit_file(
    file: &DataFile,
    expected: &Expected,
    stop: &StopFlag,
    buffers: Vec<AlignedBuf>,
    report: &mut AuditReport,
    meter: &mut Meter,
) -> bool {
    let per_chunk = (CHUNK / PAGE) as u64;
    let (full_tx, full_rx) = std::sync::mpsc::channel::<(usize, u64, u64, AlignedBuf, io::Result<()>)>();
    let mut empties = Vec::with_capacity(READERS);
    let mut checked = 0;
    std::thread::scope(|scope| {
        let mut buffers = buffers.into_iter();
        for reader in 0..READERS {
            let (empty_tx, empty_rx) = std::sync::mpsc::channel::<AlignedBuf>();
            for buf in buffers.by_ref().take(BUFFERS / READERS) {
                let _ = empty_tx.send(buf);
            }
            empties.push(empty_tx);
            let full_tx = full_tx.clone();
            scope.spawn(move || {
                let mut first = reader as u64 * per_chunk;
                while first < file.pages && !stop.is_stopped() {
                    let Ok(mut buf) = empty_rx.recv() else { return };
                    let count = (file.pages - first).min(per_chunk);
                    let bytes = &mut buf.as_mut_slice()[..count as usize * PAGE];
                    let result = file.file.read_exact_at(bytes, file.base + first * PAGE as u64);
                    if full_tx.send((reader, first, count, buf, result)).is_err() {
                        return;
                    }
                    first += READERS as u64 * per_chunk;
                }
            });
        }
        drop(full_tx);
        for (reader, first, count, mut buf, result) in full_rx.iter() {
            let chunk = &mut buf.as_mut_slice()[..count as usize * PAGE];
            match result {
                Ok(()) => {
                    for (index, page) in chunk.chunks_exact(PAGE).enumerate() {
                        judge(PageId { file: file.id, page: first + index as u64 }, page, expected, report);
                    }
                }
                Err(_) => reread_pages(file, first, chunk, expected, report),
            }
            checked += count;
            meter.advance(count * PAGE as u64);
            // A reader that has read its last chunk wants no buffer back; the chunks it sent
            // before it ended are still checked.
            let _ = empties[reader].send(buf);
        }
    });
    checked >= file.pages
}

/// After a chunk's read failed: each page alone, so that a read error names the pages it hit
/// and the pages around them are still judged.
fn reread_pages(
    file: &DataFile,
    first: u64,
    chunk: &mut [u8],
    expected: &Expected,
    report: &mut AuditReport,
) {
    for (index, page) in chunk.chunks_exact_mut(PAGE).enumerate() {
        let id = PageId { file: file.id, page: first + index as u64 };
        match file.file.read_exact_at(page, file.base + id.offset()) {
            Ok(()) => judge(id, page, expected, report),
            Err(err) => {
                report.pages_checked += 1;
                report.add(ErrorRecord::of_failed_io(id, Dir::Read, failure(&err)));
            }
        }
    }
}

fn judge(id: PageId, page: &[u8], expected: &Expected, report: &mut AuditReport) {
    let checked = check_page(page, id);
    report.pages_checked += 1;
    match classify(expected.acknowledged(id), checked, None, expected.issued_limit) {
        Verdict::Fine => {}
        Verdict::Error { class, expected: generation } => {
            report.add(ErrorRecord::of_page(id, class, generation, &checked))
        }
        Verdict::NeverIssued { generation } => {
            // The chunks arrive in any order: the first is the lowest page.
            let (pages, first) = &mut report.beyond_journal;
            *pages += 1;
            if first.is_none_or(|(at, _)| id < at) {
                *first = Some((id, generation));
            }
        }
    }
}

/// The errno's name, as the engines name a failed completion; `short` for a file that shrank
/// under the audit.
fn failure(err: &io::Error) -> &'static str {
    match err.raw_os_error() {
        Some(errno) => error_kind(-errno),
        None if err.kind() == io::ErrorKind::UnexpectedEof => error_kind(0),
        None => "other",
    }
}

/// Each page of `file` acknowledged past its end is a lost write, by page order.
fn report_past_end(file: &DataFile, expected: &Expected, report: &mut AuditReport) {
    let mut past_end: Vec<(PageId, u64)> =
        expected.pages().filter(|(id, _)| id.file == file.id && id.page >= file.pages).collect();
    past_end.sort_unstable();
    for (id, acknowledged) in past_end {
        report.add(ErrorRecord::of_page_past_end(id, acknowledged, file.pages));
    }
}

/// Reports progress at most every `PROGRESS_EVERY`.
struct Meter<'a> {
    done: u64,
    total: u64,
    last: Instant,
    progress: &'a mut dyn FnMut(u64, u64),
}

impl<'a> Meter<'a> {
    fn new(total: u64, progress: &'a mut dyn FnMut(u64, u64)) -> Meter<'a> {
        Meter { done: 0, total, last: Instant::now(), progress }
    }

    fn advance(&mut self, bytes: u64) {
        self.done += bytes;
        if self.last.elapsed() >= PROGRESS_EVERY {
            self.report();
        }
    }

    fn report(&mut self) {
        (self.progress)(self.done, self.total);
        self.last = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::PathBuf;

    use super::super::journal::Journal;
    use super::super::page::{SECTOR, write_page};
    use super::*;

    const SEED: u64 = 0x5EED_A0D1;
    /// File 0: 200 written pages (two chunks, the second partial); file 1: 35 written pages
    /// and 5 never written.
    const PAGES: [u64; 2] = [200, 40];
    const WRITTEN: [u64; 2] = [200, 35];
    /// Pages of file 0 written twice, so that they have an older generation to go back to.
    const REWRITTEN: u64 = 10;

    struct Set {
        _dir: tempfile::TempDir,
        paths: [PathBuf; 2],
        expected: Expected,
        /// (file, page) -> every generation written, oldest first.
        history: BTreeMap<(u16, u64), Vec<u64>>,
    }

    impl Set {
        fn audit(&self) -> AuditReport {
            let files = [Region::file(0, &self.paths[0]), Region::file(1, &self.paths[1])];
            audit(&files, &self.expected, &StopFlag::new(), &mut |_, _| {}).unwrap()
        }

        fn image(&self, file: u16, page: u64, generation: u64) -> Vec<u8> {
            let mut buf = vec![0u8; PAGE];
            write_page(&mut buf, PageId { file, page }, generation, SEED);
            buf
        }

        fn overwrite(&self, file: u16, page: u64, bytes: &[u8]) {
            let out = std::fs::OpenOptions::new().write(true).open(&self.paths[file as usize]).unwrap();
            out.write_all_at(bytes, page * PAGE as u64).unwrap();
        }

        fn generations(&self, file: u16, page: u64) -> &[u64] {
            &self.history[&(file, page)]
        }
    }

    /// A healthy set: every write made on disk and journalled, one run-wide generation sequence.
    fn healthy() -> Set {
        let dir = tempfile::tempdir().unwrap();
        let paths = [dir.path().join("data"), dir.path().join("log")];
        let mut journal = Journal::create(&dir.path().join("journal"), 1).unwrap();
        journal.reserve(1000).unwrap();
        let mut history: BTreeMap<(u16, u64), Vec<u64>> = BTreeMap::new();
        let mut next = 0;
        let rewrites = (0..REWRITTEN).map(|page| (0u16, page));
        let writes = (0..2u16).flat_map(|file| (0..WRITTEN[file as usize]).map(move |page| (file, page)));
        for (file, page) in writes.chain(rewrites) {
            next += 1;
            journal.record(PageId { file, page }, next).unwrap();
            history.entry((file, page)).or_default().push(next);
        }
        journal.sync().unwrap();
        for (file, path) in paths.iter().enumerate() {
            let mut bytes = vec![0u8; PAGES[file] as usize * PAGE];
            for ((f, page), generations) in history.range((file as u16, 0)..(file as u16 + 1, 0)) {
                let at = *page as usize * PAGE;
                write_page(
                    &mut bytes[at..at + PAGE],
                    PageId { file: *f, page: *page },
                    *generations.last().expect("written at least once"),
                    SEED,
                );
            }
            std::fs::write(path, bytes).unwrap();
        }
        let expected = Journal::load(&dir.path().join("journal")).unwrap();
        Set { _dir: dir, paths, expected, history }
    }

    fn tally(report: &AuditReport) -> Vec<(ErrorClass, u16, u64, u64)> {
        report.first_errors.iter().map(|r| (r.class, r.file, r.page, r.offset)).collect()
    }

    #[test]
    fn a_healthy_set_checks_every_page_without_error_and_reports_progress_to_the_end() {
        let set = healthy();
        let files = [Region::file(0, &set.paths[0]), Region::file(1, &set.paths[1])];
        let mut last = (0, 0);
        let report =
            audit(&files, &set.expected, &StopFlag::new(), &mut |done, total| last = (done, total)).unwrap();
        assert_eq!(report.pages_checked, PAGES.iter().sum::<u64>());
        assert_eq!((report.errors(), report.first_errors.len(), report.complete), (0, 0, true));
        assert!(report.ok());
        let bytes = PAGES.iter().sum::<u64>() * PAGE as u64;
        assert_eq!(last, (bytes, bytes));
    }

    #[test]
    fn files_on_a_filesystem_without_o_direct_are_audited_through_the_page_cache() {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            return crate::testing::skip("no /dev/shm (tmpfs) on this machine", "mount a tmpfs at /dev/shm");
        }
        let set = healthy();
        let dir = tempfile::tempdir_in(shm).unwrap();
        let paths: Vec<PathBuf> = set.paths.iter().map(|p| dir.path().join(p.file_name().unwrap())).collect();
        for (from, to) in set.paths.iter().zip(&paths) {
            std::fs::copy(from, to).unwrap();
        }
        let refused =
            std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(&paths[0]).is_err();
        let files = [Region::file(0, &paths[0]), Region::file(1, &paths[1])];
        let report = audit(&files, &set.expected, &StopFlag::new(), &mut |_, _| {}).unwrap();
        assert!(report.ok(), "tmpfs refuses O_DIRECT ({refused}); the audit reads anyway: {report:?}");
        assert_eq!(report.pages_checked, PAGES.iter().sum::<u64>());
    }

    #[test]
    fn each_damage_on_disk_is_counted_once_by_class_at_its_file_page_and_offset() {
        let set = healthy();
        let old = set.generations(0, 3)[0];
        set.overwrite(0, 3, &set.image(0, 3, old));
        let mut flipped = set.image(0, 100, set.generations(0, 100)[0]);
        flipped[4000] ^= 0x10;
        set.overwrite(0, 100, &flipped);
        let torn = set.image(0, 150, set.generations(0, 150)[0] - 1);
        set.overwrite(0, 150, &torn[..4 * SECTOR]);
        set.overwrite(1, 7, &set.image(1, 8, set.generations(1, 8)[0]));
        let report = set.audit();
        let at = |page: u64| page * PAGE as u64;
        let want = vec![
            (ErrorClass::LostWrites, 0, 3, at(3)),
            (ErrorClass::Checksum, 0, 100, at(100)),
            (ErrorClass::TornPages, 0, 150, at(150)),
            (ErrorClass::MisplacedPages, 1, 7, at(7)),
        ];
        assert_eq!(tally(&report), want);
        let counts = want.iter().map(|w| (w.0, 1)).collect::<BTreeMap<_, _>>();
        assert_eq!(report.errors_by_class, counts);
        assert_eq!((report.pages_checked, report.complete), (PAGES.iter().sum::<u64>(), true));
        let lost = &report.first_errors[0];
        let newest = set.generations(0, 3)[1];
        assert_eq!(
            (&lost.expected[..], &lost.found[..]),
            (&format!("generation {newest} or newer")[..], &format!("generation {old}")[..])
        );
        assert_eq!(
            report.first_errors[3].found,
            format!("file 1 page 8 generation {}", set.generations(1, 8)[0])
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["errors_by_class"]["torn_pages"], 1);
        let damaged: Vec<_> = want.iter().map(|w| (PageId { file: w.1, page: w.2 }, w.0)).collect();
        assert_eq!(report.damaged, damaged, "every damaged page, in file and page order");
    }

    #[test]
    fn acknowledged_pages_past_a_truncated_files_end_are_lost_writes_and_a_cut_page_too() {
        let set = healthy();
        // File 1 keeps 30 whole pages and part of page 30; pages 30-34 were acknowledged.
        let out = std::fs::OpenOptions::new().write(true).open(&set.paths[1]).unwrap();
        out.set_len(30 * PAGE as u64 + 100).unwrap();
        let report = set.audit();
        let want: Vec<_> =
            (30..35).map(|page| (ErrorClass::LostWrites, 1, page, page * PAGE as u64)).collect();
        assert_eq!(tally(&report), want);
        assert_eq!(report.errors_by_class, BTreeMap::from([(ErrorClass::LostWrites, 5)]));
        assert_eq!(report.pages_checked, PAGES[0] + 30);
        let record = &report.first_errors[0];
        assert_eq!(record.expected, format!("generation {} or newer", set.generations(1, 30)[0]));
        assert_eq!(record.found, "past the end of the file (30 whole pages)");
    }

    #[test]
    fn a_journal_cut_after_its_identity_is_a_damaged_journal_not_an_error_of_every_page() {
        let set = healthy();
        let journal = set.paths[0].with_file_name("journal");
        let bytes = std::fs::read(&journal).unwrap();
        // The header (8 bytes) and the identity record (24): no reservation, no acknowledgement.
        std::fs::write(&journal, &bytes[..32]).unwrap();
        let expected = Journal::load(&journal).unwrap();
        let files = [Region::file(0, &set.paths[0]), Region::file(1, &set.paths[1])];
        let err = audit(&files, &expected, &StopFlag::new(), &mut |_, _| {}).unwrap_err();
        let written = WRITTEN.iter().sum::<u64>();
        match &err {
            JournalError::Behind { path, pages, first, limit, .. } => {
                assert_eq!(
                    (path, *pages, *first, *limit),
                    (&journal, written, PageId { file: 0, page: 0 }, 0)
                )
            }
            other => panic!("{other}"),
        }
        let text = err.to_string();
        assert!(text.contains("is damaged") && text.contains("not blamed"), "{text}");
    }

    #[test]
    fn a_stop_requested_before_the_audit_ends_it_incomplete() {
        let set = healthy();
        let files = [Region::file(0, &set.paths[0]), Region::file(1, &set.paths[1])];
        let stop = StopFlag::new();
        stop.stop();
        let report = audit(&files, &set.expected, &stop, &mut |_, _| {}).unwrap();
        assert_eq!((report.complete, report.pages_checked, report.errors()), (false, 0, 0));
        assert!(!report.ok());
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let set = healthy();
        let missing = set.paths[0].with_file_name("absent");
        let err =
            audit(&[Region::file(0, &missing)], &set.expected, &StopFlag::new(), &mut |_, _| {}).unwrap_err();
        assert!(err.to_string().contains("absent"), "{err}");
    }

    #[test]
    fn a_failed_read_is_named_by_its_errno_or_as_short() {
        assert_eq!(failure(&io::Error::from_raw_os_error(libc::EIO)), "EIO");
        assert_eq!(failure(&io::Error::from(io::ErrorKind::UnexpectedEof)), "short");
    }
}
