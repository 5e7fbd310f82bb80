//! The journal of acknowledged writes, kept in its own file apart from the data, so that
//! verification (after a run, or after a crash) knows the newest generation each page must hold.
//!
//! Generations are one run-wide sequence: every page write takes the next, so a generation
//! names one write. The writer keeps two kinds of record:
//! - a reservation, written and synced (`reserve`) before the writer issues any generation
//!   above the last one reserved: no page can hold a generation above the journal's
//!   `issued_limit` unless something other than this run wrote it;
//! - an acknowledgement (`record`), appended after a write completed (and, where the run asks
//!   for it, after its fsync), buffered and made durable by `sync`.
//!
//! The rule verification applies (`verdict::classify`): a page must hold at least its newest
//! acknowledged generation; it may hold a newer one up to `issued_limit`, since a write in
//! flight, or completed but not yet journalled, when the writer died may have reached the disk
//! or not (and may be torn between the two).
//!
//! A third kind of record, a truncation (`truncate`), says a file was cut to a number of pages:
//! acknowledgements of pages past its new end no longer count. It is synced before the file is
//! cut, so a crash between the two leaves pages the journal no longer asks for, never the
//! reverse.
//!
//! Format (little-endian): a header of magic `SBIJ` and version u32, then 24-byte records: page
//! (8), generation (8), file id (2), kind (1), a count byte, crc32c (4) of the 20 bytes before.
//! An acknowledgement covers `count + 1` consecutive pages from `page`, written by one request
//! with consecutive generations from `generation` (one record per request, not per page).
//! After a crash the end of the file may hold a record cut short, a whole record half written
//! (records straddle sectors), or zeros where the filesystem extended the file but the data
//! never arrived: `load` ignores such a tail (one bad record followed by nothing but zeros)
//! and counts its bytes. A bad record followed by a good one is no crash's doing: `load` refuses the journal.
//!
//! A journal is damaged, never evidence against the data, when `load` finds it so (not a
//! journal, a bad record before its end, no run identity: cut to its header) or when the audit
//! finds pages holding generations it never reserved (cut short, or its writes lost): the
//! errors say which journal and what is wrong (`JournalError::Damaged`, `JournalError::Behind`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::page::PageId;

const MAGIC: &[u8; 4] = b"SBIJ";
const VERSION: u32 = 1;
const HEADER: usize = 8;
const RECORD: usize = 24;
const ACKNOWLEDGED: u8 = 1;
const RESERVED: u8 = 2;
const TRUNCATED: u8 = 3;
const IDENTITY: u8 = 4;
/// Pages one acknowledgement record covers at most.
pub const MAX_RUN: u64 = 256;

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error(transparent)]
    Io(#[from] crate::Error),
    #[error(
        "the journal {path} is damaged: {why} (at byte {offset}); the data files cannot be checked against it"
    )]
    Damaged { path: PathBuf, offset: u64, why: &'static str },
    #[error(
        "the journal {path} is damaged: {pages} page(s) hold writes it never reserved (the first, {first}, \
         holds generation {generation}; the journal reserves up to {limit}), so it was cut short or lost \
         writes it had made durable. The data files cannot be checked against it and are not blamed; if \
         the journal lies on the storage under test, that storage lost writes it acknowledged"
    )]
    Behind { path: PathBuf, pages: u64, first: PageId, generation: u64, limit: u64 },
}

pub type Result<T> = std::result::Result<T, JournalError>;

/// The largest journal read back: far past a year of a run's acknowledgements (a record
/// covers up to 256 pages), and a bound on the memory a damaged or foreign file can ask for.
const JOURNAL_LIMIT: u64 = 64 << 30;

/// The writer's side: appends records to a new journal file.
pub struct Journal {
    out: BufWriter<File>,
    path: PathBuf,
}

impl Journal {
    /// Creates the journal at `path` for the files of run `run_id` (its first record, so that
    /// a journal is never checked against another run's files); refuses a path that exists,
    /// so a kept journal is never overwritten.
    pub fn create(path: &Path, run_id: u64) -> Result<Journal> {
        let file = crate::files::create(path, crate::files::How::WRITE)
            .map_err(|e| io_error("create", path)(e.into()))?;
        let mut journal =
            Journal { out: BufWriter::with_capacity(64 * 1024, file), path: path.to_path_buf() };
        let mut header = [0u8; HEADER];
        header[..4].copy_from_slice(MAGIC);
        header[4..].copy_from_slice(&VERSION.to_le_bytes());
        journal.write(&header)?;
        journal.write(&encode(IDENTITY, PageId { file: 0, page: 0 }, run_id))?;
        journal.sync()?;
        Ok(journal)
    }

