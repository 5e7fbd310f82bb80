//! Load, reset, shape and check: the work on whole databases.
//!
//! A load claims the working database (creates it, loads into it when it holds nothing, or
//! replaces storbench's own earlier load in it, proven by its marker: see [`claim`]); builds
//! the tables; COPYs every table from the generator's CSV; adds keys, indexes and
//! foreign keys; creates the functions and the restock trigger; moves every serial past the
//! loaded ids; records what it loaded in `storbench_meta`; runs VACUUM ANALYZE; and finally
//! clones the result into `<db>_pristine`, the template `reset` copies back.

use crate::db::postgres::catalogue::Found;
use crate::db::postgres::claim::{self, Claim, Claimed, Record};
use crate::db::postgres::{Postgres, db_error, err};
use crate::db::{DbError, DbErrorKind, DbResult};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use crate::workload::oltp::ds3::{CheckReport, LoadProgress, LoadReport, LoadedShape};
use crate::workload::oltp::schema::Table;
use postgres::{Client, IsolationLevel, Transaction};
use std::io::Write;
use std::time::Instant;

pub(super) const SCHEMA: &str = include_str!("schema.sql");
pub(super) const SCHEMA_DS3: &str = include_str!("schema_ds3.sql");
pub(super) const INDEXES: &str = include_str!("indexes.sql");
pub(super) const FOREIGN_KEYS: &str = include_str!("foreign_keys.sql");
pub(super) const FUNCTIONS: &str = include_str!("functions.sql");

/// The serial columns, moved past the loaded ids after the load.
pub(super) const SERIALS: [(Table, &str); 6] = [
    (Table::Categories, "category"),
    (Table::Products, "prod_id"),
    (Table::Customers, "customerid"),
    (Table::Orders, "orderid"),
    (Table::Reviews, "review_id"),
    (Table::ReviewsHelpfulness, "review_helpfulness_id"),
];

/// Generator threads feeding one COPY.
fn gen_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(4)
}

fn stopped(pg: &Postgres) -> DbError {
    DbError::new(
        DbErrorKind::Query,
        format!(
            "the load was stopped before it finished; database '{}' is incomplete: load it again",
            pg.dbname
        ),
    )
}

