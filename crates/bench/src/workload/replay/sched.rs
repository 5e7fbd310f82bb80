//! One source's requests between its reader and its workers: each session's queue in log
//! order with the session's connection, the sessions ready to run (their next request not
//! started and none of theirs running) in the order their next request is due, and what the
//! workers counted since the driver last took it. Everything is under one lock, taken once by
//! the reader per request and once by a worker per request (handing back the one it finished
//! and taking the next), so a session's requests run one at a time and in order, on whichever
//! worker is free, and never more than the workers at once.
//!
//! The reader reads ahead a bounded window of requests (`window`); it waits while that many
//! are read and not started. A session ends where its log says so (a disconnection, a web
//! request's end): once its requests have run, its connection is closed, or given to the
//! source's pool for a later session that has none (a web tier's pool), and its name may
//! start a new session. A session whose requests have all run and which the log has not named
//! for `SESSION_IDLE_END` of log time is taken as ended too (a log that does not say). So a
//! log of many short sessions holds neither connections nor memory for those that are over.
//!
//! Waiting: idle workers wait on `work`; at most one waits, with a timeout, for the earliest
//! request not yet due (`timer`, time-sync); the reader waits on `room`. Each is woken only
//! when there is something for it, so a fire-hose that keeps every worker busy makes no
//! wake-up calls at all.

use super::conn::Conn;
use super::data::{Answer, SourceRecorder};
use super::log::{Body, Close};
use crate::run::StopFlag;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a session of the log may go unnamed (log time) before it is taken as ended.
pub(super) const SESSION_IDLE_END: Duration = Duration::from_secs(300);
/// How often a waiting reader looks at the stop request.
const POLL: Duration = Duration::from_millis(50);
/// Requests read between two looks for ended sessions (or as many as there are sessions).
const SWEEP_EVERY: usize = 4096;

/// One request as read.
#[derive(Debug)]
pub(super) struct Request {
    /// Its type's index.
    pub kind: u32,
    /// When it is due, ns after the run's start (0 in fire-hose).
    pub due_ns: u64,
    /// Its time in the log.
    pub at_ns: i128,
    pub body: Body,
}

/// What the reader hands a scheduler for a session, in the log's order.
pub(super) enum Item {
    Request(Request),
    /// The session is over.
    End(Close),
}

/// A request handed to a worker, with its session's connection (None until one is opened).
pub(super) struct Job {
    slot: usize,
    pub request: Request,
    pub conn: Option<Conn>,
    /// When it was due (time-sync).
    pub intended: Option<Instant>,
}

/// A worker's finished request: its session's connection back, and how it went.
pub(super) struct Finished {
    slot: usize,
    pub conn: Option<Conn>,
    pub kind: u32,
    pub answer: Answer,
    pub lateness_ns: Option<u64>,
    /// The database's message where it failed.
    pub message: Option<String>,
}

impl Job {
    /// This job finished with `answer`, its connection now `conn`.
    pub(super) fn finished(
        self,
        conn: Option<Conn>,
        answer: Answer,
        lateness_ns: Option<u64>,
        message: Option<String>,
    ) -> Finished {
        Finished { slot: self.slot, conn, kind: self.request.kind, answer, lateness_ns, message }
    }
}

/// One session of the log.
#[derive(Default)]
struct Session {
    queue: VecDeque<(u64, Request)>,
    running: bool,
    conn: Option<Conn>,
    /// The log time of its latest request read.
    last_at: i128,
    /// The log said it is over: what becomes of its connection once its requests have run.
    end: Option<Close>,
}

#[derive(Default)]
struct State {
    sessions: Vec<Session>,
    free: Vec<usize>,
    by_name: HashMap<String, usize>,
    /// Sessions ready to run: (due of their next request, its sequence number, session).
    ready: BinaryHeap<Reverse<(u64, u64, usize)>>,
    seq: u64,
    /// Requests read and not started.
    queued: usize,
    running: usize,
    /// Workers waiting on `work`, and how many of them were woken and have not yet run (so
    /// that no more are woken than there are waiting).
    idle: usize,
    woken: usize,
    /// The due time the worker waiting on `timer` waits for.
    timer: Option<u64>,
    reader_waits: bool,
    /// The reader may add requests still.
    reading: bool,
    halted: bool,
    start: Option<Instant>,
    rec: SourceRecorder,
    /// The message of the latest request that failed.
    last_error: Option<String>,
    newest_at: i128,
    read_since_sweep: usize,
    /// Connections of ended sessions kept for sessions that have none (`Close::Pool`).
    pool: Vec<Conn>,
}

