//! Tests against the real local server (skipped with a message when it is down, failing
//! under STORBENCH_REQUIRE_SERVERS=1 or CI=true). Each test works in a database of its own, dropped with
//! its pristine copy at the end, also when the test panics.

use super::*;
use crate::db::postgres::{claim, ident};
use crate::db::testing::{sample_until, server_url, unique_db_name};
use crate::db::{BackendKind, Database, DbErrorKind};
use crate::workload::oltp::ds3::{
    Browse, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch,
};
use crate::workload::oltp::schema::{ALL_TABLES, Table};
use crate::workload::oltp::size::DbSize;
use postgres::Client;
use std::time::Duration;

/// A database of its own for one test; dropped (with its pristine copy) on drop.
struct TestDb {
    pg: Postgres,
}

impl TestDb {
    fn new(tag: &str) -> Option<TestDb> {
        let base = server_url(BackendKind::Postgres)?;
        Some(TestDb { pg: Postgres::new(&with_db(&base, &unique_db_name(tag))).unwrap() })
    }

    /// A plain connection to the working database, to look and poke.
    fn client(&self) -> Client {
        self.pg.connect_db().unwrap()
    }

    fn scalar(&self, sql: &str) -> i64 {
        self.client().query_one(sql, &[]).unwrap().get(0)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut admin) = self.pg.connect_admin() {
            let swap = format!("{}{}", self.pg.dbname, claim::SWAP_SUFFIX);
            for name in [self.pg.dbname.clone(), self.pg.pristine_name(), swap] {
                let _ =
                    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", ident(&name)));
            }
        }
    }
}

/// `base` with its database replaced by `db`.
fn with_db(base: &str, db: &str) -> String {
    let (server, _) = base.rsplit_once('/').unwrap();
    format!("{server}/{db}")
}

/// The small generated set the transaction tests load.
fn small_set() -> DataSet {
    DataSet::new("1MB".parse().unwrap(), 42, false)
}

/// A database with `small_set` loaded.
fn loaded(tag: &str) -> Option<TestDb> {
    let db = TestDb::new(tag)?;
    db.pg.load(&small_set(), &mut |_| {}, &StopFlag::new()).unwrap();
    Some(db)
}

/// Products with at least `stock` in stock, lowest ids first.
fn stocked(db: &TestDb, stock: i32, n: i64) -> Vec<i64> {
    let rows = db
        .client()
        .query(
            "SELECT prod_id::bigint FROM inventory WHERE quan_in_stock >= $1 ORDER BY prod_id LIMIT $2",
            &[&stock, &n],
        )
        .unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}

/// A product's (stock, sales).
fn stock_and_sales(db: &TestDb, prod_id: i64) -> (i64, i64) {
    let row = db
        .client()
        .query_one(
            "SELECT quan_in_stock::bigint, sales::bigint FROM inventory WHERE prod_id = $1",
            &[&(prod_id as i32)],
        )
        .unwrap();
    (row.get(0), row.get(1))
}

fn new_customer(username: &str) -> NewCustomer {
    NewCustomer {
        firstname: "ABCDEF".into(),
        lastname: "GHIJKLMNOP".into(),
        address1: "5551234567 Dell Way".into(),
        city: "QRSTUVW".into(),
        state: "TX".into(),
        zip: 12345,
        country: "US".into(),
        region: 1,
        email: "GHIJKLMNOP@dell.com".into(),
        phone: "5551234567".into(),
        creditcardtype: 3,
        creditcard: "1234567812345678".into(),
        creditcardexpiration: "2010/07".into(),
        username: username.into(),
        password: "password".into(),
        age: 42,
        income: 60000,
        gender: 'F',
        ..NewCustomer::default()
    }
}

fn purchase(customer_id: i64, items: &[(i64, u16)]) -> Purchase {
    Purchase { customer_id, items: items.to_vec(), net_cents: 2998, tax_cents: 247, total_cents: 3245 }
}

