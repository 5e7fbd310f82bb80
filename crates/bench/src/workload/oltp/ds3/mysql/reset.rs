//! `reset`: back to right after the load by undoing what a run can do.
//!
//! A run only inserts customers, orders, order lines, history, members, reviews, ratings and
//! reorders, and only updates inventory. So: delete rows with ids above the loaded maxima
//! (history by order id, lines by order id; children before parents so no cascade has work),
//! delete members the load did not have, write back the inventory rows that differ from the
//! copy taken at load time (with the restock trigger held off, since some loaded stocks are
//! below 3), empty REORDER and put the AUTO_INCREMENT counters back. The cost scales with what
//! the run wrote, plus one pass over inventory, membership and history. Measured on S after
//! 200 purchases and 200 new customers: 0.07-0.09 s on a quiet host (0.2-0.37 s on a busy
//! one). A full copy back would rewrite every row: copying the 4.1 M ratings of S alone with
//! INSERT ... SELECT took 7.3 s.

use super::load::{MEMBERSHIP_COPY, set_auto_increments};
use crate::db::DbResult;
use crate::db::mysql::ownership::INVENTORY_COPY;
use crate::db::mysql::{Ctx, Mysql, run};
use mysql::prelude::Queryable;
use std::time::Instant;

pub(crate) fn reset(db: &Mysql) -> DbResult<f64> {
    let t0 = Instant::now();
    let mut conn = db.conn(true)?;
    let m = super::meta(db, &mut conn)?;
    crate::db::mysql::ownership::check_marker(db, &mut conn)?;
    let mut deletes = Vec::new();
    if !m.ds2 {
        deletes.extend([
            format!("DELETE FROM reviews_helpfulness WHERE review_helpfulness_id > {}", m.max_helpfulness),
            format!("DELETE FROM reviews WHERE review_id > {}", m.max_review),
            format!(
                "DELETE m FROM membership m LEFT JOIN {MEMBERSHIP_COPY} c ON c.customerid = m.customerid \
                 WHERE c.customerid IS NULL"
            ),
        ]);
    }
    deletes.extend([
        format!("DELETE FROM cust_hist WHERE orderid > {}", m.max_order),
        format!("DELETE FROM orderlines WHERE orderid > {}", m.max_order),
        format!("DELETE FROM orders WHERE orderid > {}", m.max_order),
        format!("DELETE FROM customers WHERE customerid > {}", m.max_customer),
    ]);
    for sql in &deletes {
        run(&mut conn, sql)?;
    }
    run(&mut conn, "SET @storbench_restoring = 1")?;
    let restored = conn
        .query_drop(format!(
            "UPDATE inventory i JOIN {INVENTORY_COPY} c ON c.prod_id = i.prod_id \
             SET i.quan_in_stock = c.quan_in_stock, i.sales = c.sales \
             WHERE i.quan_in_stock <> c.quan_in_stock OR i.sales <> c.sales"
        ))
        .ctx("restore inventory");
    run(&mut conn, "SET @storbench_restoring = NULL")?;
    restored?;
    run(&mut conn, "TRUNCATE TABLE reorder")?;
    set_auto_increments(&mut conn, &m)?;
    Ok(t0.elapsed().as_secs_f64())
}
