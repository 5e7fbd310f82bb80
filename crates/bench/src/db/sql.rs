//! A session that runs any SQL text on any of the three backends, with parameters, and hands
//! rows back as plain values: what a workload that brings its own SQL (a replay of production
//! statements) needs, and what DS3's sessions are built on.
//!
//! A statement runs either as text, parsed by the server each time, or prepared once per
//! session and run by handle ([`SqlSession::prepare`]). Each call runs in the session's
//! current transaction: alone (autocommit) unless the SQL itself began one (`BEGIN`).
//! Errors carry the backend's error kind ([`DbErrorKind`](super::DbErrorKind)), so a caller
//! counts them as DS3's driver does.
//!
//! How each backend runs a statement given as text: SQLite prepares it for the call;
//! PostgreSQL prepares it unnamed for the call (one round trip to learn its parameter types,
//! one to run it); MariaDB sends it over the text protocol when it has no parameters, else
//! prepares it through the connection's statement cache (MariaDB binds parameters only to
//! prepared statements). A prepared statement runs in one round trip everywhere.

use super::DbResult;

/// One value of a parameter or a column. Column types without an exact match here are
/// brought back as the nearest one: booleans as `Int`, dates and times as `Text`, SQLite's
/// and MariaDB's decimals as they store them; on PostgreSQL a column of another type (such as
/// `numeric`) is an error of kind `Query` naming the type, to be cast to `text` in the SQL.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Bytes(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_owned())
    }
}

/// A row: one value per column, in the statement's column order.
pub type Row = Vec<Value>;

/// A statement prepared on one session, valid on that session only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepared(pub(crate) usize);

/// What to run: SQL text, or a statement this session prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statement<'a> {
    Text(&'a str),
    Prepared(Prepared),
}

/// One connection running SQL. A call that fails leaves the session usable unless the
/// error kind is `Connection`.
pub trait SqlSession: Send {
    /// Runs `sql`, one statement or several separated by `;`, without parameters and without
    /// rows back: schema changes, `BEGIN`, `COMMIT`.
    fn batch(&mut self, sql: &str) -> DbResult<()>;
    /// Prepares one statement for later calls on this session.
    fn prepare(&mut self, sql: &str) -> DbResult<Prepared>;
    /// Runs one statement with `params` (`?1`/`$1`/`?` placeholders as the backend writes
    /// them) and returns how many rows it changed.
    fn execute(&mut self, statement: Statement<'_>, params: &[Value]) -> DbResult<u64>;
    /// Runs one statement with `params` and returns its rows.
    fn query(&mut self, statement: Statement<'_>, params: &[Value]) -> DbResult<Vec<Row>>;
}

/// The error for a `Prepared` handle this session did not make.
pub(crate) fn unknown_statement(statement: Prepared) -> super::DbError {
    super::DbError::new(
        super::DbErrorKind::Query,
        format!("prepared statement #{} was not prepared on this session", statement.0),
    )
}

#[cfg(test)]
mod tests {
    //! The SQL session on every backend: DDL in a database or schema the test owns, a
    //! parameterised insert (prepared and as text) and select, rows changed, and error kinds.

    use super::*;
    use crate::db::testing::{server_url, unique_db_name};
    use crate::db::{BackendKind, Database, DbErrorKind};

    /// The statements with the backend's placeholders (`$1` on PostgreSQL, `?` elsewhere).
    fn exercise(s: &mut dyn SqlSession, p: impl Fn(usize) -> String) {
        s.batch("CREATE TABLE sb_sql (id BIGINT PRIMARY KEY, name VARCHAR(40), score DOUBLE PRECISION)")
            .unwrap();
        let insert = s
            .prepare(&format!("INSERT INTO sb_sql (id, name, score) VALUES ({}, {}, {})", p(1), p(2), p(3)))
            .unwrap();
        let one = [Value::Int(1), "one".into(), Value::Float(1.5)];
        assert_eq!(s.execute(Statement::Prepared(insert), &one).unwrap(), 1);
        let text = format!("INSERT INTO sb_sql (id, name, score) VALUES ({}, {}, {})", p(1), p(2), p(3));
        assert_eq!(s.execute(Statement::Text(&text), &[Value::Int(2), Value::Null, Value::Null]).unwrap(), 1);
        let update = format!("UPDATE sb_sql SET score = {} WHERE id = {}", p(1), p(2));
        assert_eq!(s.execute(Statement::Text(&update), &[Value::Float(2.5), Value::Int(2)]).unwrap(), 1);
        let select = format!("SELECT id, name, score FROM sb_sql WHERE id >= {} ORDER BY id", p(1));
        assert_eq!(
            s.query(Statement::Text(&select), &[Value::Int(1)]).unwrap(),
            vec![
                vec![Value::Int(1), Value::Text("one".into()), Value::Float(1.5)],
                vec![Value::Int(2), Value::Null, Value::Float(2.5)],
            ]
        );
        assert_eq!(
            s.query(Statement::Text("SELECT COUNT(*) FROM sb_sql"), &[]).unwrap(),
            vec![vec![Value::Int(2)]]
        );
        let bad = s.execute(Statement::Text("SELEC 1"), &[]).unwrap_err();
        assert_eq!(bad.kind, DbErrorKind::Query, "{bad}");
        let missing = s.query(Statement::Text("SELECT * FROM sb_no_such_table"), &[]).unwrap_err();
        assert_eq!(missing.kind, DbErrorKind::Missing, "{missing}");
        let stranger = s.query(Statement::Prepared(Prepared(99)), &[]).unwrap_err();
        assert_eq!(stranger.kind, DbErrorKind::Query, "{stranger}");
        assert_eq!(
            s.query(Statement::Prepared(insert), &one).unwrap_err().kind,
            DbErrorKind::Query,
            "a duplicate key"
        );
        assert_eq!(
            s.query(Statement::Text("SELECT COUNT(*) FROM sb_sql"), &[]).unwrap(),
            vec![vec![Value::Int(2)]]
        );
    }

    #[test]
    fn sql_text_runs_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sql.db");
        std::fs::File::create(&path).unwrap();
        let db = crate::db::sqlite::Sqlite::new(&path);
        exercise(db.open_session().unwrap().as_mut(), |i| format!("?{i}"));
    }

    #[test]
    fn sql_text_runs_on_postgres() {
        let Some(url) = server_url(BackendKind::Postgres) else { return };
        let db = crate::db::postgres::Postgres::new(&url).unwrap();
        let mut s = db.open_session().unwrap();
        let schema = unique_db_name("sql");
        s.batch(&format!("CREATE SCHEMA {schema}; SET search_path TO {schema}")).unwrap();
        exercise(s.as_mut(), |i| format!("${i}"));
        s.batch(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();
    }

    #[test]
    fn sql_text_runs_on_mariadb() {
        let Some(url) = server_url(BackendKind::Mysql) else { return };
        let db = crate::db::mysql::Mysql::new(&url).unwrap();
        let mut s = db.open_session().unwrap();
        let name = unique_db_name("sql");
        s.batch(&format!("CREATE DATABASE {name}; USE {name}")).unwrap();
        exercise(s.as_mut(), |_| "?".to_owned());
        s.batch(&format!("DROP DATABASE {name}")).unwrap();
    }
}