#[test]
fn sql_files_have_a_section_per_table() {
    let tables: Vec<&str> = load::sections(load::INDEXES).map(|(name, _)| name).collect();
    for t in ALL_TABLES {
        assert!(tables.contains(&t.sql_name()), "no index section for {}", t.sql_name());
    }
}

#[test]
fn bad_password_unreachable_port_and_missing_database_have_their_kinds() {
    let Some(base) = server_url(BackendKind::Postgres) else { return };
    let missing = Postgres::new(&with_db(&base, "sbtest_no_such_database")).unwrap();
    let e = missing.connect().err().unwrap();
    assert_eq!(e.kind, DbErrorKind::Missing, "{e}");
    assert!(e.message.contains("sbtest_no_such_database") && e.message.contains("load"), "{e}");
    assert_eq!(missing.shape().unwrap_err().kind, DbErrorKind::Missing);
    assert_eq!(missing.reset().unwrap_err().kind, DbErrorKind::Missing);

    let closed = Postgres::new("postgres://postgres@127.0.0.1:1/test").unwrap();
    let e = closed.connect().err().unwrap();
    assert_eq!(e.kind, DbErrorKind::Connection, "{e}");
    assert!(e.message.contains("refused") && e.message.contains("127.0.0.1:1"), "{e}");

    // The local server trusts everyone; a role that does not exist is refused as Auth all the same.
    let stranger =
        Postgres::new(&base.replacen("postgres://postgres", "postgres://sbtest_nobody:wrong", 1)).unwrap();
    let e = stranger.connect().err().unwrap();
    assert_eq!(e.kind, DbErrorKind::Auth, "{e}");
    assert!(!e.message.contains("wrong"), "the password leaked: {e}");
}

#[test]
fn refuses_to_load_into_a_database_it_did_not_create() {
    let Some(db) = TestDb::new("foreign") else { return };
    let mut admin = db.pg.connect_admin().unwrap();
    admin.batch_execute(&format!("CREATE DATABASE {}", ident(&db.pg.dbname))).unwrap();
    db.client().batch_execute("CREATE TABLE precious (x int); INSERT INTO precious VALUES (42)").unwrap();
    let data = DataSet::new(DbSize::Mb(1), 1, false);
    let e = db.pg.load(&data, &mut |_| {}, &StopFlag::new()).unwrap_err();
    assert_eq!(e.kind, DbErrorKind::Query, "{e}");
    assert!(e.message.contains(&db.pg.dbname) && e.message.contains("another database name"), "{e}");
    assert_eq!(db.scalar("SELECT x::bigint FROM precious"), 42);
    assert_eq!(db.pg.reset().unwrap_err().kind, DbErrorKind::Missing);
    assert_eq!(db.scalar("SELECT x::bigint FROM precious"), 42, "reset must not touch it either");
}

