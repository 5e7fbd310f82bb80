//! What `oltp fidelity` needs of MariaDB/MySQL: the server's work counters (SHOW GLOBAL
//! STATUS) and a session that sends DS3's own statements, as DS3's MySQL driver
//! (ds3mysqlfns.cs) and its four procedures send them, to compare storbench's calls with.
//!
//! DS3's statements are plain text with the values written in. Its MySQL edition has no
//! restock, so that session turns storbench's trigger off.

use crate::db::DbResult;
use crate::db::mysql::{Ctx, Mysql};
use crate::workload::oltp::ds3::{
    Browse, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch, Session,
};
use crate::workload::oltp::users::fidelity::WorkCounters;
use mysql::Conn;
use mysql::prelude::Queryable;
use std::fmt::Write as _;

/// What SHOW GLOBAL STATUS says of rows, index reads, commits, the buffer pool and the redo
/// log (MariaDB has no Innodb_rows_*: its Handler_* counts are the rows). The redo position is MariaDB's Innodb_lsn_current or MySQL 8's
/// Innodb_redo_log_current_lsn; the one the server lacks reads 0.
const STATUS: [&str; 17] = [
    "Com_commit",
    "Com_rollback",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Handler_read_key",
    "Handler_read_next",
    "Handler_read_rnd_next",
    "Handler_write",
    "Handler_update",
    "Handler_delete",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_lsn_current",
    "Innodb_redo_log_current_lsn",
    "Created_tmp_disk_tables",
];

struct Status {
    conn: Conn,
    sql: String,
}

impl Status {
    fn once(&mut self) -> DbResult<Vec<(&'static str, f64)>> {
        let rows: Vec<(String, String)> = self.conn.query(&self.sql).ctx("SHOW GLOBAL STATUS")?;
        let value = |name: &str| rows.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.parse().ok());
        Ok(STATUS.iter().map(|&name| (name, value(name).unwrap_or(0.0))).collect())
    }
}

