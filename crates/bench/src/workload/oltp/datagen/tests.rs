//! The generator's tests: row counts by generating every row, determinism across seeds and
//! thread counts, DS3's value rules on the S set, SALES, the CSV format and the file layout.

use super::*;
use crate::workload::oltp::schema::Date;
use crate::workload::oltp::words::{first_names, last_names, review_words, title_words};
use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

fn set(size: &str) -> DataSet {
    DataSet::new(size.parse().unwrap(), 42, false)
}

fn csv_of(ds: &DataSet, table: Table, threads: usize) -> (Vec<u8>, u64) {
    let (mut out, mut rows) = (Vec::new(), 0);
    ds.csv(table, threads, &StopFlag::new(), &mut |b, n| {
        assert!(b.ends_with(b"\n"), "a piece ends on a row boundary");
        out.extend_from_slice(b);
        rows += n;
        Ok(())
    })
    .unwrap();
    (out, rows)
}

/// The first piece `csv` hands out.
fn first_piece(ds: &DataSet, table: Table) -> Vec<u8> {
    let (stop, mut out) = (StopFlag::new(), Vec::new());
    ds.csv(table, 1, &stop.clone(), &mut |b, _| {
        out.extend_from_slice(b);
        stop.stop();
        Ok(())
    })
    .unwrap();
    out
}

fn int(f: &Field<'_>) -> u64 {
    match *f {
        Field::Int(v) | Field::Cents(v) => u64::try_from(v).unwrap(),
        other => panic!("not a number: {other:?}"),
    }
}

fn text<'a>(f: &Field<'a>) -> &'a str {
    match *f {
        Field::Text(t) => t,
        Field::Empty => "",
        other => panic!("not text: {other:?}"),
    }
}

fn date(f: &Field<'_>) -> Date {
    match *f {
        Field::Date(d) => d,
        other => panic!("not a date: {other:?}"),
    }
}

fn valid_2013(d: Date) -> bool {
    d.year == 2013
        && (1..=12).contains(&d.month)
        && (1..=orders::days_in(d.month)).contains(&u64::from(d.day))
}

/// The S set's CSV, generated once for all the tests that read it (a debug build takes
/// seconds to make its 200 MB).
type Tables = Vec<(Table, Vec<u8>, u64)>;

/// Every table of `size` (S or 1MB, seed 42) as CSV and the rows the generator reported;
/// made once, by one thread for 1MB and two for S.
fn cached(size: &str, table: Table) -> (&'static [u8], u64) {
    static S: OnceLock<Tables> = OnceLock::new();
    static MB1: OnceLock<Tables> = OnceLock::new();
    let (cell, threads) = if size == "S" { (&S, 2) } else { (&MB1, 1) };
    let all = cell.get_or_init(|| {
        let ds = set(size);
        ds.tables().iter().map(|&t| (t, csv_of(&ds, t, threads))).map(|(t, (b, rows))| (t, b, rows)).collect()
    });
    all.iter().find(|(t, _, _)| *t == table).map_or((&[], 0), |(_, bytes, rows)| (bytes, *rows))
}

fn s_csv(table: Table) -> (&'static [u8], u64) {
    cached("S", table)
}

fn mb1_csv(table: Table) -> &'static [u8] {
    cached("1MB", table).0
}