#[test]
fn load_holds_the_generated_rows_and_checks_clean() {
    let Some(db) = TestDb::new("load") else { return };
    let data = small_set();
    let mut steps = Vec::new();
    let mut last_load = std::collections::HashMap::new();
    let report = db
        .pg
        .load(
            &data,
            &mut |p| {
                if !steps.contains(&p.step) {
                    steps.push(p.step);
                }
                if p.step == "load" {
                    last_load.insert(p.table, (p.rows_done, p.rows_total));
                }
            },
            &StopFlag::new(),
        )
        .unwrap();
    assert_eq!(steps, ["load", "index", "foreign keys", "analyze"]);
    assert_eq!(report.rows.len(), ALL_TABLES.len());
    for &(table, rows) in &report.rows {
        assert_eq!(rows, data.rows(table), "{}", table.sql_name());
        assert_eq!(db.scalar(&format!("SELECT count(*) FROM {}", table.sql_name())) as u64, rows);
        assert_eq!(last_load[&table], (rows, rows), "{}", table.sql_name());
    }
    assert!(report.size_bytes.is_some_and(|b| b > 1 << 20), "{report:?}");
    assert!(report.load_s > 0.0 && report.index_s > 0.0);
    let check = db.pg.check().unwrap();
    assert_eq!(check.products_checked, data.rows(Table::Products));
    assert_eq!((check.mismatch_count, check.orphans), (0, 0), "{check:?}");
    let shape = db.pg.shape().unwrap();
    let expected =
        LoadedShape { customers: data.counts.customers, products: data.counts.products, ds3: true };
    assert_eq!(shape, expected);
    // Every serial continues past the loaded ids.
    let mut s = db.pg.connect().unwrap();
    let id = s.new_customer(&new_customer("newuser1")).unwrap().unwrap();
    assert_eq!(id as u64, data.counts.customers + 1);

    // Loading again replaces storbench's own database, DS2 tables only this time.
    let ds2 = DataSet::new("1MB".parse().unwrap(), 42, true);
    db.pg.load(&ds2, &mut |_| {}, &StopFlag::new()).unwrap();
    assert!(!db.pg.shape().unwrap().ds3);
    assert_eq!(db.scalar("SELECT count(*) FROM customers") as u64, data.counts.customers);
}

#[test]
fn a_stopped_load_says_so() {
    let Some(db) = TestDb::new("stop") else { return };
    let stop = StopFlag::new();
    stop.stop();
    let e = db.pg.load(&small_set(), &mut |_| {}, &stop).unwrap_err();
    assert!(e.message.contains("stopped"), "{e}");
    assert_eq!(db.pg.shape().unwrap_err().kind, DbErrorKind::Missing);
}

