//! `load`: claim or create the database, tables, bulk load, indexes and foreign keys, trigger
//! and procedures, id positions, statistics, the copies `reset` restores from, the mark.
//!
//! Bulk load: `LOAD DATA LOCAL INFILE` fed from `DataSet::csv` through the driver's
//! local-infile handler, or multi-row INSERTs of about 1 MiB built from `DataSet::for_each_row`
//! on a second thread. Measured on S (4.48 M rows, 350 MB in InnoDB) against MariaDB 10.11 with
//! a 128 MiB buffer pool, 2 vCPUs, interleaved runs (`measure_mysql_load_methods_and_reset_on_s`):
//! on a quiet host LOAD DATA took 9.8 / 10.0 / 12.4 s and INSERT 14.7 / 15.4 / 14.6 s (plus
//! 5-7 s of indexes either way), so LOAD DATA is the default. It costs the server more CPU
//! (23-28 s against 18-19 s), so on a host busy with other work INSERT came out ahead
//! (LOAD DATA 43-49 s, INSERT 31-36 s). The INSERT path stays as the fallback for servers
//! with `local_infile` off (MySQL 8's default); both give the same CHECKSUM TABLE.

use crate::db::mysql::ownership::{self, INVENTORY_COPY};
use crate::db::mysql::{Ctx, LoadMethod, META_TABLE, Mysql, run};
use crate::db::ownership::created_names;
use crate::db::{DbError, DbErrorKind, DbResult};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use crate::workload::oltp::ds3::{LoadProgress, LoadReport};
use crate::workload::oltp::schema::{CATEGORIES, Field, Table};
use crate::workload::oltp::words;
use mysql::prelude::Queryable;
use mysql::{Conn, LocalInfileHandler};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

pub(super) const TABLES_SQL: &str = include_str!("tables.sql");
pub(super) const INDEXES_SQL: &str = include_str!("indexes.sql");
pub(super) const PROCS_SQL: &str = include_str!("procs.sql");

/// Generator threads feeding one LOAD DATA stream.
const CSV_THREADS: usize = 2;
/// Bytes of one multi-row INSERT (the server's max_allowed_packet is 16 MiB by default).
const INSERT_BYTES: usize = 1 << 20;

/// The copy `reset` restores memberships from (stock comes from `INVENTORY_COPY`, which also
/// carries the load's marker).
pub(crate) const MEMBERSHIP_COPY: &str = "storbench_membership0";

/// The objects storbench's load creates, as (kind, name): what a later load may replace.
fn ours() -> Vec<(&'static str, String)> {
    let mut names: Vec<_> =
        [TABLES_SQL, INDEXES_SQL, PROCS_SQL].into_iter().flat_map(created_names).collect();
    names.extend([INVENTORY_COPY, MEMBERSHIP_COPY, META_TABLE].map(|t| ("table", t.to_owned())));
    names
}

/// The procedures `procs.sql` creates, by name (what `drop_ours` may drop).
pub(crate) fn procedures() -> impl Iterator<Item = &'static str> {
    PROCS_SQL.lines().filter_map(|l| l.strip_prefix("CREATE PROCEDURE ")?.split('(').next())
}

/// What storbench loaded, from `storbench_meta`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Meta {
    pub customers: u64,
    pub products: u64,
    pub ds2: bool,
    /// The largest ids right after the load: a run's rows are above them.
    pub max_customer: u64,
    pub max_order: u64,
    pub max_review: u64,
    pub max_helpfulness: u64,
}

/// The statements of a file: split at lines ending in `end`, comments and blanks dropped.
pub(crate) fn statements(text: &str, end: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("--") || line.trim().is_empty() {
            continue;
        }
        if line.trim() == end {
            out.push(std::mem::take(&mut cur));
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
        if end == ";" && line.trim_end().ends_with(';') {
            cur.truncate(cur.trim_end().len() - 1);
            out.push(std::mem::take(&mut cur));
        }
    }
    out
}

/// The table a `CREATE TABLE x` / `ALTER TABLE x` statement is about.
fn table_of(stmt: &str) -> Option<Table> {
    let name = stmt.split_whitespace().nth(2)?;
    crate::workload::oltp::schema::ALL_TABLES
        .into_iter()
        .chain([Table::Reorder])
        .find(|t| t.sql_name() == name)
}

