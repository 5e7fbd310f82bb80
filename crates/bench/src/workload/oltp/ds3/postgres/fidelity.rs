//! What `oltp fidelity` needs of PostgreSQL: the server's work counters and a session that
//! calls DS3's own functions (pgsqlds3_create_sp.sql from a DS3 checkout), as DS3's
//! PostgreSQL driver (ds3pgsqlfns.cs) calls them, to compare storbench's calls with.
//!
//! DS3's functions go into a schema of their own, `ds3`, in the working database, so none of
//! storbench's is replaced; a `reset` (which makes the database again from its pristine copy)
//! takes them away. The statistics of a session reach `pg_stat_database` when it ends, so
//! reading the counters waits until no session is left on the working database.

use crate::db::postgres::{MAINTENANCE_DB, Postgres, err, literal};
use crate::db::{DbError, DbErrorKind, DbResult};
use crate::workload::oltp::ds3::{
    Browse, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch, Session,
};
use crate::workload::oltp::users::fidelity::WorkCounters;
use postgres::{Client, SimpleQueryMessage};
use std::time::{Duration, Instant};

/// The schema DS3's functions are created in.
const SCHEMA: &str = "ds3";
/// How long the counters wait for the sessions that did the work to end.
const SETTLE: Duration = Duration::from_secs(10);

const NAMES: [&str; 11] = [
    "xact_commit",
    "xact_rollback",
    "blks_hit",
    "blks_read",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "temp_bytes",
    "wal_bytes",
];

const QUERY: &str = "\
    SELECT xact_commit::float8, xact_rollback::float8, blks_hit::float8, blks_read::float8, \
           tup_returned::float8, tup_fetched::float8, tup_inserted::float8, tup_updated::float8, \
           tup_deleted::float8, temp_bytes::float8, \
           pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::float8 \
      FROM pg_stat_database WHERE datname = $1";

struct Counters {
    /// On the maintenance database, so that it is not one of the sessions waited for.
    client: Client,
    dbname: String,
}

