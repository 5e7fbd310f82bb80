//! Tests against the real local server (skipped with a message when none answers), each in a
//! fresh database that a guard drops, on panic too.

use super::load;
use super::*;
use crate::db::mysql::LoadMethod;
use crate::db::testing::{sample_until, server_url, unique_db_name};
use crate::db::{BackendKind, Database};
use crate::workload::oltp::ds3::{
    Browse, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch,
};
use crate::workload::oltp::schema::{ALL_TABLES, Table};
use crate::workload::oltp::size::DbSize;
use crate::workload::oltp::words;
use std::time::Duration;

/// A fresh database, dropped when the test ends.
struct Fixture {
    db: Mysql,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Ok(mut c) = self.db.conn(false) {
            let _ = c.query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.db.db_name()));
        }
    }
}

fn url_for(name: &str) -> Option<String> {
    let base = server_url(BackendKind::Mysql)?;
    let (server, _) = base.rsplit_once('/').expect("test URL ends in /db");
    Some(format!("{server}/{name}"))
}

/// A database name that will be dropped; None when no server answers.
fn fixture(tag: &str) -> Option<Fixture> {
    let db = Mysql::new(&url_for(&unique_db_name(tag))?).unwrap();
    Some(Fixture { db })
}

fn q<T: mysql::prelude::FromRow>(db: &Mysql, sql: &str) -> T {
    db.conn(true).unwrap().query_first(sql).unwrap().unwrap()
}

fn title(p: usize) -> String {
    let t = words::title_words();
    format!("{} {}", t[p / 7 % t.len()], t[p % t.len()])
}

/// The hand-made data set: products 1..=20 plus hot product 10000 (stock 2 on product 5 and
/// on 10000), customers user1..user5, three orders by customer 1, member 2, reviews of 1 and 2.
fn hand_load(db: &Mysql) {
    let data = crate::workload::oltp::datagen::DataSet::new(DbSize::Mb(1), 7, false);
    let mut conn = load::claim_database(db, &data).unwrap();
    let tables: Vec<Table> = ALL_TABLES.into_iter().chain([Table::Reorder]).collect();
    load::create_tables(&mut conn, &tables).unwrap();
    let (first, last) = (words::first_names(), words::last_names());
    let mut sql = vec!["INSERT INTO categories VALUES (1,'Action'),(2,'Animation')".to_owned()];
    for p in (1..=20).chain([10000]) {
        let actor = format!("{} {}", first[p % first.len()], last[p % last.len()]);
        let stock = if p == 5 || p == 10000 { 2 } else { 100 };
        let sold = match p {
            1 => 3,
            2 => 1,
            _ => 0,
        };
        sql.push(format!(
            "INSERT INTO products VALUES ({p}, {}, '{}', '{actor}', 12.99, {}, {}, 0)",
            1 + p % 2,
            title(p),
            p % 2,
            p % 20 + 1
        ));
        sql.push(format!("INSERT INTO inventory VALUES ({p}, {stock}, {sold})"));
    }
    for c in 1..=5 {
        sql.push(format!(
            "INSERT INTO customers VALUES ({c},'FIRST','LAST','1 Dell Way','','CITY','TX',12345,'US',1,\
             'x@dell.com','5550000000',1,'1234567890123456','2020/01','user{c}','password',30,40000,'F')"
        ));
    }
    sql.push(
        "INSERT INTO orders VALUES (1,'2013-01-05',1,10,0.83,10.83),(2,'2013-02-05',1,20,1.65,21.65)".into(),
    );
    sql.push(
        "INSERT INTO orderlines VALUES (1,1,1,2,'2013-01-05'),(1,2,1,1,'2013-02-05'),(2,2,2,1,'2013-02-05')"
            .into(),
    );
    sql.push("INSERT INTO cust_hist VALUES (1,1,1),(1,2,1),(1,2,2)".into());
    sql.push("INSERT INTO membership VALUES (2, 1, '2016-01-15')".into());
    sql.push("INSERT INTO reviews VALUES (1,1,'2013-03-01',5,3,'good good good','text '),(2,1,'2013-04-01',1,4,'bad','t'),(3,2,'2013-04-01',4,4,'ok','t')".into());
    sql.push("INSERT INTO reviews_helpfulness VALUES (1,1,3,9),(2,1,4,8),(3,2,4,1),(4,3,5,2)".into());
    for s in sql {
        run(&mut conn, &s).unwrap();
    }
    let rows = |t: Table| -> u64 {
        if t == Table::Reorder {
            return 0;
        }
        conn_count(db, t.sql_name())
    };
    load::build(&mut conn, &tables, false, &rows, &mut |_| {}).unwrap();
}

