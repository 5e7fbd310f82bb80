//! One writer per database: the guard `Database::lock_writer` returns, and the file lock the
//! embedded database uses.
//!
//! Servers hold an advisory lock on a connection kept open inside the guard (PostgreSQL's
//! `pg_try_advisory_lock`, MariaDB's `GET_LOCK`), so a process that dies releases it with its
//! connection. A SQLite file is locked with `flock` on `<file>.lock` beside it, which holds the
//! holder's pid and host for the message a second process gets; the kernel releases the lock
//! when the holder exits, however it exits.

use super::{DbError, DbErrorKind, DbResult};
use std::io::{Read, Seek, Write};
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

/// This process, as a holder is named to another one: `storbench pid 1234 on host`.
pub(crate) fn this_process() -> String {
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    format!("storbench pid {} on {host}", std::process::id())
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

/// Takes the lock file `lock` (created when missing) without waiting, and writes this
/// process into it; the error names the holder written there.
pub(crate) fn lock_file(lock: &Path, place: &str) -> DbResult<WriterLock> {
    let fail = |e: std::io::Error| {
        DbError::new(
            DbErrorKind::Query,
            format!("cannot lock {} ({e}); check the directory's permissions", lock.display()),
        )
    };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock)
        .map_err(fail)?;
    use rustix::fs::{FlockOperation, flock};
    if let Err(e) = flock(&file, FlockOperation::NonBlockingLockExclusive) {
        if e != rustix::io::Errno::WOULDBLOCK {
            return Err(fail(e.into()));
        }
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        return Err(held_by(place, if holder.is_empty() { "a process that wrote no name" } else { holder }));
    }
    file.set_len(0).map_err(fail)?;
    file.rewind().map_err(fail)?;
    writeln!(file, "{}", this_process()).map_err(fail)?;
    Ok(WriterLock::new(file))
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
        assert!(err.message.contains(&format!("pid {}", std::process::id())), "{}", err.message);
        drop(first);
        assert!(lock_file(&lock, "x.db").is_ok());
    }
}