    /// Appends the acknowledgement of write `generation` of `id` (buffered until `sync`).
    pub fn record(&mut self, id: PageId, generation: u64) -> Result<()> {
        self.record_run(id, generation, 1)
    }

    /// Appends the acknowledgement of one request that wrote `pages` consecutive pages from
    /// `first` with consecutive generations from `generation` (buffered until `sync`).
    pub fn record_run(&mut self, first: PageId, generation: u64, pages: u64) -> Result<()> {
        let mut at = 0;
        while at < pages {
            let count = (pages - at).min(MAX_RUN);
            let id = PageId { file: first.file, page: first.page + at };
            let mut record = encode(ACKNOWLEDGED, id, generation + at);
            record[19] = (count - 1) as u8;
            seal_record(&mut record);
            self.write(&record)?;
            at += count;
        }
        Ok(())
    }

    /// Records that `file` is about to be cut to `pages` pages; durable on return. Call it
    /// before truncating the file.
    pub fn truncate(&mut self, file: u16, pages: u64) -> Result<()> {
        self.write(&encode(TRUNCATED, PageId { file, page: pages }, 0))?;
        self.sync()
    }

    /// Makes every generation up to `up_to` valid to find on disk; durable on return. Call it
    /// before issuing a generation above the last reservation.
    pub fn reserve(&mut self, up_to: u64) -> Result<()> {
        self.write(&encode(RESERVED, PageId { file: 0, page: 0 }, up_to))?;
        self.sync()
    }

    /// Writes what is buffered and waits until it is on stable storage.
    pub fn sync(&mut self) -> Result<()> {
        self.out.flush().map_err(io_error("write", &self.path))?;
        self.out.get_ref().sync_data().map_err(io_error("fsync", &self.path))?;
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(io_error("write", &self.path))?;
        Ok(())
    }

    /// Reads the journal at `path`: what each page must hold.
    pub fn load(path: &Path) -> Result<Expected> {
        let bytes = crate::files::input::read_own(path, JOURNAL_LIMIT)
            .map_err(|e| io_error("read", path)(e.into()))?;
        let mismatch = |offset: usize, why| JournalError::Damaged {
            path: path.to_path_buf(),
            offset: offset as u64,
            why,
        };
        if bytes.len() < HEADER || &bytes[..4] != MAGIC {
            return Err(mismatch(0, "not a storbench integrity journal"));
        }
        if bytes[4..HEADER] != VERSION.to_le_bytes() {
            return Err(mismatch(4, "unknown journal version"));
        }
        let mut expected = Expected::default();
        let mut at = HEADER;
        while let Some(record) = bytes.get(at..at + RECORD) {
            match decode(record) {
                Some(entry) => expected.add(entry).map_err(|why| mismatch(at, why))?,
                None if is_crash_tail(&bytes[at..]) => break,
                None => return Err(mismatch(at, "a bad record before the end")),
            }
            at += RECORD;
        }
        expected.ignored_tail = (bytes.len() - at) as u64;
        if expected.run_id.is_none() {
            return Err(mismatch(HEADER, "it holds no run identity: cut short after its header"));
        }
        expected.path = path.to_path_buf();
        Ok(expected)
    }
}

/// What the journal says each page must hold.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Expected {
    acknowledged: HashMap<PageId, u64>,
    /// The highest generation the writer may have issued.
    pub issued_limit: u64,
    /// Acknowledgements read (a page written twice counts twice).
    pub acknowledgements: u64,
    /// Bytes at the end ignored as a record the crash cut or tore.
    pub ignored_tail: u64,
    /// The run whose files this journal describes.
    pub run_id: Option<u64>,
    /// Where the journal was read from, for the errors that name it.
    pub path: PathBuf,
}

impl Expected {
    /// The newest acknowledged generation of `id`, None if it was never acknowledged.
    pub fn acknowledged(&self, id: PageId) -> Option<u64> {
        self.acknowledged.get(&id).copied()
    }