fn conn_count(db: &Mysql, table: &str) -> u64 {
    q(db, &format!("SELECT COUNT(*) FROM {table}"))
}

fn customer(username: &str) -> NewCustomer {
    NewCustomer {
        firstname: "ANNA".into(),
        lastname: "BERGER".into(),
        address1: "5551234567 Dell Way".into(),
        city: "TOWNIE".into(),
        country: "Germany".into(),
        region: 2,
        email: "BERGER@dell.com".into(),
        phone: "5551234567".into(),
        creditcardtype: 3,
        creditcard: "1111222233334444".into(),
        creditcardexpiration: "2010/05".into(),
        username: username.into(),
        password: "password".into(),
        age: 44,
        income: 60000,
        gender: 'F',
        ..Default::default()
    }
}

#[test]
fn connection_errors_have_the_right_kind_and_say_what_to_do() {
    let Some(url) = url_for("test") else { return };
    let (head, rest) = url.split_once('@').unwrap();
    let wrong = Mysql::new(&format!("{head}:wrong-password@{rest}")).unwrap();
    let e = wrong.shape().unwrap_err();
    assert_eq!(e.kind, DbErrorKind::Auth, "{e}");
    assert!(e.message.contains("password") && !e.message.contains("wrong-password"), "{e}");
    let down = Mysql::new("mysql://root@127.0.0.1:1/test").unwrap();
    let e = down.shape().unwrap_err();
    assert_eq!(e.kind, DbErrorKind::Connection, "{e}");
    assert!(e.message.contains("127.0.0.1:1") && e.message.contains("server runs"), "{e}");
    let missing = Mysql::new(&url_for("sbtest_no_such_database").unwrap()).unwrap();
    let e = missing.connect().err().unwrap();
    assert_eq!(e.kind, DbErrorKind::Missing, "{e}");
    assert!(e.message.contains("run the OLTP load first"), "{e}");
}

#[test]
fn an_empty_storbench_database_is_missing_and_a_foreign_one_is_refused() {
    let Some(f) = fixture("foreign") else { return };
    run(&mut f.db.conn(false).unwrap(), &format!("CREATE DATABASE `{}`", f.db.db_name())).unwrap();
    assert_eq!(f.db.shape().unwrap_err().kind, DbErrorKind::Missing);
    assert_eq!(f.db.reset().unwrap_err().kind, DbErrorKind::Missing);
    run(&mut f.db.conn(true).unwrap(), "CREATE TABLE precious (x INT)").unwrap();
    run(&mut f.db.conn(true).unwrap(), "INSERT INTO precious VALUES (42)").unwrap();
    let data = crate::workload::oltp::datagen::DataSet::new(DbSize::Mb(1), 1, false);
    let e = f.db.load(&data, &mut |_| {}, &StopFlag::new()).unwrap_err();
    assert!(e.message.contains("did not create") && e.message.contains("another database"), "{e}");
    assert_eq!(q::<i64>(&f.db, "SELECT x FROM precious"), 42);
}

#[test]
fn fulltext_finds_our_words_on_this_server() {
    let Some(url) = url_for("test") else { return };
    let db = Mysql::new(&url).unwrap();
    load::check_fulltext(&mut db.conn(false).unwrap()).unwrap();
}

