//! Verifying a set of databases and their logs, after a run or on demand: every database page
//! and every log block read back with O_DIRECT and checked against its checksum and its place.
//!
//! The work is cut into chunks that the threads take from a shared counter, so that a single
//! large database is still checked by every thread. A log file is one chunk: whether a block
//! may hold data depends on the blocks before it (nothing is written after the log's end).

use super::format::{LOG_BLOCK_HEADER, PAGE_HEADER, PageFault, check_log_block, check_page};
use super::layout::{DbFiles, DbState, Manifest, open_direct};
use super::recorder::{Corruption, MAX_CORRUPTIONS_KEPT};
use crate::engine::AlignedBuf;
use crate::run::StopFlag;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Size of each read.
const READ_BYTES: u64 = 1024 * 1024;
/// Database bytes per chunk: few enough chunks that taking one costs nothing, enough that one
/// database of a few GB keeps dozens of threads busy.
const CHUNK_BYTES: u64 = 16 * READ_BYTES;
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// What a verification found.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyReport {
    pub pages_checked: u64,
    pub log_blocks_checked: u64,
    /// Log files read to their end.
    pub log_files: u64,
    /// Bytes read and checked.
    pub bytes: u64,
    pub corruptions: u64,
    /// The first corruptions by file, then offset.
    pub first: Vec<Corruption>,
    pub seconds: f64,
    /// False when a stop request ended the verification before everything was read.
    pub complete: bool,
}

impl VerifyReport {
    /// Everything was checked and nothing was wrong.
    pub fn ok(&self) -> bool {
        self.complete && self.corruptions == 0
    }
}

/// Verifies every page of every database of `manifest` and every block of their log files,
/// on `threads` threads; `progress` gets (bytes processed, bytes total) about five times a
/// second and once at the end, on the calling thread. Files that cannot be opened or sized
/// are errors; reads that fail are corruptions of the bytes they were to read.
pub fn verify(
    db_dir: &Path,
    manifest: &Manifest,
    threads: usize,
    stop: &StopFlag,
    progress: &mut dyn FnMut(u64, u64),
) -> crate::Result<VerifyReport> {
    verify_in_chunks(db_dir, manifest, threads, CHUNK_BYTES, stop, progress)
}

fn verify_in_chunks(
    db_dir: &Path,
    manifest: &Manifest,
    threads: usize,
    chunk_bytes: u64,
    stop: &StopFlag,
    progress: &mut dyn FnMut(u64, u64),
) -> crate::Result<VerifyReport> {
    let started = Instant::now();
    let (work, mut tally) = plan(db_dir, manifest, chunk_bytes)?;
    let threads = threads.clamp(1, work.chunks.len().max(1));
    let buffers = (0..threads)
        .map(|_| AlignedBuf::new(work.read_max as usize))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|source| crate::Error::Setup { what: "allocating verification buffers", source })?;
    for found in run_threads(&work, buffers, stop, progress)? {
        tally.merge(found);
    }
    Ok(tally.into_report(started.elapsed().as_secs_f64()))
}

/// What a thread counts; merged into the report.
#[derive(Debug, Default)]
struct Tally {
    pages: u64,
    log_blocks: u64,
    log_files: u64,
    bytes: u64,
    corruptions: u64,
    first: Vec<Corruption>,
    interrupted: bool,
}

impl Tally {
    fn corrupt(&mut self, file: &Path, offset: u64, what: impl Into<String>) {
        self.corruptions += 1;
        self.first.push(Corruption { file: file.display().to_string(), offset, what: what.into() });
        if self.first.len() >= 2 * MAX_CORRUPTIONS_KEPT {
            self.keep_first();
        }
    }

    /// Keeps the first corruptions by file and offset, so that the report does not depend on
    /// which thread found what.
    fn keep_first(&mut self) {
        self.first.sort_unstable_by(|a, b| (&a.file, a.offset, &a.what).cmp(&(&b.file, b.offset, &b.what)));
        self.first.truncate(MAX_CORRUPTIONS_KEPT);
    }

    fn merge(&mut self, o: Tally) {
        self.pages += o.pages;
        self.log_blocks += o.log_blocks;
        self.log_files += o.log_files;
        self.bytes += o.bytes;
        self.corruptions += o.corruptions;
        self.first.extend(o.first);
        self.keep_first();
        self.interrupted |= o.interrupted;
    }

