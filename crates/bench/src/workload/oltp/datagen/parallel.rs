//! Ordered parallel chunking: worker threads generate numbered chunks into reused buffers and
//! the calling thread hands them to the sink strictly in chunk order.
//!
//! Memory stays flat at any size: a worker may only claim a chunk while fewer than `WINDOW`
//! chunks per thread are claimed and not yet written, and written buffers go back to a free
//! list. Which thread generates a chunk never changes its bytes (each chunk has its own random
//! stream), so the output is the same for any thread count.

use crate::run::StopFlag;
use std::collections::BTreeMap;
use std::io;
use std::ops::Range;
use std::sync::{Condvar, Mutex, MutexGuard, mpsc};
use std::thread;

/// Chunks in flight (claimed, not yet written) per worker thread.
const WINDOW: u64 = 3;

/// `make(chunk, buf)` fills `buf` (cleared) with chunk `chunk` and returns its rows; `sink`
/// gets every chunk of `chunks` in order. Stops early, with Ok, when `stop` is set; the first
/// sink error stops the workers and is returned.
pub(super) fn ordered<G, S>(
    chunks: Range<u64>,
    threads: usize,
    stop: &StopFlag,
    make: G,
    mut sink: S,
) -> io::Result<()>
where
    G: Fn(u64, &mut Vec<u8>) -> u64 + Sync,
    S: FnMut(&[u8], u64) -> io::Result<()>,
{
    if threads <= 1 || chunks.end - chunks.start <= 1 {
        let mut buf = Vec::new();
        for chunk in chunks {
            if stop.is_stopped() {
                break;
            }
            buf.clear();
            let rows = make(chunk, &mut buf);
            sink(&buf, rows)?;
        }
        return Ok(());
    }
    let pool = Pool::new(chunks.clone(), WINDOW * threads as u64);
    let (tx, rx) = mpsc::channel();
    thread::scope(|s| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (pool, make) = (&pool, &make);
            s.spawn(move || work(pool, stop, make, tx));
        }
        drop(tx);
        let result = write_in_order(&pool, chunks, stop, &rx, &mut sink);
        pool.abort();
        result
    })
}

type Done = (u64, Vec<u8>, u64);

fn work<G: Fn(u64, &mut Vec<u8>) -> u64>(pool: &Pool, stop: &StopFlag, make: &G, tx: mpsc::Sender<Done>) {
    while let Some((chunk, mut buf)) = pool.claim() {
        if stop.is_stopped() {
            pool.abort();
            return;
        }
        buf.clear();
        let rows = make(chunk, &mut buf);
        if tx.send((chunk, buf, rows)).is_err() {
            return;
        }
    }
}

fn write_in_order<S>(
    pool: &Pool,
    chunks: Range<u64>,
    stop: &StopFlag,
    rx: &mpsc::Receiver<Done>,
    sink: &mut S,
) -> io::Result<()>
where
    S: FnMut(&[u8], u64) -> io::Result<()>,
{
    let mut pending = BTreeMap::new();
    let mut next = chunks.start;
    while next < chunks.end && !stop.is_stopped() {
        // Every worker gone (stopped) before the end: nothing more will come.
        let Ok((chunk, buf, rows)) = rx.recv() else { break };
        pending.insert(chunk, (buf, rows));
        // A stop ends the writing at once, with chunks made and not yet written left unwritten.
        while !stop.is_stopped()
            && let Some((buf, rows)) = pending.remove(&next)
        {
            sink(&buf, rows)?;
            next += 1;
            pool.written(next, buf);
        }
    }
    Ok(())
}

/// The claim window and the free buffers, shared by the workers and the writer.
struct Pool {
    state: Mutex<State>,
    moved: Condvar,
    window: u64,
}

struct State {
    next_claim: u64,
    end: u64,
    next_write: u64,
    abort: bool,
    free: Vec<Vec<u8>>,
}

impl Pool {
    fn new(chunks: Range<u64>, window: u64) -> Self {
        let state = State {
            next_claim: chunks.start,
            end: chunks.end,
            next_write: chunks.start,
            abort: false,
            free: Vec::new(),
        };
        Pool { state: Mutex::new(state), moved: Condvar::new(), window }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked poisons nothing we rely on: the panic resurfaces at the join.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next chunk to generate and a buffer for it; waits while the window is full. None
    /// when all are claimed or the run was aborted.
    fn claim(&self) -> Option<(u64, Vec<u8>)> {
        let mut st = self.lock();
        while !st.abort && st.next_claim < st.end && st.next_claim >= st.next_write + self.window {
            st = self.moved.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if st.abort || st.next_claim >= st.end {
            return None;
        }
        let chunk = st.next_claim;
        st.next_claim += 1;
        Some((chunk, st.free.pop().unwrap_or_default()))
    }

    fn written(&self, next_write: u64, buf: Vec<u8>) {
        let mut st = self.lock();
        st.next_write = next_write;
        st.free.push(buf);
        self.moved.notify_all();
    }

    fn abort(&self) {
        self.lock().abort = true;
        self.moved.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(threads: usize, stop: &StopFlag, fail_at: Option<u64>) -> (io::Result<()>, Vec<u8>, u64) {
        let (mut out, mut rows) = (Vec::new(), 0);
        let make = |c: u64, buf: &mut Vec<u8>| {
            buf.extend_from_slice(format!("{c};").as_bytes());
            c % 3
        };
        let r = ordered(5..200, threads, stop, make, |b, n| {
            if fail_at.is_some_and(|f| b.starts_with(format!("{f};").as_bytes())) {
                return Err(io::Error::other("disk full"));
            }
            out.extend_from_slice(b);
            rows += n;
            Ok(())
        });
        (r, out, rows)
    }

    #[test]
    fn chunks_arrive_in_order_whatever_the_thread_count() {
        let want: String = (5..200).map(|c| format!("{c};")).collect();
        for threads in [1, 2, 3, 8] {
            let (r, out, rows) = run(threads, &StopFlag::new(), None);
            r.unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want, "{threads} threads");
            assert_eq!(rows, (5..200).map(|c| c % 3).sum::<u64>());
        }
    }

    #[test]
    fn a_sink_error_is_returned_and_a_set_stop_writes_nothing() {
        for threads in [1, 4] {
            let (r, out, _) = run(threads, &StopFlag::new(), Some(50));
            assert_eq!(r.unwrap_err().to_string(), "disk full");
            assert!(out.ends_with(b"49;"));
            let stop = StopFlag::new();
            stop.stop();
            let (r, out, _) = run(threads, &stop, None);
            r.unwrap();
            assert!(out.is_empty());
        }
    }
}