#[test]
fn every_session_call_answers_on_hand_made_rows() {
    let Some(f) = fixture("calls") else { return };
    hand_load(&f.db);
    let shape = f.db.shape().unwrap();
    assert_eq!(shape, LoadedShape { customers: 5, products: 21, ds3: true });
    let mut s = f.db.connect().unwrap();
    assert_eq!(s.login("user1", "password").unwrap(), Login { customer_id: 1, history_rows: 3 });
    assert_eq!(s.login("user2", "password").unwrap(), Login { customer_id: 2, history_rows: 0 });
    assert_eq!(s.login("user1", "nope").unwrap().customer_id, 0);
    let id = s.new_customer(&customer("newuser9")).unwrap();
    assert_eq!(id, Some(6));
    assert_eq!(s.new_customer(&customer("newuser9")).unwrap(), None);
    assert_eq!(s.new_customer(&customer("user3")).unwrap(), None);
    let (age, income): (u32, u32) = q(&f.db, "SELECT age, income FROM customers WHERE customerid = 6");
    assert_eq!((age, income), (44, 60000));
    assert!(s.new_member(3, 2).unwrap());
    assert!(!s.new_member(3, 2).unwrap());
    assert!(!s.new_member(2, 1).unwrap());
    // Natural language mode, as DS3 searches: a product matches when it holds either word.
    let (first, last) = (words::first_names(), words::last_names());
    let actor = |p: usize| format!("{} {}", first[p % first.len()], last[p % last.len()]);
    let either = |words: &str, text: &dyn Fn(usize) -> String| {
        (1..=20)
            .chain([10000])
            .filter(|&p| text(p).split(' ').any(|w| words.split(' ').any(|x| x == w)))
            .count()
    };
    let t3 = title(3);
    assert!(either(&t3, &title) > 1, "the test needs a search that only one word of matches");
    assert_eq!(s.browse(Browse::Title(&t3), 50).unwrap() as usize, either(&t3, &title));
    let mixed = format!("{} {}", first[4], last[5]);
    assert_eq!(s.browse(Browse::Actor(&mixed), 50).unwrap() as usize, either(&mixed, &actor));
    assert_eq!(s.browse(Browse::Actor("NOSUCHNAME NONAME"), 50).unwrap(), 0);
    // Category 2 holds the odd products, all on special: 10 of them, cut to the batch.
    assert_eq!(s.browse(Browse::Category(2), 4).unwrap(), 4);
    assert_eq!(s.browse(Browse::Category(2), 50).unwrap(), 10);
    let word1 = title(1).split(' ').nth(1).unwrap().to_owned();
    assert_eq!(s.review_search(ReviewSearch::Title(&word1), 10, 500).unwrap(), 2);
    assert_eq!(s.review_search(ReviewSearch::Title(&word1), 1, 500).unwrap(), 1);
    assert_eq!(s.review_search(ReviewSearch::Actor(last[1]), 10, 1).unwrap(), 1);
    assert_eq!(s.get_reviews(1, ReviewOrder::Helpful, 10).unwrap(), 2);
    assert_eq!(s.get_reviews(1, ReviewOrder::Stars(5), 10).unwrap(), 1);
    assert_eq!(s.get_reviews(1, ReviewOrder::Date, 1).unwrap(), 1);
    assert_eq!(s.get_reviews(7, ReviewOrder::Date, 5).unwrap(), 0);
    let r =
        NewReview { prod_id: 7, stars: 4, customer_id: 6, summary: "fine".into(), text: "fine film".into() };
    assert_eq!(s.new_review(&r).unwrap(), 4);
    assert_eq!(s.new_helpfulness(4, 1, 7).unwrap(), 5);
    assert_eq!(s.get_reviews(7, ReviewOrder::Helpful, 5).unwrap(), 1);
    let mut prices = Vec::new();
    s.prices(&[3, 1, 999_999], &mut prices).unwrap();
    prices.sort_unstable();
    assert_eq!(prices, [(1, 1299), (3, 1299)]);
}

#[test]
fn the_procedures_keep_the_statements_meaning_and_the_session_usable() {
    let Some(f) = fixture("procs") else { return };
    hand_load(&f.db);
    let mut s = f.db.connect().unwrap();
    // More ids than a purchase has, one twice and one unknown: each known product once, as
    // `prod_id IN (...)` gave.
    let ids: Vec<i64> = (1..=20).chain([3, 3, 424_242]).collect();
    let mut prices = vec![(0, 0)];
    s.prices(&ids, &mut prices).unwrap();
    prices.sort_unstable();
    assert_eq!(prices, (1..=20).map(|p| (p, 1299)).collect::<Vec<_>>());
    s.prices(&[], &mut prices).unwrap();
    assert!(prices.is_empty());
    // An unknown customer is an error, not "already a member", and the session goes on.
    assert_eq!(s.new_member(424_242, 1).unwrap_err().kind, DbErrorKind::Query);
    assert!(s.new_member(5, 1).unwrap());
    assert_eq!(s.get_reviews(1, ReviewOrder::Stars(1), 10).unwrap(), 1);
    assert_eq!(s.get_reviews(1, ReviewOrder::Stars(3), 10).unwrap(), 0);
    // Product 1's reviews: 1 (2013-03-01, 5 stars, helpfulness 17) and 2 (2013-04-01, 1 star,
    // helpfulness 1). The first column of a review row is its id.
    let first = |sql: &str| q::<mysql::Row>(&f.db, sql).get::<i64, _>(0).unwrap();
    assert_eq!(first("CALL ds3_get_reviews(1, NULL, FALSE, 1)"), 1);
    assert_eq!(first("CALL ds3_get_reviews(1, NULL, TRUE, 1)"), 2);
    assert_eq!(first("CALL ds3_get_reviews(1, 1, FALSE, 5)"), 2);
    // Every procedure procs.sql creates is one `load` drops.
    let names: Vec<String> = f
        .db
        .conn(true)
        .unwrap()
        .query("SELECT routine_name FROM information_schema.ROUTINES WHERE routine_schema = DATABASE() ORDER BY 1")
        .unwrap();
    let mut ours: Vec<&str> = load::procedures().collect();
    ours.sort_unstable();
    assert_eq!(names, ours);
    assert_eq!(ours.len(), 11);
}

