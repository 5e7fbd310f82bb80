//! Loading a data set into a new SQLite file: schema, one prepared insert per table inside one
//! transaction, then indexes, FTS5, the restock trigger and statistics; the result becomes the
//! database and its pristine copy.
//!
//! The load writes `<file>.loading` with the journal off (a crash leaves only that file, which
//! the next load removes) and renames it into place when complete, so a database is never
//! half-loaded. A file that is not a storbench database is never replaced.

use super::meta;
use crate::db::ownership::{DbObject, created_names, not_ours, refusal};
use crate::db::sqlite::{
    NO_FOLLOW, Sqlite, classify, clone_file, file_error, is_regular_file, remove_if_present,
    remove_sqlite_files, sidecar,
};
use crate::db::{DbError, DbErrorKind, DbResult};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use crate::workload::oltp::ds3::{LoadProgress, LoadReport, LoadedShape};
use crate::workload::oltp::schema::{Date, Field, Table};
use rusqlite::{Connection, ToSql, params_from_iter, types::ToSqlOutput, types::Value};
use std::path::Path;
use std::time::Instant;

const SCHEMA: &str = include_str!("schema.sql");
const SCHEMA_DS3: &str = include_str!("schema_ds3.sql");
const INDEXES: &str = include_str!("indexes.sql");
const INDEXES_DS3: &str = include_str!("indexes_ds3.sql");

/// Rows between progress reports.
const PROGRESS_EVERY: u64 = 1 << 16;

pub(super) fn load(
    db: &Sqlite,
    data: &DataSet,
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> DbResult<LoadReport> {
    refuse_foreign(db.path())?;
    refuse_foreign(&db.pristine_path())?;
    let loading = sidecar(db.path(), "loading");
    // A load killed earlier left its file: storbench's by its content, so it goes.
    refuse_foreign(&loading)?;
    remove_if_present(&loading)?;
    drop(crate::files::create(&loading, crate::files::How::WRITE).map_err(file_error)?);
    let result = build(&loading, data, progress, stop);
    if result.is_err() || stop.is_stopped() {
        let _ = crate::files::remove_own(&loading);
        return result.and_then(|_| Err(DbError::new(DbErrorKind::Query, "the load was interrupted")));
    }
    let mut report = result?;
    remove_sqlite_files(db.path())?;
    remove_if_present(&db.pristine_path())?;
    crate::files::rename(&loading, db.path()).map_err(file_error)?;
    clone_file(db.path(), &db.pristine_path())?;
    report.size_bytes = std::fs::metadata(db.path()).ok().map(|m| m.len());
    Ok(report)
}

/// Refuses to replace or reset `path` unless it is absent or a storbench database holding
/// nothing but storbench's objects: a file storbench did not make, or one where a user added
/// a table, view, index or trigger, is left as it is.
pub(super) fn refuse_foreign(path: &Path) -> DbResult<()> {
    let Some(found) = crate::files::entry(path).map_err(file_error)? else { return Ok(()) };
    is_regular_file(path)?;
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | NO_FOLLOW);
    let listed = conn.ok().and_then(|c| Some((read_shape(&c).ok()??, objects(&c).ok()?)));
    let Some((_, listed_objects)) = listed else {
        return Err(DbError::new(
            DbErrorKind::Query,
            format!(
                "{} exists and is not a storbench database; storbench will not replace it. Choose another \
                 database file, or remove the file yourself if it is expendable",
                path.display()
            ),
        ));
    };
    let theirs = not_ours(listed_objects, true, &ours());
    if theirs.is_empty() {
        // storbench's by its content: it may be replaced or removed.
        crate::files::claim(found.id);
        return Ok(());
    }
    Err(refusal(&path.display().to_string(), &theirs, "another file (storbench creates it)"))
}

/// Everything in the file's schema but SQLite's own tables (statistics, automatic indexes).
fn objects(conn: &Connection) -> rusqlite::Result<Vec<DbObject>> {
    let mut stmt = conn.prepare(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY 1, 2",
    )?;
    let rows = stmt.query_map([], |r| {
        let (kind, name): (String, String) = (r.get(0)?, r.get(1)?);
        Ok(DbObject { kind, shown: name.clone(), name })
    })?;
    rows.collect()
}

/// What storbench's SQL creates in the file, with the tables FTS5 keeps its index in.
fn ours() -> Vec<(&'static str, String)> {
    let sql = [SCHEMA, SCHEMA_DS3, INDEXES, INDEXES_DS3];
    let mut names: Vec<_> = sql.into_iter().flat_map(created_names).collect();
    names.extend(
        ["data", "idx", "content", "docsize", "config"].map(|s| ("table", format!("products_fts_{s}"))),
    );
    names
}