    /// Every page with an acknowledged write and its newest generation.
    pub fn pages(&self) -> impl Iterator<Item = (PageId, u64)> + '_ {
        self.acknowledged.iter().map(|(&id, &generation)| (id, generation))
    }

    fn add(&mut self, entry: Entry) -> std::result::Result<(), &'static str> {
        match entry {
            Entry::Reserved(up_to) if up_to < self.issued_limit => {
                return Err("a reservation below an earlier one");
            }
            Entry::Reserved(up_to) => self.issued_limit = up_to,
            Entry::Acknowledged(first, generation, count)
                if first.page.checked_add(count - 1).is_none()
                    || generation.checked_add(count - 1).is_none_or(|last| last > self.issued_limit) =>
            {
                return Err("an acknowledged generation above the reservation");
            }
            Entry::Acknowledged(first, generation, count) => {
                for at in 0..count {
                    let id = PageId { file: first.file, page: first.page + at };
                    let newest = self.acknowledged.entry(id).or_default();
                    *newest = (*newest).max(generation + at);
                }
                self.acknowledgements += count;
            }
            Entry::Identity(run_id) => self.run_id = Some(run_id),
            Entry::Truncated(file, pages) => {
                self.acknowledged.retain(|id, _| id.file != file || id.page < pages)
            }
        }
        Ok(())
    }
}

enum Entry {
    /// The first page, its generation, and the pages the request wrote.
    Acknowledged(PageId, u64, u64),
    Reserved(u64),
    /// A file and the pages it was cut to.
    Truncated(u16, u64),
    Identity(u64),
}

fn encode(kind: u8, id: PageId, generation: u64) -> [u8; RECORD] {
    let mut record = [0u8; RECORD];
    record[..8].copy_from_slice(&id.page.to_le_bytes());
    record[8..16].copy_from_slice(&generation.to_le_bytes());
    record[16..18].copy_from_slice(&id.file.to_le_bytes());
    record[18] = kind;
    seal_record(&mut record);
    record
}

fn seal_record(record: &mut [u8; RECORD]) {
    let crc = crc32c::crc32c(&record[..20]);
    record[20..].copy_from_slice(&crc.to_le_bytes());
}

fn decode(record: &[u8]) -> Option<Entry> {
    let word = |at: usize| u64::from_le_bytes(record[at..at + 8].try_into().expect("8 bytes"));
    if record[20..] != crc32c::crc32c(&record[..20]).to_le_bytes() {
        return None;
    }
    let id = PageId { file: u16::from_le_bytes([record[16], record[17]]), page: word(0) };
    let count = u64::from(record[19]) + 1;
    match record[18] {
        ACKNOWLEDGED => Some(Entry::Acknowledged(id, word(8), count)),
        RESERVED if count == 1 => Some(Entry::Reserved(word(8))),
        TRUNCATED if count == 1 => Some(Entry::Truncated(id.file, id.page)),
        IDENTITY if count == 1 => Some(Entry::Identity(word(8))),
        _ => None,
    }
}

/// Whether the bytes from a bad record to the end are what a crash can leave: that one record
/// (cut short or half written), then nothing but zeros.
fn is_crash_tail(tail: &[u8]) -> bool {
    tail.get(RECORD..).is_none_or(|rest| rest.iter().all(|&b| b == 0))
}