fn buy(items: &[(i64, u16)]) -> Purchase {
    Purchase { customer_id: 3, items: items.to_vec(), net_cents: 2598, tax_cents: 214, total_cents: 2812 }
}

#[test]
fn purchases_move_stock_and_roll_back_whole_when_short() {
    let Some(f) = fixture("buy") else { return };
    hand_load(&f.db);
    let mut s = f.db.connect().unwrap();
    let order = s.purchase(&buy(&[(4, 3), (3, 2), (4, 1)])).unwrap().unwrap();
    assert_eq!(order, 3);
    let stock: (i64, i64, i64, i64) = q(
        &f.db,
        "SELECT a.quan_in_stock, a.sales, b.quan_in_stock, b.sales FROM inventory a, inventory b WHERE a.prod_id = 3 AND b.prod_id = 4",
    );
    assert_eq!(stock, (98, 2, 96, 4));
    let lines: (u64, u64, String) = q(
        &f.db,
        "SELECT COUNT(*), MAX(orderlineid), CAST(SUM(quantity) AS CHAR) FROM orderlines WHERE orderid = 3",
    );
    assert_eq!(lines, (3, 3, "6".to_owned()));
    assert_eq!(conn_count(&f.db, "cust_hist WHERE orderid = 3 AND customerid = 3"), 3);
    assert_eq!(q::<String>(&f.db, "SELECT CAST(totalamount AS CHAR) FROM orders WHERE orderid = 3"), "28.12");
    // Product 6 has 100: the whole order goes, product 3's decrement with it.
    assert_eq!(s.purchase(&buy(&[(3, 1), (6, 101)])).unwrap(), None);
    assert_eq!(q::<i64>(&f.db, "SELECT quan_in_stock FROM inventory WHERE prod_id = 3"), 98);
    assert_eq!(conn_count(&f.db, "orders"), 3);
    assert_eq!(conn_count(&f.db, "orderlines WHERE orderid > 3"), 0);
    assert_eq!(conn_count(&f.db, "cust_hist WHERE orderid > 3"), 0);
    assert_eq!(s.purchase(&buy(&[(424_242, 1)])).unwrap_err().kind, DbErrorKind::Query);
    let c = f.db.check().unwrap();
    assert_eq!((c.products_checked, c.mismatch_count, c.orphans), (21, 0, 0), "{c:?}");
}

#[test]
fn restock_trigger_reorders_to_250_or_2500_for_hot_products() {
    let Some(f) = fixture("restock") else { return };
    hand_load(&f.db);
    let mut s = f.db.connect().unwrap();
    assert!(s.purchase(&buy(&[(5, 1), (10000, 2)])).unwrap().is_some());
    let stock: (i64, i64, i64, i64) = q(
        &f.db,
        "SELECT a.quan_in_stock, a.sales, b.quan_in_stock, b.sales FROM inventory a, inventory b WHERE a.prod_id = 5 AND b.prod_id = 10000",
    );
    assert_eq!(stock, (250, 1, 2500, 2));
    let reorders: Vec<(i64, i64, bool)> =
        f.db.conn(true)
            .unwrap()
            .query("SELECT prod_id, quan_low, date_low = CURDATE() FROM reorder ORDER BY prod_id")
            .unwrap();
    assert_eq!(reorders, [(5, 249, true), (10000, 2500, true)]);

    // Restocking off, as DS3's MySQL edition: the product sells out, nothing is reordered,
    // and the next order for it rolls back; another session still restocks.
    f.db.conn(true).unwrap().query_drop("UPDATE inventory SET quan_in_stock = 4 WHERE prod_id = 6").unwrap();
    s.set_restock(false).unwrap();
    assert!(s.purchase(&buy(&[(6, 3)])).unwrap().is_some());
    let stock: i64 = q(&f.db, "SELECT quan_in_stock FROM inventory WHERE prod_id = 6");
    assert_eq!(stock, 1);
    assert_eq!(s.purchase(&buy(&[(6, 2)])).unwrap(), None, "1 in stock does not cover 2");
    let reorders: i64 = q(&f.db, "SELECT COUNT(*) FROM reorder WHERE prod_id = 6");
    assert_eq!(reorders, 0);
    let mut other = f.db.connect().unwrap();
    assert!(other.purchase(&buy(&[(6, 1)])).unwrap().is_some());
    let stock: i64 = q(&f.db, "SELECT quan_in_stock FROM inventory WHERE prod_id = 6");
    assert_eq!(stock, 250);
}