fn build(
    path: &Path,
    data: &DataSet,
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> DbResult<LoadReport> {
    let started = Instant::now();
    // The file was created empty by the file module; SQLite writes it, following no link.
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX | NO_FOLLOW;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))?;
    let err = |e| classify(path, e);
    conn.execute_batch(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-262144;",
    )
    .map_err(err)?;
    conn.execute_batch(SCHEMA).map_err(err)?;
    if !data.ds2 {
        conn.execute_batch(SCHEMA_DS3).map_err(err)?;
    }
    let mut report = LoadReport::default();
    for &table in data.tables() {
        if stop.is_stopped() {
            return Ok(report);
        }
        let rows = load_table(&conn, data, table, progress, stop).map_err(err)?;
        report.rows.push((table, rows));
    }
    report.load_s = started.elapsed().as_secs_f64();
    let indexing = Instant::now();
    finish(&conn, data, progress).map_err(err)?;
    report.index_s = indexing.elapsed().as_secs_f64();
    Ok(report)
}

fn load_table(
    conn: &Connection,
    data: &DataSet,
    table: Table,
    progress: &mut dyn FnMut(LoadProgress),
    stop: &StopFlag,
) -> rusqlite::Result<u64> {
    let cols = table.columns();
    let marks = vec!["?"; cols.len()].join(",");
    let sql = format!("INSERT INTO {} ({}) VALUES ({marks})", table.sql_name(), cols.join(","));
    let total = data.rows(table);
    let tx = conn.unchecked_transaction()?;
    let mut stmt = tx.prepare(&sql)?;
    let (mut done, mut failed) = (0u64, None);
    data.for_each_row(table, &mut |fields| {
        if failed.is_some() || stop.is_stopped() {
            return;
        }
        match stmt.execute(params_from_iter(fields.iter().map(SqlField))) {
            Ok(_) => done += 1,
            Err(e) => failed = Some(e),
        }
        if done % PROGRESS_EVERY == 0 {
            progress(LoadProgress { table, step: "load", rows_done: done, rows_total: total });
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    drop(stmt);
    tx.commit()?;
    progress(LoadProgress { table, step: "load", rows_done: done, rows_total: total });
    Ok(done)
}

/// Indexes, full-text, trigger, statistics and the meta rows that mark the file as ours.
fn finish(conn: &Connection, data: &DataSet, progress: &mut dyn FnMut(LoadProgress)) -> rusqlite::Result<()> {
    let step = |progress: &mut dyn FnMut(LoadProgress), step| {
        progress(LoadProgress { table: Table::Products, step, rows_done: 0, rows_total: 0 })
    };
    step(progress, "index");
    conn.execute_batch(INDEXES)?;
    if !data.ds2 {
        conn.execute_batch(INDEXES_DS3)?;
    }
    step(progress, "analyze");
    conn.execute_batch("ANALYZE;")?;
    let c = &data.counts;
    let rows = [
        ("db_size", data.size.to_string()),
        ("seed", data.seed.to_string()),
        ("ds2", data.ds2.to_string()),
        ("customers", c.customers.to_string()),
        ("products", c.products.to_string()),
        ("storbench_version", env!("CARGO_PKG_VERSION").to_owned()),
    ];
    for (k, v) in rows {
        conn.execute("INSERT INTO storbench_meta (key, value) VALUES (?1, ?2)", [k, v.as_str()])?;
    }
    // Leave the file in the journal mode runs use, so a reset copy needs no conversion.
    conn.execute_batch(
        "PRAGMA locking_mode=NORMAL; PRAGMA journal_mode=WAL; PRAGMA wal_checkpoint(TRUNCATE);",
    )
}

/// The loaded shape from storbench_meta; None when the file is not a storbench database.
pub(super) fn read_shape(conn: &Connection) -> rusqlite::Result<Option<LoadedShape>> {
    let has_meta: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'storbench_meta')",
        [],
        |r| r.get(0),
    )?;
    if !has_meta {
        return Ok(None);
    }
    let number =
        |key| -> rusqlite::Result<u64> { Ok(meta(conn, key)?.and_then(|v| v.parse().ok()).unwrap_or(0)) };
    Ok(Some(LoadedShape {
        customers: number("customers")?,
        products: number("products")?,
        ds3: meta(conn, "ds2")?.as_deref() == Some("false"),
    }))
}

/// A generated field as SQLite stores it: dates as ISO text, cents as REAL, empty as ''.
struct SqlField<'a>(&'a Field<'a>);

impl ToSql for SqlField<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self.0 {
            Field::Int(v) => ToSqlOutput::Owned(Value::Integer(v)),
            Field::Text(s) => ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(s.as_bytes())),
            Field::Cents(c) => ToSqlOutput::Owned(Value::Real(c as f64 / 100.0)),
            Field::Date(d) => ToSqlOutput::Owned(Value::Text(iso_date(d))),
            Field::Empty => ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(b"")),
        })
    }
}

pub(super) fn iso_date(d: Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)
}