pub(crate) fn load(
    db: &Mysql,
    data: &DataSet,
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
    method: LoadMethod,
) -> DbResult<LoadReport> {
    let t0 = Instant::now();
    let mut conn = claim_database(db, data)?;
    let tables: Vec<Table> = data.tables().iter().copied().chain([Table::Reorder]).collect();
    create_tables(&mut conn, &tables)?;
    let infile = match method {
        LoadMethod::Auto => {
            conn.query_first::<i64, _>("SELECT @@GLOBAL.local_infile").ctx("local_infile")? == Some(1)
        }
        LoadMethod::Infile => true,
        LoadMethod::Insert => false,
    };
    let mut report = LoadReport::default();
    for &table in data.tables() {
        let total = data.rows(table);
        let mut tick =
            |done| progress(LoadProgress { table, step: "load", rows_done: done, rows_total: total });
        let rows = if table == Table::Categories {
            load_categories(&mut conn)?
        } else {
            let rows = Rows { data, table, stop };
            if infile {
                rows.load_infile(&mut conn, &mut tick)?
            } else {
                rows.load_inserts(&mut conn, &mut tick)?
            }
        };
        if stop.is_stopped() {
            return Err(DbError::new(DbErrorKind::Query, "load stopped before it finished; run it again"));
        }
        if rows != total {
            return Err(DbError::new(
                DbErrorKind::Query,
                format!("{} got {rows} rows of {total}; the load is incomplete", table.sql_name()),
            ));
        }
        tick(rows);
        report.rows.push((table, rows));
    }
    report.load_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let rows = |t| if t == Table::Reorder { 0 } else { data.rows(t) };
    build(&mut conn, &tables, data.ds2, &rows, progress)?;
    report.index_s = t1.elapsed().as_secs_f64();
    report.size_bytes = conn
        .query_first::<Option<u64>, _>(
            "SELECT SUM(data_length + index_length) FROM information_schema.TABLES WHERE table_schema = DATABASE()",
        )
        .ctx("database size")?
        .flatten();
    Ok(report)
}

/// Checks FULLTEXT, turns the load-time checks off and creates `tables` with primary keys only.
pub(crate) fn create_tables(conn: &mut Conn, tables: &[Table]) -> DbResult<()> {
    check_fulltext(conn)?;
    run(conn, "SET SESSION unique_checks = 0, foreign_key_checks = 0")?;
    for stmt in statements(TABLES_SQL, ";") {
        if table_of(&stmt).is_some_and(|t| tables.contains(&t)) {
            run(conn, &stmt)?;
        }
    }
    Ok(())
}

/// Indexes, foreign keys, trigger, procedures, id positions, statistics, copies and the mark.
pub(crate) fn build(
    conn: &mut Conn,
    tables: &[Table],
    ds2: bool,
    rows: &dyn Fn(Table) -> u64,
    progress: &mut dyn FnMut(LoadProgress),
) -> DbResult<()> {
    let mut step = |conn: &mut Conn, table: Table, step: &'static str, sql: &str| -> DbResult<()> {
        let n = rows(table);
        progress(LoadProgress { table, step, rows_done: 0, rows_total: n });
        run(conn, sql)?;
        progress(LoadProgress { table, step, rows_done: n, rows_total: n });
        Ok(())
    };
    for stmt in statements(INDEXES_SQL, ";") {
        // Every foreign key of a table a DS2 load has points at a table it has too.
        if let Some(table) = table_of(&stmt).filter(|t| tables.contains(t)) {
            step(conn, table, "index", &stmt)?;
        }
    }
    for stmt in statements(PROCS_SQL, "$$") {
        run(conn, &stmt)?;
    }
    run(conn, "SET SESSION unique_checks = 1, foreign_key_checks = 1")?;
    let meta = Meta {
        customers: rows(Table::Customers),
        products: rows(Table::Products),
        ds2,
        max_customer: max_id(conn, "customerid", "customers")?,
        max_order: max_id(conn, "orderid", "orders")?,
        max_review: if ds2 { 0 } else { max_id(conn, "review_id", "reviews")? },
        max_helpfulness: if ds2 { 0 } else { max_id(conn, "review_helpfulness_id", "reviews_helpfulness")? },
    };
    set_auto_increments(conn, &meta)?;
    for &table in tables {
        step(conn, table, "analyze", &format!("ANALYZE TABLE {}", table.sql_name()))?;
    }
    run(conn, &format!("INSERT INTO {INVENTORY_COPY} SELECT prod_id, quan_in_stock, sales FROM inventory"))?;
    if !ds2 {
        run(
            conn,
            &format!(
                "CREATE TABLE {MEMBERSHIP_COPY} (PRIMARY KEY (customerid)) ENGINE=InnoDB AS \
                 SELECT customerid, membershiptype, expiredate FROM membership"
            ),
        )?;
    }
    conn.exec_drop(
        format!(
            "UPDATE {META_TABLE} SET state = 'ready', customers = ?, products = ?, max_customer = ?, \
             max_order = ?, max_review = ?, max_helpfulness = ?, loaded_at = NOW()"
        ),
        (
            meta.customers,
            meta.products,
            meta.max_customer,
            meta.max_order,
            meta.max_review,
            meta.max_helpfulness,
        ),
    )
    .ctx("mark the load complete")
}

