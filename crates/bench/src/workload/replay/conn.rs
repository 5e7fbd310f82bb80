//! A replayed session's connection, and how a request's body runs on it: SQL text on a SQL
//! session, a DS3 call on a DS3 session of the same database (with the ids this database gave
//! in place of those the recording got, `call::Ids`). `Connect` opens either kind; a session's
//! connection is of the kind its first request needs, and one that changes kind opens the
//! other (a log mixes none in practice).

use super::data::Answer;
use super::log::Body;
use crate::db::{DbErrorKind, DbResult, SqlSession};
use crate::workload::oltp::ds3::call::Ids;
use crate::workload::oltp::ds3::{self, Ds3Database};
use std::sync::Arc;

type Opener<T> = Arc<dyn Fn() -> DbResult<Box<T>> + Send + Sync>;

/// Opens a connection for a session of the log (on its first request, and again after a lost
/// one), of the database the replay runs against.
#[derive(Clone)]
pub struct Connect {
    sql: Opener<dyn SqlSession>,
    /// None where the database runs no DS3 calls (a DS3 call is then an error).
    ds3: Option<Opener<dyn ds3::Session>>,
}

impl Connect {
    /// Sessions of `db`: SQL sessions, and DS3 sessions for DS3 calls.
    pub fn to(db: Arc<dyn Ds3Database>) -> Connect {
        let for_ds3 = db.clone();
        Connect { sql: Arc::new(move || db.open_session()), ds3: Some(Arc::new(move || for_ds3.connect())) }
    }

    /// SQL sessions only, as `open` gives them.
    pub fn sql(open: impl Fn() -> DbResult<Box<dyn SqlSession>> + Send + Sync + 'static) -> Connect {
        Connect { sql: Arc::new(open), ds3: None }
    }

    /// With DS3 sessions as `open` gives them.
    pub fn with_ds3(
        mut self,
        open: impl Fn() -> DbResult<Box<dyn ds3::Session>> + Send + Sync + 'static,
    ) -> Connect {
        self.ds3 = Some(Arc::new(open));
        self
    }
}

/// A session's open connection.
pub(super) enum Conn {
    Sql(Box<dyn SqlSession>),
    Ds3(Box<dyn ds3::Session>, Ids),
}

impl Conn {
    /// This connection, to be used by another session: the ids the last one's calls made are
    /// not the next one's.
    pub(super) fn for_another_session(self) -> Conn {
        match self {
            Conn::Ds3(session, _) => Conn::Ds3(session, Ids::default()),
            sql => sql,
        }
    }
}

/// A request that was not answered: how (failed, or not sent for want of a connection) and the
/// database's message.
pub(super) type Failed = (Answer, String);

/// Runs `body` on the session's connection, opening one of the kind it needs where there is
/// none; a lost connection is dropped, so that the session's next request opens a new one. A
/// connection the database would not open is `Answer::Refused`: the request was never sent.
pub(super) fn send(conn: &mut Option<Conn>, body: &Body, connect: &Connect) -> Result<(), Failed> {
    let sent = match (conn.take(), body) {
        (Some(Conn::Sql(mut s)), Body::Sql(sql)) => {
            let sent = s.batch(sql);
            *conn = Some(Conn::Sql(s));
            sent
        }
        (Some(Conn::Ds3(mut s, mut ids)), Body::Ds3(call)) => {
            let sent = call.run(s.as_mut(), &mut ids);
            *conn = Some(Conn::Ds3(s, ids));
            sent
        }
        (_, body) => {
            *conn = Some(open(body, connect)?);
            return send(conn, body, connect);
        }
    };
    if sent.as_ref().is_err_and(|e| e.kind == DbErrorKind::Connection) {
        *conn = None;
    }
    sent.map_err(|e| (Answer::Failed(e.kind), e.message))
}

/// A new connection of the kind `body` needs.
fn open(body: &Body, connect: &Connect) -> Result<Conn, Failed> {
    let opened = match (body, &connect.ds3) {
        (Body::Sql(_), _) => (connect.sql)().map(Conn::Sql),
        (Body::Ds3(_), Some(ds3)) => ds3().map(|s| Conn::Ds3(s, Ids::default())),
        (Body::Ds3(call), None) => {
            let why = format!("a DVD Store call ({}) needs a database DS3 runs on", call.kind());
            return Err((Answer::Failed(DbErrorKind::Missing), why));
        }
    };
    opened.map_err(|e| (Answer::Refused, format!("no connection ({}): {}", e.kind.as_str(), e.message)))
}
