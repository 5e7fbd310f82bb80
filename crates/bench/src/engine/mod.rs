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

pub use buffer::AlignedBuf;

use std::fs::File;
use std::io;
use std::time::Duration;

/// Direction of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

/// One request: `len` bytes at `offset` through the buffer of `slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub slot: u32,
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
    let pool = || AlignedBuf::new(slots as usize * max_len as usize);
    match (kind, file) {
        (EngineKind::Null, _) | (_, None) => Ok(plain(null::NullEngine::new(pool()?, max_len))),
        (EngineKind::Psync, Some(f)) => Ok(plain(psync::PsyncEngine::new(f, pool()?, max_len)?)),
        (EngineKind::IoUring, Some(f)) => match uring::UringEngine::new(f, slots, max_len) {
            Ok(e) => Ok(plain(e)),
            Err(e) => Ok(Opened {
                engine: Box::new(psync::PsyncEngine::new(f, pool()?, max_len)?),
                fallback: Some(format!("io_uring is unavailable ({e}); using psync")),
            }),
        },
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
