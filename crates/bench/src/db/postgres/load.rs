//! Load, reset, shape and check: the work on whole databases.
//!
//! A load (re)creates the working database when storbench owns it, or adopts an empty one;
//! builds the tables; COPYs every table from the generator's CSV; adds keys, indexes and
//! foreign keys; creates the functions and the restock trigger; moves every serial past the
//! loaded ids; records what it loaded in `storbench_meta`; runs VACUUM ANALYZE; and finally
//! clones the result into `<db>_pristine`, the template `reset` copies back.

use super::ownership::refuse_foreign_objects;
use super::{Postgres, db_error, err, ident, literal};
use crate::db::{CheckReport, DbError, DbErrorKind, DbResult, LoadProgress, LoadReport, LoadedShape};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use crate::workload::oltp::schema::Table;
use postgres::{Client, IsolationLevel};
use std::io::Write;
use std::time::{Duration, Instant};

pub(super) const SCHEMA: &str = include_str!("schema.sql");
pub(super) const SCHEMA_DS3: &str = include_str!("schema_ds3.sql");
pub(super) const INDEXES: &str = include_str!("indexes.sql");
pub(super) const FOREIGN_KEYS: &str = include_str!("foreign_keys.sql");
pub(super) const FUNCTIONS: &str = include_str!("functions.sql");

/// The comments that mark storbench's databases; `owned` recognises both.
const MARK_WORKING: &str = "storbench OLTP database: storbench may drop, reload and re-create it \
                            (table storbench_meta says what it holds)";
const MARK_PRISTINE: &str = "storbench pristine copy of an OLTP database: the template storbench's \
                             reset clones; storbench may drop it";

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

/// Whether a database exists, and whether storbench marked it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Existing {
    Absent,
    Owned,
    Foreign,
}

fn existing(admin: &mut Client, name: &str) -> DbResult<Existing> {
    let row = admin
        .query_opt(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
            &[&name],
        )
        .map_err(err("looking up the database"))?;
    Ok(match row {
        None => Existing::Absent,
        Some(row) => match row.get::<_, Option<String>>(0) {
            Some(comment) if comment.starts_with("storbench ") => Existing::Owned,
            _ => Existing::Foreign,
        },
    })
}

fn server_version(client: &mut Client) -> DbResult<u32> {
    let row = client.query_one("SHOW server_version_num", &[]).map_err(err("reading the server version"))?;
    Ok(row.get::<_, String>(0).parse().unwrap_or(0))
}

fn execute(client: &mut Client, sql: &str, doing: &str) -> DbResult<()> {
    client.batch_execute(sql).map_err(err(doing))
}

fn foreign_database(pg: &Postgres, name: &str, why: &str) -> DbError {
    DbError::new(
        DbErrorKind::Query,
        format!(
            "database '{name}' at {} exists and was not created by storbench ({why}); storbench never \
             overwrites data it did not create: choose another database name in the URL (storbench \
             creates it)",
            pg.describe_server()
        ),
    )
}

/// Drops a database storbench owns, ending its sessions first.
fn drop_database(admin: &mut Client, name: &str) -> DbResult<()> {
    let doing = format!("dropping database '{name}'");
    if server_version(admin)? >= 130_000 {
        return execute(admin, &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", ident(name)), &doing);
    }
    terminate_sessions(admin, name)?;
    execute(admin, &format!("DROP DATABASE IF EXISTS {}", ident(name)), &doing)
}

fn terminate_sessions(admin: &mut Client, name: &str) -> DbResult<()> {
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&name],
        )
        .map(drop)
        .map_err(err("ending the database's sessions"))
}