    fn into_report(mut self, seconds: f64) -> VerifyReport {
        self.keep_first();
        VerifyReport {
            pages_checked: self.pages,
            log_blocks_checked: self.log_blocks,
            log_files: self.log_files,
            bytes: self.bytes,
            corruptions: self.corruptions,
            first: self.first,
            seconds,
            complete: !self.interrupted,
        }
    }
}

/// A file to check. Databases are few and read by every thread: opened once. Log files may be
/// thousands (kept for a replay): each is opened by the thread that checks it.
struct Target {
    path: PathBuf,
    file: Option<File>,
    kind: Kind,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Database { id: u32, page: u64 },
    Log { generation: u32, block: u64 },
}

impl Kind {
    /// The unit checked: a page or a log block.
    fn unit(self) -> u64 {
        match self {
            Kind::Database { page, .. } => page,
            Kind::Log { block, .. } => block,
        }
    }
}

/// `len` bytes of target `target` from `offset`.
struct Chunk {
    target: usize,
    offset: u64,
    len: u64,
}

struct Work {
    targets: Vec<Target>,
    chunks: Vec<Chunk>,
    total: u64,
    /// The largest read: the size of every thread's buffer.
    read_max: u64,
}

impl Work {
    /// Adds `target` with its first `len` bytes to check, cut into chunks of `chunk` bytes.
    fn add(&mut self, target: Target, len: u64, chunk: u64) {
        let index = self.targets.len();
        let chunk = (chunk / target.kind.unit()).max(1) * target.kind.unit();
        self.read_max = self.read_max.max(read_len(target.kind.unit()));
        self.chunks.extend((0..len).step_by(chunk as usize).map(|offset| Chunk {
            target: index,
            offset,
            len: chunk.min(len - offset),
        }));
        self.total += len;
        self.targets.push(target);
    }
}

/// Bytes per read: 1 MiB in whole units.
fn read_len(unit: u64) -> u64 {
    (READ_BYTES / unit).max(1) * unit
}

/// Lists what to check, databases first so that the small log files even out the end; the
/// tally holds what the file sizes alone show to be wrong.
fn plan(db_dir: &Path, manifest: &Manifest, chunk_bytes: u64) -> crate::Result<(Work, Tally)> {
    let (page, block) = (u64::from(manifest.page_size), u64::from(manifest.log_block));
    if page <= PAGE_HEADER as u64 || block <= LOG_BLOCK_HEADER as u64 {
        let what = format!("pages of {page} bytes and log blocks of {block} bytes cannot be checked");
        return Err(crate::Error::InvalidJob(what));
    }
    let mut work = Work { targets: Vec::new(), chunks: Vec::new(), total: 0, read_max: 0 };
    let mut tally = Tally::default();
    let files = manifest.files(db_dir);
    for (f, d) in files.iter().zip(&manifest.databases) {
        // After a clean shutdown every page the manifest records is on disk.
        let pages = if manifest.clean { d.pages } else { 0 };
        add_database(&mut work, &mut tally, f, page, pages, chunk_bytes)?;
    }
    for (f, d) in files.iter().zip(&manifest.databases) {
        let present = f.log_generations();
        for generation in missing_logs(&present, d, manifest.clean) {
            tally.corrupt(&f.log_path(generation), 0, "missing: the manifest's log stream needs this file");
        }
        for generation in present {
            add_log(&mut work, &mut tally, f.log_path(generation), generation, manifest)?;
        }
    }
    Ok((work, tally))
}

/// Log generations the manifest needs that are not on disk (`present`, in order). After a
/// clean shutdown: every one from `log_from` (or the first there) to `next_generation - 1`.
/// After an unclean one the manifest does not know where the stream ends: the gaps.
fn missing_logs(present: &[u32], d: &DbState, clean: bool) -> Vec<u32> {
    let last =
        if clean { d.next_generation.checked_sub(1).filter(|&g| g >= 1) } else { present.last().copied() };
    let Some(last) = last else { return Vec::new() };
    let kept_from = if clean { d.log_from.or(present.first().copied()) } else { present.first().copied() };
    (kept_from.unwrap_or(last)..=last).filter(|g| present.binary_search(g).is_err()).collect()
}

