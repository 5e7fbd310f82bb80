//! DS3's transactions on one connection, each one round trip: a prepared `CALL` of a stored
//! procedure that `load` creates from `procs.sql`.
//!
//! Every transaction of DS3 §3.1 is a procedure, as DS3 has them on its servers: LOGIN (lookup
//! and history), NEW_CUSTOMER (check then insert), NEW_MEMBER, the browses (by category, by
//! actor or title words), the review searches (by actor or title word, with the depth limit),
//! GET_PROD_REVIEWS (most helpful, by stars, by date), NEW_PROD_REVIEW, NEW_REVIEW_HELPFULNESS,
//! the prices of an order's products and PURCHASE (one server-side transaction). So the SQL a
//! run executes is on the server, the same for every client, and each call is one round trip.
//! A procedure answers with the result sets of its SELECTs; every call reads all of them (and
//! the final status), so the connection is ready for the next call, on an error too.
//!
//! List arguments go as one string: PURCHASE's items as `prod:qty,...` and the prices' ids as
//! `id,...`. Full-text words go as they are, for DS3's natural-language search.

use crate::db::DbResult;
use crate::db::mysql::{Ctx, MysqlSession};
use crate::workload::oltp::ds3::{
    Browse, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch, Session,
};
use mysql::prelude::Queryable;
use mysql::{Params, Value};
use std::fmt::Write as _;

const NEW_CUSTOMER: &str = "CALL ds3_new_customer(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/// One simulated user's session.
pub(crate) struct MysqlDs3 {
    sql: MysqlSession,
    /// A list argument (`prod:qty,...` or `id,...`), reused between calls.
    list: String,
}

impl MysqlDs3 {
    pub(crate) fn new(sql: MysqlSession) -> Self {
        MysqlDs3 { sql, list: String::new() }
    }

    /// Rows of every result set a CALL returns, without decoding them.
    fn count(&mut self, sql: &str, params: impl Into<Params>, what: &str) -> DbResult<u32> {
        let mut n = 0;
        let mut result = self.sql.conn.exec_iter(sql, params).ctx(what)?;
        while let Some(set) = result.iter() {
            for row in set {
                row.ctx(what)?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// The first column of the first row a CALL returns; the rest of its results are read and
    /// dropped, so the connection is ready for the next call.
    fn first(&mut self, sql: &str, params: impl Into<Params>, what: &str) -> DbResult<Option<i64>> {
        let mut first = None;
        let mut result = self.sql.conn.exec_iter(sql, params).ctx(what)?;
        while let Some(set) = result.iter() {
            for row in set {
                let row = row.ctx(what)?;
                if first.is_none() {
                    first = row.get::<Option<i64>, _>(0).flatten();
                }
            }
        }
        Ok(first)
    }
}

/// `a,b,c` into `buf` (cleared first), each item written by `item`: the list arguments of
/// `ds3_prices` and `ds3_purchase`.
fn join_into<T>(buf: &mut String, items: &[T], item: impl Fn(&mut String, &T) -> std::fmt::Result) {
    buf.clear();
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            buf.push(',');
        }
        let _ = item(buf, x);
    }
}
impl Session for MysqlDs3 {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login> {
        let mut result =
            self.sql.conn.exec_iter("CALL ds3_login(?, ?)", (username, password)).ctx("login")?;
        let mut login = Login { customer_id: 0, history_rows: 0 };
        let mut set_no = 0;
        while let Some(set) = result.iter() {
            for row in set {
                let row = row.ctx("login")?;
                match set_no {
                    0 => login.customer_id = row.get::<i64, _>(0).unwrap_or(0),
                    _ => login.history_rows += 1,
                }
            }
            set_no += 1;
        }
        Ok(login)
    }