fn io_error<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> JournalError + 'a {
    move |source| JournalError::Io(crate::Error::Io { op, path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(file: u16, page: u64) -> PageId {
        PageId { file, page }
    }

    /// A journal of `n` acknowledgements: page i of file i % 3 at generation i + 1, then page 0
    /// of file 0 again at generation n + 1; returns its path and bytes.
    fn written(dir: &Path, n: u64) -> (PathBuf, Vec<u8>) {
        let path = dir.join("journal");
        let mut journal = Journal::create(&path, 7).unwrap();
        journal.reserve(n + 1).unwrap();
        for i in 0..n {
            journal.record(id((i % 3) as u16, i), i + 1).unwrap();
        }
        journal.record(id(0, 0), n + 1).unwrap();
        journal.sync().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        (path, bytes)
    }

    #[test]
    fn records_round_trip_and_the_newest_generation_of_a_page_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes) = written(dir.path(), 10);
        assert_eq!(bytes.len(), HEADER + 13 * RECORD, "identity, reservation, 11 acknowledgements");
        let expected = Journal::load(&path).unwrap();
        assert_eq!(expected.acknowledged(id(0, 0)), Some(11));
        assert_eq!(expected.acknowledged(id(1, 4)), Some(5));
        assert_eq!(expected.acknowledged(id(2, 5)), Some(6));
        assert_eq!(expected.acknowledged(id(1, 5)), None);
        assert_eq!((expected.issued_limit, expected.acknowledgements, expected.ignored_tail), (11, 11, 0));
        assert_eq!(expected.pages().count(), 10);
    }

    #[test]
    fn create_refuses_an_existing_journal() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes) = written(dir.path(), 2);
        assert!(matches!(Journal::create(&path, 7), Err(JournalError::Io(_))));
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "the kept journal is untouched");
    }

    #[test]
    fn a_last_record_cut_at_any_length_is_ignored_and_the_records_before_it_load() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes) = written(dir.path(), 10);
        let last = bytes.len() - RECORD;
        for cut in 0..RECORD {
            std::fs::write(&path, &bytes[..last + cut]).unwrap();
            let expected = Journal::load(&path).unwrap();
            assert_eq!(expected.acknowledged(id(0, 0)), Some(1), "cut at {cut}: the last record is not read");
            assert_eq!((expected.acknowledgements, expected.ignored_tail), (10, cut as u64));
        }
    }

    #[test]
    fn a_half_written_last_record_or_a_zeroed_tail_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut bytes) = written(dir.path(), 10);
        let last = bytes.len() - RECORD;
        bytes[last + 12..].fill(0);
        std::fs::write(&path, &bytes).unwrap();
        let expected = Journal::load(&path).unwrap();
        assert_eq!((expected.acknowledged(id(0, 0)), expected.ignored_tail), (Some(1), RECORD as u64));
        bytes.extend_from_slice(&[0u8; 4096]);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(Journal::load(&path).unwrap().ignored_tail, (RECORD + 4096) as u64);
    }

    #[test]
    fn a_corrupted_record_in_the_middle_is_a_mismatch_at_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes) = written(dir.path(), 10);
        for record in [0, 4, 10] {
            let mut bad = bytes.clone();
            let at = HEADER + record * RECORD;
            bad[at + 9] ^= 0x04;
            std::fs::write(&path, &bad).unwrap();
            match Journal::load(&path) {
                Err(JournalError::Damaged { offset, .. }) => {
                    assert_eq!(offset, at as u64, "record {record}")
                }
                other => panic!("record {record}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_journal_cut_to_its_header_is_damaged_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let (path, bytes) = written(dir.path(), 10);
        for cut in [HEADER, HEADER + RECORD / 2] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let err = Journal::load(&path).unwrap_err();
            assert!(matches!(err, JournalError::Damaged { offset, .. } if offset == HEADER as u64), "{err}");
            let text = err.to_string();
            assert!(text.contains("is damaged") && text.contains("cut short after its header"), "{text}");
            assert!(text.contains(&path.display().to_string()), "names the journal: {text}");
        }
    }

    #[test]
    fn an_acknowledgement_above_the_reservation_or_another_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let mut journal = Journal::create(&path, 7).unwrap();
        journal.reserve(5).unwrap();
        journal.record(id(0, 1), 6).unwrap();
        journal.sync().unwrap();
        let err = Journal::load(&path).unwrap_err();
        assert!(
            matches!(err, JournalError::Damaged { offset, .. } if offset == (HEADER + 2 * RECORD) as u64),
            "{err}"
        );
        std::fs::write(&path, b"not a journal at all").unwrap();
        assert!(matches!(Journal::load(&path), Err(JournalError::Damaged { offset: 0, .. })));
    }

    #[test]
    fn a_run_record_covers_its_pages_and_a_truncation_drops_the_pages_past_the_new_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let mut journal = Journal::create(&path, 7).unwrap();
        journal.reserve(1000).unwrap();
        journal.record_run(id(0, 10), 100, 300).unwrap();
        journal.record_run(id(1, 0), 700, 2).unwrap();
        journal.sync().unwrap();
        let before = Journal::load(&path).unwrap();
        assert_eq!(before.acknowledgements, 302);
        assert_eq!(before.run_id, Some(7));
        assert_eq!(before.acknowledged(id(0, 10)), Some(100));
        assert_eq!(before.acknowledged(id(0, 309)), Some(399), "past the first record's 256 pages");
        assert_eq!(before.acknowledged(id(0, 310)), None);
        assert_eq!(std::fs::read(&path).unwrap().len(), HEADER + 5 * RECORD, "300 pages in two records");
        journal.truncate(0, 200).unwrap();
        let after = Journal::load(&path).unwrap();
        assert_eq!(after.acknowledged(id(0, 199)), Some(289));
        assert_eq!(after.acknowledged(id(0, 200)), None, "cut off");
        assert_eq!(after.acknowledged(id(1, 1)), Some(701), "another file keeps its pages");
    }
}
