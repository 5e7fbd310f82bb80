//! The SQLite backend against real files: load, every transaction, the restock trigger,
//! reset, the sales check under concurrent purchases, and refusing files that are not ours.

use super::*;
use crate::db::sqlite::open_existing;
use crate::workload::oltp::DbSize;
use crate::workload::oltp::ds3::{Browse, NewReview, Purchase, ReviewOrder, ReviewSearch};
use crate::workload::oltp::schema::Table;

fn loaded(size: &str) -> (tempfile::TempDir, Sqlite, DataSet) {
    let dir = tempfile::tempdir().unwrap();
    let db = Sqlite::new(dir.path().join("ds3.db"));
    let data = DataSet::new(size.parse::<DbSize>().unwrap(), 7, false);
    db.load(&data, &mut |_| {}, &StopFlag::new()).unwrap();
    (dir, db, data)
}

fn count(db: &Sqlite, sql: &str) -> i64 {
    open_existing(db.path()).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn a_product_title(db: &Sqlite, id: i64) -> String {
    open_existing(db.path())
        .unwrap()
        .query_row("SELECT title FROM products WHERE prod_id = ?1", [id], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_load_has_every_generated_row_and_agrees_with_itself() {
    let (_d, db, data) = loaded("1MB");
    for &t in data.tables() {
        let n = count(&db, &format!("SELECT COUNT(*) FROM {}", t.sql_name()));
        assert_eq!(n as u64, data.rows(t), "{}", t.sql_name());
    }
    let shape = db.shape().unwrap();
    assert_eq!((shape.customers, shape.products, shape.ds3), (2_000, 1_000, true));
    let check = db.check().unwrap();
    assert_eq!((check.products_checked, check.mismatch_count, check.orphans), (1_000, 0, 0));
    assert!(db.pristine_path().exists());
}

#[test]
fn every_transaction_answers_as_ds3_expects() {
    let (_d, db, _) = loaded("1MB");
    let mut s = db.connect().unwrap();
    assert_eq!(s.login("user1", "password").unwrap().customer_id, 1);
    assert_eq!(s.login("user1", "wrong").unwrap().customer_id, 0);
    let mut c = crate::workload::oltp::ds3::NewCustomer {
        username: "user1".into(),
        gender: 'F',
        ..Default::default()
    };
    assert_eq!(s.new_customer(&c).unwrap(), None, "a taken user name");
    c.username = "newuser-a".into();
    let id = s.new_customer(&c).unwrap().expect("a new id");
    assert!(id > 2_000);
    let non_member: i64 = open_existing(db.path())
        .unwrap()
        .query_row("SELECT MIN(customerid) FROM customers WHERE customerid NOT IN (SELECT customerid FROM membership)", [], |r| r.get(0))
        .unwrap();
    assert!(s.new_member(non_member, 2).unwrap());
    assert!(!s.new_member(non_member, 2).unwrap(), "already a member");
    let title = a_product_title(&db, 5);
    assert!(s.browse(Browse::Title(&title), 10).unwrap() >= 1, "{title}");
    let first_word = title.split(' ').next().unwrap().to_string();
    assert!(s.review_search(ReviewSearch::Title(&first_word), 5, 500).unwrap() >= 1);
    assert!(s.browse(Browse::Category(3), 2).unwrap() <= 2);
    assert!(s.get_reviews(5, ReviewOrder::Helpful, 4).unwrap() >= 1);
    assert!(s.get_reviews(5, ReviewOrder::Date, 4).unwrap() <= 4);
    let _ = s.get_reviews(5, ReviewOrder::Stars(3), 4).unwrap();
    let review =
        NewReview { prod_id: 5, stars: 4, customer_id: 1, summary: "a b c".into(), text: "t".into() };
    let rid = s.new_review(&review).unwrap();
    assert!(s.new_helpfulness(rid, 2, 7).unwrap() > 0);
    let mut prices = Vec::new();
    s.prices(&[1, 2, 999_999], &mut prices).unwrap();
    assert_eq!(prices.len(), 2);
    assert!(prices.iter().all(|&(_, c)| (999..=2999).contains(&c) && c % 100 == 99));
}

#[test]
fn a_purchase_moves_stock_and_sales_and_one_over_stock_leaves_nothing() {
    let (_d, db, _) = loaded("1MB");
    let mut s = db.connect().unwrap();
    let stock = |db: &Sqlite| count(db, "SELECT quan_in_stock FROM inventory WHERE prod_id = 10");
    let sales = |db: &Sqlite| count(db, "SELECT sales FROM inventory WHERE prod_id = 10");
    let (stock0, sales0, orders0) = (stock(&db), sales(&db), count(&db, "SELECT COUNT(*) FROM orders"));
    let qty = u16::try_from(stock0.clamp(1, 3)).unwrap();
    let p =
        Purchase { customer_id: 1, items: vec![(10, qty)], net_cents: 100, tax_cents: 8, total_cents: 108 };
    let id = s.purchase(&p).unwrap().expect("in stock");
    assert!(id > orders0);
    assert_eq!(sales(&db), sales0 + i64::from(qty));
    let left = stock0 - i64::from(qty);
    assert_eq!(stock(&db), if left < 3 { 250 } else { left }, "restocked below 3");
    let too_many = Purchase { items: vec![(10, 60_000)], ..p };
    let lines_before = count(&db, "SELECT COUNT(*) FROM orderlines");
    assert_eq!(s.purchase(&too_many).unwrap(), None);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM orderlines"), lines_before);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM orders"), orders0 + 1);
    assert_eq!(db.check().unwrap().mismatch_count, 0);
}

#[test]
fn stock_falling_under_three_is_reordered_and_refilled() {
    let (_d, db, _) = loaded("1MB");
    open_existing(db.path())
        .unwrap()
        .execute("UPDATE inventory SET quan_in_stock = 4 WHERE prod_id = 20", [])
        .unwrap();
    let mut s = db.connect().unwrap();
    let p = Purchase { customer_id: 3, items: vec![(20, 3)], net_cents: 1, tax_cents: 0, total_cents: 1 };
    s.purchase(&p).unwrap().unwrap();
    assert_eq!(count(&db, "SELECT quan_in_stock FROM inventory WHERE prod_id = 20"), 250);
    assert_eq!(count(&db, "SELECT quan_low FROM reorder WHERE prod_id = 20"), 249);
}

#[test]
fn reset_returns_to_the_loaded_state() {
    let (_d, db, data) = loaded("1MB");
    let mut s = db.connect().unwrap();
    let p = Purchase { customer_id: 1, items: vec![(1, 1)], net_cents: 1, tax_cents: 0, total_cents: 1 };
    s.purchase(&p).unwrap();
    drop(s);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM orders") as u64, data.rows(Table::Orders) + 1);
    db.reset().unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM orders") as u64, data.rows(Table::Orders));
    assert_eq!(db.check().unwrap().mismatch_count, 0);
}

#[test]
fn concurrent_purchases_of_one_product_lose_no_sale() {
    let (_d, db, _) = loaded("1MB");
    let db = std::sync::Arc::new(db);
    std::thread::scope(|scope| {
        for t in 0..6 {
            let db = db.clone();
            scope.spawn(move || {
                let mut s = db.connect().unwrap();
                for _ in 0..40 {
                    let p =
                        Purchase { customer_id: t + 1, items: vec![(7, 2), (8, 1)], ..Default::default() };
                    while let Err(e) = s.purchase(&p) {
                        assert_eq!(e.kind, DbErrorKind::Deadlock, "{e}");
                    }
                }
            });
        }
    });
    let check = db.check().unwrap();
    assert_eq!(check.mismatch_count, 0, "{:?}", check.mismatches);
}

#[test]
fn a_file_that_is_not_ours_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("precious.db");
    std::fs::write(&path, b"someone's data").unwrap();
    let db = Sqlite::new(&path);
    let data = DataSet::new(DbSize::Mb(1), 1, true);
    let e = db.load(&data, &mut |_| {}, &StopFlag::new()).unwrap_err();
    assert!(e.message.contains("not a storbench database"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), b"someone's data");
    let missing = Sqlite::new(dir.path().join("nothing.db"));
    assert_eq!(missing.shape().unwrap_err().kind, DbErrorKind::Missing);
    assert_eq!(missing.connect().err().unwrap().kind, DbErrorKind::Missing);
}
