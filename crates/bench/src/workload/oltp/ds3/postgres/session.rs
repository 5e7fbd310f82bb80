//! One session of the database layer running DS3's transactions: each call is one prepared
//! statement, most of them a call of a function from `functions.sql`, in its own implicit
//! transaction.

use crate::db::postgres::{PgSession, err};
use crate::db::{DbError, DbErrorKind, DbResult};
use crate::workload::oltp::ds3::{
    Browse, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch, Session,
};
use postgres::Statement;

/// The statements, prepared once per connection.
struct Statements {
    login: Statement,
    new_customer: Statement,
    new_member: Statement,
    browse_category: Statement,
    browse_actor: Statement,
    browse_title: Statement,
    review_search: Statement,
    get_reviews: Statement,
    new_review: Statement,
    new_helpfulness: Statement,
    prices: Statement,
    purchase: Statement,
}

pub(super) struct PgDs3 {
    sql: PgSession,
    st: Statements,
}

impl PgDs3 {
    pub(super) fn new(mut sql: PgSession) -> DbResult<PgDs3> {
        let mut prepare = |text: &str| sql.client.prepare(text).map_err(err("preparing the transactions"));
        let st = Statements {
            login: prepare("SELECT * FROM sb_login($1, $2)")?,
            new_customer: prepare(
                "SELECT sb_new_customer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
                 $18, $19)",
            )?,
            new_member: prepare("SELECT sb_new_member($1, $2)")?,
            browse_category: prepare("SELECT * FROM sb_browse_by_category($1, $2)")?,
            browse_actor: prepare("SELECT * FROM sb_browse_by_actor($1, $2)")?,
            browse_title: prepare("SELECT * FROM sb_browse_by_title($1, $2)")?,
            review_search: prepare("SELECT * FROM sb_review_search($1, $2, $3, $4)")?,
            get_reviews: prepare("SELECT * FROM sb_get_reviews($1, $2, $3, $4)")?,
            new_review: prepare("SELECT sb_new_review($1, $2, $3, $4, $5)")?,
            new_helpfulness: prepare("SELECT sb_new_helpfulness($1, $2, $3)")?,
            prices: prepare(
                "SELECT prod_id::bigint, (price * 100)::bigint FROM products WHERE prod_id = ANY($1::bigint[])",
            )?,
            purchase: prepare("SELECT sb_purchase($1, $2, $3, $4, $5, $6)")?,
        };
        Ok(PgDs3 { sql, st })
    }

    /// The single value of a one-row call that returns an id, or None for NULL.
    fn id(&mut self, row: postgres::Row, doing: &str) -> DbResult<Option<i64>> {
        row.try_get(0).map_err(err(doing))
    }
}

