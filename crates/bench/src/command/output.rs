//! A command's stdout or stderr, read as it comes on a thread of its own (so a command that
//! prints a lot never stalls on a full pipe) into a buffer of bounded size.

use std::io::Read;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// What a command printed on one stream: the first bytes of it, up to the limit, and how many
/// more it printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    pub bytes: Vec<u8>,
    /// Bytes read beyond the limit and not kept.
    pub dropped: u64,
}

impl Output {
    /// The kept bytes as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Whether one of its complete lines is `line`.
    pub fn has_line(&self, line: &str) -> bool {
        self.bytes.split(|&b| b == b'\n').rev().skip(1).any(|l| l == line.as_bytes())
    }
}

/// The reading of one stream.
pub(super) struct Capture {
    shared: Arc<(Mutex<Buffer>, Condvar)>,
}

#[derive(Default)]
struct Buffer {
    output: Output,
    /// The stream reached its end (every process holding it is gone) or failed.
    closed: bool,
}

impl Capture {
    /// Reads `pipe` to its end, keeping `limit` bytes.
    pub(super) fn start(pipe: Option<impl Read + Send + 'static>, limit: usize) -> Capture {
        let shared = Arc::new((Mutex::new(Buffer::default()), Condvar::new()));
        let Some(mut pipe) = pipe else {
            lock(&shared).closed = true;
            return Capture { shared };
        };
        let s = shared.clone();
        let read = move || {
            let mut chunk = [0u8; 8192];
            loop {
                let n = match pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let mut buffer = lock(&s);
                let keep = n.min(limit.saturating_sub(buffer.output.bytes.len()));
                buffer.output.bytes.extend_from_slice(&chunk[..keep]);
                buffer.output.dropped += (n - keep) as u64;
            }
            lock(&s).closed = true;
            s.1.notify_all();
        };
        if std::thread::Builder::new().name("command-output".into()).spawn(read).is_err() {
            // No thread: the pipe is closed with the closure, and the command's writes to it
            // fail (EPIPE) rather than stall.
            lock(&shared).closed = true;
        }
        Capture { shared }
    }

    /// What was read so far.
    pub(super) fn snapshot(&self) -> Output {
        lock(&self.shared).output.clone()
    }

    /// Whether `test` holds for what was read so far.
    pub(super) fn peek(&self, test: impl Fn(&Output) -> bool) -> bool {
        test(&lock(&self.shared).output)
    }

    /// Everything read once the stream closes, or what was read by `deadline` (a process that
    /// escaped may hold it open).
    pub(super) fn finish(&self, deadline: Instant) -> Output {
        let (mutex, closed) = &*self.shared;
        let mut buffer = lock_mutex(mutex);
        while !buffer.closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            buffer = closed.wait_timeout(buffer, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        buffer.output.clone()
    }
}

fn lock(shared: &Arc<(Mutex<Buffer>, Condvar)>) -> std::sync::MutexGuard<'_, Buffer> {
    lock_mutex(&shared.0)
}

fn lock_mutex(m: &Mutex<Buffer>) -> std::sync::MutexGuard<'_, Buffer> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
