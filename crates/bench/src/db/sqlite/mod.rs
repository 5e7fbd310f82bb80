//! The embedded SQLite backend: one database file, loaded with prepared inserts in large
//! transactions, full-text search through FTS5, the DS3 transactions as client-side SQL.
//!
//! Runs use WAL with `synchronous=FULL`, so every commit is made durable with an fsync of the
//! log: the storage, not a cache, decides how fast orders commit. Writers take the write lock
//! when their transaction begins (`BEGIN IMMEDIATE`), which serialises purchases, so no sale
//! is lost. The pristine copy made after the load sits beside the database as
//! `<file>.pristine` and is cloned back by `reset` (a reflink where the filesystem can).

mod counters;
mod load;
mod session;
mod sql;

use super::{
    BackendKind, CheckReport, ConnectionRoom, CounterSampler, Database, DbError, DbErrorKind, DbResult,
    LoadProgress, LoadReport, LoadedShape, Session, WriterLock, database_info,
};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storbench_report::DatabaseInfo;

/// Page cache per connection during runs, KiB (SQLite's `cache_size` in its negative form).
const RUN_CACHE_KIB: i64 = 32 * 1024;
/// How long a writer waits for the write lock before the call fails as `Deadlock` (retried).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A DVD Store database in one SQLite file.
pub struct Sqlite {
    path: PathBuf,
    stats: Arc<counters::Stats>,
}

impl Sqlite {
    /// The database at `path`, resolved once (links in its directories followed; a link at
    /// the file's own name is refused when it is used, never followed).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let path = crate::files::resolve_parent(&path).unwrap_or(path);
        Sqlite { path, stats: Arc::default() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn pristine_path(&self) -> PathBuf {
        sidecar(&self.path, "pristine")
    }

    /// Opens the database for a run: WAL, durable commits, a bounded page cache.
    fn open_for_run(&self) -> DbResult<Connection> {
        let conn = open_existing(&self.path)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| query(&self.path, e))?;
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-{RUN_CACHE_KIB};"
        ))
        .map_err(|e| classify(&self.path, e))?;
        Ok(conn)
    }
}

/// `<path>.<ext>` beside the database: storbench's own files (the lock, the pristine copy).
fn sidecar(path: &Path, ext: &str) -> PathBuf {
    suffixed(path, ".", ext)
}

/// `<path>-<ext>`: SQLite's own files of the database (`-wal`, `-shm`, `-journal`).
fn sqlite_file(path: &Path, ext: &str) -> PathBuf {
    suffixed(path, "-", ext)
}

fn suffixed(path: &Path, sep: &str, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(sep);
    s.push(ext);
    PathBuf::from(s)
}

/// SQLite opens no link: the database's name and its -wal and -shm files are opened with
/// O_NOFOLLOW, and a link in the path is an error.
const NO_FOLLOW: OpenFlags = OpenFlags::SQLITE_OPEN_NOFOLLOW;

fn open_existing(path: &Path) -> DbResult<Connection> {
    is_regular_file(path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | NO_FOLLOW;
    Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))
}

/// Refuses `path` unless it is a regular file (a link, a FIFO or a device is named as such).
fn is_regular_file(path: &Path) -> DbResult<()> {
    use crate::files::{Entry, Kind};
    match crate::files::entry(path) {
        Ok(Some(Entry { kind: Kind::File, .. })) => Ok(()),
        Ok(None) => Err(DbError::new(
            DbErrorKind::Missing,
            format!("no database at {}; load one first (the OLTP load creates it)", path.display()),
        )),
        Ok(Some(Entry { kind: Kind::Link, .. })) => {
            Err(file_error(crate::files::FileError::Link { path: path.to_path_buf() }))
        }
        Ok(Some(found)) => Err(file_error(crate::files::FileError::NotRegular {
            path: path.to_path_buf(),
            kind: found.kind,
        })),
        Err(e) => Err(file_error(e)),
    }
}

/// What the file module refused, as a database error.
fn file_error(e: crate::files::FileError) -> DbError {
    DbError::new(DbErrorKind::Query, e.to_string())
}

