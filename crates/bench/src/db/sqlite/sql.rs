//! Any SQL text on one SQLite connection. A prepared statement is kept in the connection's
//! statement cache, keyed by its text; text is prepared for the call. Each call that leaves
//! no transaction open counts as one transaction for the counters.

use super::classify;
use super::counters::Stats;
use crate::db::DbResult;
use crate::db::sql::{Prepared, Row, SqlSession, Statement, Value, unknown_statement};
use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, ValueRef};
use std::path::PathBuf;
use std::sync::Arc;

/// Statements kept prepared per connection (DS3 needs about 20).
const STATEMENT_CACHE: usize = 64;

/// One connection to the database file, opened for a run.
pub struct SqliteSession {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(crate) stats: Arc<Stats>,
    prepared: Vec<String>,
}

impl SqliteSession {
    pub(crate) fn new(conn: Connection, path: PathBuf, stats: Arc<Stats>) -> Self {
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        SqliteSession { conn, path, stats, prepared: Vec::new() }
    }

    /// Runs `f` on a statement of `statement`, counts the transaction it ended, and gives
    /// errors their kind.
    fn run<T>(
        &mut self,
        statement: Statement<'_>,
        f: impl FnOnce(&mut rusqlite::Statement<'_>) -> rusqlite::Result<T>,
    ) -> DbResult<T> {
        let out = match statement {
            Statement::Text(sql) => self.conn.prepare(sql).and_then(|mut s| f(&mut s)),
            Statement::Prepared(p) => {
                let sql = self.prepared.get(p.0).ok_or_else(|| unknown_statement(p))?;
                self.conn.prepare_cached(sql).and_then(|mut s| f(&mut s))
            }
        };
        if self.conn.is_autocommit() {
            self.stats.after_transaction(&self.conn, out.is_ok());
        }
        out.map_err(|e| classify(&self.path, e))
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Float(f) => ValueRef::Real(*f),
            Value::Text(t) => ValueRef::Text(t.as_bytes()),
            Value::Bytes(b) => ValueRef::Blob(b),
        }))
    }
}

fn value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Float(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
    }
}

impl SqlSession for SqliteSession {
    fn batch(&mut self, sql: &str) -> DbResult<()> {
        let out = self.conn.execute_batch(sql);
        if self.conn.is_autocommit() {
            self.stats.after_transaction(&self.conn, out.is_ok());
        }
        out.map_err(|e| classify(&self.path, e))
    }

    fn prepare(&mut self, sql: &str) -> DbResult<Prepared> {
        self.conn.prepare_cached(sql).map_err(|e| classify(&self.path, e))?;
        self.prepared.push(sql.to_owned());
        Ok(Prepared(self.prepared.len() - 1))
    }

    fn execute(&mut self, statement: Statement<'_>, params: &[Value]) -> DbResult<u64> {
        self.run(statement, |s| s.execute(rusqlite::params_from_iter(params)).map(|n| n as u64))
    }

    fn query(&mut self, statement: Statement<'_>, params: &[Value]) -> DbResult<Vec<Row>> {
        self.run(statement, |s| {
            let columns = s.column_count();
            let mut rows = s.query(rusqlite::params_from_iter(params))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                out.push((0..columns).map(|i| row.get_ref(i).map(value)).collect::<rusqlite::Result<Row>>()?);
            }
            Ok(out)
        })
    }
}
