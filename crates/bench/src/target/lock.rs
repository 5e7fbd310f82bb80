//! One storbench at a time per target: an advisory lock (flock) on the target directory, file
//! or device, and on an evaluation's bundle directory, taken before anything is written.
//!
//! Two runs on one target would each measure the other's I/O, and two `--verify` runs would
//! each see the other's writes as corruption. The lock is the kernel's, so it goes with the
//! process however it ends (no stale lock files). The holder is named from /proc/locks.
//! Within one process a path locked twice shares the first lock: an evaluation holds its
//! targets for its whole length while each of its runs takes them again.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// A held lock; released when the last holder in this process drops it.
#[derive(Debug, Clone)]
pub struct Lock {
    _held: Arc<Held>,
}

#[derive(Debug)]
struct Held {
    key: FileKey,
    _file: File,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|(key, mine)| *key != self.key || mine.strong_count() > 0);
    }
}

/// A file by (device, inode): the same file whatever path named it.
type FileKey = (u64, u64);

/// Locks this process holds.
static HELD: Mutex<Vec<(FileKey, Weak<Held>)>> = Mutex::new(Vec::new());

/// Why a lock was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    #[error("{path} is in use by another storbench ({holder}); wait for it to finish, or use another {what}")]
    InUse { path: PathBuf, holder: String, what: &'static str },
    #[error("{path} cannot be locked ({reason})")]
    Failed { path: PathBuf, reason: String },
}

/// Takes the lock on `path` (a directory, file or block device that exists), or says who holds
/// it. `what` names the kind of thing for the message ("target", "evaluation").
pub fn lock(path: &Path, what: &'static str) -> Result<Lock, LockError> {
    let failed = |e: std::io::Error| LockError::Failed { path: path.to_path_buf(), reason: e.to_string() };
    let meta = std::fs::metadata(path).map_err(failed)?;
    let key = (meta.dev(), meta.ino());
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(mine) = held.iter().find(|(k, _)| *k == key).and_then(|(_, w)| w.upgrade()) {
        return Ok(Lock { _held: mine });
    }
    let file = File::open(path).map_err(failed)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
            let holder = holder(&meta).unwrap_or_else(|| "another process".into());
            return Err(LockError::InUse { path: path.to_path_buf(), holder, what });
        }
        Err(e) => return Err(failed(e.into())),
    }
    let mine = Arc::new(Held { key, _file: file });
    held.retain(|(k, _)| *k != key);
    held.push((key, Arc::downgrade(&mine)));
    Ok(Lock { _held: mine })
}

/// Locks `path`, or where it does not exist yet, the nearest directory above it that does (so
/// two runs about to create the same directory cannot both go ahead).
pub fn lock_place(path: &Path, what: &'static str) -> Result<Lock, LockError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let existing = absolute.ancestors().find(|p| p.exists()).unwrap_or(Path::new("/"));
    lock(existing, what)
}

/// "pid N: its command line" of the process holding a flock on the file, from /proc/locks.
fn holder(meta: &std::fs::Metadata) -> Option<String> {
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid = holder_pid(&locks, meta.dev(), meta.ino())?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let command = crate::secret::redact(&words.join(" "));
    Some(if command.is_empty() { format!("pid {pid}") } else { format!("pid {pid}: {command}") })
}

/// The pid of the FLOCK line on device `dev`, inode `ino` in /proc/locks text, whose lines read
/// `1: FLOCK  ADVISORY  WRITE 4242 fd:01:131090 0 EOF` (device as hex major:minor).
fn holder_pid(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    let want = format!("{:02x}:{:02x}:{ino}", rustix::fs::major(dev), rustix::fs::minor(dev));
    locks.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "FLOCK")?;
        let (pid, file) = (words.get(at + 3)?, words.get(at + 4)?);
        (*file == want).then(|| pid.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_read_from_proc_locks() {
        let text = "1: POSIX  ADVISORY  WRITE 11 fd:01:99 0 EOF\n2: FLOCK  ADVISORY  WRITE 4242 fd:01:131090 0 EOF\n";
        assert_eq!(holder_pid(text, rustix::fs::makedev(0xfd, 1), 131090), Some(4242));
        assert_eq!(holder_pid(text, rustix::fs::makedev(0xfd, 1), 99), None, "a POSIX lock is not ours");
    }

    #[test]
    fn a_second_lock_in_this_process_shares_the_first_and_another_process_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path(), "target").unwrap();
        let again = lock(dir.path(), "target").expect("the same process may lock again");
        drop(first);
        // Another open file description (as another process would have) is refused while held.
        let other = File::open(dir.path()).unwrap();
        let busy = rustix::fs::flock(&other, rustix::fs::FlockOperation::NonBlockingLockExclusive);
        assert_eq!(busy, Err(rustix::io::Errno::WOULDBLOCK), "still held by `again`");
        drop(again);
        rustix::fs::flock(&other, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            .expect("released when the last holder drops it");
    }
}
