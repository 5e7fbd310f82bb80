//! Test support for the replay: requests made in memory, and fake databases: one that
//! answers at once, one that sleeps per statement, records what each connection saw, counts
//! the statements of each source running at once, and fails a statement as asked.
//!
//! A test request's SQL is `<VERB> <source> <session> <n>` (`SELECT s0 a 3`): its type is the
//! verb, and the fake database reads the rest.

use super::conn::{Conn, Connect};
use super::log::{Body, Entry, Read, What, statement_kind};
use super::spec::Source;
use crate::db::sql::{Prepared, Row, SqlSession, Statement, Value};
use crate::db::{DbError, DbErrorKind, DbResult};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A request of `session` at `at_ns`, user `app`, database `db`.
pub(super) fn entry(session: &str, at_ns: i128, sql: &str) -> Entry {
    Entry {
        at_ns,
        session: session.into(),
        user: "app".into(),
        database: "db".into(),
        kind: statement_kind(sql),
        what: What::Request(Body::Sql(sql.into())),
        line: 0,
    }
}

pub(super) fn source(name: &str, reads: impl Iterator<Item = Read> + Send + 'static) -> Source {
    Source::new(name, reads)
}

/// Source `s` (its index): `per_session` requests of each of `sessions` sessions, interleaved
/// (a request of each in turn), `step_ns` apart, the verbs taking turns.
pub(super) fn web(s: usize, sessions: usize, per_session: usize, step_ns: i128) -> Source {
    const VERBS: [&str; 3] = ["SELECT", "UPDATE", "INSERT"];
    let reads = (0..sessions * per_session).map(move |i| {
        let (n, session) = (i / sessions, format!("x{}", i % sessions));
        Ok(entry(&session, i as i128 * step_ns, &format!("{} s{s} {session} {n}", VERBS[i % 3])))
    });
    source(&format!("web{}", s + 1), reads)
}

/// A session that runs text through `f`, and nothing else.
struct TextOnly<F>(F);

impl<F: FnMut(&str) -> DbResult<()> + Send> SqlSession for TextOnly<F> {
    fn batch(&mut self, sql: &str) -> DbResult<()> {
        (self.0)(sql)
    }
    fn prepare(&mut self, _: &str) -> DbResult<Prepared> {
        Err(unsupported())
    }
    fn execute(&mut self, _: Statement<'_>, _: &[Value]) -> DbResult<u64> {
        Err(unsupported())
    }
    fn query(&mut self, _: Statement<'_>, _: &[Value]) -> DbResult<Vec<Row>> {
        Err(unsupported())
    }
}

fn unsupported() -> DbError {
    DbError::new(DbErrorKind::Query, "the replay only sends text")
}

/// A connection that answers at once and counts into `closed` when it is closed (dropped).
pub(super) fn counted(closed: &Arc<AtomicU64>) -> Conn {
    struct Closes(Arc<AtomicU64>);
    impl Drop for Closes {
        fn drop(&mut self) {
            self.0.fetch_add(1, Relaxed);
        }
    }
    let closes = Closes(closed.clone());
    Conn::Sql(Box::new(TextOnly(move |_: &str| {
        let _held = &closes;
        Ok(())
    })))
}

/// A database that answers every statement at once and remembers nothing.
pub(super) fn instant() -> Connect {
    Connect::sql(|| Ok(Box::new(TextOnly(|_: &str| Ok(()))) as Box<dyn SqlSession>))
}

/// A fake database that watches what the replay does.
#[derive(Default)]
pub(super) struct Fake {
    /// How long each statement takes.
    pub delay: Duration,
    /// Statements that fail once with a lost connection.
    pub lose_once: Mutex<HashSet<String>>,
    /// Connections opened.
    pub connects: AtomicU64,
    /// Every statement with the connection it came on, in the order they started.
    pub seen: Mutex<Vec<(u64, String)>>,
    /// Per source: statements running now, and the most at once.
    running: Mutex<HashMap<String, (u64, u64)>>,
}

impl Fake {
    pub(super) fn new(delay: Duration) -> Arc<Fake> {
        Arc::new(Fake { delay, ..Fake::default() })
    }

    pub(super) fn connect(self: &Arc<Self>) -> Connect {
        let fake = self.clone();
        Connect::sql(move || {
            let (id, fake) = (fake.connects.fetch_add(1, Relaxed), fake.clone());
            Ok(Box::new(TextOnly(move |sql: &str| fake.batch(id, sql))) as Box<dyn SqlSession>)
        })
    }

    /// The most statements of source `s` (`s0`) that ran at once.
    pub(super) fn most_at_once(&self, s: &str) -> u64 {
        self.running.lock().unwrap().get(s).map_or(0, |r| r.1)
    }

    /// Each session's statements' numbers in the order they ran, with the connections they
    /// came on.
    pub(super) fn by_session(&self) -> HashMap<String, Vec<(u64, u64)>> {
        let mut out: HashMap<String, Vec<(u64, u64)>> = HashMap::new();
        for (conn, sql) in self.seen.lock().unwrap().iter() {
            let words: Vec<&str> = sql.split(' ').collect();
            let key = format!("{} {}", words[1], words[2]);
            out.entry(key).or_default().push((words[3].parse().unwrap(), *conn));
        }
        out
    }

    /// Statement `sql` on connection `id`.
    fn batch(&self, id: u64, sql: &str) -> DbResult<()> {
        self.seen.lock().unwrap().push((id, sql.to_string()));
        let source = sql.split(' ').nth(1).unwrap_or_default().to_string();
        self.running(&source, 1);
        std::thread::sleep(self.delay);
        self.running(&source, -1);
        if self.lose_once.lock().unwrap().remove(sql) {
            return Err(DbError::new(DbErrorKind::Connection, "server closed the connection"));
        }
        Ok(())
    }

    fn running(&self, source: &str, by: i64) {
        let mut r = self.running.lock().unwrap();
        let e = r.entry(source.to_string()).or_default();
        e.0 = e.0.checked_add_signed(by).unwrap();
        e.1 = e.1.max(e.0);
    }
}