fn max_id(conn: &mut Conn, col: &str, table: &str) -> DbResult<u64> {
    Ok(conn
        .query_first::<u64, _>(format!("SELECT COALESCE(MAX({col}), 0) FROM {table}"))
        .ctx(table)?
        .unwrap_or(0))
}

/// Puts every AUTO_INCREMENT right after the loaded maxima (InnoDB keeps the counter only
/// above the largest id present, so after `reset`'s deletes this takes it back).
pub(crate) fn set_auto_increments(conn: &mut Conn, m: &Meta) -> DbResult<()> {
    let mut next = vec![("customers", m.max_customer), ("orders", m.max_order)];
    if !m.ds2 {
        next.extend([("reviews", m.max_review), ("reviews_helpfulness", m.max_helpfulness)]);
    }
    for (table, max) in next {
        run(conn, &format!("ALTER TABLE {table} AUTO_INCREMENT = {}", max + 1))?;
    }
    Ok(())
}

/// Connects to the database, creating it when missing; refuses a database holding any object
/// storbench did not create, or storbench's tables without their marker (see [`ownership`]);
/// drops what storbench loaded there before and marks it as loading: first the reset copy
/// carrying the marker, then `storbench_meta` with it.
///
/// [`ownership`]: super::ownership
pub(crate) fn claim_database(db: &Mysql, data: &DataSet) -> DbResult<Conn> {
    let mut server = db.conn(false)?;
    let name = db.db_name();
    let exists = server
        .exec_first::<String, _, _>(
            "SELECT schema_name FROM information_schema.SCHEMATA WHERE schema_name = ?",
            (name,),
        )
        .ctx("look for the database")?
        .is_some();
    if !exists {
        run(
            &mut server,
            &format!("CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"),
        )?;
    }
    drop(server);
    let mut conn = db.conn(true)?;
    let marker = ownership::claim_marker(db, &mut conn, &ours())?;
    drop_ours(&mut conn)?;
    run(
        &mut conn,
        &format!(
            "CREATE TABLE {INVENTORY_COPY} (prod_id INT NOT NULL PRIMARY KEY, quan_in_stock INT NOT NULL, \
             sales INT NOT NULL) ENGINE=InnoDB COMMENT '{}'",
            ownership::copy_comment(&marker)
        ),
    )?;
    run(
        &mut conn,
        &format!(
            "CREATE TABLE {META_TABLE} (id TINYINT NOT NULL PRIMARY KEY, marker CHAR(32) NOT NULL, \
             state VARCHAR(16) NOT NULL, size VARCHAR(16) NOT NULL, seed BIGINT UNSIGNED NOT NULL, \
             ds2 TINYINT NOT NULL, customers BIGINT NOT NULL DEFAULT 0, products BIGINT NOT NULL DEFAULT 0, \
             max_customer BIGINT NOT NULL DEFAULT 0, max_order BIGINT NOT NULL DEFAULT 0, \
             max_review BIGINT NOT NULL DEFAULT 0, max_helpfulness BIGINT NOT NULL DEFAULT 0, \
             loaded_at DATETIME) ENGINE=InnoDB"
        ),
    )?;
    conn.exec_drop(
        format!(
            "INSERT INTO {META_TABLE} (id, marker, state, size, seed, ds2) VALUES (1, ?, 'loading', ?, ?, ?)"
        ),
        (&marker, data.size.to_string(), data.seed, data.ds2),
    )
    .ctx("mark the database as storbench's")?;
    Ok(conn)
}