/// The redo position, MariaDB's or MySQL's.
fn redo(values: &[(&'static str, f64)]) -> f64 {
    values.iter().filter(|(n, _)| n.contains("lsn")).map(|(_, v)| v).sum()
}

impl WorkCounters for Status {
    /// Waits until InnoDB's purge has caught up (no undo history left) and the redo log has
    /// stood still between two looks 200 ms apart: purge goes on writing after a reset or a
    /// batch of writes, and that work belongs to what came before.
    fn read(&mut self) -> DbResult<Vec<(&'static str, f64)>> {
        let started = std::time::Instant::now();
        let mut last = self.once()?;
        loop {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let history: f64 = self
                .conn
                .query_first::<(String, f64), _>(HISTORY)
                .ctx("SHOW GLOBAL STATUS")?
                .map_or(0.0, |(_, v)| v);
            let now = self.once()?;
            if (history == 0.0 && redo(&now) == redo(&last))
                || started.elapsed() > std::time::Duration::from_secs(60)
            {
                return Ok(now);
            }
            last = now;
        }
    }
}

/// The undo history purge has yet to remove.
const HISTORY: &str = "SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'";

impl Mysql {
    /// The server's work counters, on a connection of their own.
    pub fn work_counters(&self) -> DbResult<Box<dyn WorkCounters>> {
        let sql = crate::db::mysql::status_query(&STATUS);
        Ok(Box::new(Status { conn: self.conn(true)?, sql }))
    }

    /// A session that sends DS3's statements; it never restocks, as DS3's MySQL edition.
    pub fn connect_ds3(&self) -> DbResult<Box<dyn Session>> {
        let mut conn = self.conn(true)?;
        conn.query_drop("SET @storbench_no_restock = 1").ctx("turning restock off")?;
        Ok(Box::new(Ds3Session { conn }))
    }
}

struct Ds3Session {
    conn: Conn,
}

/// `text` as an SQL string literal.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

impl Ds3Session {
    /// Rows of a statement's result, read and dropped.
    fn rows(&mut self, sql: &str, what: &str) -> DbResult<u32> {
        let rows: Vec<mysql::Row> = self.conn.query(sql).ctx(what)?;
        Ok(rows.len() as u32)
    }

    fn number(&mut self, sql: &str, what: &str) -> DbResult<Option<i64>> {
        self.conn.query_first::<Option<i64>, _>(sql).ctx(what).map(Option::flatten)
    }

    /// DS3's PURCHASE body, in the open transaction: false when an item is short.
    fn purchase_body(&mut self, p: &Purchase, order: i64) -> DbResult<bool> {
        let mut enough = true;
        let (mut lines, mut history) = (String::new(), String::new());
        for (i, &(prod, qty)) in p.items.iter().enumerate() {
            let sql = format!("SELECT QUAN_IN_STOCK, SALES FROM inventory WHERE PROD_ID={prod}");
            let (quan, sales): (i64, i64) = self.conn.query_first(sql).ctx("purchase")?.unwrap_or_default();
            let qty = i64::from(qty);
            if quan - qty < 0 {
                enough = false;
            } else {
                let sql = format!(
                    "UPDATE inventory SET QUAN_IN_STOCK={}, SALES={} WHERE PROD_ID={prod}",
                    quan - qty,
                    sales + qty
                );
                self.conn.query_drop(sql).ctx("purchase")?;
            }
            let sep = if i > 0 { "," } else { "" };
            let _ = write!(lines, "{sep}({},{order},{prod},{qty},CURDATE())", i + 1);
            let _ = write!(history, "{sep}({},{order},{prod})", p.customer_id);
        }
        self.conn
            .query_drop(format!(
                "INSERT INTO orderlines (ORDERLINEID, ORDERID, PROD_ID, QUANTITY, ORDERDATE) VALUES {lines}"
            ))
            .ctx("purchase")?;
        self.conn
            .query_drop(format!("INSERT INTO cust_hist (CUSTOMERID, ORDERID, PROD_ID) VALUES {history}"))
            .ctx("purchase")?;
        Ok(enough)
    }
}

impl Session for Ds3Session {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login> {
        let sql = format!(
            "SELECT CUSTOMERID FROM customers WHERE USERNAME={} AND PASSWORD={}",
            quoted(username),
            quoted(password)
        );
        let Some(id) = self.number(&sql, "login")? else {
            return Ok(Login { customer_id: 0, history_rows: 0 });
        };
        let sql =
            format!("SELECT PROD_ID FROM cust_hist WHERE CUSTOMERID={id} ORDER BY ORDERID DESC LIMIT 10");
        let prods: Vec<i64> = self.conn.query(sql).ctx("login")?;
        for prod in &prods {
            self.rows(&format!("SELECT TITLE, ACTOR FROM products WHERE PROD_ID={prod}"), "login")?;
            let related = format!(
                "SELECT TITLE FROM products WHERE PROD_ID = (SELECT COMMON_PROD_ID FROM products WHERE PROD_ID={prod})"
            );
            self.rows(&related, "login")?;
        }
        Ok(Login { customer_id: id, history_rows: prods.len() as u32 })
    }

    fn new_customer(&mut self, c: &NewCustomer) -> DbResult<Option<i64>> {
        let taken = format!("SELECT COUNT(*) FROM customers WHERE USERNAME={}", quoted(&c.username));
        if self.number(&taken, "new customer")?.unwrap_or(0) > 0 {
            return Ok(None);
        }
        let text = [
            &c.firstname,
            &c.lastname,
            &c.address1,
            &c.address2,
            &c.city,
            &c.state,
            &c.country,
            &c.email,
            &c.phone,
            &c.creditcard,
            &c.creditcardexpiration,
            &c.username,
            &c.password,
        ]
        .map(|t| quoted(t));
        let sql = format!(
            "INSERT INTO customers (FIRSTNAME, LASTNAME, ADDRESS1, ADDRESS2, CITY, STATE, ZIP, COUNTRY, REGION, EMAIL, \
             PHONE, CREDITCARDTYPE, CREDITCARD, CREDITCARDEXPIRATION, USERNAME, PASSWORD, AGE, INCOME, GENDER) \
             VALUES ({},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},'{}')",
            text[0],
            text[1],
            text[2],
            text[3],
            text[4],
            text[5],
            c.zip,
            text[6],
            c.region,
            text[7],
            text[8],
            c.creditcardtype,
            text[9],
            text[10],
            text[11],
            text[12],
            c.age,
            c.income,
            c.gender
        );
        self.conn.query_drop(sql).ctx("new customer")?;
        self.number("SELECT LAST_INSERT_ID()", "new customer")
    }

    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool> {
        let sql = format!("SELECT COUNT(*) FROM membership WHERE CUSTOMERID={customer_id}");
        if self.number(&sql, "new member")?.unwrap_or(0) > 0 {
            return Ok(false);
        }
        let sql = format!(
            "INSERT INTO membership (CUSTOMERID, MEMBERSHIPTYPE, EXPIREDATE) VALUES ({customer_id},{level},CURDATE())"
        );
        self.conn.query_drop(sql).ctx("new member")?;
        Ok(true)
    }

    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32> {
        let sql = match by {
            Browse::Category(c) => {
                format!("SELECT * FROM products WHERE CATEGORY={c} AND SPECIAL=1 LIMIT {batch}")
            }
            Browse::Actor(a) => {
                format!("SELECT * FROM products WHERE MATCH (ACTOR) AGAINST ({}) LIMIT {batch}", quoted(a))
            }
            Browse::Title(t) => {
                format!("SELECT * FROM products WHERE MATCH (TITLE) AGAINST ({}) LIMIT {batch}", quoted(t))
            }
        };
        self.rows(&sql, "browse")
    }

    /// DS3's MySQL driver asks for 10 rows and a depth of 500 whatever it was given.
    fn review_search(&mut self, by: ReviewSearch<'_>, _batch: u32, _depth: u32) -> DbResult<u32> {
        let (column, word) = match by {
            ReviewSearch::Actor(w) => ("ACTOR", w),
            ReviewSearch::Title(w) => ("TITLE", w),
        };
        let sql = format!(
            "SELECT T1.prod_id, T1.title, T1.actor, reviews_helpfulness.REVIEW_ID, T1.review_date, T1.stars, \
             T1.customerid, T1.review_summary, T1.review_text, SUM(helpfulness) AS totalhelp FROM reviews_helpfulness \
             INNER JOIN (SELECT TITLE, ACTOR, products.PROD_ID, reviews.review_date, reviews.stars, reviews.review_id, \
             reviews.customerid, reviews.review_summary, reviews.review_text FROM products INNER JOIN reviews ON \
             products.prod_id = reviews.prod_id WHERE MATCH ({column}) AGAINST ({}) LIMIT 500) AS T1 ON \
             reviews_helpfulness.REVIEW_ID = T1.review_id GROUP BY REVIEW_ID ORDER BY totalhelp DESC LIMIT 10",
            quoted(word)
        );
        self.rows(&sql, "review search")
    }

    /// DS3's MySQL driver reads every review of the product (no LIMIT).
    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, _batch: u32) -> DbResult<u32> {
        let (filter, by) = match order {
            ReviewOrder::Helpful => (String::new(), "total"),
            ReviewOrder::Stars(s) => (format!(" AND STARS = {s}"), "total"),
            ReviewOrder::Date => (String::new(), "REVIEW_DATE"),
        };
        let sql = format!(
            "SELECT reviews.review_id, reviews.prod_id, reviews.review_date, reviews.stars, reviews.customerid, \
             reviews.review_summary, reviews.review_text, SUM(reviews_helpfulness.helpfulness) AS total FROM reviews \
             INNER JOIN reviews_helpfulness ON reviews.review_id=reviews_helpfulness.review_id WHERE PROD_ID = \
             {prod_id}{filter} GROUP BY reviews.review_id ORDER BY {by} DESC"
        );
        self.rows(&sql, "get reviews")
    }

    fn new_review(&mut self, r: &NewReview) -> DbResult<i64> {
        let sql = format!(
            "INSERT INTO reviews (PROD_ID, REVIEW_DATE, STARS, CUSTOMERID, REVIEW_SUMMARY, REVIEW_TEXT) \
             VALUES ({},CURDATE(),{},{},{},{})",
            r.prod_id,
            r.stars,
            r.customer_id,
            quoted(&r.summary),
            quoted(&r.text)
        );
        self.conn.query_drop(sql).ctx("new review")?;
        Ok(self.number("SELECT LAST_INSERT_ID()", "new review")?.unwrap_or_default())
    }

    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64> {
        let sql = format!(
            "INSERT INTO reviews_helpfulness (REVIEW_ID, CUSTOMERID, HELPFULNESS) VALUES ({review_id},{customer_id},{rating})"
        );
        self.conn.query_drop(sql).ctx("new helpfulness")?;
        Ok(self.number("SELECT LAST_INSERT_ID()", "new helpfulness")?.unwrap_or_default())
    }

    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()> {
        let ids: Vec<String> = prod_ids.iter().map(i64::to_string).collect();
        let sql = format!(
            "SELECT PROD_ID, CAST(ROUND(PRICE * 100) AS SIGNED) FROM products WHERE PROD_ID IN ({})",
            ids.join(",")
        );
        *out = self.conn.query(sql).ctx("prices")?;
        Ok(())
    }

    /// DS3's: the order row, then per item a read of the stock and an update, then the lines
    /// and the history in one statement each; an item short of stock rolls the whole order back
    /// at the end.
    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>> {
        self.conn.query_drop("START TRANSACTION").ctx("purchase")?;
        let sql = format!(
            "INSERT INTO orders (ORDERDATE, CUSTOMERID, NETAMOUNT, TAX, TOTALAMOUNT) VALUES (CURDATE(),{},{},{},{})",
            p.customer_id,
            p.net_cents as f64 / 100.0,
            p.tax_cents as f64 / 100.0,
            p.total_cents as f64 / 100.0
        );
        let body = self
            .conn
            .query_drop(sql)
            .ctx("purchase")
            .and_then(|()| self.number("SELECT LAST_INSERT_ID()", "purchase"))
            .and_then(|order| {
                let order = order.unwrap_or_default();
                self.purchase_body(p, order).map(|enough| enough.then_some(order))
            });
        let end = if matches!(body, Ok(Some(_))) { "COMMIT" } else { "ROLLBACK" };
        self.conn.query_drop(end).ctx("purchase")?;
        body
    }

    fn set_restock(&mut self, _on: bool) -> DbResult<()> {
        Ok(())
    }
}
