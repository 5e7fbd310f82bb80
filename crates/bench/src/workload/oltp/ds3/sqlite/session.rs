//! DS3's transactions as client-side SQL on one SQLite session of the database layer, each a
//! cached prepared statement. Full-text searches go through the FTS5 index with every word required, in the
//! column the search names (DS3's PostgreSQL version searched actors for titles).

use crate::db::DbResult;
use crate::db::sqlite::{SqliteSession, classify};
use crate::workload::oltp::ds3::{
    Browse, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch, Session,
};
use rusqlite::{Connection, OptionalExtension, params};

pub(super) struct SqliteDs3 {
    sql: SqliteSession,
}

impl SqliteDs3 {
    pub(super) fn new(sql: SqliteSession) -> Self {
        SqliteDs3 { sql }
    }

    /// Runs `f` and counts it as one committed (or, on error, rolled-back) transaction.
    fn txn<T>(&mut self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> DbResult<T> {
        let out = f(&self.sql.conn);
        self.sql.stats.after_transaction(&self.sql.conn, out.is_ok());
        out.map_err(|e| classify(&self.sql.path, e))
    }

    fn count_rows(&mut self, sql: &str, bind: &[&dyn rusqlite::ToSql]) -> DbResult<u32> {
        self.txn(|c| {
            let mut stmt = c.prepare_cached(sql)?;
            let mut rows = stmt.query(bind)?;
            let mut n = 0;
            while rows.next()?.is_some() {
                n += 1;
            }
            Ok(n)
        })
    }
}

/// An FTS5 query requiring every word of `words` in `column`.
fn fts_all(column: &str, words: &str) -> String {
    words
        .split_whitespace()
        .map(|w| format!("{column}:\"{}\"", w.replace('"', "")))
        .collect::<Vec<_>>()
        .join(" AND ")
}

const REVIEW_COLUMNS: &str = "r.review_id, r.prod_id, r.review_date, r.stars, r.customerid, r.review_summary, r.review_text, SUM(h.helpfulness) AS total";

impl Session for SqliteDs3 {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login> {
        self.txn(|c| {
            let id: Option<i64> = c
                .prepare_cached("SELECT customerid FROM customers WHERE username = ?1 AND password = ?2")?
                .query_row([username, password], |r| r.get(0))
                .optional()?;
            let Some(id) = id else { return Ok(Login { customer_id: 0, history_rows: 0 }) };
            let mut stmt = c.prepare_cached(
                "SELECT p1.title, p1.actor, p2.title FROM cust_hist h
                 JOIN products p1 ON p1.prod_id = h.prod_id JOIN products p2 ON p2.prod_id = p1.common_prod_id
                 WHERE h.customerid = ?1 ORDER BY h.orderid DESC, p1.title LIMIT 10",
            )?;
            let history_rows = stmt.query_map([id], |_| Ok(()))?.count() as u32;
            Ok(Login { customer_id: id, history_rows })
        })
    }

