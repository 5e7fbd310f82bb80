//! DS3's transactions on one connection, each one round trip.
//!
//! Stored procedures (created by `load`, called as prepared `CALL`s): LOGIN (lookup and history
//! in one trip), NEW_CUSTOMER (check then insert) and PURCHASE (one server-side transaction).
//! Prepared statements, where a procedure would add a call frame and save nothing: the
//! browses, review searches, reviews, prices, NEW_MEMBER, NEW_REVIEW and NEW_HELPFULNESS (one
//! statement each; the driver caches the prepared statements per connection).

use super::Ctx;
use crate::db::{
    Browse, DbResult, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch, Session,
};
use mysql::prelude::Queryable;
use mysql::{Conn, Params, Value};

const BROWSE_CATEGORY: &str = "SELECT prod_id, category, title, actor, price, special, common_prod_id \
     FROM products WHERE category = ? AND special = 1 LIMIT ?";
const BROWSE_ACTOR: &str = "SELECT prod_id, category, title, actor, price, special, common_prod_id \
     FROM products WHERE MATCH (actor) AGAINST (? IN BOOLEAN MODE) LIMIT ?";
const BROWSE_TITLE: &str = "SELECT prod_id, category, title, actor, price, special, common_prod_id \
     FROM products WHERE MATCH (title) AGAINST (? IN BOOLEAN MODE) LIMIT ?";

/// Reviews of products whose `{col}` matches a word: the first `depth` product-review pairs,
/// then their helpfulness summed per review, the most helpful `batch`.
macro_rules! review_search_sql {
    ($col:literal) => {
        concat!(
            "SELECT r.review_id, r.prod_id, r.title, r.actor, r.review_date, r.stars, r.customerid, \
             r.review_summary, r.review_text, SUM(h.helpfulness) AS total \
             FROM (SELECT rv.review_id, rv.prod_id, p.title, p.actor, rv.review_date, rv.stars, rv.customerid, \
                   rv.review_summary, rv.review_text \
                   FROM products p JOIN reviews rv ON rv.prod_id = p.prod_id \
                   WHERE MATCH (p.",
            $col,
            ") AGAINST (? IN BOOLEAN MODE) LIMIT ?) r \
             JOIN reviews_helpfulness h ON h.review_id = r.review_id \
             GROUP BY r.review_id, r.prod_id, r.title, r.actor, r.review_date, r.stars, r.customerid, \
                   r.review_summary, r.review_text \
             ORDER BY total DESC LIMIT ?"
        )
    };
}
const REVIEWS_BY_ACTOR: &str = review_search_sql!("actor");
const REVIEWS_BY_TITLE: &str = review_search_sql!("title");

/// A product's reviews with their summed helpfulness (reviews nobody rated are left out, as in
/// DS3's inner join): the `batch` first in the given order.
macro_rules! reviews_sql {
    ($filter:literal, $order:literal) => {
        concat!(
            "SELECT r.review_id, r.prod_id, r.review_date, r.stars, r.customerid, r.review_summary, \
             r.review_text, t.total \
             FROM (SELECT rv.review_id, rv.review_date, SUM(h.helpfulness) AS total \
                   FROM reviews rv JOIN reviews_helpfulness h ON h.review_id = rv.review_id \
                   WHERE rv.prod_id = ?",
            $filter,
            " GROUP BY rv.review_id, rv.review_date ORDER BY ",
            $order,
            " LIMIT ?) t JOIN reviews r ON r.review_id = t.review_id ORDER BY ",
            $order
        )
    };
}
const REVIEWS_HELPFUL: &str = reviews_sql!("", "total DESC");
const REVIEWS_STARS: &str = reviews_sql!(" AND rv.stars = ?", "total DESC");
const REVIEWS_DATE: &str = reviews_sql!("", "review_date DESC");

const NEW_MEMBER: &str =
    "INSERT INTO membership (customerid, membershiptype, expiredate) VALUES (?, ?, CURDATE())";
const NEW_REVIEW: &str = "INSERT INTO reviews (prod_id, review_date, stars, customerid, review_summary, review_text) \
     VALUES (?, CURDATE(), ?, ?, ?, ?)";
const NEW_HELPFULNESS: &str =
    "INSERT INTO reviews_helpfulness (review_id, customerid, helpfulness) VALUES (?, ?, ?)";
const NEW_CUSTOMER: &str = "CALL ds3_new_customer(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/// One driver thread's connection.
pub(crate) struct MysqlSession {
    conn: Conn,
    /// `prices`' statement text per item count (1..=10), built once.
    price_sql: Vec<String>,
    items: String,
}