fn checksums(db: &Mysql) -> Vec<(String, Option<i64>)> {
    let mut names: Vec<&str> = ALL_TABLES.iter().map(|t| t.sql_name()).collect();
    names.push("reorder");
    let sums: Vec<(String, Option<i64>)> =
        db.conn(true).unwrap().query(format!("CHECKSUM TABLE {}", names.join(", "))).unwrap();
    // Table names come back as `db.table`: keep the table.
    sums.into_iter().map(|(t, sum)| (t.rsplit('.').next().unwrap_or_default().to_owned(), sum)).collect()
}

/// Writes of every kind a run makes.
fn write_everything(s: &mut dyn Session) {
    let id = s.new_customer(&customer("newuser77")).unwrap().unwrap();
    assert!(s.new_member(id, 3).unwrap());
    assert!(s.new_member(4, 3).unwrap());
    let r = s.new_review(&NewReview {
        prod_id: 1,
        stars: 2,
        customer_id: id,
        summary: "s".into(),
        text: "t".into(),
    });
    s.new_helpfulness(r.unwrap(), 2, 5).unwrap();
    s.new_helpfulness(1, 2, 5).unwrap();
    s.purchase(&Purchase { customer_id: id, items: vec![(5, 2), (1, 1)], ..Default::default() })
        .unwrap()
        .unwrap();
    s.purchase(&Purchase { customer_id: 1, items: vec![(2, 1)], ..Default::default() }).unwrap().unwrap();
}

#[test]
fn reset_restores_every_table_and_the_next_ids() {
    let Some(f) = fixture("reset") else { return };
    hand_load(&f.db);
    let before = checksums(&f.db);
    let mut s = f.db.connect().unwrap();
    write_everything(&mut *s);
    assert_ne!(checksums(&f.db), before);
    let secs = f.db.reset().unwrap();
    assert!(secs >= 0.0);
    assert_eq!(checksums(&f.db), before);
    // The ids start where they did after the load.
    assert_eq!(s.new_customer(&customer("newuser77")).unwrap(), Some(6));
    assert_eq!(s.purchase(&buy(&[(1, 1)])).unwrap(), Some(3));
    f.db.reset().unwrap();
    assert_eq!(checksums(&f.db), before);
}