/// A database: its whole pages, in chunks; a partial page at the end, or fewer than `pages`
/// pages, is a corruption.
fn add_database(
    work: &mut Work,
    tally: &mut Tally,
    f: &DbFiles,
    page: u64,
    pages: u64,
    chunk: u64,
) -> crate::Result<()> {
    let file = open_direct(&f.db, false)?;
    let len = file_size(&f.db)?;
    let whole = len - len % page;
    if whole / page < pages {
        tally.corrupt(
            &f.db,
            whole,
            format!("the file ends here, {} of its {pages} pages missing", pages - whole / page),
        );
    } else if whole < len {
        tally.corrupt(&f.db, whole, format!("a partial page of {} bytes at the end", len - whole));
    }
    let target = Target { path: f.db.clone(), file: Some(file), kind: Kind::Database { id: f.id, page } };
    work.add(target, whole, chunk);
    Ok(())
}

/// A log file, as one chunk: as much of it as the manifest's file size covers, in whole blocks;
/// another size is a corruption where the two part.
fn add_log(
    work: &mut Work,
    tally: &mut Tally,
    path: PathBuf,
    generation: u32,
    manifest: &Manifest,
) -> crate::Result<()> {
    let (expected, block) = (u64::from(manifest.log_file_size), u64::from(manifest.log_block));
    let len = file_size(&path)?;
    if len != expected {
        tally.corrupt(&path, len.min(expected), format!("log file of {len} bytes, not {expected}"));
    }
    let checked = len.min(expected) / block * block;
    let target = Target { path, file: None, kind: Kind::Log { generation, block } };
    work.add(target, checked, checked.max(1));
    Ok(())
}

fn file_size(path: &Path) -> crate::Result<u64> {
    std::fs::metadata(path).map(|m| m.len()).map_err(|source| crate::Error::Io {
        op: "reading the size of",
        path: path.to_path_buf(),
        source,
    })
}

/// Runs one thread per buffer over the chunks; reports progress until the last one ends.
fn run_threads(
    work: &Work,
    buffers: Vec<AlignedBuf>,
    stop: &StopFlag,
    progress: &mut dyn FnMut(u64, u64),
) -> crate::Result<Vec<Tally>> {
    let (next, done) = (&AtomicU64::new(0), &AtomicU64::new(0));
    // Nothing is sent: each thread holds a sender, so the channel disconnects (and the wait
    // below ends) the moment the last thread ends, without polling.
    let (ended_tx, ended) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let handles: Vec<_> = buffers
            .into_iter()
            .map(|buf| {
                let ended_tx = ended_tx.clone();
                scope.spawn(move || {
                    let _held = ended_tx;
                    check_chunks(work, next, done, stop, buf)
                })
            })
            .collect();
        drop(ended_tx);
        while let Err(RecvTimeoutError::Timeout) = ended.recv_timeout(PROGRESS_EVERY) {
            progress(done.load(Relaxed), work.total);
        }
        progress(done.load(Relaxed), work.total);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(crate::Error::InvalidJob("a verification thread panicked".into()))
                })
            })
            .collect()
    })
}

/// One thread: takes chunks until none is left or a stop request comes.
fn check_chunks(
    work: &Work,
    next: &AtomicU64,
    done: &AtomicU64,
    stop: &StopFlag,
    mut buf: AlignedBuf,
) -> crate::Result<Tally> {
    let mut tally = Tally::default();
    while let Some(chunk) = work.chunks.get(next.fetch_add(1, Relaxed) as usize) {
        let target = &work.targets[chunk.target];
        let opened;
        let file = match &target.file {
            Some(f) => f,
            None => {
                opened = open_direct(&target.path, false)?;
                &opened
            }
        };
        let mut reader = Reader { file, path: &target.path, buf: &mut buf, done, stop };
        let finished = match target.kind {
            Kind::Database { id, page } => check_pages(&mut reader, chunk, id, page, &mut tally),
            Kind::Log { generation, block } => check_log(&mut reader, chunk, generation, block, &mut tally),
        };
        if !finished {
            tally.interrupted = true;
            break;
        }
    }
    Ok(tally)
}

/// Reads a chunk of one file in pieces of whole units.
struct Reader<'a> {
    file: &'a File,
    path: &'a Path,
    buf: &'a mut AlignedBuf,
    done: &'a AtomicU64,
    stop: &'a StopFlag,
}