impl MysqlSession {
    pub(crate) fn new(conn: Conn) -> Self {
        let price_sql = (1..=10)
            .map(|n| {
                format!(
                    "SELECT prod_id, CAST(ROUND(price * 100) AS SIGNED) FROM products WHERE prod_id IN ({})",
                    vec!["?"; n].join(", ")
                )
            })
            .collect();
        MysqlSession { conn, price_sql, items: String::new() }
    }

    /// Rows of a statement's result, without decoding them.
    fn count(&mut self, sql: &str, params: impl Into<Params>, what: &str) -> DbResult<u32> {
        let mut n = 0;
        let mut result = self.conn.exec_iter(sql, params).ctx(what)?;
        while let Some(set) = result.iter() {
            for row in set {
                row.ctx(what)?;
                n += 1;
            }
        }
        Ok(n)
    }
}

/// `+A +B`: every word required, the same meaning on every backend.
fn all_words(text: &str) -> String {
    text.split_whitespace().map(|w| format!("+{w}")).collect::<Vec<_>>().join(" ")
}

/// True when the error is a duplicate key (1062).
fn is_duplicate(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(m) if m.code == 1062)
}

impl Session for MysqlSession {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login> {
        let mut result = self.conn.exec_iter("CALL ds3_login(?, ?)", (username, password)).ctx("login")?;
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
        let id: Option<i64> = first_of_call(&mut self.conn, NEW_CUSTOMER, params, "new_customer")?;
        Ok(id.filter(|&id| id > 0))
    }

    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool> {
        match self.conn.exec_drop(NEW_MEMBER, (customer_id, level)) {
            Ok(()) => Ok(true),
            Err(e) if is_duplicate(&e) => Ok(false),
            Err(e) => Err(e).ctx("new_member"),
        }
    }

    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32> {
        match by {
            Browse::Category(c) => self.count(BROWSE_CATEGORY, (c, batch), "browse by category"),
            Browse::Actor(a) => self.count(BROWSE_ACTOR, (all_words(a), batch), "browse by actor"),
            Browse::Title(t) => self.count(BROWSE_TITLE, (all_words(t), batch), "browse by title"),
        }
    }

    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, depth: u32) -> DbResult<u32> {
        match by {
            ReviewSearch::Actor(w) => {
                self.count(REVIEWS_BY_ACTOR, (all_words(w), depth, batch), "reviews by actor")
            }
            ReviewSearch::Title(w) => {
                self.count(REVIEWS_BY_TITLE, (all_words(w), depth, batch), "reviews by title")
            }
        }
    }

    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32> {
        match order {
            ReviewOrder::Helpful => self.count(REVIEWS_HELPFUL, (prod_id, batch), "reviews, most helpful"),
            ReviewOrder::Stars(s) => self.count(REVIEWS_STARS, (prod_id, s, batch), "reviews by stars"),
            ReviewOrder::Date => self.count(REVIEWS_DATE, (prod_id, batch), "reviews by date"),
        }
    }

    fn new_review(&mut self, r: &NewReview) -> DbResult<i64> {
        self.conn
            .exec_drop(NEW_REVIEW, (r.prod_id, r.stars, r.customer_id, &r.summary, &r.text))
            .ctx("new_review")?;
        Ok(self.conn.last_insert_id() as i64)
    }

    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64> {
        self.conn.exec_drop(NEW_HELPFULNESS, (review_id, customer_id, rating)).ctx("new_helpfulness")?;
        Ok(self.conn.last_insert_id() as i64)
    }

    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()> {
        out.clear();
        for chunk in prod_ids.chunks(self.price_sql.len()) {
            let sql = &self.price_sql[chunk.len() - 1];
            let rows: Vec<(i64, i64)> = self.conn.exec(sql, chunk.to_vec()).ctx("prices")?;
            out.extend(rows);
        }
        Ok(())
    }

    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>> {
        use std::fmt::Write as _;
        let mut items = p.items.clone();
        items.sort_unstable();
        self.items.clear();
        for (i, (prod, qty)) in items.iter().enumerate() {
            let _ = write!(self.items, "{}{prod}:{qty}", if i > 0 { "," } else { "" });
        }
        let params: Vec<Value> = vec![
            p.customer_id.into(),
            (items.len() as u32).into(),
            self.items.as_str().into(),
            p.net_cents.into(),
            p.tax_cents.into(),
            p.total_cents.into(),
        ];
        let id: Option<i64> =
            first_of_call(&mut self.conn, "CALL ds3_purchase(?, ?, ?, ?, ?, ?)", params, "purchase")?;
        Ok(id.filter(|&id| id > 0))
    }
}

/// The first column of the first row a CALL returns; the rest of its results are read and
/// dropped.
fn first_of_call(conn: &mut Conn, sql: &str, params: Vec<Value>, what: &str) -> DbResult<Option<i64>> {
    let mut first = None;
    let mut result = conn.exec_iter(sql, params).ctx(what)?;
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