/// Calls `check` with every row of `table` of the S set and its position (0-based), read as
/// `for_each_row` reads them (that the two agree is tested on its own).
fn each(table: Table, mut check: impl FnMut(u64, &[Field<'_>])) -> u64 {
    let mut fields = [Field::Empty; csv::MAX_COLUMNS];
    let mut n = 0;
    for line in s_csv(table).0.strip_suffix(b"\n").unwrap_or_default().split(|&b| b == b'\n') {
        let k = csv::parse_row(line, csv::kinds(table), &mut fields);
        assert_eq!(k, table.columns().len(), "{table:?} row {n}");
        check(n, &fields[..k]);
        n += 1;
    }
    n
}

#[test]
fn row_counts_of_s_and_1mb_are_exact_and_follow_the_size_rules() {
    for size in ["S", "1MB"] {
        let ds = set(size);
        let c = ds.counts;
        for &table in ds.tables() {
            let (bytes, rows) = cached(size, table);
            assert_eq!(rows, ds.rows(table), "{size} {table:?}");
            // S's 200 MB of reviews and ratings are counted row by row in their own tests.
            if size != "S" || ![Table::Reviews, Table::ReviewsHelpfulness].contains(&table) {
                let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
                assert_eq!(lines, rows, "{size} {table:?}");
            }
        }
        let fixed = [
            (Table::Categories, 16),
            (Table::Products, c.products),
            (Table::Inventory, c.products),
            (Table::Customers, c.customers),
            (Table::Orders, c.orders()),
            (Table::Membership, c.customers / 10),
            (Table::Reviews, c.products * 20),
        ];
        for (table, want) in fixed {
            assert_eq!(ds.rows(table), want, "{size} {table:?}");
        }
        let lines = ds.rows(Table::Orderlines);
        assert_eq!(ds.rows(Table::CustHist), lines);
        // Within about 4.5 standard deviations at 1MB.
        assert!(lines.abs_diff(c.orders() * 5) < c.orders() / 3, "{size}: {lines} lines");
        let ratings = ds.rows(Table::ReviewsHelpfulness);
        assert!(ratings.abs_diff(c.reviews() * 41 / 2) < c.reviews() / 2, "{size}: {ratings} ratings");
    }
    let s = set("S");
    assert_eq!((s.counts.customers, s.counts.orders(), s.counts.products), (20_000, 12_000, 10_000));
}

#[test]
fn ds2_sets_have_no_membership_or_reviews() {
    let ds = DataSet::new(DbSize::Mb(1), 42, true);
    assert_eq!(ds.tables(), DS2_TABLES);
    for table in [Table::Membership, Table::Reviews, Table::ReviewsHelpfulness, Table::Reorder] {
        assert_eq!((ds.rows(table), csv_of(&ds, table, 2).1), (0, 0), "{table:?}");
    }
    assert_eq!(ds.rows(Table::Customers), 2_000);
}

#[test]
fn the_same_seed_gives_the_same_bytes_at_any_thread_count_and_another_seed_does_not() {
    let a = set("1MB");
    let b = DataSet { seed: 43, ..a };
    for &table in a.tables() {
        let one = mb1_csv(table);
        assert!(one == csv_of(&a, table, 2).0, "{table:?}");
        if table != Table::Categories {
            assert!(first_piece(&a, table) != first_piece(&b, table), "{table:?}");
        }
    }
    assert!(mb1_csv(Table::CustHist) == csv_of(&a, Table::CustHist, 3).0);
}

#[test]
fn typed_rows_are_the_csv_rows_and_every_table_has_its_column_kinds() {
    let ds = set("1MB");
    for table in ALL_TABLES {
        assert_eq!(csv::kinds(table).len(), table.columns().len(), "{table:?}");
    }
    for &table in ds.tables() {
        let mut again = Vec::new();
        ds.for_each_row(table, &mut |row| {
            let mut w = Csv::new(&mut again, false);
            for f in row {
                match *f {
                    Field::Int(v) => w.int(v as u64),
                    Field::Cents(v) => w.cents(v as u64),
                    Field::Date(d) => w.date(d.year, d.month, d.day),
                    Field::Text(t) => w.text(t.as_bytes()),
                    Field::Empty => w.text(b""),
                };
            }
            w.end();
        });
        assert!(again == mb1_csv(table), "{table:?}");
    }
}

#[test]
fn customers_of_s_follow_ds3s_rules() {
    let ds = set("S");
    let half = ds.counts.customers / 2;
    let n = each(Table::Customers, |i, r| {
        let id = int(&r[0]);
        assert_eq!(id, i + 1);
        let (first, last, city) = (text(&r[1]), text(&r[2]), text(&r[5]));
        assert!((first.len(), last.len(), city.len()) == (6, 10, 7), "{r:?}");
        assert!([first, last, city].concat().bytes().all(|b| b.is_ascii_uppercase()));
        let phone = text(&r[11]);
        assert!(phone.len() == 10 && phone.bytes().all(|b| b.is_ascii_digit()) && !phone.starts_with('0'));
        assert_eq!(text(&r[3]), format!("{phone} Dell Way"));
        assert_eq!(r[4], Field::Empty);
        let (state, zip, country, region) = (text(&r[6]), text(&r[7]), text(&r[8]), int(&r[9]));
        if id <= half {
            assert!(state.len() == 2 && country == "US" && region == 1, "{r:?}");
            assert!((10_000..=99_999).contains(&zip.parse::<u32>().unwrap()));
        } else {
            assert!(state.is_empty() && zip == "00000" && country != "US" && region == 2, "{r:?}");
        }
        assert_eq!(text(&r[10]), format!("{last}@dell.com"));
        assert!((1..=5).contains(&int(&r[12])));
        let card = text(&r[13]);
        assert!(card.len() == 16 && card.bytes().all(|b| b.is_ascii_digit()));
        let expiry = text(&r[14]);
        let (year, month) = (expiry[..4].parse::<u16>().unwrap(), expiry[5..].parse::<u8>().unwrap());
        assert!(expiry.len() == 7 && (2015..=2019).contains(&year) && (1..=12).contains(&month), "{expiry}");
        assert_eq!((text(&r[15]), text(&r[16])), (format!("user{id}").as_str(), "password"));
        assert!((18..=90).contains(&int(&r[17])));
        assert!([20_000, 40_000, 60_000, 80_000, 100_000].contains(&int(&r[18])));
        assert!(["M", "F"].contains(&text(&r[19])));
    });
    assert_eq!(n, 20_000);
}

#[test]
fn orders_lines_and_history_of_s_agree_and_are_in_range() {
    let ds = set("S");
    let c = ds.counts;
    let mut orders = Vec::new();
    each(Table::Orders, |i, r| {
        let (id, d, customer, net, tax, total) =
            (int(&r[0]), date(&r[1]), int(&r[2]), int(&r[3]), int(&r[4]), int(&r[5]));
        assert_eq!(id, i + 1);
        assert!(valid_2013(d) && u64::from(d.month) == (id - 1) / c.orders_per_month + 1, "{r:?}");
        assert!((1..=c.customers).contains(&customer) && (1..=40_000).contains(&net));
        assert_eq!(tax, ((net as f64) * 0.0825).round() as u64, "{r:?}");
        assert_eq!(total, net + tax);
        orders.push((d, customer));
    });
    let mut lines = Vec::new();
    each(Table::Orderlines, |_, r| {
        let (line, order, prod, qty, d) = (int(&r[0]), int(&r[1]), int(&r[2]), int(&r[3]), date(&r[4]));
        assert!((1..=c.products).contains(&prod) && (1..=3).contains(&qty), "{r:?}");
        assert_eq!(d, orders[order as usize - 1].0);
        lines.push((line, order, prod));
    });
    for pair in lines.windows(2) {
        let ((l0, o0, _), (l1, o1, _)) = (pair[0], pair[1]);
        assert!((o1 == o0 && l1 == l0 + 1) || (o1 == o0 + 1 && l1 == 1), "{pair:?}");
    }
    assert_eq!((lines[0].0, lines[0].1, lines.last().unwrap().1), (1, 1, c.orders()));
    assert!(lines.iter().all(|&(l, _, _)| (1..=9).contains(&l)));
    each(Table::CustHist, |i, r| {
        let (_, order, prod) = lines[i as usize];
        assert_eq!((int(&r[0]), int(&r[1]), int(&r[2])), (orders[order as usize - 1].1, order, prod));
    });
}

#[test]
fn inventory_sales_of_s_are_the_sums_of_the_order_line_quantities() {
    let ds = set("S");
    let mut sold = vec![0u64; ds.counts.products as usize];
    each(Table::Orderlines, |_, r| sold[int(&r[2]) as usize - 1] += int(&r[3]));
    for threads in [1, 2] {
        let sales = orders::sales(ds.seed, &ds.counts, threads);
        assert!(sales.iter().zip(&sold).all(|(&a, &b)| u64::from(a) == b), "{threads} threads");
    }
    each(Table::Inventory, |i, r| {
        let (id, stock, sales) = (int(&r[0]), int(&r[1]), int(&r[2]));
        assert_eq!(id, i + 1);
        let hot = if id % 10_000 == 0 { 10 } else { 1 };
        assert!(stock % hot == 0 && stock / hot <= 500, "{r:?}");
        assert_eq!(sales, sold[i as usize], "product {id}");
    });
}

#[test]
fn products_of_s_follow_ds3s_rules() {
    let (titles, first, last) = (title_words(), first_names(), last_names());
    let mut specials = 0;
    each(Table::Products, |i, r| {
        let id = int(&r[0]);
        assert_eq!(id, i + 1);
        assert!((1..=16).contains(&int(&r[1])));
        let title = format!("{} {}", titles[(id / 1000 % 1000) as usize], titles[(id % 1000) as usize]);
        assert_eq!(text(&r[2]), title);
        let (a, b) = text(&r[3]).split_once(' ').unwrap();
        assert!(first.contains(&a) && last.contains(&b), "{r:?}");
        let price = int(&r[4]);
        assert!((999..=2999).contains(&price) && price % 100 == 99, "{r:?}");
        specials += int(&r[5]);
        assert!(int(&r[5]) <= 1 && (1..=10_000).contains(&int(&r[6])) && int(&r[7]) <= 3, "{r:?}");
    });
    assert!((50..=150).contains(&specials), "{specials} specials of 10,000");
}

#[test]
fn membership_of_s_is_one_customer_per_interval() {
    let mut last = 0;
    let n = each(Table::Membership, |i, r| {
        let (id, kind, d) = (int(&r[0]), int(&r[1]), date(&r[2]));
        assert!(id > last && (i * 10 + 1..=i * 10 + 10).contains(&id), "{r:?}");
        last = id;
        assert!((1..=3).contains(&kind) && (2015..=2019).contains(&d.year) && (1..=12).contains(&d.month));
        assert_eq!(d.day, 15);
    });
    assert_eq!(n, 2_000);
}

#[test]
fn reviews_and_ratings_of_s_follow_ds3s_rules_with_random_raters() {
    let ds = set("S");
    let c = ds.counts;
    let vocabulary: HashSet<&str> = review_words().iter().copied().collect();
    let mut authors = Vec::new();
    let reviews = each(Table::Reviews, |i, r| {
        assert_eq!(int(&r[0]), i + 1);
        assert!(
            (1..=c.products).contains(&int(&r[1]))
                && valid_2013(date(&r[2]))
                && (1..=5).contains(&int(&r[3]))
        );
        assert!((1..=c.customers).contains(&int(&r[4])));
        authors.push(int(&r[4]));
        let summary: Vec<&str> = text(&r[5]).split(' ').collect();
        assert!(summary.len() == 3 && summary.iter().all(|w| vocabulary.contains(w)), "{r:?}");
        let body = text(&r[6]).strip_suffix(' ').unwrap();
        // The texts are 100 MB: their words are checked on every 16th review.
        if i % 16 == 0 {
            let words: Vec<&str> = body.split(' ').collect();
            assert!(
                (6..=129).contains(&words.len()) && words.iter().all(|w| vocabulary.contains(w)),
                "{r:?}"
            );
        }
    });
    let (mut review, mut count, mut by_author) = (1, 0, 0);
    let mut counts = Vec::new();
    let ratings = each(Table::ReviewsHelpfulness, |i, r| {
        let (id, of, rater, rating) = (int(&r[0]), int(&r[1]), int(&r[2]), int(&r[3]));
        assert_eq!(id, i + 1);
        if of != review {
            assert_eq!(of, review + 1, "every review has ratings");
            counts.push(count);
            (review, count) = (of, 0);
        }
        count += 1;
        by_author += u64::from(rater == authors[of as usize - 1]);
        assert!((1..=c.customers).contains(&rater) && (1..=10).contains(&rating), "{r:?}");
    });
    counts.push(count);
    assert_eq!((reviews, ratings), (ds.rows(Table::Reviews), ds.rows(Table::ReviewsHelpfulness)));
    assert_eq!(counts.len() as u64, c.reviews());
    assert!(counts.iter().all(|n| (2..=39).contains(n)));
    assert!(by_author < 1_000, "{by_author} ratings by the review's author");
}

#[test]
fn csv_has_no_header_two_decimal_money_slashed_dates_and_empty_fields() {
    let text = |t| String::from_utf8(mb1_csv(t).to_vec()).unwrap();
    let categories = text(Table::Categories);
    assert!(categories.starts_with("1,Action\n2,Animation\n") && categories.ends_with("16,Travel\n"));
    let orders = text(Table::Orders);
    for line in orders.lines() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 6);
        assert!(f[1].len() == 10 && f[1].starts_with("2013/") && &f[1][7..8] == "/", "{line}");
        assert!(f[3..].iter().all(|m| m.split_once('.').is_some_and(|(_, cc)| cc.len() == 2)), "{line}");
    }
    assert!(orders.starts_with("1,2013/01/"));
    let customers = text(Table::Customers);
    let row: Vec<&str> = customers.lines().last().unwrap().split(',').collect();
    assert!(row[4].is_empty() && row[6].is_empty() && row[7] == "00000", "{row:?}");
    assert!(!customers.contains('\r') && !customers.contains('"'));
}