#[test]
fn sessions_run_every_transaction() {
    let Some(db) = loaded("session") else { return };
    let mut s = db.pg.connect().unwrap();

    assert_eq!(s.login("user1", "password").unwrap().customer_id, 1);
    let buyer = db.scalar("SELECT customerid::bigint FROM cust_hist ORDER BY customerid LIMIT 1");
    let login = s.login(&format!("user{buyer}"), "password").unwrap();
    assert_eq!(login.customer_id, buyer);
    assert!(login.history_rows >= 1 && login.history_rows <= 10, "{login:?}");
    assert_eq!(s.login("user1", "wrong").unwrap(), Login { customer_id: 0, history_rows: 0 });

    let id = s.new_customer(&new_customer("newuser1")).unwrap().expect("a new id");
    assert!(id > db.scalar("SELECT count(*) FROM customers") - 1);
    assert_eq!(s.new_customer(&new_customer("newuser1")).unwrap(), None);
    assert_eq!(s.new_customer(&new_customer("user1")).unwrap(), None);
    let row = db
        .client()
        .query_one(
            "SELECT age::int, income, gender::text FROM customers WHERE customerid = $1",
            &[&(id as i32)],
        )
        .unwrap();
    assert_eq!(
        (row.get::<_, i32>(0), row.get::<_, i32>(1), row.get::<_, String>(2)),
        (42, 60000, "F".into())
    );

    assert!(s.new_member(id, 2).unwrap());
    assert!(!s.new_member(id, 3).unwrap());

    let title: String =
        db.client().query_one("SELECT title FROM products WHERE prod_id = 1", &[]).unwrap().get(0);
    let actor: String =
        db.client().query_one("SELECT actor FROM products WHERE prod_id = 1", &[]).unwrap().get(0);
    // DS3's semantics: the words are parsed with the server's default configuration against
    // the 'simple' index, and a title browse searches ACTOR, as DS3's BROWSE_BY_TITLE does.
    let matches = |column: &str, words: &str| -> i64 {
        let sql = format!(
            "SELECT count(*) FROM products WHERE to_tsvector('simple', {column}) @@ to_tsquery(replace($1, ' ', '&'))"
        );
        db.client().query_one(&sql, &[&words]).unwrap().get(0)
    };
    assert_eq!(i64::from(s.browse(Browse::Actor(&actor), 10).unwrap()), matches("actor", &actor).min(10));
    assert_eq!(i64::from(s.browse(Browse::Title(&actor), 10).unwrap()), matches("actor", &actor).min(10));
    assert_eq!(i64::from(s.browse(Browse::Title(&title), 10).unwrap()), matches("actor", &title).min(10));
    assert!(matches("actor", &actor) >= 1 || matches("actor", &actor.to_lowercase()) == 0, "actor '{actor}'");
    assert!(s.browse(Browse::Title("NOSUCHWORD ZZZ"), 10).unwrap() == 0);
    let specials = db.scalar("SELECT count(*) FROM products WHERE category = 1 AND special = 1");
    let got = s.browse(Browse::Category(1), 2).unwrap();
    assert_eq!(i64::from(got), specials.min(2));

    // A review search finds reviews exactly when its word finds a product (a stemmed word may
    // miss, as in DS3), at most the batch.
    let last_name = actor.split(' ').nth(1).unwrap();
    let title_word = title.split(' ').nth(1).unwrap();
    for (by, column, word) in [
        (ReviewSearch::Actor(last_name), "actor", last_name),
        (ReviewSearch::Title(title_word), "title", title_word),
    ] {
        let found = s.review_search(by, 5, 500).unwrap();
        assert_eq!(found > 0, matches(column, word) > 0, "{column} '{word}'");
        assert!(found <= 5);
    }
    let found_words = db.scalar(
        "SELECT count(*) FROM (SELECT DISTINCT w FROM products, regexp_split_to_table(title, ' ') w \
          WHERE to_tsvector('simple', title) @@ to_tsquery(w) LIMIT 1) x",
    );
    assert_eq!(found_words, 1, "some title word survives stemming");

    let rated = db.scalar(
        "SELECT count(DISTINCT r.review_id) FROM reviews r JOIN reviews_helpfulness h USING (review_id) WHERE r.prod_id = 1",
    );
    assert_eq!(i64::from(s.get_reviews(1, ReviewOrder::Helpful, 100).unwrap()), rated);
    assert_eq!(i64::from(s.get_reviews(1, ReviewOrder::Date, 100).unwrap()), rated);
    assert_eq!(s.get_reviews(1, ReviewOrder::Helpful, 1).unwrap(), 1);
    let five_star = db.scalar(
        "SELECT count(DISTINCT r.review_id) FROM reviews r JOIN reviews_helpfulness h USING (review_id) \
         WHERE r.prod_id = 1 AND r.stars = 5",
    );
    assert_eq!(i64::from(s.get_reviews(1, ReviewOrder::Stars(5), 100).unwrap()), five_star);

    let review =
        NewReview { prod_id: 1, stars: 4, customer_id: 1, summary: "a b c".into(), text: "words".into() };
    let review_id = s.new_review(&review).unwrap();
    assert_eq!(review_id, db.scalar("SELECT max(review_id)::bigint FROM reviews"));
    let rating_id = s.new_helpfulness(review_id, 2, 9).unwrap();
    assert_eq!(rating_id, db.scalar("SELECT max(review_helpfulness_id)::bigint FROM reviews_helpfulness"));

    let mut prices = Vec::new();
    s.prices(&[1, 2, 999_999], &mut prices).unwrap();
    prices.sort_unstable();
    let cents =
        |p: i64| db.scalar(&format!("SELECT (price * 100)::bigint FROM products WHERE prod_id = {p}"));
    assert_eq!(prices, vec![(1, cents(1)), (2, cents(2))]);
}