impl Reader<'_> {
    /// Hands each piece of `chunk` that could be read to `check` with its offset; a failed read
    /// is a corruption at its offset. Returns false when a stop request ended it early.
    fn read(
        &mut self,
        chunk: &Chunk,
        unit: u64,
        tally: &mut Tally,
        check: &mut dyn FnMut(u64, &[u8], &mut Tally),
    ) -> bool {
        let piece = read_len(unit);
        let end = chunk.offset + chunk.len;
        for at in (chunk.offset..end).step_by(piece as usize) {
            if self.stop.is_stopped() {
                return false;
            }
            let bytes = &mut self.buf.as_mut_slice()[..piece.min(end - at) as usize];
            match self.file.read_exact_at(bytes, at) {
                Ok(()) => {
                    check(at, bytes, tally);
                    tally.bytes += bytes.len() as u64;
                }
                Err(e) => tally.corrupt(self.path, at, format!("read of {} bytes failed: {e}", bytes.len())),
            }
            self.done.fetch_add(bytes.len() as u64, Relaxed);
        }
        true
    }
}

/// Checks the pages of a database chunk; false when stopped early.
fn check_pages(reader: &mut Reader, chunk: &Chunk, id: u32, page: u64, tally: &mut Tally) -> bool {
    let path = reader.path;
    reader.read(chunk, page, tally, &mut |at, bytes, tally| {
        for (k, image) in bytes.chunks_exact(page as usize).enumerate() {
            let offset = at + k as u64 * page;
            if let Err(fault) = check_page(image, id, offset / page) {
                tally.corrupt(path, offset, fault.to_string());
            }
            tally.pages += 1;
        }
    })
}

/// What a log block holds.
enum LogBlock {
    Written,
    /// The pattern of a new file: generation 0, nothing used.
    Unused,
    Bad(String),
}

fn classify(block: &[u8], generation: u32, index: u32) -> LogBlock {
    let Err(fault) = check_log_block(block, generation, index) else { return LogBlock::Written };
    match check_log_block(block, 0, index) {
        Ok(0) => LogBlock::Unused,
        _ => LogBlock::Bad(log_fault(fault)),
    }
}

/// A log block's fault in its own terms: a misplaced block names a block and generation.
fn log_fault(fault: PageFault) -> String {
    match fault {
        PageFault::Misplaced { found } => {
            format!("holds block {} of generation {} (misdirected write)", found as u32, found >> 32)
        }
        other => other.to_string(),
    }
}

/// Checks every block of a log file (one chunk); false when stopped early. The written part
/// comes first: once a block is unused, every later one must be too.
fn check_log(reader: &mut Reader, chunk: &Chunk, generation: u32, block: u64, tally: &mut Tally) -> bool {
    let path = reader.path;
    let mut ended = false;
    let finished = reader.read(chunk, block, tally, &mut |at, bytes, tally| {
        for (k, image) in bytes.chunks_exact(block as usize).enumerate() {
            let offset = at + k as u64 * block;
            match classify(image, generation, (offset / block) as u32) {
                LogBlock::Unused => ended = true,
                LogBlock::Written if ended => {
                    tally.corrupt(path, offset, "written block after the end of the log")
                }
                LogBlock::Written => {}
                LogBlock::Bad(what) => tally.corrupt(path, offset, what),
            }
            tally.log_blocks += 1;
        }
    });
    tally.log_files += u64::from(finished);
    finished
}

#[cfg(test)]
mod tests {
    use super::super::format::seal_log_block;
    use super::super::instance::unused_log_pattern;
    use super::super::layout::{MANIFEST_VERSION, create_database};
    use super::super::log::LogGeometry;
    use super::*;
    use crate::engine::EngineKind;

    const PAGE: u32 = 8192;
    const PAGES: u64 = 64;
    const BLOCK: usize = 512;
    const LOG_SIZE: usize = 64 * 1024;
    const LOG_BLOCKS: u64 = (LOG_SIZE / BLOCK) as u64;

    #[test]
    fn a_log_file_the_manifest_needs_is_missing_when_it_is_not_there() {
        let d = |next, from| DbState {
            id: 1,
            initial_pages: 1,
            pages: 1,
            next_generation: next,
            log_from: from,
            files: None,
        };
        assert_eq!(missing_logs(&[0x2B, 0x2C], &d(0x2D, Some(0x2B)), true), Vec::<u32>::new());
        assert_eq!(missing_logs(&[0x2C], &d(0x2D, Some(0x2B)), true), vec![0x2B]);
        assert_eq!(
            missing_logs(&[], &d(0x2D, None), true),
            vec![0x2C],
            "an old manifest: the last one at least"
        );
        assert_eq!(missing_logs(&[], &d(1, None), true), Vec::<u32>::new(), "never run: no logs");
        assert_eq!(missing_logs(&[5, 7], &d(2, Some(1)), false), vec![6], "unclean: only the gaps");
    }