#[test]
fn concurrent_buyers_of_one_hot_product_lose_no_sale() {
    let Some(f) = fixture("hot") else { return };
    hand_load(&f.db);
    let orders: Vec<u32> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..6)
            .map(|t| {
                let db = &f.db;
                sc.spawn(move || {
                    let mut s = db.connect().unwrap();
                    let mut done = 0;
                    for i in 0..25 {
                        let items = vec![(10000, 1), (1 + (t + i) % 20, 2), (1 + i % 20, 1)];
                        match s.purchase(&buy(&items)) {
                            Ok(_) => done += 1,
                            Err(e) => assert_eq!(e.kind, DbErrorKind::Deadlock, "{e}"),
                        }
                    }
                    done
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(orders.iter().sum::<u32>() > 100, "{orders:?}");
    let c = f.db.check().unwrap();
    assert_eq!((c.mismatch_count, c.orphans), (0, 0), "{c:?}");
}

#[test]
fn counters_and_server_info_come_from_the_server() {
    let Some(f) = fixture("counters") else { return };
    hand_load(&f.db);
    let mut sampler = f.db.counters().unwrap();
    let mut s = f.db.connect().unwrap();
    for _ in 0..20 {
        s.login("user1", "password").unwrap();
    }
    s.purchase(&buy(&[(6, 1000)])).unwrap();
    let v = sample_until(sampler.as_mut(), Duration::from_millis(10), |v| {
        v[4].is_some_and(|c| c > 0.0) && v[5].is_some_and(|r| r > 0.0)
    });
    assert!(v[4].unwrap() > 0.0 && v[5].unwrap() > 0.0, "{v:?}");
    assert!((0.0..=100.0).contains(&v[0].unwrap()), "{v:?}");
    assert!(v[1].is_some() && v[2].is_some() && v[3].is_some() && v[6].is_some(), "{v:?}");
    let info = f.db.server_info().unwrap();
    assert_eq!(info.kind.as_deref(), Some("mysql"));
    assert!(
        info.version.as_deref().is_some_and(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit())),
        "{info:?}"
    );
    for k in [
        "innodb_buffer_pool_size",
        "innodb_flush_log_at_trx_commit",
        "innodb_log_file_size",
        "sync_binlog",
        "innodb_flush_method",
    ] {
        assert!(info.non_default_settings.get(k).is_some_and(|v| !v.is_empty()), "{k}: {info:?}");
    }
    // The buffer pool and whether the server bypasses the page cache, as the setup checks read them.
    let cache = storbench_report::setup::ServerCache::of("mysql", &info.non_default_settings).unwrap();
    let method = &info.non_default_settings["innodb_flush_method"];
    assert_eq!(cache.direct, method.to_ascii_uppercase().starts_with("O_DIRECT"), "{info:?}");
    assert!(cache.bytes >= 5 << 20, "{info:?}");
}

#[test]
fn the_sql_files_split_into_their_statements() {
    assert_eq!(load::statements("-- c\nA;\nB\n  x;\n", ";"), ["A", "B\n  x"]);
    assert_eq!(load::statements("P\nQ;\n$$\nR\n$$\n", "$$"), ["P\nQ;\n", "R\n"]);
}

fn generated(size: &str) -> crate::workload::oltp::datagen::DataSet {
    crate::workload::oltp::datagen::DataSet::new(size.parse().unwrap(), 42, false)
}

/// Loads `data` (with the method `db` carries), checking the report against the generator and the progress
/// steps; returns the report.
fn load_checked(db: &Mysql, data: &crate::workload::oltp::datagen::DataSet) -> LoadReport {
    let mut steps = std::collections::BTreeSet::new();
    let report = db
        .load(
            data,
            &mut |p| {
                steps.insert(p.step);
            },
            &StopFlag::new(),
        )
        .unwrap();
    assert_eq!(steps.into_iter().collect::<Vec<_>>(), ["analyze", "index", "load"]);
    let expected: Vec<(Table, u64)> = data.tables().iter().map(|&t| (t, data.rows(t))).collect();
    assert_eq!(report.rows, expected);
    for &(t, n) in &expected {
        assert_eq!(conn_count(db, t.sql_name()), n, "{t:?}");
    }
    assert!(report.size_bytes.unwrap() > 0 && report.load_s > 0.0 && report.index_s > 0.0, "{report:?}");
    report
}

#[test]
fn a_generated_load_is_complete_consistent_and_searchable() {
    let Some(f) = fixture("gen") else { return };
    let data = generated("1MB");
    load_checked(&f.db, &data);
    let c = f.db.check().unwrap();
    assert_eq!(
        (c.products_checked, c.mismatch_count, c.orphans),
        (data.rows(Table::Products), 0, 0),
        "{c:?}"
    );
    let counts = data.counts;
    assert_eq!(
        f.db.shape().unwrap(),
        LoadedShape { customers: counts.customers, products: counts.products, ds3: true }
    );
    let mut s = f.db.connect().unwrap();
    assert_eq!(s.login("user1", "password").unwrap().customer_id, 1);
    let (title, actor): (String, String) = q(&f.db, "SELECT title, actor FROM products WHERE prod_id = 77");
    assert!(s.browse(Browse::Title(&title), 100).unwrap() >= 1, "{title}");
    assert!(s.browse(Browse::Actor(&actor), 100).unwrap() >= 1, "{actor}");
    assert!(s.browse(Browse::Category(3), 3).unwrap() <= 3);
    let last = actor.split(' ').nth(1).unwrap();
    assert!(s.review_search(ReviewSearch::Actor(last), 5, 500).unwrap() >= 1);
    assert!(s.get_reviews(77, ReviewOrder::Helpful, 5).unwrap() >= 1);
    // A second load over it (storbench's own) replaces it.
    load_checked(&f.db, &data);
}

#[test]
fn insert_and_load_data_give_the_same_tables_and_reset_undoes_a_run() {
    let Some(a) = fixture("infile") else { return };
    let Some(b) = fixture("insert") else { return };
    let data = generated("1MB");
    let (a_db, b_db) = (
        a.db.clone().with_load_method(LoadMethod::Infile),
        b.db.clone().with_load_method(LoadMethod::Insert),
    );
    load_checked(&a_db, &data);
    load_checked(&b_db, &data);
    let sums = checksums(&a_db);
    assert_eq!(sums, checksums(&b_db));
    let mut s = a_db.connect().unwrap();
    write_everything(&mut *s);
    assert_ne!(checksums(&a_db), sums);
    a_db.reset().unwrap();
    assert_eq!(checksums(&a_db), sums);
    let next = data.rows(Table::Customers) as i64 + 1;
    assert_eq!(s.new_customer(&customer("newuser77")).unwrap(), Some(next));
}

/// `cargo test -p storbench-bench measure_mysql -- --ignored --nocapture`: the two load
/// methods on S, three runs each, and the reset after a burst of writes.
#[test]
#[ignore = "measurement, minutes"]
fn measure_mysql_load_methods_and_reset_on_s() {
    let Some(f) = fixture("measure") else { return };
    let data = generated("S");
    // Interleaved, so a busy neighbour slows both methods alike.
    for run in 1..=3 {
        for method in [LoadMethod::Infile, LoadMethod::Insert] {
            let db = f.db.clone().with_load_method(method);
            let cpu0 = (server_cpu_s(), self_cpu_s());
            let r = db.load(&data, &mut |_| {}, &StopFlag::new()).unwrap();
            println!(
                "{method:?} run {run}: load {:.2} s, index {:.2} s, size {:?}, cpu server {:.1} s client {:.1} s",
                r.load_s,
                r.index_s,
                r.size_bytes,
                server_cpu_s() - cpu0.0,
                self_cpu_s() - cpu0.1
            );
        }
    }
    let mut s = f.db.connect().unwrap();
    for round in 1..=3 {
        for i in 0..200 {
            let items = vec![(1 + i * 37 % 10_000, 1), (1 + i * 91 % 10_000, 2)];
            let _ = s.purchase(&Purchase { customer_id: 1 + i, items, ..Default::default() }).unwrap();
            s.new_customer(&customer(&format!("newuser{round}_{i}"))).unwrap();
        }
        println!("reset round {round}: {:.3} s", f.db.reset().unwrap());
    }
}

/// CPU seconds the local mariadbd/mysqld used so far (0 when it is not found): busy neighbours
/// change wall times a lot and CPU time little.
fn server_cpu_s() -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0.0 };
    for e in dir.flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if matches!(comm.trim(), "mariadbd" | "mysqld") {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let f: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
            let field = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
            // utime and stime, in clock ticks of 1/100 s.
            return (field(11) + field(12)) / 100.0;
        }
    }
    0.0
}