/// Drops the tables and procedures storbench creates (only those names), the mark last.
fn drop_ours(conn: &mut Conn) -> DbResult<()> {
    run(conn, "SET SESSION foreign_key_checks = 0")?;
    for p in procedures() {
        run(conn, &format!("DROP PROCEDURE IF EXISTS {p}"))?;
    }
    let mut names: Vec<&str> =
        crate::workload::oltp::schema::ALL_TABLES.iter().map(|t| t.sql_name()).collect();
    names.extend([Table::Reorder.sql_name(), INVENTORY_COPY, MEMBERSHIP_COPY, META_TABLE]);
    for t in names {
        run(conn, &format!("DROP TABLE IF EXISTS {t}"))?;
    }
    run(conn, "SET SESSION foreign_key_checks = 1")
}

/// The mark, or None when the database holds no complete storbench load.
pub(crate) fn read_meta(conn: &mut Conn) -> DbResult<Option<Meta>> {
    type Row = (u64, u64, bool, u64, u64, u64, u64);
    let row: Option<Row> = match conn.query_first(format!(
        "SELECT customers, products, ds2, max_customer, max_order, max_review, max_helpfulness \
         FROM {META_TABLE} WHERE id = 1 AND state = 'ready'"
    )) {
        Err(mysql::Error::MySqlError(e)) if e.code == 1146 => return Ok(None),
        r => r.ctx("read storbench_meta")?,
    };
    Ok(row.map(|(customers, products, ds2, max_customer, max_order, max_review, max_helpfulness)| Meta {
        customers,
        products,
        ds2,
        max_customer,
        max_order,
        max_review,
        max_helpfulness,
    }))
}

/// The size of a load that started here and did not finish, if that is what the mark says.
pub(crate) fn unfinished_load(conn: &mut Conn) -> DbResult<Option<String>> {
    match conn.query_first(format!("SELECT size FROM {META_TABLE} WHERE id = 1 AND state <> 'ready'")) {
        Err(mysql::Error::MySqlError(e)) if e.code == 1146 => Ok(None),
        r => r.ctx("read storbench_meta"),
    }
}

/// The FULLTEXT searches need every title and actor word to be a token (six letters against
/// `innodb_ft_min_token_size`) and none of them a stopword.
pub(crate) fn check_fulltext(conn: &mut Conn) -> DbResult<()> {
    let (min, stop_on, table): (u32, bool, String) = conn
        .query_first(
            "SELECT @@GLOBAL.innodb_ft_min_token_size, @@GLOBAL.innodb_ft_enable_stopword, \
             @@GLOBAL.innodb_ft_server_stopword_table",
        )
        .ctx("read the FULLTEXT settings")?
        .map(|(m, s, t): (u32, bool, Option<String>)| (m, s, t.unwrap_or_default()))
        .unwrap_or((3, true, String::new()));
    if min > 6 {
        return Err(DbError::new(
            DbErrorKind::Query,
            format!(
                "innodb_ft_min_token_size is {min}, so FULLTEXT misses the six-letter title and actor words; \
                 set it to 6 or less in the server's configuration and restart it"
            ),
        ));
    }
    if !stop_on {
        return Ok(());
    }
    let source = match table.split_once('/') {
        Some((d, t)) if !t.is_empty() => format!("`{d}`.`{t}`"),
        _ => "information_schema.INNODB_FT_DEFAULT_STOPWORD".to_owned(),
    };
    let stop: Vec<String> =
        conn.query(format!("SELECT UPPER(value) FROM {source}")).ctx("read the FULLTEXT stopwords")?;
    let ours = [words::title_words(), words::first_names(), words::last_names()].concat();
    if let Some(w) = ours.iter().find(|w| stop.iter().any(|s| s == *w)) {
        return Err(DbError::new(
            DbErrorKind::Query,
            format!(
                "'{w}' is a FULLTEXT stopword on this server ({source}), so searches for it find nothing; \
                 remove it from the stopword table or set innodb_ft_enable_stopword=OFF"
            ),
        ));
    }
    Ok(())
}

fn load_categories(conn: &mut Conn) -> DbResult<u64> {
    let values: Vec<String> =
        CATEGORIES.iter().enumerate().map(|(i, c)| format!("({}, '{c}')", i + 1)).collect();
    run(conn, &format!("INSERT INTO categories (category, categoryname) VALUES {}", values.join(",")))?;
    Ok(CATEGORIES.len() as u64)
}

/// Runs `work` on a scoped thread while this one reports `done` about five times a second.
fn with_progress<T: Send>(done: &AtomicU64, tick: &mut dyn FnMut(u64), work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let h = s.spawn(move || {
            let r = work();
            let _ = tx.send(());
            r
        });
        while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_millis(200)) {
            tick(done.load(Ordering::Relaxed));
        }
        h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// One table's generated rows, on their way into the server.