    fn new_customer(&mut self, c: &NewCustomer) -> DbResult<Option<i64>> {
        let params: Vec<Value> = vec![
            c.firstname.as_str().into(),
            c.lastname.as_str().into(),
            c.address1.as_str().into(),
            c.address2.as_str().into(),
            c.city.as_str().into(),
            c.state.as_str().into(),
            c.zip.into(),
            c.country.as_str().into(),
            c.region.into(),
            c.email.as_str().into(),
            c.phone.as_str().into(),
            c.creditcardtype.into(),
            c.creditcard.as_str().into(),
            c.creditcardexpiration.as_str().into(),
            c.username.as_str().into(),
            c.password.as_str().into(),
            c.age.into(),
            c.income.into(),
            c.gender.to_string().into(),
        ];
        let id = self.first(NEW_CUSTOMER, params, "new_customer")?;
        Ok(id.filter(|&id| id > 0))
    }

    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool> {
        Ok(self.first("CALL ds3_new_member(?, ?)", (customer_id, level), "new_member")? == Some(1))
    }

    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32> {
        const WORDS: &str = "CALL ds3_browse_by_words(?, ?, ?)";
        match by {
            Browse::Category(c) => {
                self.count("CALL ds3_browse_by_category(?, ?)", (c, batch), "browse by category")
            }
            Browse::Actor(a) => self.count(WORDS, (false, a, batch), "browse by actor"),
            Browse::Title(t) => self.count(WORDS, (true, t, batch), "browse by title"),
        }
    }

    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, depth: u32) -> DbResult<u32> {
        let (by_title, word, what) = match by {
            ReviewSearch::Actor(w) => (false, w, "reviews by actor"),
            ReviewSearch::Title(w) => (true, w, "reviews by title"),
        };
        self.count("CALL ds3_review_search(?, ?, ?, ?)", (by_title, word, depth, batch), what)
    }

    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32> {
        let (stars, by_date, what) = match order {
            ReviewOrder::Helpful => (None, false, "reviews, most helpful"),
            ReviewOrder::Stars(s) => (Some(s), false, "reviews by stars"),
            ReviewOrder::Date => (None, true, "reviews by date"),
        };
        self.count("CALL ds3_get_reviews(?, ?, ?, ?)", (prod_id, stars, by_date, batch), what)
    }

    fn new_review(&mut self, r: &NewReview) -> DbResult<i64> {
        let params = (r.prod_id, r.stars, r.customer_id, &r.summary, &r.text);
        let id = self.first("CALL ds3_new_review(?, ?, ?, ?, ?)", params, "new_review")?;
        Ok(id.unwrap_or_default())
    }

    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64> {
        let params = (review_id, customer_id, rating);
        let id = self.first("CALL ds3_new_helpfulness(?, ?, ?)", params, "new_helpfulness")?;
        Ok(id.unwrap_or_default())
    }

    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()> {
        out.clear();
        if prod_ids.is_empty() {
            return Ok(());
        }
        join_into(&mut self.list, prod_ids, |b, id| write!(b, "{id}"));
        let mut result =
            self.sql.conn.exec_iter("CALL ds3_prices(?)", (self.list.as_str(),)).ctx("prices")?;
        while let Some(set) = result.iter() {
            for row in set {
                out.push(mysql::from_row_opt(row.ctx("prices")?).map_err(mysql::Error::from).ctx("prices")?);
            }
        }
        Ok(())
    }

    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>> {
        let mut items = p.items.clone();
        items.sort_unstable();
        join_into(&mut self.list, &items, |b, (prod, qty)| write!(b, "{prod}:{qty}"));
        let params: Vec<Value> = vec![
            p.customer_id.into(),
            (items.len() as u32).into(),
            self.list.as_str().into(),
            p.net_cents.into(),
            p.tax_cents.into(),
            p.total_cents.into(),
        ];
        let id = self.first("CALL ds3_purchase(?, ?, ?, ?, ?, ?)", params, "purchase")?;
        Ok(id.filter(|&id| id > 0))
    }

    fn set_restock(&mut self, on: bool) -> DbResult<()> {
        let value: Option<u8> = if on { None } else { Some(1) };
        self.sql.conn.exec_drop("SET @storbench_no_restock = ?", (value,)).ctx("setting restock")
    }
}