/// Creates database `name` as a copy of `template` and marks it with `mark`.
fn create_database(admin: &mut Client, name: &str, template: &str, mark: &str) -> DbResult<()> {
    // A data set is copied as files (one checkpoint before, one after) rather than block by
    // block through the WAL (PostgreSQL 15's default). WAL_LOG measured a little faster at S
    // (1.6-3.4 s against 2.9-4.3 s, two runs), but it puts the whole database into the WAL, whose
    // checkpoints would then fall into the measured run; after FILE_COPY a run starts clean.
    let cloning = template != "template0";
    let strategy = if cloning && server_version(admin)? >= 150_000 { " STRATEGY file_copy" } else { "" };
    let sql = format!("CREATE DATABASE {} TEMPLATE {}{strategy}", ident(name), ident(template));
    let doing = format!("creating database '{name}' from '{template}'");
    let mut attempt = 0;
    loop {
        match admin.batch_execute(&sql) {
            Ok(()) => break,
            // "source database is being accessed by other users": a session that was just
            // closed or ended may take a moment to leave.
            Err(e) if e.code().is_some_and(|c| c.code() == "55006") && attempt < 3 => {
                attempt += 1;
                terminate_sessions(admin, template)?;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(db_error(&doing, &e)),
        }
    }
    let comment = format!("COMMENT ON DATABASE {} IS {}", ident(name), literal(mark));
    execute(admin, &comment, &format!("marking database '{name}' as storbench's"))
}

/// Makes the working database ready for a load: created when absent, re-created when
/// storbench owns it and it holds nothing but storbench's objects, adopted when it holds no
/// objects at all; refused, before anything is written, when it holds anything else.
/// A pristine copy of an earlier load is dropped, so a failed load leaves none behind.
pub(super) fn prepare_databases(pg: &Postgres, admin: &mut Client) -> DbResult<()> {
    let pristine = pg.pristine_name();
    let db = pg.dbname.as_str();
    let working = existing(admin, db)?;
    if working != Existing::Absent {
        refuse_foreign_objects(pg, &mut pg.connect_db()?, working == Existing::Owned)?;
    }
    match existing(admin, &pristine)? {
        Existing::Absent => {}
        Existing::Owned => drop_database(admin, &pristine)?,
        Existing::Foreign => {
            return Err(foreign_database(
                pg,
                &pristine,
                &format!("storbench needs that name for the pristine copy of '{}'", pg.dbname),
            ));
        }
    }
    match working {
        Existing::Absent => create_database(admin, db, "template0", MARK_WORKING),
        Existing::Owned => {
            drop_database(admin, db)?;
            create_database(admin, db, "template0", MARK_WORKING)
        }
        Existing::Foreign => {
            let comment = format!("COMMENT ON DATABASE {} IS {}", ident(db), literal(MARK_WORKING));
            execute(admin, &comment, &format!("marking the empty database '{db}' as storbench's"))
        }
    }
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
    prepare_databases(pg, &mut admin)?;
    let mut client = pg.connect_db()?;
    create_schema(&mut client, data.ds2)?;
    client
        .execute(
            "INSERT INTO storbench_meta (db_size, seed, ds2, state) VALUES ($1, $2, $3, 'loading')",
            &[&data.size.to_string(), &data.seed.to_string(), &data.ds2],
        )
        .map_err(err("recording the load's start in storbench_meta"))?;
    let started = Instant::now();
    let rows = copy_all(pg, data, progress, stop).map_err(|e| e.unwrap_or(stopped(pg)))?;
    let load_s = started.elapsed().as_secs_f64();
    let indexing = Instant::now();
    let size_bytes = complete(pg, &mut admin, client, &rows, progress, stop)?;
    Ok(LoadReport { rows, load_s, index_s: indexing.elapsed().as_secs_f64(), size_bytes })
}

/// Everything after the bulk load: keys, indexes, functions, serials, `storbench_meta`,
/// statistics, and the pristine copy. Returns the database's size.
pub(super) fn complete(
    pg: &Postgres,
    admin: &mut Client,
    mut client: Client,
    rows: &[(Table, u64)],
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
    create_database(admin, &pg.pristine_name(), &pg.dbname, MARK_PRISTINE)?;
    let no_connections = format!("ALTER DATABASE {} ALLOW_CONNECTIONS false", ident(&pg.pristine_name()));
    execute(admin, &no_connections, "closing the pristine copy to connections")?;
    Ok(u64::try_from(size_bytes).ok())
}

pub(super) fn create_schema(client: &mut Client, ds2: bool) -> DbResult<()> {
    execute(client, SCHEMA, "creating the tables")?;
    if !ds2 {
        execute(client, SCHEMA_DS3, "creating the DS3 tables")?;
    }
    Ok(())
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
    client: &mut Client,
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
            client.batch_execute(body).map_err(|e| Some(db_error(&doing, &e)))?;
        }
        progress(LoadProgress { table, step, rows_done: n, rows_total: n });
    }
    Ok(())
}

/// Keys, indexes, foreign keys, functions, the trigger and the serials.
fn finish_load(
    client: &mut Client,
    rows: &[(Table, u64)],
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> Result<(), Option<DbError>> {
    // A session setting: more memory for sorting keys than the server's default 64 MB.
    client
        .batch_execute("SET maintenance_work_mem = '256MB'")
        .map_err(|e| Some(db_error("setting memory", &e)))?;
    run_sections(client, INDEXES, "index", rows, progress, stop)?;
    run_sections(client, FOREIGN_KEYS, "foreign keys", rows, progress, stop)?;
    client
        .batch_execute(FUNCTIONS)
        .map_err(|e| Some(db_error("creating the functions and the trigger", &e)))?;
    for (table, column) in SERIALS.iter().filter(|(t, _)| rows.iter().any(|(r, _)| r == t)) {
        let name = table.sql_name();
        let sql = format!(
            "SELECT setval(pg_get_serial_sequence('{name}', '{column}'), coalesce(max({column}), 0) + 1, false) \
             FROM {name}"
        );
        client
            .batch_execute(&sql)
            .map_err(|e| Some(db_error(&format!("moving the serial of {name}"), &e)))?;
    }
    Ok(())
}

/// VACUUM ANALYZE, table by table.
fn analyze(
    client: &mut Client,
    rows: &[(Table, u64)],
    progress: &mut dyn FnMut(LoadProgress),
) -> DbResult<()> {
    for &(table, n) in rows {
        let doing = format!("analyzing table {}", table.sql_name());
        execute(client, &format!("VACUUM (ANALYZE) {}", table.sql_name()), &doing)?;
        progress(LoadProgress { table, step: "analyze", rows_done: n, rows_total: n });
    }
    Ok(())
}

pub(super) fn reset(pg: &Postgres) -> DbResult<f64> {
    let started = Instant::now();
    let mut admin = pg.connect_admin()?;
    let pristine = pg.pristine_name();
    match existing(&mut admin, &pristine)? {
        Existing::Owned => {}
        Existing::Absent => {
            return Err(DbError::new(
                DbErrorKind::Missing,
                format!(
                    "nothing to reset to: there is no pristine copy '{pristine}' at {}; run the OLTP load \
                     (it makes one)",
                    pg.describe_server()
                ),
            ));
        }
        Existing::Foreign => {
            return Err(foreign_database(pg, &pristine, "so it is not storbench's pristine copy"));
        }
    }
    match existing(&mut admin, &pg.dbname)? {
        Existing::Foreign => return Err(foreign_database(pg, &pg.dbname, "so reset will not drop it")),
        Existing::Owned => refuse_foreign_objects(pg, &mut pg.connect_db()?, true)?,
        Existing::Absent => {}
    }
    drop_database(&mut admin, &pg.dbname)?;
    create_database(&mut admin, &pg.dbname, &pristine, MARK_WORKING)?;
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
        .map_err(|e| match super::kind_of(&e) {
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
