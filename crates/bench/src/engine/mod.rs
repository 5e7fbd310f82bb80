//! I/O engines: a small trait that queues requests on per-slot buffers and reaps completions.
//!
//! Engines do no timing and no accounting; the worker that drives them timestamps each submit
//! batch and each reap batch (one clock read each), so every engine is measured the same way.
//! The `null` engine completes every request at once and is the reference for the engine
//! loop's own cost and for exact CLI tests.

mod buffer;
mod null;
mod psync;
mod uring;

pub use buffer::{AlignedBuf, SlotPool};

use std::fs::File;
use std::io;
use std::time::Duration;

/// Direction of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
    /// fdatasync of the file: its written data made durable, the device's cache flushed (a
    /// block device's flush request). Moves no bytes: its `len` is 0 and so is its result.
    Flush,
    /// fsync of the file: its data and its metadata (size, times) made durable, the device's
    /// cache flushed. Moves no bytes, as a flush.
    Fsync,
}

/// One request: `len` bytes at `offset` of file `file` (its index among the files the engine
/// was opened on) through the buffer of `slot`; a flush names only its slot and file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub slot: u32,
    pub file: u16,
    pub dir: Dir,
    pub offset: u64,
    pub len: u32,
}

/// A finished request: bytes transferred, or a negative errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: i32,
}

impl Completion {
    /// Why the request did not complete: the errno's name, or `short` when fewer than
    /// `expected` bytes moved. None for a completed transfer, the only kind that may count
    /// toward IOPS, bandwidth or latency: every workload asks this one question.
    #[inline]
    pub fn failure(self, expected: u32) -> Option<&'static str> {
        (self.result < 0 || (self.result as u32) < expected).then(|| error_kind(self.result.min(0)))
    }
}

/// Which engine to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    IoUring,
    Psync,
    Null,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
            EngineKind::Null => "null",
        }
    }
}

/// What an engine can do; the worker adapts to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    pub kind: EngineKind,
    /// Synchronous engines complete one request per call, so queue depth is 1.
    pub synchronous: bool,
    /// Whether a reap can wait with a timeout (lets rate-limited workers sleep on the ring).
    pub timed_wait: bool,
}

