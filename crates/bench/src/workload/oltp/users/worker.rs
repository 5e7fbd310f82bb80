//! A user thread: waits its turn to connect, waits for the start, then runs orders until the
//! run ends, recording each order into its own slot. A lost connection is re-opened with
//! backoff; the failed order is counted by error kind and the run goes on. Each thread also
//! says since when it has been failing (its orders failing and no new connection working),
//! so that the run can end when every thread of a database has been failing too long.

use super::recorder::OltpRecorder;
use super::spec::OltpSpec;
use super::user::{OrderLog, User};
use crate::db::{DbError, DbErrorKind, DbResult};
use crate::rng::{below, stream};
use crate::run::StopFlag;
use crate::workload::oltp::ds3::{Ds3Database, Session};
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Orders in a row that may fail before a thread gives up (a broken schema, not a blip).
const MAX_FAILED_IN_A_ROW: u32 = 100;
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
/// At most a second between attempts, so that a server back after a short outage is found
/// well within the run's limit on failing (`run::NO_PROGRESS_LIMIT`).
const BACKOFF_MAX: Duration = Duration::from_secs(1);
/// How often a waiting or thinking thread looks at the run's state.
const POLL: Duration = Duration::from_millis(50);

pub(super) const CONNECTING: u8 = 0;
pub(super) const RUNNING: u8 = 1;
pub(super) const ENDING: u8 = 2;

/// What the coordinator and the threads share. Each thread writes only its own slot; the
/// coordinator swaps the slots out once per interval.
pub(super) struct Shared {
    pub slots: Vec<Mutex<OltpRecorder>>,
    pub state: AtomicU8,
    pub connected: AtomicUsize,
    pub failures: Mutex<Vec<String>>,
    /// Per thread: since when (ns since the start, plus one) its orders have been failing with
    /// no order or new connection working since; 0 while it works.
    pub failing_since: Vec<AtomicU64>,
    /// Per thread: the error that last ended one of its orders.
    pub last_error: Vec<Mutex<Option<String>>>,
    start: Mutex<Option<Instant>>,
    started: Condvar,
}

impl Shared {
    pub(super) fn new(threads: usize) -> Self {
        Shared {
            slots: (0..threads).map(|_| Mutex::default()).collect(),
            state: AtomicU8::new(CONNECTING),
            connected: AtomicUsize::new(0),
            failures: Mutex::default(),
            failing_since: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            last_error: (0..threads).map(|_| Mutex::default()).collect(),
            start: Mutex::new(None),
            started: Condvar::new(),
        }
    }

    /// Lets every connected thread go, with the run's clock starting at `at`; or, with None,
    /// tells them the run will not start.
    pub(super) fn release(&self, at: Option<Instant>) {
        let mut start = self.start.lock().unwrap_or_else(|p| p.into_inner());
        *start = at;
        self.state.store(if at.is_some() { RUNNING } else { ENDING }, Relaxed);
        self.started.notify_all();
    }

    fn wait_start(&self) -> Option<Instant> {
        let mut start = self.start.lock().unwrap_or_else(|p| p.into_inner());
        while self.state.load(Relaxed) == CONNECTING {
            start = self.started.wait_timeout(start, POLL).unwrap_or_else(|p| p.into_inner()).0;
        }
        *start
    }

    /// Thread `id` did work: it is not failing.
    pub(super) fn working(&self, id: usize) {
        self.failing_since[id].store(0, Relaxed);
    }

    /// An order of thread `id` failed at `at_ns` with `e`: it is failing from then, unless it
    /// already was.
    pub(super) fn failing(&self, id: usize, at_ns: u64, e: &DbError) {
        let _ = self.failing_since[id].compare_exchange(0, at_ns + 1, Relaxed, Relaxed);
        self.last_error(id, e);
    }

    fn last_error(&self, id: usize, e: &DbError) {
        *self.last_error[id].lock().unwrap_or_else(|p| p.into_inner()) = Some(e.message.clone());
    }

    /// Since when (ns since the start) thread `id` has been failing, if it is.
    pub(super) fn failing_from(&self, id: usize) -> Option<u64> {
        self.failing_since[id].load(Relaxed).checked_sub(1)
    }

    fn fail(&self, why: String) {
        self.failures.lock().unwrap_or_else(|p| p.into_inner()).push(why);
    }

    fn running(&self, stop: &StopFlag) -> bool {
        self.state.load(Relaxed) == RUNNING && !stop.is_stopped()
    }
}