/// The whole load. `load_s` covers the COPYs; `index_s` everything after: keys, indexes,
/// foreign keys, functions, serials, VACUUM ANALYZE and the pristine copy.
pub(super) fn load(
    pg: &Postgres,
    data: &DataSet,
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> DbResult<LoadReport> {
    let mut admin = pg.connect_admin()?;
    let Claimed { claim, marker } = claim::for_load(pg, &mut admin)?;
    claim::replace_copy(pg, &mut admin, "template0", &Record { marker: marker.clone(), ready: false })?;
    if matches!(claim, Claim::Create) {
        claim::create_working(pg, &mut admin)?;
    }
    let mut client = pg.connect_db()?;
    let recorded = match claim {
        Claim::Reload(recorded) => recorded,
        Claim::Create | Claim::Adopt => Vec::new(),
    };
    create_schema(&mut client, data, &marker, &recorded)?;
    let started = Instant::now();
    let rows = copy_all(pg, data, progress, stop).map_err(|e| e.unwrap_or(stopped(pg)))?;
    let load_s = started.elapsed().as_secs_f64();
    let indexing = Instant::now();
    let size_bytes = complete(pg, &mut admin, client, &rows, &marker, progress, stop)?;
    Ok(LoadReport { rows, load_s, index_s: indexing.elapsed().as_secs_f64(), size_bytes })
}

/// Everything after the bulk load: keys, indexes, functions, serials, `storbench_meta`,
/// statistics, and the pristine copy. Returns the database's size.
fn complete(
    pg: &Postgres,
    admin: &mut Client,
    mut client: Client,
    rows: &[(Table, u64)],
    marker: &str,
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> DbResult<Option<u64>> {
    finish_load(&mut client, rows, progress, stop).map_err(|e| e.unwrap_or(stopped(pg)))?;
    let meta = "UPDATE storbench_meta SET state = 'ready', customers = $1, products = $2, loaded_at = now()";
    let count = |t: Table| rows.iter().find(|(r, _)| *r == t).map_or(0, |&(_, n)| n as i64);
    client
        .execute(meta, &[&count(Table::Customers), &count(Table::Products)])
        .map_err(err("recording the load in storbench_meta"))?;
    analyze(&mut client, rows, progress)?;
    let size_bytes: i64 = client
        .query_one("SELECT pg_database_size(current_database())", &[])
        .map_err(err("reading the database size"))?
        .get(0);
    drop(client);
    claim::replace_copy(pg, admin, &pg.dbname, &Record { marker: marker.to_owned(), ready: true })?;
    Ok(u64::try_from(size_bytes).ok())
}

/// In one transaction: drops what an earlier load of storbench's left (`recorded`), creates
/// the tables, writes the load's start and `marker` into `storbench_meta` and records the
/// objects made. So the database never holds storbench's objects without its marker.
fn create_schema(client: &mut Client, data: &DataSet, marker: &str, recorded: &[Found]) -> DbResult<()> {
    let mut tx = client.transaction().map_err(err("starting the schema's transaction"))?;
    claim::drop_recorded(&mut tx, recorded)?;
    tx.batch_execute(SCHEMA).map_err(err("creating the tables"))?;
    if !data.ds2 {
        tx.batch_execute(SCHEMA_DS3).map_err(err("creating the DS3 tables"))?;
    }
    tx.execute(
        "INSERT INTO storbench_meta (marker, db_size, seed, ds2, state) VALUES ($1, $2, $3, $4, 'loading')",
        &[&marker, &data.size.to_string(), &data.seed.to_string(), &data.ds2],
    )
    .map_err(err("recording the load's start in storbench_meta"))?;
    claim::record_created(&mut tx)?;
    tx.commit().map_err(err("committing the schema"))
}

/// COPY streams at once: the largest table (review ratings, about half the bytes) on one
/// connection while the others share two more. On the 2-core test machine, S loaded in 2.07 s
/// with two streams and 1.93 s with three, against psql's 2.11-2.16 s (bench/oltp-load-pg.sh).
const COPY_CONNECTIONS: usize = 3;

/// Tables loaded and their rows; `Err(None)` when stopped.
type Copied = Result<Vec<(Table, u64)>, Option<DbError>>;

/// COPYs every table, largest first, on `COPY_CONNECTIONS` connections that take the next
/// table when they finish one; progress comes back to this thread. Rows in load order.
fn copy_all(
    pg: &Postgres,
    data: &DataSet,
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> Copied {
    let mut queue: Vec<Table> = data.tables().to_vec();
    queue.sort_by_key(|&t| std::cmp::Reverse(data.rows(t)));
    let queue = std::sync::Mutex::new(queue.into_iter());
    let (tx, rx) = std::sync::mpsc::channel();
    let done: Vec<Copied> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..COPY_CONNECTIONS)
            .map(|_| {
                let (tx, queue) = (tx.clone(), &queue);
                scope.spawn(move || -> Copied {
                    let mut client = pg.connect_db().map_err(Some)?;
                    let mut loaded = Vec::new();
                    while let Some(table) = queue.lock().unwrap_or_else(|p| p.into_inner()).next() {
                        let n = copy_table(
                            &mut client,
                            data,
                            table,
                            &mut |p| {
                                let _ = tx.send(p);
                            },
                            stop,
                        )?;
                        loaded.push((table, n));
                    }
                    Ok(loaded)
                })
            })
            .collect();
        drop(tx);
        rx.iter().for_each(&mut *progress);
        workers.into_iter().map(|w| w.join().unwrap_or(Err(None))).collect()
    });
    let mut rows = Vec::new();
    for r in done {
        rows.extend(r?);
    }
    rows.sort_by_key(|(t, _)| data.tables().iter().position(|x| x == t));
    Ok(rows)
}

