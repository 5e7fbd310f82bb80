//! Any SQL text on one PostgreSQL connection. A prepared statement is a named server-side
//! statement kept for the session; text is prepared unnamed for the call. Parameters take
//! the type the server infers for their placeholder; a value that does not fit it is an
//! error of kind `Query`.

use super::err;
use crate::db::DbResult;
use crate::db::sql::{Prepared, Row, SqlSession, Statement, Value, unknown_statement};
use postgres::Client;
use postgres::types::private::BytesMut;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use std::error::Error;

type Failure = Box<dyn Error + Sync + Send>;

/// One connection to the working database.
pub struct PgSession {
    pub(crate) client: Client,
    prepared: Vec<postgres::Statement>,
}

impl PgSession {
    pub(crate) fn new(client: Client) -> Self {
        PgSession { client, prepared: Vec::new() }
    }

    fn statement(&mut self, statement: Statement<'_>) -> DbResult<postgres::Statement> {
        match statement {
            Statement::Text(sql) => self.client.prepare(sql).map_err(err("preparing the statement")),
            Statement::Prepared(p) => self.prepared.get(p.0).cloned().ok_or_else(|| unknown_statement(p)),
        }
    }
}

fn refs(params: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl SqlSession for PgSession {
    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.client.batch_execute(sql).map_err(err("running the statements"))
    }

    fn prepare(&mut self, sql: &str) -> DbResult<Prepared> {
        let statement = self.client.prepare(sql).map_err(err("preparing the statement"))?;
        self.prepared.push(statement);
        Ok(Prepared(self.prepared.len() - 1))
    }

    fn execute(&mut self, statement: Statement<'_>, params: &[Value]) -> DbResult<u64> {
        let statement = self.statement(statement)?;
        self.client.execute(&statement, &refs(params)).map_err(err("running the statement"))
    }

    fn query(&mut self, statement: Statement<'_>, params: &[Value]) -> DbResult<Vec<Row>> {
        let statement = self.statement(statement)?;
        let rows = self.client.query(&statement, &refs(params)).map_err(err("running the statement"))?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| row.try_get::<_, Column>(i).map(|c| c.0).map_err(err("reading a row")))
                    .collect()
            })
            .collect()
    }
}

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Failure> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => int_to_sql(*i, ty, out),
            Value::Float(f) => match *ty {
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                _ => f.to_sql(ty, out),
            },
            Value::Text(t) => t.as_str().to_sql(ty, out),
            Value::Bytes(b) => b.as_slice().to_sql(ty, out),
        }
    }

    /// Any type: whether the value fits is known only from the value, in `to_sql`.
    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn int_to_sql(i: i64, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Failure> {
    match *ty {
        Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
        Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
        Type::OID => u32::try_from(i)?.to_sql(ty, out),
        Type::FLOAT4 => (i as f32).to_sql(ty, out),
        Type::FLOAT8 => (i as f64).to_sql(ty, out),
        Type::BOOL => (i != 0).to_sql(ty, out),
        _ => i.to_sql(ty, out),
    }
}

/// A column's value, read by its type.
struct Column(Value);

impl<'a> FromSql<'a> for Column {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Failure> {
        let value = match *ty {
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT4 => Value::Float(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Float(f64::from_sql(ty, raw)?),
            Type::BYTEA => Value::Bytes(raw.to_vec()),
            _ if <&str as FromSql>::accepts(ty) => Value::Text(<&str>::from_sql(ty, raw)?.to_owned()),
            _ => {
                return Err(
                    format!("a column of type {ty} cannot be read; cast it to text in the SQL").into()
                );
            }
        };
        Ok(Column(value))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Failure> {
        Ok(Column(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}