pub(super) struct Worker {
    pub id: usize,
    pub db: Arc<dyn Ds3Database>,
    pub spec: Arc<OltpSpec>,
    pub shared: Arc<Shared>,
    pub stop: StopFlag,
    /// Longest wait before connecting: spreads the connections at ramp_rate users/s.
    pub stagger: Duration,
}

impl Worker {
    pub(super) fn run(self) {
        let mut pace = stream(self.spec.seed, 1 << 40 | self.id as u64);
        let wait = below(&mut pace, self.stagger.as_millis() as u64 + 1);
        if !self.sleep_while(Duration::from_millis(wait), |s| s.state.load(Relaxed) == CONNECTING) {
            return;
        }
        let Some(mut session) = self.first_connection() else { return };
        self.shared.connected.fetch_add(1, Relaxed);
        let Some(start) = self.shared.wait_start() else { return };
        self.orders(&mut session, start);
    }

    fn first_connection(&self) -> Option<Box<dyn Session>> {
        match self.connect() {
            Ok(s) => Some(s),
            Err(e) => {
                self.shared.fail(format!(
                    "thread {} could not connect to {}: {e}",
                    self.id + 1,
                    self.db.describe()
                ));
                None
            }
        }
    }

    fn orders(&self, session: &mut Box<dyn Session>, start: Instant) {
        let spec = &self.spec;
        let base = 2 * self.id as u64;
        let mut user = User::new(spec, stream(spec.seed, base), stream(spec.seed, base + 1));
        let mut failed_in_a_row = 0;
        while self.shared.running(&self.stop) {
            let (log, result) = user.order(session.as_mut());
            let end_ns = start.elapsed().as_nanos() as u64;
            self.record(&log, result.as_ref().err(), end_ns);
            match result {
                Ok(()) => {
                    failed_in_a_row = 0;
                    self.shared.working(self.id);
                }
                Err(e) => {
                    self.shared.failing(self.id, end_ns, &e);
                    failed_in_a_row += 1;
                    if failed_in_a_row >= MAX_FAILED_IN_A_ROW {
                        self.shared.fail(format!(
                            "thread {} gave up after {MAX_FAILED_IN_A_ROW} failed orders in a row; the last: {e}",
                            self.id + 1
                        ));
                        return;
                    }
                    if e.kind == DbErrorKind::Connection && !self.reconnect(session) {
                        return;
                    }
                }
            }
            let pause = user.think();
            if !pause.is_zero() && !self.sleep_while(pause, |s| s.state.load(Relaxed) == RUNNING) {
                return;
            }
        }
    }

    /// A session set up as the spec says.
    fn connect(&self) -> DbResult<Box<dyn Session>> {
        let mut session = self.db.connect()?;
        if !self.spec.restock {
            session.set_restock(false)?;
        }
        Ok(session)
    }

    /// Opens a new connection with doubling backoff until it works or the run ends.
    fn reconnect(&self, session: &mut Box<dyn Session>) -> bool {
        let mut backoff = BACKOFF_FIRST;
        loop {
            if !self.sleep_while(backoff, |s| s.state.load(Relaxed) == RUNNING) {
                return false;
            }
            match self.connect() {
                Ok(s) => {
                    *session = s;
                    self.slot().reconnects += 1;
                    self.shared.working(self.id);
                    return true;
                }
                Err(e) => {
                    self.shared.last_error(self.id, &e);
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
            }
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, OltpRecorder> {
        self.shared.slots[self.id].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds one order to this thread's slot: one uncontended lock per order.
    fn record(&self, log: &OrderLog, failure: Option<&DbError>, end_ns: u64) {
        let mut rec = self.slot();
        for &(kind, ns) in &log.calls {
            rec.record_call(kind, ns);
        }
        for kind in &log.retried {
            rec.errors.count(kind);
        }
        match failure {
            Some(e) => {
                rec.failed_orders += 1;
                rec.errors.count(e.kind.as_str());
            }
            None => {
                rec.record_order(end_ns, log.rt_ns);
                rec.purchases += u64::from(log.purchased);
                rec.rollbacks += u64::from(log.rolled_back);
            }
        }
    }

    /// Sleeps up to `d` in short steps; false as soon as `keep_going` fails or a stop is asked.
    fn sleep_while(&self, d: Duration, keep_going: impl Fn(&Shared) -> bool) -> bool {
        let until = Instant::now() + d;
        loop {
            if self.stop.is_stopped() || !keep_going(&self.shared) {
                return false;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(POLL));
        }
    }
}
