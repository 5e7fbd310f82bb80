//! storbench's request log: a line of JSON for every DS3 call an OLTP run makes (`oltp run
//! --record FILE`), so that the run can be replayed on other storage (`replay --format
//! storbench`). A line is
//! `{"time":"2026-11-26T10:00:00.123456789Z","source":"host","session":"3","type":"login","params":{...}}`:
//! when the call started (UTC), the host that ran it, the connection it ran on (each of the
//! run's connections is a session of its own: a number, in the order they were opened), and
//! the call as [`Call`] writes it.
//!
//! Recording is a database in front of the run's ([`Recorded`]): its sessions run each call on
//! the real session and hand the line to a writer thread, one send a call with no lock shared
//! between users. The writer puts the lines in the order the calls started: it holds each
//! line until a call that started `REORDER_WINDOW` later has ended, so only a call longer
//! than that window can be written after one that started later (a replay runs such a line
//! at once, late).

use super::datagen::DataSet;
use super::ds3::call::Call;
use super::ds3::{
    Browse, CheckReport, Ds3Database, LoadProgress, LoadReport, LoadedShape, Login, NewCustomer, NewReview,
    Purchase, ReviewOrder, ReviewSearch, Session,
};
use crate::db::{BackendKind, ConnectionRoom, CounterSampler, Database, DbResult, SqlSession, WriterLock};
use crate::files::{self, FileError, How};
use crate::run::StopFlag;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use storbench_report::DatabaseInfo;

/// How long the writer holds a line for calls that started earlier and are still running.
pub const REORDER_WINDOW: Duration = Duration::from_secs(10);

/// One line of the log, as read.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Line {
    pub time: jiff::Timestamp,
    #[serde(default)]
    pub source: String,
    pub session: String,
    #[serde(flatten)]
    pub call: Call,
}

impl Line {
    /// A line of the log, or why it is not one.
    pub fn parse(text: &str) -> Result<Line, String> {
        serde_json::from_str(text).map_err(|e| format!("not a storbench request: {e}"))
    }
}

#[derive(serde::Serialize)]
struct LineOut<'a> {
    time: jiff::Timestamp,
    source: &'a str,
    session: &'a str,
    #[serde(flatten)]
    call: &'a Call,
}

/// A call's line on its way to the writer: when it started (ns since 1970) and its text.
type Sent = (i128, String);

/// How long `finish` waits for sessions still open to end and the last lines to be written.
pub const FINISH_WAIT: Duration = Duration::from_secs(30);

/// The log being written: the writer thread and what it is sent.
pub struct RequestLog {
    tx: Mutex<Option<Sender<Sent>>>,
    /// The writer's answer: the lines written, or why writing failed.
    written: Mutex<Receiver<Result<u64, String>>>,
    source: String,
    sessions: AtomicU64,
}

impl RequestLog {
    /// Creates `path` (never over anything already there) and starts its writer; `source`
    /// names the host in every line.
    pub fn create(path: &Path, source: &str) -> Result<Arc<RequestLog>, FileError> {
        let file = files::create(path, How::WRITE)?;
        let (tx, rx) = channel();
        let (done, written) = channel();
        let name = path.display().to_string();
        std::thread::Builder::new()
            .name("request-log".into())
            .spawn(move || {
                let _ = done.send(write_lines(std::io::BufWriter::with_capacity(1 << 20, file), rx, &name));
            })
            .map_err(|source| FileError::Io { op: "starting the writer of", path: path.into(), source })?;
        Ok(Arc::new(RequestLog {
            tx: Mutex::new(Some(tx)),
            written: Mutex::new(written),
            source: source.to_string(),
            sessions: AtomicU64::new(0),
        }))
    }