#[test]
fn purchase_moves_stock_and_sales_or_writes_nothing() {
    let Some(db) = loaded("purchase") else { return };
    let mut s = db.pg.connect().unwrap();
    let [p, q] = stocked(&db, 10, 2)[..] else { panic!("no stock") };
    let (stock, sales) = stock_and_sales(&db, p);
    let orders = db.scalar("SELECT count(*) FROM orders");

    let id = s.purchase(&purchase(1, &[(p, 2), (q, 1), (p, 1)])).unwrap().expect("in stock");
    assert_eq!(stock_and_sales(&db, p), (stock - 3, sales + 3));
    let sql = "SELECT orderlineid::int, prod_id::bigint FROM orderlines WHERE orderid = $1 ORDER BY 1";
    let lines = db.client().query(sql, &[&(id as i32)]).unwrap();
    let lines: Vec<(i32, i64)> = lines.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(lines, vec![(1, p), (2, q), (3, p)]);
    assert_eq!(db.scalar(&format!("SELECT count(*) FROM cust_hist WHERE orderid = {id}")), 3);
    let total: String = db
        .client()
        .query_one("SELECT totalamount::text FROM orders WHERE orderid = $1", &[&(id as i32)])
        .unwrap()
        .get(0);
    assert_eq!(total, "32.45");

    let too_many = u16::try_from(stock).unwrap();
    assert_eq!(s.purchase(&purchase(1, &[(q, 1), (p, too_many)])).unwrap(), None);
    assert_eq!(s.purchase(&purchase(1, &[(999_999, 1)])).unwrap(), None, "an unknown product");
    assert_eq!(stock_and_sales(&db, p), (stock - 3, sales + 3));
    assert_eq!(db.scalar("SELECT count(*) FROM orders"), orders + 1, "a refused order leaves nothing");
    assert_eq!(db.pg.check().unwrap().mismatch_count, 0);

    // What check is for: a lost sale and an order without lines.
    let mut c = db.client();
    c.batch_execute(&format!("UPDATE inventory SET sales = sales - 1 WHERE prod_id = {p}")).unwrap();
    c.batch_execute("INSERT INTO orders (orderdate, customerid, netamount, tax, totalamount) VALUES (current_date, 1, 0, 0, 0)")
        .unwrap();
    let check = db.pg.check().unwrap();
    assert_eq!(check.mismatches, vec![(p, sales + 2, sales + 3)]);
    assert_eq!((check.mismatch_count, check.orphans), (1, 1));
}

#[test]
fn restock_trigger_refills_low_stock() {
    let Some(db) = loaded("restock") else { return };
    let mut c = db.client();
    c.batch_execute("UPDATE inventory SET quan_in_stock = 4 WHERE prod_id = 5").unwrap();
    let (_, sales) = stock_and_sales(&db, 5);
    let mut s = db.pg.connect().unwrap();
    s.purchase(&purchase(1, &[(5, 3)])).unwrap().expect("4 in stock covers 3");
    assert_eq!(stock_and_sales(&db, 5), (250, sales + 3));
    let row = c.query_one("SELECT quan_low, quan_reordered FROM reorder WHERE prod_id = 5", &[]).unwrap();
    assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (1, 249));
    // Hot products (prod_id % 10000 = 0) are refilled to 2500.
    c.batch_execute(
        "INSERT INTO inventory VALUES (20000, 10, 0) ON CONFLICT DO NOTHING; \
         UPDATE inventory SET quan_in_stock = 2 WHERE prod_id = 20000",
    )
    .unwrap();
    assert_eq!(stock_and_sales(&db, 20000).0, 2500);
    c.batch_execute("DELETE FROM inventory WHERE prod_id = 20000").unwrap();

    // Restocking off (DS3's MySQL edition): the product sells out, nothing is reordered, and
    // the next order for it rolls back; other sessions still restock.
    c.batch_execute("UPDATE inventory SET quan_in_stock = 4 WHERE prod_id = 6").unwrap();
    let (_, sales) = stock_and_sales(&db, 6);
    s.set_restock(false).unwrap();
    s.purchase(&purchase(1, &[(6, 3)])).unwrap().expect("4 in stock covers 3");
    assert_eq!(stock_and_sales(&db, 6), (1, sales + 3));
    assert_eq!(s.purchase(&purchase(1, &[(6, 2)])).unwrap(), None, "1 in stock does not cover 2");
    let reorders: i64 = c.query_one("SELECT count(*) FROM reorder WHERE prod_id = 6", &[]).unwrap().get(0);
    assert_eq!(reorders, 0);
    let mut other = db.pg.connect().unwrap();
    other.purchase(&purchase(1, &[(6, 1)])).unwrap().expect("1 in stock covers 1");
    assert_eq!(stock_and_sales(&db, 6).0, 250);
}