/// COPYs one table from the generator. `Err(None)` when stopped.
fn copy_table(
    client: &mut Client,
    data: &DataSet,
    table: Table,
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> Result<u64, Option<DbError>> {
    let doing = format!("loading table {}", table.sql_name());
    let sql = format!(
        "COPY {} ({}) FROM STDIN WITH (FORMAT text, DELIMITER ',')",
        table.sql_name(),
        table.columns().join(", ")
    );
    let rows_total = data.rows(table);
    let mut writer = client.copy_in(&sql).map_err(|e| Some(db_error(&doing, &e)))?;
    let mut rows_done = 0;
    progress(LoadProgress { table, step: "load", rows_done, rows_total });
    let fed = data.csv(table, gen_threads(), stop, &mut |piece, rows| {
        writer.write_all(piece)?;
        rows_done += rows;
        progress(LoadProgress { table, step: "load", rows_done, rows_total });
        Ok(())
    });
    if let Err(e) = fed {
        // A server error arrives as the writer's I/O error; report the server's words.
        let server = e.get_ref().and_then(|s| s.downcast_ref::<postgres::Error>());
        return Err(Some(match server {
            Some(pe) => db_error(&doing, pe),
            None => DbError::new(DbErrorKind::Query, format!("{doing}: generating the rows failed: {e}")),
        }));
    }
    if stop.is_stopped() {
        return Err(None); // dropping the writer aborts the COPY
    }
    writer.finish().map_err(|e| Some(db_error(&doing, &e)))
}

/// The sections of an SQL file, one per table: `(table name, statements)`.
pub(super) fn sections(sql: &'static str) -> impl Iterator<Item = (&'static str, &'static str)> {
    sql.split("-- table: ").skip(1).filter_map(|s| s.split_once('\n')).map(|(name, body)| (name.trim(), body))
}

/// Runs the section of `sql` of every loaded table, reporting each as `step`.
fn run_sections(
    tx: &mut Transaction<'_>,
    sql: &'static str,
    step: &'static str,
    rows: &[(Table, u64)],
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> Result<(), Option<DbError>> {
    for &(table, n) in rows {
        for (_, body) in sections(sql).filter(|(name, _)| *name == table.sql_name()) {
            if stop.is_stopped() {
                return Err(None);
            }
            let doing = format!("{step}: table {}", table.sql_name());
            tx.batch_execute(body).map_err(|e| Some(db_error(&doing, &e)))?;
        }
        progress(LoadProgress { table, step, rows_done: n, rows_total: n });
    }
    Ok(())
}

/// Keys, indexes, foreign keys, functions, the trigger and the serials, in one transaction
/// that records the objects it made (a stopped load leaves none of them).
fn finish_load(
    client: &mut Client,
    rows: &[(Table, u64)],
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> Result<(), Option<DbError>> {
    let mut tx = client.transaction().map_err(|e| Some(db_error("starting the indexes' transaction", &e)))?;
    // More memory for sorting keys than the server's default 64 MB, for this transaction.
    tx.batch_execute("SET LOCAL maintenance_work_mem = '256MB'")
        .map_err(|e| Some(db_error("setting memory", &e)))?;
    run_sections(&mut tx, INDEXES, "index", rows, progress, stop)?;
    run_sections(&mut tx, FOREIGN_KEYS, "foreign keys", rows, progress, stop)?;
    tx.batch_execute(FUNCTIONS).map_err(|e| Some(db_error("creating the functions and the trigger", &e)))?;
    for (table, column) in SERIALS.iter().filter(|(t, _)| rows.iter().any(|(r, _)| r == t)) {
        let name = table.sql_name();
        let sql = format!(
            "SELECT setval(pg_get_serial_sequence('{name}', '{column}'), coalesce(max({column}), 0) + 1, false) \
             FROM {name}"
        );
        tx.batch_execute(&sql).map_err(|e| Some(db_error(&format!("moving the serial of {name}"), &e)))?;
    }
    claim::record_created(&mut tx).map_err(Some)?;
    tx.commit().map_err(|e| Some(db_error("committing the indexes and functions", &e)))
}

/// VACUUM ANALYZE, table by table.
fn analyze(
    client: &mut Client,
    rows: &[(Table, u64)],
    progress: &mut dyn FnMut(LoadProgress),
) -> DbResult<()> {
    for &(table, n) in rows {
        let doing = format!("analyzing table {}", table.sql_name());
        client.batch_execute(&format!("VACUUM (ANALYZE) {}", table.sql_name())).map_err(err(&doing))?;
        progress(LoadProgress { table, step: "analyze", rows_done: n, rows_total: n });
    }
    Ok(())
}

pub(super) fn reset(pg: &Postgres) -> DbResult<f64> {
    let started = Instant::now();
    claim::reset(pg, &mut pg.connect_admin()?)?;
    Ok(started.elapsed().as_secs_f64())
}

pub(super) fn shape(pg: &Postgres) -> DbResult<LoadedShape> {
    let mut client = pg.connect_db()?;
    let nothing = |why: &str| {
        DbError::new(
            DbErrorKind::Missing,
            format!("nothing is loaded in database '{}': {why}; run the OLTP load", pg.dbname),
        )
    };
    let row = client
        .query_opt(
            "SELECT m.customers, m.products, to_regclass('membership') IS NOT NULL \
                    AND to_regclass('reviews') IS NOT NULL AND to_regclass('reviews_helpfulness') IS NOT NULL, \
                    m.state, m.db_size \
               FROM storbench_meta m",
            &[],
        )
        .map_err(|e| match crate::db::postgres::kind_of(&e) {
            DbErrorKind::Missing => nothing("it has no table storbench_meta"),
            _ => db_error("reading storbench_meta", &e),
        })?
        .ok_or_else(|| nothing("its load did not finish"))?;
    let (state, size): (String, String) = (row.get(3), row.get(4));
    if state != "ready" {
        return Err(crate::db::load_unfinished(&format!("database '{}'", pg.dbname), &size));
    }
    Ok(LoadedShape {
        customers: u64::try_from(row.get::<_, i64>(0)).unwrap_or(0),
        products: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0),
        ds3: row.get(2),
    })
}

const MISMATCHES: &str = "\
    WITH lines AS (SELECT prod_id, sum(quantity)::bigint AS quantity FROM orderlines GROUP BY prod_id) \
    SELECT coalesce(i.prod_id, l.prod_id)::bigint, coalesce(i.sales, 0)::bigint, coalesce(l.quantity, 0), \
           count(*) OVER () \
      FROM inventory i FULL JOIN lines l ON l.prod_id = i.prod_id \
     WHERE coalesce(i.sales, 0) <> coalesce(l.quantity, 0) \
     ORDER BY 1 LIMIT 100";

const ORPHANS: &str = "\
    SELECT (SELECT count(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM orderlines l WHERE l.orderid = o.orderid)) \
         + (SELECT count(*) FROM orderlines l WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.orderid = l.orderid))";

/// Sales against order lines, and orphans, in one consistent snapshot.
pub(super) fn check(client: &mut Client) -> DbResult<CheckReport> {
    let mut tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(err("starting the check"))?;
    let checked: i64 =
        tx.query_one("SELECT count(*) FROM inventory", &[]).map_err(err("counting products"))?.get(0);
    let rows = tx.query(MISMATCHES, &[]).map_err(err("comparing sales with order lines"))?;
    let orphans: i64 = tx.query_one(ORPHANS, &[]).map_err(err("counting orphans"))?.get(0);
    tx.commit().map_err(err("ending the check"))?;
    Ok(CheckReport {
        products_checked: u64::try_from(checked).unwrap_or(0),
        mismatch_count: rows.first().map_or(0, |r| u64::try_from(r.get::<_, i64>(3)).unwrap_or(0)),
        mismatches: rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect(),
        orphans: u64::try_from(orphans).unwrap_or(0),
    })
}
