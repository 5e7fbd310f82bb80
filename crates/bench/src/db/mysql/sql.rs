//! Any SQL text on one MariaDB/MySQL connection. Text without parameters goes over the text
//! protocol; with parameters, and every prepared statement, over the binary protocol of a
//! server-side prepared statement (MariaDB binds parameters to nothing else). Rows of every
//! result set a statement returns (a `CALL` returns several) come back, in order.

use super::Ctx;
use crate::db::DbResult;
use crate::db::sql::{Prepared, Row, SqlSession, Statement, Value, unknown_statement};
use mysql::consts::ColumnType as T;
use mysql::prelude::{Protocol, Queryable};
use mysql::{Conn, Params, QueryResult};

/// The character set number of binary strings (BLOB, BINARY, VARBINARY).
const BINARY_CHARSET: u16 = 63;

/// One connection to the database.
pub struct MysqlSession {
    pub(crate) conn: Conn,
    prepared: Vec<mysql::Statement>,
}

impl MysqlSession {
    pub(crate) fn new(conn: Conn) -> Self {
        MysqlSession { conn, prepared: Vec::new() }
    }

    fn prepared(&self, p: Prepared) -> DbResult<mysql::Statement> {
        self.prepared.get(p.0).cloned().ok_or_else(|| unknown_statement(p))
    }
}

fn params(values: &[Value]) -> Params {
    if values.is_empty() {
        return Params::Empty;
    }
    Params::Positional(values.iter().map(param).collect())
}

fn param(v: &Value) -> mysql::Value {
    match v {
        Value::Null => mysql::Value::NULL,
        Value::Int(i) => mysql::Value::Int(*i),
        Value::Float(f) => mysql::Value::Double(*f),
        Value::Text(t) => mysql::Value::Bytes(t.as_bytes().to_vec()),
        Value::Bytes(b) => mysql::Value::Bytes(b.clone()),
    }
}

impl SqlSession for MysqlSession {
    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.conn.query_drop(sql).ctx("running the statements")
    }

    fn prepare(&mut self, sql: &str) -> DbResult<Prepared> {
        let statement = self.conn.prep(sql).ctx("preparing the statement")?;
        self.prepared.push(statement);
        Ok(Prepared(self.prepared.len() - 1))
    }

    fn execute(&mut self, statement: Statement<'_>, values: &[Value]) -> DbResult<u64> {
        match statement {
            Statement::Text(sql) if values.is_empty() => self.conn.query_drop(sql),
            Statement::Text(sql) => self.conn.exec_drop(sql, params(values)),
            Statement::Prepared(p) => {
                let statement = self.prepared(p)?;
                self.conn.exec_drop(&statement, params(values))
            }
        }
        .ctx("running the statement")?;
        Ok(self.conn.affected_rows())
    }

    fn query(&mut self, statement: Statement<'_>, values: &[Value]) -> DbResult<Vec<Row>> {
        let rows = match statement {
            Statement::Text(sql) if values.is_empty() => self.conn.query_iter(sql).and_then(rows),
            Statement::Text(sql) => self.conn.exec_iter(sql, params(values)).and_then(rows),
            Statement::Prepared(p) => {
                let statement = self.prepared(p)?;
                self.conn.exec_iter(&statement, params(values)).and_then(rows)
            }
        };
        rows.ctx("running the statement")
    }
}

/// Every row of every result set, read to the end so the connection is ready for the next
/// statement.
fn rows<P: Protocol>(mut result: QueryResult<'_, '_, '_, P>) -> Result<Vec<Row>, mysql::Error> {
    let mut out = Vec::new();
    while let Some(set) = result.iter() {
        for row in set {
            let row = row?;
            let columns = row.columns();
            out.push(row.unwrap().into_iter().zip(columns.iter()).map(|(v, c)| value(v, c)).collect());
        }
    }
    Ok(out)
}

fn value(v: mysql::Value, column: &mysql::Column) -> Value {
    use mysql::Value as M;
    match v {
        M::NULL => Value::Null,
        M::Int(i) => Value::Int(i),
        M::UInt(u) => i64::try_from(u).map_or_else(|_| Value::Text(u.to_string()), Value::Int),
        M::Float(f) => Value::Float(f.into()),
        M::Double(d) => Value::Float(d),
        M::Bytes(b) => bytes_value(b, column),
        M::Date(y, mo, d, h, mi, s, us) => {
            let mut text = format!("{y:04}-{mo:02}-{d:02}");
            if column.column_type() != T::MYSQL_TYPE_DATE {
                text.push_str(&format!(" {h:02}:{mi:02}:{s:02}"));
                if us > 0 {
                    text.push_str(&format!(".{us:06}"));
                }
            }
            Value::Text(text)
        }
        M::Time(negative, days, h, mi, s, us) => {
            let sign = if negative { "-" } else { "" };
            let hours = days * 24 + u32::from(h);
            let fraction = if us > 0 { format!(".{us:06}") } else { String::new() };
            Value::Text(format!("{sign}{hours:02}:{mi:02}:{s:02}{fraction}"))
        }
    }
}

/// A value the text protocol sent as bytes, as its column's type says.
fn bytes_value(b: Vec<u8>, column: &mysql::Column) -> Value {
    let text = || String::from_utf8(b.clone()).ok();
    match column.column_type() {
        T::MYSQL_TYPE_TINY
        | T::MYSQL_TYPE_SHORT
        | T::MYSQL_TYPE_LONG
        | T::MYSQL_TYPE_INT24
        | T::MYSQL_TYPE_LONGLONG
        | T::MYSQL_TYPE_YEAR => match text().and_then(|t| t.parse().ok()) {
            Some(i) => Value::Int(i),
            None => Value::Text(String::from_utf8_lossy(&b).into_owned()),
        },
        T::MYSQL_TYPE_FLOAT | T::MYSQL_TYPE_DOUBLE => match text().and_then(|t| t.parse().ok()) {
            Some(f) => Value::Float(f),
            None => Value::Text(String::from_utf8_lossy(&b).into_owned()),
        },
        T::MYSQL_TYPE_BIT => Value::Bytes(b),
        _ if column.character_set() == BINARY_CHARSET => Value::Bytes(b),
        _ => match text() {
            Some(t) => Value::Text(t),
            None => Value::Bytes(b),
        },
    }
}