fn self_cpu_s() -> f64 {
    // SAFETY: an all-zero rusage is valid, and getrusage only fills the struct it is given.
    let mut u = unsafe { std::mem::zeroed::<libc::rusage>() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

#[test]
fn a_ds2_load_has_no_ds3_tables_and_resets() {
    const WRITTEN: &str =
        "SELECT (SELECT COUNT(*) FROM orderlines), (SELECT CAST(SUM(sales) AS SIGNED) FROM inventory)";
    let Some(f) = fixture("ds2") else { return };
    let data = crate::workload::oltp::datagen::DataSet::new(DbSize::Mb(1), 3, true);
    load_checked(&f.db, &data);
    assert!(!f.db.shape().unwrap().ds3);
    assert_eq!(
        q::<u64>(
            &f.db,
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = 'reviews'"
        ),
        0
    );
    let mut s = f.db.connect().unwrap();
    let before: (u64, u64) = q(&f.db, WRITTEN);
    s.purchase(&Purchase { customer_id: 1, items: vec![(1, 1)], ..Default::default() }).unwrap();
    assert_ne!(q::<(u64, u64)>(&f.db, WRITTEN), before);
    f.db.reset().unwrap();
    assert_eq!(q::<(u64, u64)>(&f.db, WRITTEN), before);
}

#[test]
fn a_stopped_load_says_so_and_leaves_nothing_that_looks_loaded() {
    let Some(f) = fixture("stop") else { return };
    let stop = StopFlag::new();
    stop.stop();
    let e = f.db.load(&generated("1MB"), &mut |_| {}, &stop).unwrap_err();
    assert!(e.message.contains("stopped"), "{e}");
    assert_eq!(f.db.shape().unwrap_err().kind, DbErrorKind::Missing);
    // Still storbench's: a full load over it goes ahead.
    let data = generated("1MB");
    assert_eq!(f.db.load(&data, &mut |_| {}, &StopFlag::new()).unwrap().rows.len(), data.tables().len());
}

/// `cargo test -p storbench-bench measure_mysql_calls -- --ignored --nocapture`: mean time of
/// each call on one session (1MB), as a sanity check of the statements' plans.
#[test]
#[ignore = "measurement"]
fn measure_mysql_calls() {
    let Some(f) = fixture("calls_timed") else { return };
    let data = generated("1MB");
    f.db.load(&data, &mut |_| {}, &StopFlag::new()).unwrap();
    let mut s = f.db.connect().unwrap();
    let (t, first, last) = (words::title_words(), words::first_names(), words::last_names());
    let n = 300usize;
    let time = |name: &str, call: &mut dyn FnMut(usize) -> DbResult<u32>| {
        let t0 = std::time::Instant::now();
        for i in 0..n {
            call(i).unwrap();
        }
        println!("{name}: {:.0} us", t0.elapsed().as_secs_f64() * 1e6 / n as f64);
    };
    time("login", &mut |i| s.login(&format!("user{}", 1 + i), "password").map(|l| l.history_rows));
    time("browse title", &mut |i| s.browse(Browse::Title(&format!("{} {}", t[0], t[i % 1000])), 5));
    time("browse actor", &mut |i| {
        s.browse(Browse::Actor(&format!("{} {}", first[i % 200], last[i * 7 % 200])), 5)
    });
    time("browse category", &mut |i| s.browse(Browse::Category(1 + (i % 16) as u8), 5));
    time("review search", &mut |i| s.review_search(ReviewSearch::Title(t[i % 1000]), 5, 500));
    time("review search actor", &mut |i| s.review_search(ReviewSearch::Actor(last[i % 200]), 5, 500));
    time("get reviews", &mut |i| s.get_reviews(1 + i as i64, ReviewOrder::Helpful, 5));
    time("get reviews stars", &mut |i| s.get_reviews(1 + i as i64, ReviewOrder::Stars(1 + (i % 5) as u8), 5));
    time("get reviews date", &mut |i| s.get_reviews(1 + i as i64, ReviewOrder::Date, 5));
    time("new member", &mut |i| s.new_member(1 + i as i64, 1 + (i % 3) as u8).map(u32::from));
    time("new review", &mut |i| {
        let r = NewReview {
            prod_id: 1 + i as i64,
            stars: 1 + (i % 5) as u8,
            customer_id: 1 + i as i64,
            summary: "fine".into(),
            text: "a fine film".into(),
        };
        s.new_review(&r).map(|id| (id > 0) as u32)
    });
    time("new helpfulness", &mut |i| {
        s.new_helpfulness(1 + i as i64, 2 + i as i64, 7).map(|id| (id > 0) as u32)
    });
    let mut prices = Vec::new();
    time("prices", &mut |i| {
        let ids: Vec<i64> = (0..1 + i % 10).map(|k| 1 + ((i * 31 + k * 97) % 1000) as i64).collect();
        s.prices(&ids, &mut prices).map(|()| prices.len() as u32)
    });
    time("purchase", &mut |i| {
        let items = vec![(1 + i as i64, 1), (1 + (i * 13 % 1000) as i64, 2)];
        s.purchase(&Purchase { customer_id: 1 + i as i64, items, ..Default::default() })
            .map(|o| o.is_some() as u32)
    });
}

#[test]
fn fidelity_replays_the_same_calls_through_ds3s_statements_with_the_same_work() {
    use crate::workload::oltp::users::OltpSpec;
    use crate::workload::oltp::users::fidelity::{CALL_TYPES, Measured, Replay, measure, record_orders};
    let Some(f) = fixture("fidelity") else { return };
    let data = generated("1MB");
    load_checked(&f.db, &data);
    let spec = OltpSpec {
        max_customer: data.counts.customers,
        max_product: data.counts.products,
        seed: 3,
        ..OltpSpec::default()
    };
    let calls = record_orders(&spec, 30);
    let reset = || f.db.reset().map(drop);
    let run = |connect: &dyn Fn() -> crate::db::DbResult<Box<dyn Session>>| -> Measured {
        let mut counters = f.db.work_counters().unwrap();
        measure(&calls, 30, 1, &mut Replay { reset: &reset, connect, counters: counters.as_mut() }).unwrap()
    };
    let ours = run(&|| f.db.connect());
    let ds3 = run(&|| f.db.connect_ds3());
    // Every call type of the mix was replayed, the same calls on both sides, then the orders.
    let names = |m: &Measured| m.batches.iter().map(|b| (b.name, b.calls)).collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&ds3));
    assert_eq!(ours.batches.last().unwrap().name, "order");
    assert!(ours.batches.len() > CALL_TYPES.len() / 2, "{:?}", names(&ours));
    let per_order = |m: &Measured, counter: &str| {
        let i = m.counters.iter().position(|c| *c == counter).unwrap();
        m.batches.last().unwrap().delta[i] / 30.0
    };
    // The same rows read and the same index look-ups per order, within a few percent, and
    // as many rows written (storbench restocks where DS3's MySQL edition cannot, so a reorder
    // row may be the difference).
    for counter in ["Handler_read_key", "Handler_read_next"] {
        let (o, d) = (per_order(&ours, counter), per_order(&ds3, counter));
        assert!(d > 100.0 && (o / d - 1.0).abs() < 0.05, "{counter}: storbench {o} vs DS3 {d}");
    }
    let (o, d) = (per_order(&ours, "Handler_write"), per_order(&ds3, "Handler_write"));
    assert!(d > 5.0 && (o - d).abs() < 0.5, "rows inserted per order: storbench {o} vs DS3 {d}");
    // No counter is ever given below zero: a figure the empty batch's change swamped is 0 and
    // marked below the noise (`oltp fidelity` lists it under below_noise).
    for (side, m) in [("storbench", &ours), ("DS3", &ds3)] {
        for b in &m.batches {
            for ((counter, v), below) in m.counters.iter().zip(&b.delta).zip(&b.below_noise) {
                assert!(
                    *v >= 0.0 && (!below || *v == 0.0),
                    "{side} {}: {counter} = {v}, below noise {below}",
                    b.name
                );
            }
        }
    }
}