/// One source's scheduler.
pub(super) struct Sched {
    state: Mutex<State>,
    work: Condvar,
    timer: Condvar,
    room: Condvar,
    window: usize,
    /// Requests wait for their due time (time-sync).
    paced: bool,
}

impl Sched {
    pub(super) fn new(window: usize, paced: bool) -> Sched {
        let state = State { reading: true, ..State::default() };
        Sched {
            state: Mutex::new(state),
            work: Condvar::new(),
            timer: Condvar::new(),
            room: Condvar::new(),
            window,
            paced,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The run starts at `at`: workers may take requests.
    pub(super) fn release(&self, at: Instant) {
        self.lock().start = Some(at);
        self.work.notify_all();
    }

    /// No more requests will start: workers finish the ones they run and stop.
    pub(super) fn halt(&self) {
        self.lock().halted = true;
        self.wake_all();
    }

    /// The reader has added its last request.
    pub(super) fn reading_done(&self) {
        self.lock().reading = false;
        self.wake_all();
    }

    fn wake_all(&self) {
        self.work.notify_all();
        self.timer.notify_all();
        self.room.notify_all();
    }

    /// Adds each request of `batch` (session, item) to the end of its session's queue, or
    /// ends the session, waiting while the window is full; false when the run is halted or
    /// `stop` asked first. Empties `batch`.
    pub(super) fn push(&self, batch: &mut Vec<(String, Item)>, stop: &StopFlag) -> bool {
        let mut s = self.lock();
        let mut closing = Vec::new();
        for (session, item) in batch.drain(..) {
            let request = match item {
                Item::Request(request) => request,
                Item::End(close) => {
                    closing.extend(s.end(&session, close));
                    continue;
                }
            };
            while s.queued >= self.window && !s.halted {
                if stop.is_stopped() {
                    return false;
                }
                s.reader_waits = true;
                s = self.room.wait_timeout(s, POLL).unwrap_or_else(|p| p.into_inner()).0;
            }
            s.reader_waits = false;
            if s.halted {
                return false;
            }
            s.add(session, request);
            self.nudge(&mut s);
        }
        closing.extend(s.sweep());
        drop(s);
        drop(closing);
        true
    }

    /// Hands back `finished` and gives the next request to run, waiting until one is due;
    /// None when there is none left (the log read and every request started) or the run is
    /// halted.
    pub(super) fn next(&self, finished: Option<Finished>) -> Option<Job> {
        let mut s = self.lock();
        let closing = finished.and_then(|f| s.finish(f));
        if closing.is_some() {
            // A connection closes outside the lock: it may wait on the server.
            drop(s);
            drop(closing);
            s = self.lock();
        }
        loop {
            if s.halted || (!s.reading && s.queued == 0) {
                self.work.notify_all();
                return None;
            }
            let now_ns = s.start.map(|at| at.elapsed().as_nanos() as u64);
            let top = s.ready.peek().map(|r| r.0.0);
            match (top, now_ns) {
                (Some(due), Some(now)) if !self.paced || due <= now => return Some(self.take(&mut s)),
                (Some(due), Some(now)) if s.timer.is_none() => {
                    s.timer = Some(due);
                    let wait = Duration::from_nanos(due - now);
                    s = self.timer.wait_timeout(s, wait).unwrap_or_else(|p| p.into_inner()).0;
                    s.timer = None;
                }
                _ => {
                    self.nudge(&mut s);
                    s.idle += 1;
                    s = self.work.wait(s).unwrap_or_else(|p| p.into_inner());
                    (s.idle, s.woken) = (s.idle - 1, s.woken.saturating_sub(1));
                }
            }
        }
    }

    /// Starts the session first in line.
    fn take(&self, s: &mut State) -> Job {
        let Reverse((_, _, slot)) = s.ready.pop().expect("a ready session");
        let sn = &mut s.sessions[slot];
        let (_, request) = sn.queue.pop_front().expect("a ready session has a request");
        sn.running = true;
        let conn = sn.conn.take().or_else(|| s.pool.pop());
        (s.queued, s.running) = (s.queued - 1, s.running + 1);
        if s.reader_waits && s.queued <= self.window / 2 {
            self.room.notify_one();
        }
        self.nudge(s);
        let intended = s.start.filter(|_| self.paced).map(|at| at + Duration::from_nanos(request.due_ns));
        Job { slot, request, conn, intended }
    }

    /// Wakes the worker that should see the first session in line, if any should: the timer's
    /// worker when it is due before what that one waits for, else an idle worker when it is
    /// due or nobody waits for it.
    fn nudge(&self, s: &mut State) {
        let (Some(&Reverse((due, ..))), Some(start)) = (s.ready.peek(), s.start) else { return };
        if s.timer.is_some_and(|t| due < t) {
            self.timer.notify_one();
        } else if s.idle > s.woken
            && (s.timer.is_none() || !self.paced || due <= start.elapsed().as_nanos() as u64)
        {
            s.woken += 1;
            self.work.notify_one();
        }
    }

    /// What the workers counted since the last call, and the requests running now; `spare`
    /// (empty) counts from here on.
    pub(super) fn swap_counts(&self, spare: SourceRecorder) -> (SourceRecorder, usize) {
        let mut s = self.lock();
        (std::mem::replace(&mut s.rec, spare), s.running)
    }

    /// The message of the latest request that failed.
    pub(super) fn last_error(&self) -> Option<String> {
        self.lock().last_error.clone()
    }
}

impl State {
    /// Adds `request` to the end of `session`'s queue.
    fn add(&mut self, session: String, request: Request) {
        let slot = self.session(session);
        let seq = self.seq;
        (self.seq, self.queued, self.newest_at) =
            (seq + 1, self.queued + 1, self.newest_at.max(request.at_ns));
        self.read_since_sweep += 1;
        let sn = &mut self.sessions[slot];
        sn.last_at = sn.last_at.max(request.at_ns);
        if sn.queue.is_empty() && !sn.running {
            self.ready.push(Reverse((request.due_ns, seq, slot)));
        }
        self.sessions[slot].queue.push_back((seq, request));
    }

    /// The slot of the session named `name`, made on its first request.
    fn session(&mut self, name: String) -> usize {
        if let Some(&slot) = self.by_name.get(&name) {
            return slot;
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.sessions.push(Session::default());
            self.sessions.len() - 1
        });
        self.sessions[slot] = Session { last_at: i128::MIN, ..Session::default() };
        self.by_name.insert(name, slot);
        slot
    }

    /// Takes `f` back; the connection to close where its session is over with it.
    fn finish(&mut self, f: Finished) -> Option<Conn> {
        self.running -= 1;
        self.rec.record(f.kind, f.answer, f.lateness_ns);
        if f.message.is_some() {
            self.last_error = f.message;
        }
        let sn = &mut self.sessions[f.slot];
        (sn.running, sn.conn) = (false, f.conn);
        match sn.queue.front() {
            Some((seq, next)) => {
                self.ready.push(Reverse((next.due_ns, *seq, f.slot)));
                None
            }
            None if sn.end.is_some() => self.release(f.slot),
            None => None,
        }
    }

    /// Session `name` is over: it lets its connection go now when nothing of it is queued or
    /// running, else after its last request (its name may start a new session meanwhile).
    /// The connection to close, if any.
    fn end(&mut self, name: &str, close: Close) -> Option<Conn> {
        let slot = self.by_name.remove(name)?;
        let sn = &mut self.sessions[slot];
        sn.end = Some(close);
        (!sn.running && sn.queue.is_empty()).then(|| self.release(slot)).flatten()
    }

    /// Frees ended session `slot`: its connection goes to the pool or is given back to be
    /// closed.
    fn release(&mut self, slot: usize) -> Option<Conn> {
        let sn = &mut self.sessions[slot];
        let (conn, close) = (sn.conn.take(), sn.end);
        self.free.push(slot);
        match (conn, close) {
            (Some(conn), Some(Close::Pool)) => {
                self.pool.push(conn.for_another_session());
                None
            }
            (conn, _) => conn,
        }
    }

    /// Every so often, the sessions that ended: their slots freed, their connections given
    /// back to be closed outside the lock.
    fn sweep(&mut self) -> Vec<Conn> {
        if self.read_since_sweep < SWEEP_EVERY.max(self.by_name.len()) {
            return Vec::new();
        }
        self.read_since_sweep = 0;
        let horizon = self.newest_at - SESSION_IDLE_END.as_nanos() as i128;
        let (sessions, free) = (&mut self.sessions, &mut self.free);
        let mut closed = Vec::new();
        self.by_name.retain(|_, &mut slot| {
            let sn = &mut sessions[slot];
            let ended = !sn.running && sn.queue.is_empty() && sn.last_at < horizon;
            if ended {
                closed.extend(sn.conn.take());
                free.push(slot);
            }
            !ended
        });
        closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::replay::testing::counted;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    fn request(at_s: i128, due_ns: u64) -> Item {
        Item::Request(Request {
            kind: 0,
            due_ns,
            at_ns: at_s * 1_000_000_000,
            body: Body::Sql(format!("at {at_s}")),
        })
    }

    fn done(job: Job) -> Finished {
        job.finished(None, Answer::Done { latency_ns: 1 }, None, None)
    }

    #[test]
    fn a_session_runs_one_request_at_a_time_in_order_and_others_go_meanwhile() {
        let sched = Sched::new(100, false);
        let stop = StopFlag::new();
        for (session, at) in [("a", 1), ("a", 2), ("b", 3)] {
            assert!(sched.push(&mut vec![(session.into(), request(at, 0))], &stop));
        }
        sched.reading_done();
        sched.release(Instant::now());
        let first = sched.next(None).unwrap();
        let second = sched.next(None).unwrap();
        assert_eq!(
            (first.request.body.sql(), second.request.body.sql()),
            ("at 1", "at 3"),
            "a's second waits"
        );
        let third = sched.next(Some(done(first))).unwrap();
        assert_eq!(third.request.body.sql(), "at 2");
        assert!(sched.next(Some(done(second))).is_none(), "nothing left to start");
        assert!(sched.next(Some(done(third))).is_none());
        let (counts, running) = sched.swap_counts(SourceRecorder::default());
        assert_eq!(running, 0);
        assert_eq!(crate::workload::replay::data::ReplayData::of(&[counts], &["X".into()], 0).calls(), 3);
    }

    #[test]
    fn the_reader_waits_while_the_window_is_full_and_a_halt_releases_it() {
        let sched = std::sync::Arc::new(Sched::new(2, false));
        let stop = StopFlag::new();
        assert!(sched.push(&mut vec![("a".into(), request(1, 0)), ("b".into(), request(2, 0))], &stop));
        let s2 = sched.clone();
        let reader =
            std::thread::spawn(move || s2.push(&mut vec![("c".into(), request(3, 0))], &StopFlag::new()));
        sched.halt();
        assert!(!reader.join().unwrap(), "halted while waiting for room");
        assert!(sched.next(None).is_none());
    }

    #[test]
    fn a_session_idle_long_enough_in_log_time_is_closed_and_its_slot_reused() {
        let sched = Sched::new(10_000, false);
        let stop = StopFlag::new();
        sched.release(Instant::now());
        assert!(sched.push(&mut vec![("old".into(), request(0, 0))], &stop));
        let job = sched.next(None).unwrap();
        sched.lock().finish(done(job));
        let idle = SESSION_IDLE_END.as_secs() as i128 + 1;
        let mut batch: Vec<_> =
            (0..SWEEP_EVERY as i128).map(|i| (format!("new{}", i % 2), request(idle + i, 0))).collect();
        assert!(sched.push(&mut batch, &stop));
        assert!(!sched.lock().by_name.contains_key("old"), "ended");
        assert!(sched.push(&mut vec![("newer".into(), request(idle + SWEEP_EVERY as i128, 0))], &stop));
        let s = sched.lock();
        assert_eq!((s.by_name.len(), s.sessions.len()), (3, 3));
        assert_eq!(s.by_name["newer"], 0, "the ended session's slot went to a new one");
    }

    /// `job` done on connection `conn`.
    fn done_on(job: Job, conn: Conn) -> Finished {
        job.finished(Some(conn), Answer::Done { latency_ns: 1 }, None, None)
    }

    #[test]
    fn a_session_the_log_ends_closes_its_connection_after_its_last_request_and_its_name_starts_anew() {
        let sched = Sched::new(100, false);
        let stop = StopFlag::new();
        let closed = Arc::new(AtomicU64::new(0));
        let end = Item::End(Close::Disconnect);
        let mut batch = vec![("a".into(), request(1, 0)), ("a".into(), request(2, 0)), ("a".into(), end)];
        assert!(sched.push(&mut batch, &stop));
        sched.release(Instant::now());
        let first = sched.next(None).unwrap();
        assert!(first.conn.is_none(), "a new session opens its connection");
        let second = sched.next(Some(done_on(first, counted(&closed)))).unwrap();
        assert!(second.conn.is_some(), "the session's second request runs on its connection");
        assert_eq!(closed.load(Relaxed), 0, "not closed while the session has requests");
        assert!(sched.push(&mut vec![("a".into(), request(3, 0))], &stop));
        let again = sched.next(Some(done_on(second, counted(&closed)))).unwrap();
        assert_eq!(closed.load(Relaxed), 2, "both connections handed back were closed");
        assert!(again.conn.is_none(), "the name's new session opens a connection of its own");
        let s = sched.lock();
        assert_eq!((s.by_name.len(), s.sessions.len(), s.pool.len()), (1, 2, 0));
    }

    #[test]
    fn a_session_ended_with_nothing_left_closes_at_once() {
        let sched = Sched::new(100, false);
        let stop = StopFlag::new();
        let closed = Arc::new(AtomicU64::new(0));
        assert!(sched.push(&mut vec![("a".into(), request(1, 0))], &stop));
        sched.release(Instant::now());
        let job = sched.next(None).unwrap();
        let closing = sched.lock().finish(done_on(job, counted(&closed)));
        assert!(closing.is_none(), "kept: the log has not ended the session");
        assert!(sched.push(&mut vec![("a".into(), Item::End(Close::Disconnect))], &stop));
        assert_eq!(closed.load(Relaxed), 1);
        assert_eq!(sched.lock().free, vec![0]);
    }

    #[test]
    fn a_web_requests_connection_goes_to_the_pool_and_the_next_session_takes_it() {
        let sched = Sched::new(100, false);
        let stop = StopFlag::new();
        let closed = Arc::new(AtomicU64::new(0));
        let pool = || Item::End(Close::Pool);
        let mut batch =
            vec![("#1".into(), request(1, 0)), ("#1".into(), pool()), ("#2".into(), request(2, 0))];
        assert!(sched.push(&mut batch, &stop));
        sched.release(Instant::now());
        let first = sched.next(None).unwrap();
        let second = sched.next(None).unwrap();
        assert!(first.conn.is_none() && second.conn.is_none(), "the pool is empty at first");
        let closing = sched.lock().finish(done_on(first, counted(&closed)));
        assert!(closing.is_none());
        assert_eq!(sched.lock().pool.len(), 1, "#1's connection is pooled, not closed");
        assert!(sched.push(&mut vec![("#3".into(), request(3, 0))], &stop));
        let third = sched.next(None).unwrap();
        assert!(third.conn.is_some(), "#3 takes the pooled connection");
        assert_eq!(closed.load(Relaxed), 0);
        drop((second, third));
    }
}