    fn new_customer(&mut self, n: &NewCustomer) -> DbResult<Option<i64>> {
        self.txn(|c| {
            let mut stmt = c.prepare_cached(
                "INSERT INTO customers (firstname, lastname, address1, address2, city, state, zip, country, region,
                   email, phone, creditcardtype, creditcard, creditcardexpiration, username, password, age, income,
                   gender)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
                 ON CONFLICT (username) DO NOTHING RETURNING customerid",
            )?;
            stmt.query_row(
                params![
                    n.firstname, n.lastname, n.address1, n.address2, n.city, n.state, format!("{:05}", n.zip),
                    n.country, n.region, n.email, n.phone, n.creditcardtype, n.creditcard,
                    n.creditcardexpiration, n.username, n.password, n.age, n.income, n.gender.to_string()
                ],
                |r| r.get(0),
            )
            .optional()
        })
    }

    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool> {
        self.txn(|c| {
            let added = c
                .prepare_cached(
                    "INSERT INTO membership (customerid, membershiptype, expiredate) VALUES (?1, ?2, date('now'))
                     ON CONFLICT (customerid) DO NOTHING",
                )?
                .execute(params![customer_id, level])?;
            Ok(added == 1)
        })
    }

    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32> {
        const COLS: &str = "p.prod_id, p.category, p.title, p.actor, p.price, p.special, p.common_prod_id";
        match by {
            Browse::Category(cat) => self.count_rows(
                &format!("SELECT {COLS} FROM products p WHERE p.category = ?1 AND p.special = 1 LIMIT ?2"),
                &[&cat, &batch],
            ),
            Browse::Actor(words) | Browse::Title(words) => {
                let column = if matches!(by, Browse::Actor(_)) { "actor" } else { "title" };
                self.count_rows(
                    &format!(
                        "SELECT {COLS} FROM products_fts f JOIN products p ON p.prod_id = f.rowid
                         WHERE products_fts MATCH ?1 LIMIT ?2"
                    ),
                    &[&fts_all(column, words), &batch],
                )
            }
        }
    }

    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, depth: u32) -> DbResult<u32> {
        let (column, word) = match by {
            ReviewSearch::Actor(w) => ("actor", w),
            ReviewSearch::Title(w) => ("title", w),
        };
        self.count_rows(
            &format!(
                "SELECT {REVIEW_COLUMNS} FROM
                   (SELECT r.* FROM products_fts f JOIN reviews r ON r.prod_id = f.rowid
                    WHERE products_fts MATCH ?1 LIMIT ?3) r
                 JOIN reviews_helpfulness h ON h.review_id = r.review_id
                 GROUP BY r.review_id ORDER BY total DESC LIMIT ?2"
            ),
            &[&fts_all(column, word), &batch, &depth],
        )
    }

    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32> {
        let base = format!(
            "SELECT {REVIEW_COLUMNS} FROM reviews r JOIN reviews_helpfulness h ON h.review_id = r.review_id
             WHERE r.prod_id = ?1"
        );
        match order {
            ReviewOrder::Helpful => self.count_rows(
                &format!("{base} GROUP BY r.review_id ORDER BY total DESC LIMIT ?2"),
                &[&prod_id, &batch],
            ),
            ReviewOrder::Date => self.count_rows(
                &format!("{base} GROUP BY r.review_id ORDER BY r.review_date DESC LIMIT ?2"),
                &[&prod_id, &batch],
            ),
            ReviewOrder::Stars(stars) => self.count_rows(
                &format!("{base} AND r.stars = ?3 GROUP BY r.review_id ORDER BY total DESC LIMIT ?2"),
                &[&prod_id, &batch, &stars],
            ),
        }
    }

    fn new_review(&mut self, r: &NewReview) -> DbResult<i64> {
        self.txn(|c| {
            c.prepare_cached(
                "INSERT INTO reviews (prod_id, review_date, stars, customerid, review_summary, review_text)
                 VALUES (?1, date('now'), ?2, ?3, ?4, ?5) RETURNING review_id",
            )?
            .query_row(params![r.prod_id, r.stars, r.customer_id, r.summary, r.text], |row| row.get(0))
        })
    }

    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64> {
        self.txn(|c| {
            c.prepare_cached(
                "INSERT INTO reviews_helpfulness (review_id, customerid, helpfulness) VALUES (?1, ?2, ?3)
                 RETURNING review_helpfulness_id",
            )?
            .query_row(params![review_id, customer_id, rating], |row| row.get(0))
        })
    }

    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()> {
        out.clear();
        self.txn(|c| {
            let mut stmt = c.prepare_cached("SELECT prod_id, price FROM products WHERE prod_id = ?1")?;
            for &id in prod_ids {
                if let Some(price) = stmt.query_row([id], |r| r.get::<_, f64>(1)).optional()? {
                    out.push((id, (price * 100.0).round() as i64));
                }
            }
            Ok(())
        })
    }

    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>> {
        let out = purchase(&self.sql.conn, p);
        self.sql.stats.after_transaction(&self.sql.conn, matches!(out, Ok(Some(_))));
        out.map_err(|e| classify(&self.sql.path, e))
    }

    /// SQLite always restocks: DS3 has no SQLite edition whose behaviour there is to follow.
    fn set_restock(&mut self, on: bool) -> DbResult<()> {
        if on {
            return Ok(());
        }
        Err(crate::db::DbError::new(
            crate::db::DbErrorKind::Query,
            "restocking off follows DS3's MySQL edition and is for the server backends; SQLite always restocks",
        ))
    }
}

/// One purchase in one write transaction, taken at BEGIN so no other writer interleaves.
fn purchase(c: &Connection, p: &Purchase) -> rusqlite::Result<Option<i64>> {
    c.execute_batch("BEGIN IMMEDIATE")?;
    let outcome = purchase_body(c, p);
    match outcome {
        Ok(Some(id)) => {
            c.execute_batch("COMMIT")?;
            Ok(Some(id))
        }
        other => {
            c.execute_batch("ROLLBACK")?;
            other
        }
    }
}

fn purchase_body(c: &Connection, p: &Purchase) -> rusqlite::Result<Option<i64>> {
    let money = |cents: i64| cents as f64 / 100.0;
    let order_id: i64 = c
        .prepare_cached(
            "INSERT INTO orders (orderdate, customerid, netamount, tax, totalamount)
             VALUES (date('now'), ?1, ?2, ?3, ?4) RETURNING orderid",
        )?
        .query_row(
            params![p.customer_id, money(p.net_cents), money(p.tax_cents), money(p.total_cents)],
            |r| r.get(0),
        )?;
    let mut stock = c.prepare_cached("SELECT quan_in_stock FROM inventory WHERE prod_id = ?1")?;
    let mut take = c.prepare_cached(
        "UPDATE inventory SET quan_in_stock = quan_in_stock - ?2, sales = sales + ?2 WHERE prod_id = ?1",
    )?;
    let mut line = c.prepare_cached(
        "INSERT INTO orderlines (orderlineid, orderid, prod_id, quantity, orderdate) VALUES (?1, ?2, ?3, ?4, date('now'))",
    )?;
    let mut hist =
        c.prepare_cached("INSERT INTO cust_hist (customerid, orderid, prod_id) VALUES (?1, ?2, ?3)")?;
    for (i, &(prod, qty)) in p.items.iter().enumerate() {
        let in_stock: Option<i64> = stock.query_row([prod], |r| r.get(0)).optional()?;
        if in_stock.is_none_or(|s| s < i64::from(qty)) {
            return Ok(None);
        }
        take.execute(params![prod, qty])?;
        line.execute(params![i as i64 + 1, order_id, prod, qty])?;
        hist.execute(params![p.customer_id, order_id, prod])?;
    }
    Ok(Some(order_id))
}