/// An error of a statement on `path`, by kind: busy/locked is retryable like a deadlock.
fn classify(path: &Path, e: rusqlite::Error) -> DbError {
    use rusqlite::ErrorCode as C;
    let kind = match e.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => DbErrorKind::Deadlock,
        Some(C::CannotOpen | C::NotADatabase | C::PermissionDenied | C::ReadOnly) => DbErrorKind::Connection,
        _ if e.to_string().contains("no such") => DbErrorKind::Missing,
        _ => DbErrorKind::Query,
    };
    DbError::new(kind, format!("{}: {e}", path.display()))
}

fn query(path: &Path, e: rusqlite::Error) -> DbError {
    DbError::new(DbErrorKind::Query, format!("{}: {e}", path.display()))
}

impl Database for Sqlite {
    fn kind(&self) -> BackendKind {
        BackendKind::Sqlite
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    /// `flock` on `<file>.lock` beside the database (see `writer_lock`).
    fn lock_writer(&self) -> DbResult<WriterLock> {
        crate::db::writer_lock::lock_file(&sidecar(&self.path, "lock"), &self.path.display().to_string())
    }

    fn load(
        &self,
        data: &DataSet,
        progress: &mut dyn FnMut(LoadProgress),
        stop: &StopFlag,
    ) -> DbResult<LoadReport> {
        load::load(self, data, progress, stop)
    }

    fn shape(&self) -> DbResult<LoadedShape> {
        let conn = open_existing(&self.path)?;
        load::read_shape(&conn).map_err(|e| classify(&self.path, e))?.ok_or_else(|| {
            DbError::new(
                DbErrorKind::Missing,
                format!(
                    "{} is not a storbench DVD Store database (no storbench_meta table)",
                    self.path.display()
                ),
            )
        })
    }

    fn reset(&self) -> DbResult<f64> {
        let started = Instant::now();
        let pristine = self.pristine_path();
        if crate::files::entry(&pristine).map_err(file_error)?.is_none() {
            return Err(DbError::new(
                DbErrorKind::Missing,
                format!("no pristine copy at {}; load the database again", pristine.display()),
            ));
        }
        load::refuse_foreign(&self.path)?;
        load::refuse_foreign(&pristine)?;
        remove_sqlite_files(&self.path)?;
        clone_file(&pristine, &self.path)?;
        Ok(started.elapsed().as_secs_f64())
    }

    fn connect(&self) -> DbResult<Box<dyn Session>> {
        Ok(Box::new(session::SqliteSession::new(self.open_for_run()?, self.path.clone(), self.stats.clone())))
    }

    fn open_session(&self) -> DbResult<Box<dyn super::sql::SqlSession>> {
        Ok(Box::new(sql::SqliteSession::new(self.open_for_run()?, self.path.clone(), self.stats.clone())))
    }

    fn connection_room(&self) -> DbResult<Option<ConnectionRoom>> {
        Ok(None)
    }

    fn check(&self) -> DbResult<CheckReport> {
        let conn = open_existing(&self.path)?;
        check(&conn).map_err(|e| classify(&self.path, e))
    }

    fn counters(&self) -> DbResult<Box<dyn CounterSampler>> {
        Ok(Box::new(counters::Sampler::new(self.stats.clone())))
    }

    fn data_location(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }

    /// SQLite has no server: the settings are the pragmas of a connection opened as a run's
    /// sessions open theirs, read back from it rather than restated.
    fn server_info(&self) -> DbResult<DatabaseInfo> {
        let conn = self.open_for_run()?;
        let settings = run_pragmas(&conn).map_err(|e| query(&self.path, e))?;
        Ok(database_info(BackendKind::Sqlite, rusqlite::version().to_owned(), settings))
    }
}

/// The pragmas `open_for_run` sets, and the page size the load chose, as SQLite reports them.
fn run_pragmas(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let pragma =
        |name: &str| conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, rusqlite::types::Value>(0));
    let text = |v: rusqlite::types::Value| match v {
        rusqlite::types::Value::Integer(i) => i.to_string(),
        rusqlite::types::Value::Text(t) => t,
        other => format!("{other:?}"),
    };
    let synchronous = match text(pragma("synchronous")?).as_str() {
        "0" => "off".to_owned(),
        "1" => "normal".to_owned(),
        "2" => "full".to_owned(),
        "3" => "extra".to_owned(),
        other => other.to_owned(),
    };
    Ok(vec![
        ("journal_mode".into(), text(pragma("journal_mode")?)),
        ("synchronous".into(), synchronous),
        ("cache_size".into(), text(pragma("cache_size")?)),
        ("page_size".into(), text(pragma("page_size")?)),
        ("busy_timeout".into(), text(pragma("busy_timeout")?)),
    ])
}