/// Queue, submit, reap. One engine per worker thread; never shared.
pub trait IoEngine: Send {
    fn capabilities(&self) -> Capabilities;
    /// Called once on the thread that will drive the engine, before the first request.
    fn start(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Buffer of `slot`, `max_len` bytes, aligned for O_DIRECT.
    fn buffer(&mut self, slot: u32) -> &mut [u8];
    /// Makes file index `index` refer to `file` from now on (a log stream moving to its next
    /// file); no request on the old file may be in flight.
    fn replace_file(&mut self, index: u16, file: &File) -> io::Result<()>;
    /// Queue a request; it is handed to the kernel at the next `submit_and_reap`.
    fn queue(&mut self, req: Request);
    /// Submit what is queued, then wait until at least `min` requests completed or `timeout`
    /// passed, and append every available completion to `out`.
    fn submit_and_reap(
        &mut self,
        min: u32,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()>;
}

/// The outcome of opening an engine: io_uring may be refused by the kernel or a sandbox.
pub struct Opened {
    pub engine: Box<dyn IoEngine>,
    /// Set when the requested engine was replaced by another; says why.
    pub fallback: Option<String>,
}

/// Opens `kind` on `file` with `slots` buffers of `max_len` bytes each. An io_uring that the
/// kernel refuses falls back to psync, and `fallback` says why.
pub fn open(kind: EngineKind, file: Option<&File>, slots: u32, max_len: u32) -> io::Result<Opened> {
    let files: Vec<&File> = file.into_iter().collect();
    open_files(kind, &files, &vec![max_len; slots as usize])
}

/// Opens `kind` on `files` (requests name them by index) with one buffer per slot,
/// `slot_lens[i]` bytes for slot `i`. Without files, or with `Null`, requests complete at once.
pub fn open_files(kind: EngineKind, files: &[&File], slot_lens: &[u32]) -> io::Result<Opened> {
    let pool = SlotPool::new(slot_lens)?;
    if kind == EngineKind::Null || files.is_empty() {
        return Ok(plain(null::NullEngine::new(pool)));
    }
    if kind == EngineKind::Psync {
        return Ok(plain(psync::PsyncEngine::new(files, pool)?));
    }
    match uring::UringEngine::new(files, pool) {
        Ok(e) => Ok(plain(e)),
        Err(e) => Ok(Opened {
            engine: Box::new(psync::PsyncEngine::new(files, SlotPool::new(slot_lens)?)?),
            fallback: Some(format!("io_uring is unavailable ({e}); using psync")),
        }),
    }
}

/// What an engine with nothing in flight does when asked to wait: sleep out the timeout
/// (a rate-limited worker waiting for its next issue time).
fn idle(timeout: Option<Duration>) {
    if let Some(t) = timeout {
        std::thread::sleep(t);
    }
}

fn plain(engine: impl IoEngine + 'static) -> Opened {
    Opened { engine: Box::new(engine), fallback: None }
}

/// Whether this kernel and sandbox let us set up an io_uring at all.
pub fn io_uring_available() -> Result<(), String> {
    io_uring::IoUring::new(2).map(|_| ()).map_err(|e| e.to_string())
}

/// A failed completion's kind: the errno's name, or `short` for a partial transfer.
pub fn error_kind(result: i32) -> &'static str {
    match -result {
        r if r <= 0 => "short",
        libc::EIO => "EIO",
        libc::ENOSPC => "ENOSPC",
        libc::EINVAL => "EINVAL",
        libc::EAGAIN => "EAGAIN",
        libc::EBADF => "EBADF",
        libc::EFAULT => "EFAULT",
        libc::ENODEV => "ENODEV",
        libc::ENXIO => "ENXIO",
        libc::EROFS => "EROFS",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ECANCELED => "ECANCELED",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `byte` through `slot` to `file` at offset 0, waiting for the completion.
    fn write_through(e: &mut dyn IoEngine, slot: u32, file: u16, len: u32, byte: u8) {
        e.buffer(slot)[..len as usize].fill(byte);
        e.queue(Request { slot, file, dir: Dir::Write, offset: 0, len });
        let mut out = Vec::new();
        while out.is_empty() {
            e.submit_and_reap(1, None, &mut out).unwrap();
        }
        assert_eq!(out[0], Completion { slot, result: len as i32 });
    }

    #[test]
    fn requests_go_to_the_file_they_name_through_slots_of_their_own_length() {
        for kind in [EngineKind::IoUring, EngineKind::Psync] {
            let dir = tempfile::tempdir().unwrap();
            let f: Vec<File> = ["a", "b", "c"]
                .iter()
                .map(|n| {
                    let p = dir.path().join(n);
                    std::fs::OpenOptions::new()
                        .create(true)
                        .truncate(true)
                        .read(true)
                        .write(true)
                        .open(p)
                        .unwrap()
                })
                .collect();
            let mut e = open_files(kind, &[&f[0], &f[1]], &[4096, 8192]).unwrap().engine;
            e.start().unwrap();
            assert_eq!((e.buffer(0).len(), e.buffer(1).len()), (4096, 8192));
            write_through(e.as_mut(), 0, 0, 4096, b'a');
            write_through(e.as_mut(), 1, 1, 8192, b'b');
            e.replace_file(1, &f[2]).unwrap();
            write_through(e.as_mut(), 1, 1, 8192, b'c');
            // A flush, fdatasync or fsync, moves nothing and succeeds with 0.
            for dir in [Dir::Flush, Dir::Fsync] {
                e.queue(Request { slot: 0, file: 1, dir, offset: 0, len: 0 });
                let mut out = Vec::new();
                while out.is_empty() {
                    e.submit_and_reap(1, None, &mut out).unwrap();
                }
                assert_eq!(out[0], Completion { slot: 0, result: 0 }, "{kind:?} {dir:?}");
                assert_eq!(out[0].failure(0), None);
            }
            let read = |n: &str| std::fs::read(dir.path().join(n)).unwrap();
            assert_eq!(read("a"), vec![b'a'; 4096], "{kind:?}");
            assert_eq!(read("b"), vec![b'b'; 8192], "{kind:?}");
            assert_eq!(read("c"), vec![b'c'; 8192], "{kind:?}");
        }
    }
}