impl WorkCounters for Counters {
    fn read(&mut self) -> DbResult<Vec<(&'static str, f64)>> {
        let started = Instant::now();
        loop {
            let left: i64 = self
                .client
                .query_one("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'", &[&self.dbname])
                .map_err(err("counting sessions"))?
                .get(0);
            if left == 0 {
                break;
            }
            if started.elapsed() > SETTLE {
                return Err(DbError::new(
                    DbErrorKind::Query,
                    format!(
                        "{left} other session(s) stayed on database '{}' for {SETTLE:?}: the counters would hold \
                         their work too; run the fidelity measurement on an idle server",
                        self.dbname
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // A new snapshot of the statistics for each read.
        self.client.batch_execute("SELECT pg_stat_clear_snapshot()").map_err(err("reading the counters"))?;
        let row = self.client.query_one(QUERY, &[&self.dbname]).map_err(err("reading the counters"))?;
        Ok(NAMES.iter().enumerate().map(|(i, &name)| (name, row.get::<_, f64>(i))).collect())
    }
}

impl Postgres {
    /// The server's work counters for the working database, on a connection of their own.
    pub fn work_counters(&self) -> DbResult<Box<dyn WorkCounters>> {
        let client = self.connect_to(MAINTENANCE_DB)?;
        Ok(Box::new(Counters { client, dbname: self.dbname.clone() }))
    }

    /// Creates DS3's functions (the text of its pgsqlds3_create_sp.sql) in schema `ds3` of the
    /// working database, where `connect_ds3` calls them.
    pub fn install_ds3(&self, functions_sql: &str) -> DbResult<()> {
        let mut client = self.connect_db()?;
        let sql = format!("CREATE SCHEMA {SCHEMA}; SET search_path = {SCHEMA}, public;\n{functions_sql}");
        client.batch_execute(&sql).map_err(err("creating DS3's functions"))
    }

    /// Drops what `install_ds3` created (call it only after that succeeded: a schema `ds3` that
    /// is not storbench's is then refused, not dropped, by the CREATE).
    pub fn remove_ds3(&self) -> DbResult<()> {
        let mut client = self.connect_db()?;
        client
            .batch_execute(&format!("DROP SCHEMA {SCHEMA} CASCADE"))
            .map_err(err("dropping DS3's functions"))
    }

    /// A session that calls DS3's functions (after `install_ds3`).
    pub fn connect_ds3(&self) -> DbResult<Box<dyn Session>> {
        let mut client = self.connect_db()?;
        client
            .batch_execute(&format!("SET search_path = {SCHEMA}, public"))
            .map_err(err("finding DS3's functions"))?;
        Ok(Box::new(Ds3Session { client }))
    }
}

/// Calls of DS3's functions with the values written in, as its driver binds them.
struct Ds3Session {
    client: Client,
}

impl Ds3Session {
    /// Rows the statement returned.
    fn rows(&mut self, sql: &str, what: &str) -> DbResult<u32> {
        let messages = self.client.simple_query(sql).map_err(err(what))?;
        Ok(messages.iter().filter(|m| matches!(m, SimpleQueryMessage::Row(_))).count() as u32)
    }

    /// The first column of the first row, as a number.
    fn number(&mut self, sql: &str, what: &str) -> DbResult<Option<i64>> {
        let messages = self.client.simple_query(sql).map_err(err(what))?;
        Ok(messages.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).and_then(|v| v.parse().ok()),
            _ => None,
        }))
    }
}

fn cents(c: i64) -> String {
    format!("{}.{:02}", c / 100, c % 100)
}

impl Session for Ds3Session {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login> {
        let sql = format!("SELECT * FROM login({}, {})", literal(username), literal(password));
        let messages = self.client.simple_query(&sql).map_err(err("login"))?;
        let rows: Vec<_> = messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(row) => {
                    Some(row.get(0).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0))
                }
                _ => None,
            })
            .collect();
        Ok(Login { customer_id: rows.first().copied().unwrap_or(0), history_rows: rows.len() as u32 })
    }

    fn new_customer(&mut self, c: &NewCustomer) -> DbResult<Option<i64>> {
        let t = |s: &str| literal(s);
        let sql = format!(
            "SELECT new_customer({}, {}, {}, {}, {}, {}, '{:05}', {}, {}::smallint, {}, {}, {}, {}, {}, {}, {}, \
             {}::smallint, {}, '{}')",
            t(&c.firstname),
            t(&c.lastname),
            t(&c.address1),
            t(&c.address2),
            t(&c.city),
            t(&c.state),
            c.zip,
            t(&c.country),
            c.region,
            t(&c.email),
            t(&c.phone),
            c.creditcardtype,
            t(&c.creditcard),
            t(&c.creditcardexpiration),
            t(&c.username),
            t(&c.password),
            c.age,
            c.income,
            c.gender
        );
        Ok(self.number(&sql, "new customer")?.filter(|&id| id > 0))
    }

    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool> {
        let id = self.number(&format!("SELECT new_member({customer_id}, {level})"), "new member")?;
        Ok(id.is_some_and(|id| id > 0))
    }

    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32> {
        let sql = match by {
            Browse::Category(c) => format!("SELECT * FROM browse_by_category({batch}, {c})"),
            Browse::Actor(a) => format!("SELECT * FROM browse_by_actor({batch}, {})", literal(a)),
            Browse::Title(t) => format!("SELECT * FROM browse_by_title({batch}, {})", literal(t)),
        };
        self.rows(&sql, "browse")
    }

    /// DS3's functions take no depth: theirs is 500.
    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, _depth: u32) -> DbResult<u32> {
        let sql = match by {
            ReviewSearch::Actor(w) => {
                format!("SELECT * FROM get_prod_reviews_by_actor({batch}, {})", literal(w))
            }
            ReviewSearch::Title(w) => {
                format!("SELECT * FROM get_prod_reviews_by_title({batch}, {})", literal(w))
            }
        };
        self.rows(&sql, "review search")
    }

    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32> {
        let sql = match order {
            ReviewOrder::Helpful => format!("SELECT * FROM get_prod_reviews({batch}, {prod_id})"),
            ReviewOrder::Stars(s) => {
                format!("SELECT * FROM get_prod_reviews_by_stars({batch}, {prod_id}, {s})")
            }
            ReviewOrder::Date => format!("SELECT * FROM get_prod_reviews_by_date({batch}, {prod_id})"),
        };
        self.rows(&sql, "get reviews")
    }

    fn new_review(&mut self, r: &NewReview) -> DbResult<i64> {
        let sql = format!(
            "SELECT new_prod_review({}, {}, {}, {}, {})",
            r.prod_id,
            r.stars,
            r.customer_id,
            literal(&r.summary),
            literal(&r.text)
        );
        Ok(self.number(&sql, "new review")?.unwrap_or_default())
    }

    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64> {
        let sql = format!("SELECT new_review_helpfulness({review_id}, {customer_id}, {rating})");
        Ok(self.number(&sql, "new helpfulness")?.unwrap_or_default())
    }

    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()> {
        let ids: Vec<String> = prod_ids.iter().map(i64::to_string).collect();
        let sql = format!("SELECT prod_id, price FROM products WHERE prod_id IN ({})", ids.join(","));
        out.clear();
        for m in self.client.simple_query(&sql).map_err(err("prices"))? {
            if let SimpleQueryMessage::Row(row) = m {
                let prod = row.get(0).and_then(|v| v.parse().ok()).unwrap_or(0);
                let price: f64 = row.get(1).and_then(|v| v.parse().ok()).unwrap_or(0.0);
                out.push((prod, (price * 100.0).round() as i64));
            }
        }
        Ok(())
    }

    /// DS3's PURCHASE raises an error for an item short of stock, which rolls it back.
    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>> {
        let mut sql = format!(
            "SELECT purchase({}, {}, {}, {}, {}",
            p.customer_id,
            p.items.len(),
            cents(p.net_cents),
            cents(p.tax_cents),
            cents(p.total_cents)
        );
        for (prod, qty) in &p.items {
            sql.push_str(&format!(", {prod}, {qty}"));
        }
        sql.push(')');
        match self.number(&sql, "purchase") {
            Ok(id) => Ok(id.filter(|&id| id > 0)),
            Err(e) if e.message.contains("Insufficient Quantity") => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn set_restock(&mut self, _on: bool) -> DbResult<()> {
        Ok(())
    }
}
