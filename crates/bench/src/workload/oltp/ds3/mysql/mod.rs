//! DS3 on MariaDB/MySQL.
//!
//! - Schema: DS3's tables, every one on InnoDB. DS3 kept PRODUCTS on MyISAM for its FULLTEXT
//!   indexes; InnoDB has FULLTEXT since MySQL 5.6 / MariaDB 10.0, and keeping PRODUCTS on
//!   InnoDB keeps every table crash-safe and transactional and the buffer-pool counters
//!   complete. The index set and every query's access path are DS3's (natural-language
//!   full-text search, helpfulness read through the clustered index), so an order asks of the
//!   storage what it asks in DS3.
//! - Load ([`load`]): `LOAD DATA LOCAL INFILE` streamed from the generator through the driver's
//!   local-infile handler (no temporary files), with multi-row INSERTs as the fallback when
//!   the server has `local_infile` off; unique and foreign-key checks are off during the load,
//!   secondary and FULLTEXT indexes, foreign keys, the restock trigger and the procedures come
//!   after it. What a load may replace is decided by `crate::db::mysql::ownership`.
//! - Transactions ([`session`]): every one of DS3 §3.1's transactions is a stored procedure
//!   that `load` creates (`procs.sql`), called as a prepared `CALL`, one round trip each, as
//!   DS3 runs them server-side. LOGIN, NEW_CUSTOMER and PURCHASE save round trips or must be
//!   one server-side transaction; the single-statement ones (new member, browses, review
//!   searches, reviews, new review, new helpfulness, prices) are procedures too, so the SQL a
//!   run executes lives on the server as DS3's does (on PostgreSQL they are functions).
//! - Reset ([`reset`]): a delta reset that deletes what a run inserted (ids above the loaded
//!   maxima) and restores INVENTORY and MEMBERSHIP from copies kept at load time.

mod fidelity;
mod load;
mod reset;
mod session;
#[cfg(test)]
mod tests;

use super::{CheckReport, Ds3Database, LoadProgress, LoadReport, LoadedShape, Session};
use crate::db::mysql::{Ctx, Mysql, run};
use crate::db::{Database, DbError, DbErrorKind, DbResult};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use mysql::Conn;
use mysql::prelude::Queryable;

impl Ds3Database for Mysql {
    fn load(
        &self,
        data: &DataSet,
        progress: &mut dyn FnMut(LoadProgress),
        stop: &StopFlag,
    ) -> DbResult<LoadReport> {
        load::load(self, data, progress, stop, self.method)
    }

    fn shape(&self) -> DbResult<LoadedShape> {
        let mut conn = self.conn(true)?;
        let m = meta(self, &mut conn)?;
        Ok(LoadedShape { customers: m.customers, products: m.products, ds3: !m.ds2 })
    }

    fn reset(&self) -> DbResult<f64> {
        reset::reset(self)
    }

    fn connect(&self) -> DbResult<Box<dyn Session>> {
        Ok(Box::new(session::MysqlDs3::new(self.session()?)))
    }

    fn check(&self) -> DbResult<CheckReport> {
        check(self)
    }
}

/// What storbench loaded in `db`, or Missing when nothing (or not all of it) is.
fn meta(db: &Mysql, conn: &mut Conn) -> DbResult<load::Meta> {
    if let Some(size) = load::unfinished_load(conn)? {
        return Err(crate::db::load_unfinished(
            &format!("database '{}' at {}", db.db_name(), db.server()),
            &size,
        ));
    }
    load::read_meta(conn)?.ok_or_else(|| {
        DbError::new(
            DbErrorKind::Missing,
            format!("{} holds no storbench OLTP data set; run the OLTP load first", db.describe()),
        )
    })
}

/// Every product's SALES against its order lines, and orders and lines without each other.
pub(crate) fn check(db: &Mysql) -> DbResult<CheckReport> {
    let mut conn = db.conn(true)?;
    meta(db, &mut conn)?;
    run(&mut conn, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")?;
    run(&mut conn, "START TRANSACTION WITH CONSISTENT SNAPSHOT")?;
    let products: u64 =
        conn.query_first("SELECT COUNT(*) FROM inventory").ctx("count products")?.unwrap_or(0);
    let mismatches: Vec<(i64, i64, i64)> = conn
        .query(
            "SELECT i.prod_id, i.sales, COALESCE(l.qty, 0) FROM inventory i \
             LEFT JOIN (SELECT prod_id, SUM(quantity) AS qty FROM orderlines GROUP BY prod_id) l \
               ON l.prod_id = i.prod_id \
             WHERE i.sales <> COALESCE(l.qty, 0) ORDER BY i.prod_id",
        )
        .ctx("compare sales with order lines")?;
    let orphans: u64 = conn
        .query_first(
            "SELECT (SELECT COUNT(*) FROM orders o WHERE NOT EXISTS \
                 (SELECT 1 FROM orderlines l WHERE l.orderid = o.orderid)) \
             + (SELECT COUNT(*) FROM orderlines l WHERE NOT EXISTS \
                 (SELECT 1 FROM orders o WHERE o.orderid = l.orderid))",
        )
        .ctx("count orphans")?
        .unwrap_or(0);
    run(&mut conn, "COMMIT")?;
    let mismatch_count = mismatches.len() as u64;
    Ok(CheckReport {
        products_checked: products,
        mismatches: mismatches.into_iter().take(100).collect(),
        mismatch_count,
        orphans,
    })
}