    struct Set {
        dir: tempfile::TempDir,
        manifest: Manifest,
        files: DbFiles,
    }

    /// One database of 64 pages with two log files: generation 2 written up to block 40,
    /// generation 3 up to block 12, and a half-made next file that is not checked.
    fn set() -> Set {
        let dir = tempfile::tempdir().unwrap();
        let manifest = Manifest {
            version: MANIFEST_VERSION,
            preset: "test".into(),
            page_size: PAGE,
            log_file_size: LOG_SIZE as u32,
            log_block: BLOCK as u32,
            log_dir: dir.path().join("logs"),
            seed: 7,
            databases: vec![DbState {
                id: 1,
                initial_pages: PAGES,
                pages: PAGES,
                next_generation: 4,
                log_from: None,
                files: None,
            }],
            clean: true,
        };
        let files = manifest.files(dir.path()).remove(0);
        create_database(&files, PAGES, PAGE, 7, EngineKind::Psync, &AtomicU64::new(0), &StopFlag::new())
            .unwrap();
        std::fs::write(files.log_path(2), log_image(2, 40)).unwrap();
        std::fs::write(files.log_path(3), log_image(3, 12)).unwrap();
        std::fs::write(files.tmp_log_path(), b"half made").unwrap();
        Set { dir, manifest, files }
    }

    /// A log file of `generation` whose first `written` blocks hold data, the rest unused.
    fn log_image(generation: u32, written: usize) -> Vec<u8> {
        let mut image = vec![0u8; LOG_SIZE];
        unused_log_pattern(&mut image, BLOCK);
        let header = LogGeometry { block: BLOCK, file_size: LOG_SIZE }.header_blocks();
        for (i, b) in image.chunks_exact_mut(BLOCK).take(written).enumerate() {
            b.fill(0x33);
            seal_log_block(b, generation, i as u32, if i < header { 0 } else { 100 });
        }
        image
    }

    fn patch(path: &Path, offset: u64, bytes: &[u8]) {
        let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.write_all_at(bytes, offset).unwrap();
    }

    fn read(path: &Path, offset: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        File::open(path).unwrap().read_exact_at(&mut out, offset).unwrap();
        out
    }

    fn flip(path: &Path, offset: u64) {
        let b = read(path, offset, 1)[0];
        patch(path, offset, &[b ^ 0x10]);
    }

    /// Verifies in 64 KiB chunks, so that the database is split among the threads.
    fn check(set: &Set, threads: usize) -> VerifyReport {
        let stop = StopFlag::new();
        verify_in_chunks(set.dir.path(), &set.manifest, threads, 64 * 1024, &stop, &mut |_, _| {}).unwrap()
    }

    fn corruption(path: &Path, offset: u64, what: &str) -> Corruption {
        Corruption { file: path.display().to_string(), offset, what: what.into() }
    }

    #[test]
    fn a_clean_set_checks_every_page_and_block_and_reports_progress_to_the_end() {
        let s = set();
        let mut last = (0, 0);
        let r = verify(s.dir.path(), &s.manifest, 2, &StopFlag::new(), &mut |d, t| last = (d, t)).unwrap();
        assert!(r.ok(), "{r:?}");
        assert_eq!((r.pages_checked, r.log_blocks_checked, r.log_files), (PAGES, 2 * LOG_BLOCKS, 2));
        let total = PAGES * u64::from(PAGE) + 2 * LOG_SIZE as u64;
        assert_eq!((r.bytes, last), (total, (total, total)));
    }

    #[test]
    fn a_flipped_byte_in_a_page_is_a_checksum_mismatch_at_that_page() {
        let s = set();
        flip(&s.files.db, 17 * u64::from(PAGE) + 1000);
        let r = check(&s, 2);
        assert_eq!(r.corruptions, 1);
        assert_eq!(r.first, vec![corruption(&s.files.db, 17 * u64::from(PAGE), "checksum mismatch")]);
        assert!(!r.ok() && r.complete);
    }

    #[test]
    fn a_page_written_to_another_place_is_misplaced() {
        let s = set();
        let page = u64::from(PAGE);
        patch(&s.files.db, 40 * page, &read(&s.files.db, 5 * page, PAGE as usize));
        let r = check(&s, 2);
        let what = PageFault::Misplaced { found: 5 }.to_string();
        assert_eq!(r.first, vec![corruption(&s.files.db, 40 * page, &what)]);
    }