    /// Takes no more sessions and waits, up to `FINISH_WAIT`, for the sessions still open to
    /// end and every line to be written. The lines written, or why not all were.
    pub fn finish(&self) -> Result<u64, String> {
        drop(lock(&self.tx).take());
        match lock(&self.written).recv_timeout(FINISH_WAIT) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "sessions still open {FINISH_WAIT:?} after the run; their last lines are not written"
            )),
            Err(RecvTimeoutError::Disconnected) => Err("the request log's writer failed".into()),
        }
    }

    fn sink(&self) -> Option<Sink> {
        let tx = lock(&self.tx).clone()?;
        let session = (self.sessions.fetch_add(1, Relaxed) + 1).to_string();
        Some(Sink { tx, source: self.source.clone(), session })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The writer: lines in the order their calls started, each held until one that started
/// `REORDER_WINDOW` later has come (or the log ends).
fn write_lines(mut out: impl Write, rx: Receiver<Sent>, name: &str) -> Result<u64, String> {
    let window = REORDER_WINDOW.as_nanos() as i128;
    let mut held: BinaryHeap<Reverse<Sent>> = BinaryHeap::new();
    let mut written = 0u64;
    let mut write = |line: String| -> std::io::Result<()> {
        written += 1;
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")
    };
    let mut wrote = Ok(());
    for sent in rx {
        let newest = sent.0;
        held.push(Reverse(sent));
        while wrote.is_ok() && held.peek().is_some_and(|Reverse((t, _))| *t + window <= newest) {
            let Reverse((_, line)) = held.pop().expect("peeked");
            wrote = write(line);
        }
    }
    while let (Ok(()), Some(Reverse((_, line)))) = (&wrote, held.pop()) {
        wrote = write(line);
    }
    wrote.and_then(|()| out.flush()).map(|()| written).map_err(|e| format!("writing {name}: {e}"))
}

/// One session's side of the log.
struct Sink {
    tx: Sender<Sent>,
    source: String,
    session: String,
}

impl Sink {
    fn send(&self, started: SystemTime, call: &Call) {
        let ns = started.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
        let time = jiff::Timestamp::from_nanosecond(ns).unwrap_or_default();
        let line = LineOut { time, source: &self.source, session: &self.session, call };
        if let Ok(text) = serde_json::to_string(&line) {
            // A log already finished takes no more lines; the run is ending then.
            let _ = self.tx.send((ns, text));
        }
    }
}

/// A database whose sessions write every call they run to a request log.
pub struct Recorded {
    inner: Arc<dyn Ds3Database>,
    log: Arc<RequestLog>,
}

impl Recorded {
    pub fn new(inner: Arc<dyn Ds3Database>, log: Arc<RequestLog>) -> Recorded {
        Recorded { inner, log }
    }
}

impl Database for Recorded {
    fn kind(&self) -> BackendKind {
        self.inner.kind()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn database_name(&self) -> String {
        self.inner.database_name()
    }
    fn lock_writer(&self) -> DbResult<WriterLock> {
        self.inner.lock_writer()
    }
    fn open_session(&self) -> DbResult<Box<dyn SqlSession>> {
        self.inner.open_session()
    }
    fn connection_room(&self) -> DbResult<Option<ConnectionRoom>> {
        self.inner.connection_room()
    }
    fn identity(&self) -> DbResult<Option<String>> {
        self.inner.identity()
    }
    fn counters(&self) -> DbResult<Box<dyn CounterSampler>> {
        self.inner.counters()
    }
    fn server_info(&self) -> DbResult<DatabaseInfo> {
        self.inner.server_info()
    }
    fn data_location(&self) -> Option<std::path::PathBuf> {
        self.inner.data_location()
    }
    fn log_location(&self) -> Option<std::path::PathBuf> {
        self.inner.log_location()
    }
}

impl Ds3Database for Recorded {
    fn load(
        &self,
        data: &DataSet,
        progress: &mut dyn FnMut(LoadProgress),
        stop: &StopFlag,
    ) -> DbResult<LoadReport> {
        self.inner.load(data, progress, stop)
    }
    fn shape(&self) -> DbResult<LoadedShape> {
        self.inner.shape()
    }
    fn reset(&self) -> DbResult<f64> {
        self.inner.reset()
    }
    fn connect(&self) -> DbResult<Box<dyn Session>> {
        let session = self.inner.connect()?;
        Ok(match self.log.sink() {
            Some(sink) => Box::new(Recording { inner: session, sink }),
            None => session,
        })
    }
    fn check(&self) -> DbResult<CheckReport> {
        self.inner.check()
    }
}

/// A session that runs each call on the real one and logs it, answered or not (a call that
/// failed was still a request the site made).
struct Recording {
    inner: Box<dyn Session>,
    sink: Sink,
}

impl Recording {
    /// Runs `f` on the real session and logs the call `call` makes of what it answered.
    fn logged<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Session) -> DbResult<T>,
        call: impl FnOnce(Option<&T>) -> Call,
    ) -> DbResult<T> {
        let started = SystemTime::now();
        let answer = f(self.inner.as_mut());
        self.sink.send(started, &call(answer.as_ref().ok()));
        answer
    }
}

