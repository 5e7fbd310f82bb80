//! One writer per database: the guard `Database::lock_writer` returns, and the file lock the
//! embedded database uses.
//!
//! Servers hold an advisory lock on a connection kept open inside the guard (PostgreSQL's
//! `pg_try_advisory_lock`, MariaDB's `GET_LOCK`), so a process that dies releases it with its
//! connection. A SQLite file is locked with `flock` on `<file>.lock` beside it, by the lock
//! module that also locks targets (`target::lock::lock_file`): the kernel releases the lock
//! when the holder exits, however it exits, and a second process is told the holder's pid and
//! command line.
//!
//! A server releases a lock when it has finished closing the holder's session, which can be a
//! moment after the holder exited: a script running `oltp load` and then at once `oltp run`
//! would find the lock of a process that is gone. So a writer that finds the lock held by a
//! session whose process has ended (or by no session the server still shows) tries again for
//! up to [`ENDING_WAIT`] before it gives up; a holder that is alive is named at once.

use super::{DbError, DbErrorKind, DbResult};
use crate::target::lock::LockError;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a writer waits for the server to finish closing the session of a holder that
/// has ended.
pub const ENDING_WAIT: Duration = Duration::from_secs(5);

/// Who holds a server's lock, as its server shows it.
pub(crate) struct Holder {
    /// How a message names it.
    pub shown: String,
    /// Its process has ended (or the server no longer shows it): the lock is on its way out.
    pub ended: bool,
}

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

/// Takes a server's lock with `try_take` (None when taken, else who holds it), trying again
/// every 50 ms for up to [`ENDING_WAIT`] while the holder has ended; `place` names the database.
pub(crate) fn take_waiting(
    place: &str,
    mut try_take: impl FnMut() -> DbResult<Option<Holder>>,
) -> DbResult<()> {
    let began = Instant::now();
    loop {
        let Some(holder) = try_take()? else { return Ok(()) };
        if !holder.ended {
            return Err(held_by(place, &holder.shown));
        }
        if began.elapsed() >= ENDING_WAIT {
            let shown = format!(
                "{}, whose session the server had still not closed after {} s",
                holder.shown,
                ENDING_WAIT.as_secs()
            );
            return Err(held_by(place, &shown));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `name` ("storbench pid N on HOST", as [`crate::target::lock::this_process`] names a
/// process) is a process of this machine that has exited. A holder on another machine, or not
/// named so, is taken to be alive.
pub(crate) fn storbench_process_ended(name: &str) -> bool {
    let Some((pid, host)) = name.strip_prefix("storbench pid ").and_then(|rest| rest.split_once(" on "))
    else {
        return false;
    };
    let here = rustix::system::uname().nodename().to_string_lossy().into_owned();
    pid.parse::<u32>().is_ok_and(|pid| host == here && !Path::new(&format!("/proc/{pid}")).exists())
}

/// Whether no established TCP connection of this machine goes from local port `port` to a
/// server's port `server_port`: the client the server shows at that port has closed its end
/// (or is on another machine).
pub(crate) fn no_local_connection(port: u16, server_port: u16) -> bool {
    const ESTABLISHED: &str = "01";
    let port_of = |address: &str| address.rsplit_once(':').and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
    let open = |table: &str| {
        std::fs::read_to_string(table).is_ok_and(|text| {
            text.lines().skip(1).any(|line| {
                let fields: Vec<&str> = line.split_whitespace().take(4).collect();
                matches!(fields[..], [_, local, remote, ESTABLISHED]
                    if port_of(local) == Some(port) && port_of(remote) == Some(server_port))
            })
        })
    };
    !open("/proc/net/tcp") && !open("/proc/net/tcp6")
}

/// Takes the lock file `lock` beside the SQLite database `place` (see
/// [`crate::target::lock::lock_file`]); the error names the holder.
pub(crate) fn lock_file(lock: &Path, place: &str) -> DbResult<WriterLock> {
    match crate::target::lock::lock_file(lock, "database") {
        Ok(held) => Ok(WriterLock::new(held)),
        Err(LockError::InUse { holder, .. }) => Err(held_by(place, &holder)),
        Err(LockError::Failed { path, reason, fix }) => {
            Err(DbError::new(DbErrorKind::Query, format!("cannot lock {} ({reason}); {fix}", path.display())))
        }
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

    #[test]
    fn a_holder_is_ended_only_when_its_process_on_this_machine_is_gone() {
        let here = rustix::system::uname().nodename().to_string_lossy().into_owned();
        assert!(!storbench_process_ended(&crate::target::lock::this_process()));
        assert!(storbench_process_ended(&format!("storbench pid 999999999 on {here}")));
        assert!(!storbench_process_ended("storbench pid 999999999 on another-machine"));
        assert!(!storbench_process_ended("psql"));
    }

    #[test]
    fn a_local_connection_is_seen_by_its_ports_until_it_closes() {
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(server.local_addr().unwrap()).unwrap();
        let (accepted, _) = server.accept().unwrap();
        let (port, server_port) = (client.local_addr().unwrap().port(), server.local_addr().unwrap().port());
        assert!(!no_local_connection(port, server_port));
        drop(client);
        assert!(no_local_connection(port, server_port), "a closed end is not established");
        drop(accepted);
    }

    #[test]
    fn a_lock_held_by_an_ended_holder_is_waited_for_and_a_live_one_refused_at_once() {
        let mut tries = 0;
        let taken = take_waiting("db", || {
            tries += 1;
            Ok((tries < 3).then(|| Holder { shown: "gone".into(), ended: true }))
        });
        assert!(taken.is_ok() && tries == 3);
        let began = Instant::now();
        let err = take_waiting("db", || Ok(Some(Holder { shown: "storbench pid 7".into(), ended: false })));
        assert!(err.unwrap_err().message.contains("storbench pid 7") && began.elapsed() < ENDING_WAIT);
    }
}