    #[test]
    fn corrupted_written_and_unused_log_blocks_are_reported_at_their_offsets() {
        let s = set();
        let log = s.files.log_path(2);
        flip(&log, 10 * BLOCK as u64 + 300);
        flip(&log, 100 * BLOCK as u64 + 300);
        let r = check(&s, 2);
        let at = |i: u64| corruption(&log, i * BLOCK as u64, "checksum mismatch");
        assert_eq!(r.first, vec![at(10), at(100)]);
        assert_eq!(r.log_blocks_checked, 2 * LOG_BLOCKS);
    }

    #[test]
    fn a_written_block_after_unused_ones_is_reported() {
        let s = set();
        let log = s.files.log_path(3);
        let mut b = read(&log, 50 * BLOCK as u64, BLOCK);
        seal_log_block(&mut b, 3, 50, 100);
        patch(&log, 50 * BLOCK as u64, &b);
        let r = check(&s, 1);
        assert_eq!(
            r.first,
            vec![corruption(&log, 50 * BLOCK as u64, "written block after the end of the log")]
        );
    }

    #[test]
    fn a_block_of_another_place_names_the_block_and_generation_it_holds() {
        let s = set();
        let (g2, g3) = (s.files.log_path(2), s.files.log_path(3));
        patch(&g3, 9 * BLOCK as u64, &read(&g2, 9 * BLOCK as u64, BLOCK));
        let r = check(&s, 1);
        let what = "holds block 9 of generation 2 (misdirected write)";
        assert_eq!(r.first, vec![corruption(&g3, 9 * BLOCK as u64, what)]);
    }

    #[test]
    fn a_partial_page_and_a_log_file_of_the_wrong_size_are_corruptions() {
        let s = set();
        let whole = PAGES * u64::from(PAGE);
        patch(&s.files.db, whole, &[1; 100]);
        let log = s.files.log_path(3);
        std::fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(LOG_SIZE as u64 / 2).unwrap();
        let r = check(&s, 2);
        let half = LOG_SIZE as u64 / 2;
        let expected = vec![
            corruption(&log, half, &format!("log file of {half} bytes, not {LOG_SIZE}")),
            corruption(&s.files.db, whole, "a partial page of 100 bytes at the end"),
        ];
        assert_eq!(r.first, expected);
        assert_eq!((r.pages_checked, r.log_blocks_checked), (PAGES, LOG_BLOCKS + LOG_BLOCKS / 2));
    }

    #[test]
    fn a_database_shorter_than_the_manifest_records_is_a_corruption_where_it_ends() {
        let s = set();
        let ends = (PAGES - 3) * u64::from(PAGE);
        std::fs::OpenOptions::new().write(true).open(&s.files.db).unwrap().set_len(ends + 100).unwrap();
        let r = check(&s, 2);
        assert_eq!(
            r.first,
            vec![corruption(
                &s.files.db,
                ends,
                &format!("the file ends here, 3 of its {PAGES} pages missing")
            )]
        );
        assert_eq!(r.pages_checked, PAGES - 3);
    }

    #[test]
    fn one_and_three_threads_find_the_same_and_keep_the_first_by_file_and_offset() {
        let s = set();
        for p in (0..PAGES).step_by(2) {
            flip(&s.files.db, p * u64::from(PAGE) + 8);
        }
        flip(&s.files.log_path(2), 3 * BLOCK as u64);
        let (one, three) = (check(&s, 1), check(&s, 3));
        assert_eq!(VerifyReport { seconds: 0.0, ..one.clone() }, VerifyReport { seconds: 0.0, ..three });
        assert_eq!((one.corruptions, one.first.len()), (PAGES / 2 + 1, MAX_CORRUPTIONS_KEPT));
        assert_eq!(one.first[0].offset, 3 * BLOCK as u64);
        let pages: Vec<u64> = one.first[1..].iter().map(|c| c.offset / u64::from(PAGE)).collect();
        assert_eq!(pages, (0..MAX_CORRUPTIONS_KEPT as u64 - 1).map(|i| 2 * i).collect::<Vec<_>>());
    }

    #[test]
    fn a_stop_request_ends_the_verification_incomplete() {
        let s = set();
        let stop = StopFlag::new();
        stop.stop();
        let r = verify(s.dir.path(), &s.manifest, 2, &stop, &mut |_, _| {}).unwrap();
        assert!(!r.complete && !r.ok());
        assert_eq!((r.bytes, r.corruptions), (0, 0));
    }
}
