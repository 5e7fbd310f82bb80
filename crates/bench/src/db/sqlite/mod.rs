//! The embedded SQLite backend: one database file, its sessions, its counters, and the file
//! work a workload's load and reset need (storbench's files beside the database, a copy by
//! reflink).
//!
//! Runs use WAL with `synchronous=FULL`, so every commit is made durable with an fsync of the
//! log: the storage, not a cache, decides how fast transactions commit. A workload's pristine
//! copy sits beside the database as `<file>.pristine`.

pub(crate) mod counters;
mod sql;

pub use sql::SqliteSession;

use super::{
    BackendKind, ConnectionRoom, CounterSampler, Database, DbError, DbErrorKind, DbResult, SqlSession,
    WriterLock, database_info,
};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use storbench_report::DatabaseInfo;

/// Page cache per connection during runs, KiB (SQLite's `cache_size` in its negative form).
const RUN_CACHE_KIB: i64 = 32 * 1024;
/// How long a writer waits for the write lock before the call fails as `Deadlock` (retried).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A database in one SQLite file.
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

    pub(crate) fn pristine_path(&self) -> PathBuf {
        sidecar(&self.path, "pristine")
    }

    /// A session on the database, opened as `open_for_run` opens it.
    pub fn session(&self) -> DbResult<SqliteSession> {
        Ok(SqliteSession::new(self.open_for_run()?, self.path.clone(), self.stats.clone()))
    }

    /// Opens the database for a run: WAL, durable commits, a bounded page cache.
    fn open_for_run(&self) -> DbResult<Connection> {
        let conn = open_existing(&self.path)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| query(&self.path, e))?;
        let pragmas =
            format!("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-{RUN_CACHE_KIB};");
        // Switching a database to WAL takes a lock that SQLite's busy handler does not wait
        // for: a session opened at the same moment as another on a new database is told
        // "database is locked" at once. It tries again, within the busy timeout.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match conn.execute_batch(&pragmas) {
                Ok(()) => return Ok(conn),
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(classify(&self.path, e)),
            }
        }
    }
}

/// `<path>.<ext>` beside the database: storbench's own files (the lock, the pristine copy).
pub(crate) fn sidecar(path: &Path, ext: &str) -> PathBuf {
    suffixed(path, ".", ext)
}

/// `<path>-<ext>`: SQLite's own files of the database (`-wal`, `-shm`, `-journal`).
pub(crate) fn sqlite_file(path: &Path, ext: &str) -> PathBuf {
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
pub(crate) const NO_FOLLOW: OpenFlags = OpenFlags::SQLITE_OPEN_NOFOLLOW;

pub(crate) fn open_existing(path: &Path) -> DbResult<Connection> {
    is_regular_file(path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | NO_FOLLOW;
    Connection::open_with_flags(path, flags).map_err(|e| classify(path, e))
}

/// Refuses `path` unless it is a regular file (a link, a FIFO or a device is named as such).
pub(crate) fn is_regular_file(path: &Path) -> DbResult<()> {
    use crate::files::{Entry, FileKind};
    match crate::files::entry(path) {
        Ok(Some(Entry { kind: FileKind::File, .. })) => Ok(()),
        Ok(None) => Err(DbError::new(
            DbErrorKind::Missing,
            format!("no database at {}; load one first (the OLTP load creates it)", path.display()),
        )),
        Ok(Some(Entry { kind: FileKind::Link, .. })) => {
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
pub(crate) fn file_error(e: crate::files::FileError) -> DbError {
    DbError::new(DbErrorKind::Query, e.to_string())
}

/// An error of a statement on `path`, by kind: busy/locked is retryable like a deadlock.
/// Whether SQLite answered that another connection holds the lock.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

pub(crate) fn classify(path: &Path, e: rusqlite::Error) -> DbError {
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

    fn database_name(&self) -> String {
        "main".into()
    }

    /// `flock` on `<file>.lock` beside the database (see `writer_lock`).
    fn lock_writer(&self) -> DbResult<WriterLock> {
        crate::db::writer_lock::lock_file(&sidecar(&self.path, "lock"), &self.path.display().to_string())
    }

    fn open_session(&self) -> DbResult<Box<dyn SqlSession>> {
        Ok(Box::new(self.session()?))
    }

    fn connection_room(&self) -> DbResult<Option<ConnectionRoom>> {
        Ok(None)
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
pub(crate) fn remove_if_present(path: &Path) -> DbResult<()> {
    crate::files::remove_own(path).map(|_| ()).map_err(file_error)
}

/// Removes SQLite's -wal and -shm files of the database at `path`, which storbench proved its
/// own: a log left by a killed run must not be replayed into the copy put in its place.
pub(crate) fn remove_sqlite_files(path: &Path) -> DbResult<()> {
    for ext in ["wal", "shm"] {
        let file = sqlite_file(path, ext);
        match crate::files::entry(&file).map_err(file_error)? {
            Some(e) if e.kind == crate::files::FileKind::File => crate::files::claim(e.id),
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
pub(crate) fn clone_file(from: &Path, to: &Path) -> DbResult<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::sql::{SqlSession, Statement};

    /// Sessions opened at the same moment on a new, empty database (a replay's first
    /// requests, each session on its own connection) all open, and each one's schema change
    /// is there for its next statement. Before, about one round in six had a session told
    /// "database is locked" while another switched the file to WAL; a replay then sent that
    /// session's next request on a new connection, without its CREATE.
    #[test]
    fn sessions_opened_at_once_on_a_new_database_all_open_and_keep_their_tables() {
        for round in 0..50 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("new.db");
            std::fs::File::create(&path).unwrap();
            let db = Arc::new(Sqlite::new(&path));
            let sessions: Vec<_> = ["a", "b", "c", "d"]
                .into_iter()
                .map(|table| {
                    let db = db.clone();
                    std::thread::spawn(move || -> DbResult<usize> {
                        let mut s = db.session()?;
                        s.batch(&format!("CREATE TABLE {table} (x INTEGER)"))?;
                        s.execute(Statement::Text(&format!("INSERT INTO {table} VALUES (1)")), &[])?;
                        Ok(s.query(Statement::Text(&format!("SELECT x FROM {table}")), &[])?.len())
                    })
                })
                .collect();
            for s in sessions {
                let rows = s.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
                assert_eq!(rows, 1, "round {round}");
            }
        }
    }
}