fn dir_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for sub in fs::read_dir(dir).unwrap() {
        let sub = sub.unwrap().path();
        for f in fs::read_dir(&sub).unwrap() {
            let f = f.unwrap().path();
            out.push(f.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

#[test]
fn ds3_files_have_ds3s_names_and_contents_and_are_never_overwritten() {
    let ds = set("1MB");
    let dir = tempfile::tempdir().unwrap();
    let mut last = (0, 0);
    let report =
        ds.write_ds3_files(dir.path(), 2, false, &mut |b, r| last = (b, r), &StopFlag::new()).unwrap();
    let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let mut want: Vec<String> = ["cust/us_cust.csv", "cust/row_cust.csv", "prod/prod.csv", "prod/inv.csv"]
        .into_iter()
        .chain(["prod/categories.csv", "membership/membership.csv", "reviews/reviews.csv"])
        .chain(["reviews/review_helpfulness.csv"])
        .map(String::from)
        .chain(
            months
                .iter()
                .flat_map(|m| ["orders", "orderlines", "cust_hist"].map(|t| format!("orders/{m}_{t}.csv"))),
        )
        .collect();
    want.sort();
    assert_eq!(dir_files(dir.path()), want);
    let rows: u64 = ds.tables().iter().map(|&t| ds.rows(t)).sum();
    assert_eq!((report.rows, report.files.len()), (rows, want.len()));
    assert_eq!(last, (report.bytes, report.rows));
    let read = |name: &str| fs::read(dir.path().join(name)).unwrap();
    let us = read("cust/us_cust.csv");
    assert_eq!([us.clone(), read("cust/row_cust.csv")].concat(), mb1_csv(Table::Customers));
    assert_eq!(us.iter().filter(|&&b| b == b'\n').count(), 1_000);
    let lines: Vec<u8> = months.iter().flat_map(|m| read(&format!("orders/{m}_orderlines.csv"))).collect();
    assert!(lines == mb1_csv(Table::Orderlines));

    let e = ds.write_ds3_files(dir.path(), 2, false, &mut |_, _| {}, &StopFlag::new()).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    assert!(e.to_string().contains("prod/categories.csv already exists"), "{e}");
    assert_eq!(read("cust/us_cust.csv"), us);
}

#[test]
fn one_existing_file_stops_the_writer_before_it_writes_anything() {
    let ds = DataSet::new(DbSize::Mb(1), 7, true);
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("orders")).unwrap();
    fs::write(dir.path().join("orders/dec_cust_hist.csv"), "mine").unwrap();
    let e = ds.write_ds3_files(dir.path(), 1, false, &mut |_, _| {}, &StopFlag::new()).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(dir_files(dir.path()), ["orders/dec_cust_hist.csv"]);
    assert_eq!(fs::read(dir.path().join("orders/dec_cust_hist.csv")).unwrap(), b"mine");
}

#[test]
fn crlf_files_end_every_line_with_crlf_and_ds2_files_leave_out_reviews() {
    let ds = DataSet::new(DbSize::Mb(1), 7, true);
    let dir = tempfile::tempdir().unwrap();
    let report = ds.write_ds3_files(dir.path(), 2, true, &mut |_, _| {}, &StopFlag::new()).unwrap();
    assert!(
        report
            .files
            .iter()
            .all(|(name, _, _)| !name.starts_with("reviews") && !name.starts_with("membership"))
    );
    assert_eq!(report.files.len(), 2 + 36 + 3);
    let prod = fs::read_to_string(dir.path().join("prod/prod.csv")).unwrap();
    assert_eq!(prod.matches("\r\n").count(), 1_000);
    assert_eq!(prod.matches('\n').count(), 1_000);
    let lf = String::from_utf8(csv_of(&ds, Table::Products, 1).0).unwrap();
    assert_eq!(prod.replace("\r\n", "\n"), lf);
}

#[test]
fn a_stop_ends_the_csv_at_the_chunk_being_written() {
    let ds = set("S");
    for threads in [1, 2] {
        let stop = StopFlag::new();
        let mut pieces = 0;
        ds.csv(Table::ReviewsHelpfulness, threads, &stop.clone(), &mut |_, _| {
            pieces += 1;
            stop.stop();
            Ok(())
        })
        .unwrap();
        // Chunks the other workers made meanwhile are not written (one CI run wrote 3).
        assert_eq!(pieces, 1, "{threads} thread(s): {pieces} pieces written once the first stopped it");
    }
}