impl Session for Recording {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login> {
        self.logged(
            |s| s.login(username, password),
            |_| Call::Login { username: username.into(), password: password.into() },
        )
    }
    fn new_customer(&mut self, c: &NewCustomer) -> DbResult<Option<i64>> {
        self.logged(
            |s| s.new_customer(c),
            |id| Call::NewCustomer { customer: Box::new(c.clone()), id: id.copied().flatten() },
        )
    }
    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool> {
        self.logged(|s| s.new_member(customer_id, level), |_| Call::NewMember { customer_id, level })
    }
    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32> {
        self.logged(
            |s| s.browse(by, batch),
            |_| match by {
                Browse::Category(category) => Call::BrowseByCategory { category, batch },
                Browse::Actor(a) => Call::BrowseByActor { actor: a.into(), batch },
                Browse::Title(t) => Call::BrowseByTitle { title: t.into(), batch },
            },
        )
    }
    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, depth: u32) -> DbResult<u32> {
        self.logged(
            |s| s.review_search(by, batch, depth),
            |_| match by {
                ReviewSearch::Actor(a) => Call::ReviewsByActor { actor: a.into(), batch, depth },
                ReviewSearch::Title(t) => Call::ReviewsByTitle { title: t.into(), batch, depth },
            },
        )
    }
    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32> {
        self.logged(
            |s| s.get_reviews(prod_id, order, batch),
            |_| match order {
                ReviewOrder::Helpful => Call::GetReviews { prod_id, batch },
                ReviewOrder::Stars(stars) => Call::GetReviewsByStars { prod_id, stars, batch },
                ReviewOrder::Date => Call::GetReviewsByDate { prod_id, batch },
            },
        )
    }
    fn new_review(&mut self, r: &NewReview) -> DbResult<i64> {
        self.logged(|s| s.new_review(r), |id| Call::NewReview { review: r.clone(), id: id.copied() })
    }
    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64> {
        self.logged(
            |s| s.new_helpfulness(review_id, customer_id, rating),
            |_| Call::NewHelpfulness { review_id, customer_id, rating },
        )
    }
    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()> {
        self.logged(|s| s.prices(prod_ids, out), |_| Call::Prices { prod_ids: prod_ids.to_vec() })
    }
    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>> {
        self.logged(
            |s| s.purchase(p),
            |_| Call::Purchase {
                customer_id: p.customer_id,
                prod_ids: p.items.iter().map(|i| i.0).collect(),
                quantities: p.items.iter().map(|i| i.1).collect(),
                net_cents: Some(p.net_cents),
                tax_cents: Some(p.tax_cents),
                total_cents: Some(p.total_cents),
            },
        )
    }
    /// A setting of the session, not a request: not logged.
    fn set_restock(&mut self, on: bool) -> DbResult<()> {
        self.inner.set_restock(on)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(t: i128) -> Sent {
        (t, format!("{{\"t\":{t}}}"))
    }

    fn written(lines: Vec<Sent>) -> Vec<String> {
        let (tx, rx) = channel();
        for l in lines {
            tx.send(l).unwrap();
        }
        drop(tx);
        let mut out = Vec::new();
        let n = write_lines(&mut out, rx, "test").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(n as usize, text.lines().count());
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn lines_are_written_in_the_order_their_calls_started_within_the_window() {
        let s = 1_000_000_000i128;
        // Sent as calls ended: the 2 s call that started at 1 s ends after the one at 2 s.
        let order = [2, 1, 3, 20, 4, 31, 5];
        let out = written(order.iter().map(|&t| sent(t * s)).collect());
        let times: Vec<String> =
            [1, 2, 3, 4, 20, 5, 31].iter().map(|t| format!("{{\"t\":{}}}", t * s)).collect();
        assert_eq!(out, times, "5 s came after 20 s was written (31 s had ended): it alone stays late");
    }

    #[test]
    fn a_line_reads_back_as_the_call_its_session_made() {
        let (tx, rx) = channel();
        let sink = Sink { tx, source: "db1".into(), session: "7".into() };
        let call = Call::NewMember { customer_id: 3, level: 1 };
        let at = UNIX_EPOCH + Duration::from_nanos(1_764_000_000_123_456_789);
        sink.send(at, &call);
        let (ns, text) = rx.recv().unwrap();
        assert_eq!(ns, 1_764_000_000_123_456_789);
        let line = Line::parse(&text).unwrap();
        assert_eq!(line.call, call);
        assert_eq!((line.source.as_str(), line.session.as_str()), ("db1", "7"));
        assert_eq!(line.time.as_nanosecond(), 1_764_000_000_123_456_789);
        assert!(text.starts_with(r#"{"time":"2025-11-24T16:00:00.123456789Z","#), "{text}");
        assert!(Line::parse(r#"{"time":"x","session":"1","type":"login","params":{}}"#).is_err());
    }
}