#[test]
fn reset_restores_the_loaded_state() {
    let Some(db) = loaded("reset") else { return };
    let shape = db.pg.shape().unwrap();
    assert!(shape.ds3 && shape.customers > 0 && shape.products > 0, "{shape:?}");
    let counts = |db: &TestDb| {
        ["customers", "orders", "orderlines", "reviews", "membership"]
            .map(|t| db.scalar(&format!("SELECT count(*) FROM {t}")))
    };
    let before = counts(&db);
    let p = stocked(&db, 10, 1)[0];
    let stock = stock_and_sales(&db, p);
    let mut s = db.pg.connect().unwrap();
    s.new_customer(&new_customer("newuser_reset")).unwrap().unwrap();
    s.purchase(&purchase(1, &[(p, 1)])).unwrap().unwrap();
    s.new_review(&NewReview { prod_id: 1, stars: 1, customer_id: 1, summary: "x".into(), text: "y".into() })
        .unwrap();
    assert_ne!(counts(&db), before);

    let secs = db.pg.reset().unwrap();
    assert!(secs > 0.0);
    assert_eq!(counts(&db), before);
    assert_eq!(stock_and_sales(&db, p), stock);
    assert_eq!(db.pg.shape().unwrap(), shape);
    // The old session was ended by the reset; a new one works, and the serials start past the
    // loaded ids again.
    assert_eq!(s.login("user1", "password").unwrap_err().kind, DbErrorKind::Connection);
    let mut s = db.pg.connect().unwrap();
    let id = s.new_customer(&new_customer("newuser_reset")).unwrap().unwrap();
    assert_eq!(id, db.scalar("SELECT max(customerid)::bigint FROM customers"));
    assert_eq!(db.pg.reset().map(|_| ()).unwrap(), ());
}

