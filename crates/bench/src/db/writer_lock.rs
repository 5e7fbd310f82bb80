//! One writer per database: the guard `Database::lock_writer` returns, and the file lock the
//! embedded database uses.
//!
//! Servers hold an advisory lock on a connection kept open inside the guard (PostgreSQL's
//! `pg_try_advisory_lock`, MariaDB's `GET_LOCK`), so a process that dies releases it with its
//! connection. A SQLite file is locked with `flock` on `<file>.lock` beside it, by the lock
//! module that also locks targets (`target::lock::lock_file`): the kernel releases the lock
//! when the holder exits, however it exits, and a second process is told the holder's pid and
//! command line.

use super::{DbError, DbErrorKind, DbResult};
use crate::target::lock::LockError;
use std::path::Path;

/// Held while this process is the database's one writer; dropping it lets the next one in.
pub struct WriterLock {
    _held: Box<dyn Send>,
}

impl WriterLock {
    pub(crate) fn new(held: impl Send + 'static) -> WriterLock {
        WriterLock { _held: Box::new(held) }
    }
}

/// The error a second writer gets: which database, who holds it, what to do.
pub(crate) fn held_by(place: &str, holder: &str) -> DbError {
    DbError::new(
        DbErrorKind::Query,
        format!(
            "{place} is in use by another storbench ({holder}): only one process at a time may load, reset or \
             run on a database, or they would reset and load under each other; wait for it to finish or stop \
             it, or use another database"
        ),
    )
}

/// Takes the lock file `lock` beside the SQLite database `place` (see
/// [`crate::target::lock::lock_file`]); the error names the holder.
pub(crate) fn lock_file(lock: &Path, place: &str) -> DbResult<WriterLock> {
    match crate::target::lock::lock_file(lock, "database") {
        Ok(held) => Ok(WriterLock::new(held)),
        Err(LockError::InUse { holder, .. }) => Err(held_by(place, &holder)),
        Err(LockError::Failed { path, reason }) => Err(DbError::new(
            DbErrorKind::Query,
            format!("cannot lock {} ({reason}); check the directory's permissions", path.display()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_a_file_is_refused_naming_the_holder_and_free_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("x.db.lock");
        let first = lock_file(&lock, "x.db").unwrap();
        // flock is per open file description, so a second open in this process conflicts too.
        let err = lock_file(&lock, "x.db").err().expect("the second writer is refused");
        let named = format!("x.db is in use by another storbench (pid {}", std::process::id());
        assert!(err.message.starts_with(&named), "{}", err.message);
        drop(first);
        assert!(lock_file(&lock, "x.db").is_ok());
    }
}