struct Rows<'a> {
    data: &'a DataSet,
    table: Table,
    stop: &'a StopFlag,
}

impl Rows<'_> {
    fn load_infile(&self, conn: &mut Conn, tick: &mut dyn FnMut(u64)) -> DbResult<u64> {
        let (data, table, stop) = (self.data, self.table, self.stop);
        let done = Arc::new(AtomicU64::new(0));
        let (set, halt, count) = (*data, stop.clone(), done.clone());
        conn.set_local_infile_handler(Some(LocalInfileHandler::new(move |_, w| {
            set.csv(table, CSV_THREADS, &halt, &mut |piece, rows| {
                w.write_all(piece)?;
                count.fetch_add(rows, Ordering::Relaxed);
                Ok(())
            })
        })));
        let name = table.sql_name();
        let sql = format!(
            "LOAD DATA LOCAL INFILE '{name}' INTO TABLE {name} CHARACTER SET utf8mb4 \
         FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n' ({})",
            table.columns().join(", ")
        );
        let result = with_progress(&done, tick, || {
            conn.query_drop(&sql).map(|()| (conn.affected_rows(), conn.warnings()))
        });
        conn.set_local_infile_handler(None);
        let (rows, warnings) = result.ctx(&format!("LOAD DATA into {name}"))?;
        if warnings > 0 {
            let shown: Vec<(String, u32, String)> =
                conn.query("SHOW WARNINGS LIMIT 3").ctx("SHOW WARNINGS")?;
            return Err(DbError::new(
                DbErrorKind::Query,
                format!(
                    "LOAD DATA into {name} gave {warnings} warning(s), such as {shown:?}; the data did not fit"
                ),
            ));
        }
        Ok(rows)
    }

    fn load_inserts(&self, conn: &mut Conn, tick: &mut dyn FnMut(u64)) -> DbResult<u64> {
        let (data, table, stop) = (self.data, self.table, self.stop);
        let head = format!("INSERT INTO {} ({}) VALUES ", table.sql_name(), table.columns().join(", "));
        let done = AtomicU64::new(0);
        let (tx, rx) = mpsc::sync_channel::<(String, u64)>(2);
        with_progress(&done, tick, || {
            std::thread::scope(|s| {
                s.spawn(move || {
                    let mut sql = String::with_capacity(INSERT_BYTES + 4096);
                    let mut rows = 0;
                    data.for_each_row(table, &mut |row| {
                        if stop.is_stopped() {
                            return;
                        }
                        sql.push_str(if rows == 0 { &head } else { "," });
                        push_row(&mut sql, row);
                        rows += 1;
                        if sql.len() >= INSERT_BYTES {
                            let full =
                                std::mem::replace(&mut sql, String::with_capacity(INSERT_BYTES + 4096));
                            let _ = tx.send((full, std::mem::take(&mut rows)));
                        }
                    });
                    if rows > 0 {
                        let _ = tx.send((sql, rows));
                    }
                });
                let mut total = 0;
                for (sql, rows) in rx {
                    conn.query_drop(&sql).ctx(&format!("INSERT into {}", table.sql_name()))?;
                    total += conn.affected_rows();
                    done.fetch_add(rows, Ordering::Relaxed);
                }
                Ok(total)
            })
        })
    }
}

/// One row as `(v, v, ...)` in SQL literals.
fn push_row(sql: &mut String, row: &[Field<'_>]) {
    use std::fmt::Write as _;
    sql.push('(');
    for (i, f) in row.iter().enumerate() {
        if i > 0 {
            sql.push(',');
        }
        let _ = match *f {
            Field::Int(v) => write!(sql, "{v}"),
            Field::Cents(c) => {
                write!(sql, "{}{}.{:02}", if c < 0 { "-" } else { "" }, c.abs() / 100, c.abs() % 100)
            }
            Field::Date(d) => write!(sql, "'{:04}-{:02}-{:02}'", d.year, d.month, d.day),
            Field::Empty => write!(sql, "''"),
            Field::Text(t) => {
                sql.push('\'');
                for ch in t.chars() {
                    match ch {
                        '\'' => sql.push_str("''"),
                        '\\' => sql.push_str("\\\\"),
                        c => sql.push(c),
                    }
                }
                write!(sql, "'")
            }
        };
    }
    sql.push(')');
}