/// Removes storbench's file `path` (one this process made or proved its own) if present.
fn remove_if_present(path: &Path) -> DbResult<()> {
    crate::files::remove_own(path).map(|_| ()).map_err(file_error)
}

/// Removes SQLite's -wal and -shm files of the database at `path`, which storbench proved its
/// own: a log left by a killed run must not be replayed into the copy put in its place.
fn remove_sqlite_files(path: &Path) -> DbResult<()> {
    for ext in ["wal", "shm"] {
        let file = sqlite_file(path, ext);
        match crate::files::entry(&file).map_err(file_error)? {
            Some(e) if e.kind == crate::files::Kind::File => crate::files::claim(e.id),
            Some(_) => return Err(file_error(crate::files::FileError::NotOurs { path: file })),
            None => continue,
        }
        remove_if_present(&file)?;
    }
    Ok(())
}

/// Copies `from` over `to`: a reflink (FICLONE) where the filesystem shares blocks, else a
/// kernel-side copy. Written to a new file of this process and renamed, so `to` is never half
/// a copy; `to` must be absent or storbench's own.
fn clone_file(from: &Path, to: &Path) -> DbResult<()> {
    use crate::files::How;
    let fail = |e: std::io::Error| {
        DbError::new(DbErrorKind::Query, format!("copying {} to {}: {e}", from.display(), to.display()))
    };
    let tmp = sidecar(to, &format!("copying-{}", std::process::id()));
    let src = crate::files::open(from, How::READ).map_err(file_error)?;
    let mut dst = crate::files::create(&tmp, How::WRITE).map_err(file_error)?;
    let copied = match rustix::fs::ioctl_ficlone(&dst, &src) {
        Ok(()) => Ok(()),
        Err(_) => std::io::copy(&mut &src, &mut dst).map(|_| ()),
    };
    let renamed = copied.map_err(fail).and_then(|()| crate::files::rename(&tmp, to).map_err(file_error));
    if renamed.is_err() {
        let _ = crate::files::remove_own(&tmp);
    }
    renamed
}

/// Sales in inventory against the order lines, and orders and lines without each other.
fn check(conn: &Connection) -> rusqlite::Result<CheckReport> {
    let mut report = CheckReport {
        products_checked: conn.query_row("SELECT COUNT(*) FROM inventory", [], |r| r.get::<_, i64>(0))?
            as u64,
        ..CheckReport::default()
    };
    let mut stmt = conn.prepare(
        "SELECT i.prod_id, i.sales, COALESCE(s.q, 0) FROM inventory i
         LEFT JOIN (SELECT prod_id, SUM(quantity) AS q FROM orderlines GROUP BY prod_id) s ON s.prod_id = i.prod_id
         WHERE i.sales <> COALESCE(s.q, 0) ORDER BY i.prod_id",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    for row in rows {
        let row = row?;
        report.mismatch_count += 1;
        if report.mismatches.len() < 100 {
            report.mismatches.push(row);
        }
    }
    report.orphans = conn.query_row(
        "SELECT (SELECT COUNT(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM orderlines l WHERE l.orderid = o.orderid))
              + (SELECT COUNT(*) FROM orderlines l WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.orderid = l.orderid))",
        [],
        |r| r.get::<_, i64>(0),
    )? as u64;
    Ok(report)
}

/// Reads one value from storbench_meta, if the table and key exist.
fn meta(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM storbench_meta WHERE key = ?1", [key], |r| r.get(0)).optional()
}

#[cfg(test)]
mod tests;