#[test]
fn concurrent_purchases_of_one_product_lose_no_sale() {
    let Some(db) = loaded("hot") else { return };
    let [prod, other] = stocked(&db, 10, 2)[..] else { panic!("no stock") };
    let (_, sales) = stock_and_sales(&db, prod);
    let threads = 8;
    let per_thread = 40;
    let bought: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let pg = &db.pg;
                scope.spawn(move || {
                    let mut s = pg.connect().unwrap();
                    let mut bought = 0;
                    for i in 0..per_thread {
                        // Two products per order, in both orders, to provoke lock-order deadlocks.
                        let items =
                            if (t + i) % 2 == 0 { [(prod, 2), (other, 1)] } else { [(other, 1), (prod, 2)] };
                        if s.purchase(&purchase(1 + (t % 5), &items)).unwrap().is_some() {
                            bought += 2;
                        }
                    }
                    bought
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert!(bought > 0);
    assert_eq!(stock_and_sales(&db, prod).1, sales + bought as i64);
    let check = db.pg.check().unwrap();
    assert_eq!((check.mismatch_count, check.orphans), (0, 0), "{check:?}");
}

#[test]
fn counters_and_server_info_come_from_the_server() {
    let Some(db) = loaded("counters") else { return };
    let mut sampler = db.pg.counters().unwrap();
    let mut s = db.pg.connect().unwrap();
    for _ in 0..50 {
        s.login("user1", "password").unwrap();
    }
    let values = sample_until(sampler.as_mut(), Duration::from_millis(100), |v| {
        v[4].is_some_and(|commits| commits > 0.0) && v[0].is_some()
    });
    assert!(values[4].is_some_and(|commits| commits > 0.0), "{values:?}");
    assert!(values[0].is_some_and(|pct| (0.0..=100.0).contains(&pct)), "{values:?}");
    assert!(values[6].is_some_and(|d| d == 0.0), "{values:?}");
    // A reset re-creates the database under the sampler, which keeps going.
    db.pg.reset().unwrap();
    let mut s = db.pg.connect().unwrap();
    for round in 0..2 {
        for _ in 0..20 {
            s.login("user1", "password").unwrap();
        }
        let values = if round == 0 {
            sampler.sample()
        } else {
            sample_until(sampler.as_mut(), Duration::from_millis(100), |v| {
                v[4].is_some_and(|commits| commits > 0.0)
            })
        };
        assert!(round == 0 || values[4].is_some_and(|commits| commits > 0.0), "{values:?}");
    }
    let info = db.pg.server_info().unwrap();
    assert_eq!(info.kind.as_deref(), Some("postgres"));
    assert!(
        info.version.as_deref().is_some_and(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit())),
        "{info:?}"
    );
    assert!(info.non_default_settings.keys().all(|name| !name.contains("password") && !name.contains("key")));
    assert!(!info.non_default_settings.contains_key("client_encoding"), "the connection's own: {info:?}");
    // shared_buffers is always named, so the setup checks can weigh the data against it.
    let cache = storbench_report::setup::ServerCache::of("postgres", &info.non_default_settings);
    assert!(cache.is_some_and(|c| c.bytes >= 128 << 10 && !c.direct), "{info:?}");
}

/// Load and reset timings at a size (`STORBENCH_PG_TIMING_SIZE`, default S), printed:
/// `STORBENCH_PG_TIMING_SIZE=S cargo test --release -p storbench-bench timing_of_load_and_reset -- --ignored --nocapture`
#[test]
#[ignore = "a measurement, minutes long; run by hand"]
fn timing_of_load_and_reset() {
    let Some(db) = TestDb::new("timing") else { return };
    let size: DbSize =
        std::env::var("STORBENCH_PG_TIMING_SIZE").unwrap_or_else(|_| "S".into()).parse().unwrap();
    let data = DataSet::new(size, 42, false);
    let started = std::time::Instant::now();
    let mut step = "";
    let step_started = std::time::Instant::now();
    let report = db
        .pg
        .load(
            &data,
            &mut |p| {
                if p.step != step {
                    eprintln!("  {step:>12} done at {:6.1} s", step_started.elapsed().as_secs_f64());
                    step = p.step;
                }
            },
            &StopFlag::new(),
        )
        .unwrap();
    let total = started.elapsed().as_secs_f64();
    let mb = report.size_bytes.unwrap_or(0) >> 20;
    eprintln!(
        "{size}: load {:.1} s, keys+indexes+functions+analyze+pristine {:.1} s, total {total:.1} s, {mb} MiB",
        report.load_s, report.index_s
    );
    for &(t, n) in &report.rows {
        eprintln!("  {:>20} {n}", t.sql_name());
    }
    for _ in 0..3 {
        eprintln!("{size}: reset {:.2} s", db.pg.reset().unwrap());
    }
    // The two ways PostgreSQL 15 copies a database, for the choice in load::create_database.
    let mut admin = db.pg.connect_admin().unwrap();
    let copy = format!("{}_copy", db.pg.dbname);
    for strategy in ["wal_log", "file_copy", "wal_log", "file_copy"] {
        let t = std::time::Instant::now();
        let sql = format!(
            "CREATE DATABASE {} TEMPLATE {} STRATEGY {strategy}",
            ident(&copy),
            ident(&db.pg.pristine_name())
        );
        admin.batch_execute(&sql).unwrap();
        eprintln!("{size}: CREATE DATABASE ... STRATEGY {strategy}: {:.2} s", t.elapsed().as_secs_f64());
        admin.batch_execute(&format!("DROP DATABASE {}", ident(&copy))).unwrap();
    }
}