/// A batch or depth as the functions take it.
fn int(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn count(rows: &[postgres::Row]) -> u32 {
    u32::try_from(rows.len()).unwrap_or(u32::MAX)
}

impl Session for PgDs3 {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login> {
        let rows = self.sql.client.query(&self.st.login, &[&username, &password]).map_err(err("login"))?;
        let Some(first) = rows.first() else { return Ok(Login { customer_id: 0, history_rows: 0 }) };
        let history = rows.iter().filter(|r| r.get::<_, Option<&str>>(1).is_some()).count();
        Ok(Login { customer_id: first.get(0), history_rows: u32::try_from(history).unwrap_or(u32::MAX) })
    }

    fn new_customer(&mut self, c: &NewCustomer) -> DbResult<Option<i64>> {
        let zip = format!("{:05}", c.zip);
        let gender = c.gender.to_string();
        let (region, cctype, age) = (i32::from(c.region), i32::from(c.creditcardtype), i32::from(c.age));
        let income = int(c.income);
        let row = self
            .sql
            .client
            .query_one(
                &self.st.new_customer,
                &[
                    &c.firstname,
                    &c.lastname,
                    &c.address1,
                    &c.address2,
                    &c.city,
                    &c.state,
                    &zip,
                    &c.country,
                    &region,
                    &c.email,
                    &c.phone,
                    &cctype,
                    &c.creditcard,
                    &c.creditcardexpiration,
                    &c.username,
                    &c.password,
                    &age,
                    &income,
                    &gender,
                ],
            )
            .map_err(err("new customer"))?;
        self.id(row, "new customer")
    }

    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool> {
        let row = self
            .sql
            .client
            .query_one(&self.st.new_member, &[&customer_id, &i32::from(level)])
            .map_err(err("new member"))?;
        row.try_get(0).map_err(err("new member"))
    }

    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32> {
        let batch = int(batch);
        let rows = match by {
            Browse::Category(c) => self.sql.client.query(&self.st.browse_category, &[&batch, &i32::from(c)]),
            Browse::Actor(actor) => self.sql.client.query(&self.st.browse_actor, &[&batch, &actor]),
            Browse::Title(title) => self.sql.client.query(&self.st.browse_title, &[&batch, &title]),
        }
        .map_err(err("browse"))?;
        Ok(count(&rows))
    }

    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, depth: u32) -> DbResult<u32> {
        let (word, by_title) = match by {
            ReviewSearch::Actor(w) => (w, false),
            ReviewSearch::Title(w) => (w, true),
        };
        let rows = self
            .sql
            .client
            .query(&self.st.review_search, &[&int(batch), &word, &int(depth), &by_title])
            .map_err(err("review search"))?;
        Ok(count(&rows))
    }

    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32> {
        let (stars, by_date) = match order {
            ReviewOrder::Helpful => (None, false),
            ReviewOrder::Stars(s) => (Some(i32::from(s)), false),
            ReviewOrder::Date => (None, true),
        };
        let rows = self
            .sql
            .client
            .query(&self.st.get_reviews, &[&int(batch), &prod_id, &stars, &by_date])
            .map_err(err("get reviews"))?;
        Ok(count(&rows))
    }

    fn new_review(&mut self, r: &NewReview) -> DbResult<i64> {
        let row = self
            .sql
            .client
            .query_one(
                &self.st.new_review,
                &[&r.prod_id, &i32::from(r.stars), &r.customer_id, &r.summary, &r.text],
            )
            .map_err(err("new review"))?;
        self.id(row, "new review")?
            .ok_or_else(|| DbError::new(DbErrorKind::Query, "new review: no id returned"))
    }

    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64> {
        let row = self
            .sql
            .client
            .query_one(&self.st.new_helpfulness, &[&review_id, &customer_id, &i32::from(rating)])
            .map_err(err("new helpfulness"))?;
        self.id(row, "new helpfulness")?
            .ok_or_else(|| DbError::new(DbErrorKind::Query, "new helpfulness: no id returned"))
    }

    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()> {
        let rows = self.sql.client.query(&self.st.prices, &[&prod_ids]).map_err(err("prices"))?;
        out.clear();
        out.extend(rows.iter().map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1))));
        Ok(())
    }

    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>> {
        if p.items.is_empty() {
            return Err(DbError::new(DbErrorKind::Query, "purchase: an order needs at least one item"));
        }
        let prods: Vec<i64> = p.items.iter().map(|&(prod, _)| prod).collect();
        let quantities: Vec<i32> = p.items.iter().map(|&(_, q)| i32::from(q)).collect();
        let row = self
            .sql
            .client
            .query_one(
                &self.st.purchase,
                &[&p.customer_id, &p.net_cents, &p.tax_cents, &p.total_cents, &prods, &quantities],
            )
            .map_err(err("purchase"))?;
        self.id(row, "purchase")
    }

    fn set_restock(&mut self, on: bool) -> DbResult<()> {
        let value = if on { "off" } else { "on" };
        self.sql
            .client
            .execute("SELECT set_config('storbench.no_restock', $1, false)", &[&value])
            .map_err(err("setting restock"))?;
        Ok(())
    }
}
