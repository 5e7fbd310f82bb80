//! DS3 on SQLite: DS3's schema in one file, loaded with prepared inserts in large
//! transactions, full-text search through FTS5, the transactions as client-side SQL.
//!
//! Writers take the write lock when their transaction begins (`BEGIN IMMEDIATE`), which
//! serialises purchases, so no sale is lost. The pristine copy made after the load sits beside
//! the database as `<file>.pristine` and is cloned back by `reset` (a reflink where the
//! filesystem can).

mod load;
mod session;
#[cfg(test)]
mod tests;

use super::{CheckReport, Ds3Database, LoadProgress, LoadReport, LoadedShape, Session};
use crate::db::sqlite::{Sqlite, classify, clone_file, file_error, open_existing, remove_sqlite_files};
use crate::db::{DbError, DbErrorKind, DbResult};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use rusqlite::{Connection, OptionalExtension};
use std::time::Instant;

impl Ds3Database for Sqlite {
    fn load(
        &self,
        data: &DataSet,
        progress: &mut dyn FnMut(LoadProgress),
        stop: &StopFlag,
    ) -> DbResult<LoadReport> {
        load::load(self, data, progress, stop)
    }

    fn shape(&self) -> DbResult<LoadedShape> {
        let conn = open_existing(self.path())?;
        load::read_shape(&conn).map_err(|e| classify(self.path(), e))?.ok_or_else(|| {
            DbError::new(
                DbErrorKind::Missing,
                format!(
                    "{} is not a storbench DVD Store database (no storbench_meta table)",
                    self.path().display()
                ),
            )
        })
    }

    fn reset(&self) -> DbResult<f64> {
        let started = Instant::now();
        let pristine = self.pristine_path();
        if crate::files::entry(&pristine).map_err(file_error)?.is_none() {
            return Err(DbError::new(
                DbErrorKind::Missing,
                format!("no pristine copy at {}; load the database again", pristine.display()),
            ));
        }
        load::refuse_foreign(self.path())?;
        load::refuse_foreign(&pristine)?;
        remove_sqlite_files(self.path())?;
        clone_file(&pristine, self.path())?;
        Ok(started.elapsed().as_secs_f64())
    }

    fn connect(&self) -> DbResult<Box<dyn Session>> {
        Ok(Box::new(session::SqliteDs3::new(self.session()?)))
    }

    fn check(&self) -> DbResult<CheckReport> {
        let conn = open_existing(self.path())?;
        check(&conn).map_err(|e| classify(self.path(), e))
    }
}

/// Sales in inventory against the order lines, and orders and lines without each other.
fn check(conn: &Connection) -> rusqlite::Result<CheckReport> {
    let mut report = CheckReport {
        products_checked: conn.query_row("SELECT COUNT(*) FROM inventory", [], |r| r.get::<_, i64>(0))?
            as u64,
        ..CheckReport::default()
    };
    let mut stmt = conn.prepare(
        "SELECT i.prod_id, i.sales, COALESCE(s.q, 0) FROM inventory i
         LEFT JOIN (SELECT prod_id, SUM(quantity) AS q FROM orderlines GROUP BY prod_id) s ON s.prod_id = i.prod_id
         WHERE i.sales <> COALESCE(s.q, 0) ORDER BY i.prod_id",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    for row in rows {
        let row = row?;
        report.mismatch_count += 1;
        if report.mismatches.len() < 100 {
            report.mismatches.push(row);
        }
    }
    report.orphans = conn.query_row(
        "SELECT (SELECT COUNT(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM orderlines l WHERE l.orderid = o.orderid))
              + (SELECT COUNT(*) FROM orderlines l WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.orderid = l.orderid))",
        [],
        |r| r.get::<_, i64>(0),
    )? as u64;
    Ok(report)
}

/// Reads one value from storbench_meta, if the table and key exist.
fn meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM storbench_meta WHERE key = ?1", [key], |r| r.get(0)).optional()
}
