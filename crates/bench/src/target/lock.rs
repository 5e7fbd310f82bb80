//! One storbench at a time per place: an advisory lock (flock) on the target directory, file
//! or device, on an evaluation's bundle directory, and on the lock file beside a SQLite
//! database, taken before anything is written.
//!
//! Two runs on one target would each measure the other's I/O, and two `--verify` runs would
//! each see the other's writes as corruption. The lock is the kernel's, so it goes with the
//! process however it ends (no stale locks). The holder is named from /proc/locks.
//! [`lock`]: within one process a place locked twice shares the first lock, since an
//! evaluation holds its targets for its whole length while each of its runs takes them again.
//! [`lock_file`]: one holder only, even within a process (a database's one writer); it writes
//! the holder into the file, for a holder /proc/locks does not list (another host).

use crate::files;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// A held lock; released when the last holder in this process drops it.
#[derive(Debug, Clone)]
pub struct Lock {
    _held: Arc<Held>,
}

#[derive(Debug)]
struct Held {
    /// Where this process shares it (None: held by one holder alone).
    shared: Option<FileKey>,
    _file: File,
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.shared.is_some() {
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            held.retain(|(key, mine)| Some(*key) != self.shared || mine.strong_count() > 0);
        }
    }
}

/// A file by (device, inode): the same file whatever path named it.
type FileKey = (u64, u64);

/// Shared locks this process holds.
static HELD: Mutex<Vec<(FileKey, Weak<Held>)>> = Mutex::new(Vec::new());

/// This process is one of a run's shards: [`lock`] takes its places in shared mode.
static SHARD: AtomicBool = AtomicBool::new(false);

/// Makes this process one of several shards of one run, started together: the places it
/// [`lock`]s (a target directory, a device) are shared with the other shards, each of which
/// works on its own file or region there, and still refused to any run that is no shard
/// (which takes them exclusively). [`lock_file`], a database's one writer, stays exclusive.
pub fn share_among_shards() {
    SHARD.store(true, Ordering::Relaxed);
}

/// Why a lock was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    #[error("{path} is in use by another storbench ({holder}); wait for it to finish, or use another {what}")]
    InUse { path: PathBuf, holder: String, what: &'static str },
    #[error("{path} cannot be locked ({reason}); {fix}")]
    Failed { path: PathBuf, reason: String, fix: &'static str },
}

/// This process, as a holder is named to another one: `storbench pid 1234 on host`.
pub fn this_process() -> String {
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    format!("storbench pid {} on {host}", std::process::id())
}

/// Takes the lock on `path` (a directory, file or block device that exists), or says who holds
/// it; shared with this process's other holders. `what` names the kind of thing for the
/// message ("target", "evaluation").
pub fn lock(path: &Path, what: &'static str) -> Result<Lock, LockError> {
    let failed = failed(path);
    let file = files::open_for_lock(path).map_err(|e| failed(e.into()))?;
    let meta = file.metadata().map_err(failed)?;
    let key = (meta.dev(), meta.ino());
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(mine) = held.iter().find(|(k, _)| *k == key).and_then(|(_, w)| w.upgrade()) {
        return Ok(Lock { _held: mine });
    }
    flock(&file, path, what, SHARD.load(Ordering::Relaxed))?;
    let mine = Arc::new(Held { shared: Some(key), _file: file });
    held.retain(|(k, _)| *k != key);
    held.push((key, Arc::downgrade(&mine)));
    Ok(Lock { _held: mine })
}

/// Takes the lock on the file `path` (created when missing) for one holder: a second lock on
/// it is refused, in this process too. Writes [`this_process`] into the file when storbench
/// made it (it is new, or holds what an earlier storbench wrote); a file of the user's at that
/// name is locked as it is, never truncated or written. A link or a special file there is
/// refused.
pub fn lock_file(path: &Path, what: &'static str) -> Result<Lock, LockError> {
    let failed = failed(path);
    let (mut file, created) =
        files::open_or_create(path, files::How::READ_WRITE).map_err(|e| failed(e.into()))?;
    let ours = created || written_by_storbench(&file);
    flock(&file, path, what, false)?;
    if ours {
        file.set_len(0).map_err(failed)?;
        file.rewind().map_err(failed)?;
        writeln!(file, "{}", this_process()).map_err(failed)?;
    }
    Ok(Lock { _held: Arc::new(Held { shared: None, _file: file }) })
}

/// Whether the whole of `file` is what [`lock_file`] writes.
fn written_by_storbench(file: &File) -> bool {
    let mut text = String::new();
    let read = file.take(201).read_to_string(&mut text);
    read.is_ok() && text.len() <= 200 && text.lines().count() == 1 && written_holder_line(&text).is_some()
}

fn failed(path: &Path) -> impl Fn(std::io::Error) -> LockError + Copy + '_ {
    move |e| LockError::Failed { path: path.to_path_buf(), fix: fix_for(&e), reason: e.to_string() }
}

/// What to do about a lock file that could not be made or written, by what went wrong: a full
/// disk is not a matter of permissions.
pub fn fix_for(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOSPC) => "the disk is full: free space on it",
        Some(libc::EDQUOT) => "the disk quota is used up: free space in it",
        Some(libc::EROFS) => "the filesystem is read-only: use a writable place",
        Some(libc::EACCES | libc::EPERM) => "check the directory's permissions",
        _ => "check the directory it is in",
    }
}

/// Takes the flock on `file` without waiting, exclusive or (`shared`) shared with other
/// shards; when another holds it, names the holder.
fn flock(file: &File, path: &Path, what: &'static str, shared: bool) -> Result<(), LockError> {
    use rustix::fs::FlockOperation::{NonBlockingLockExclusive, NonBlockingLockShared};
    let how = if shared { NonBlockingLockShared } else { NonBlockingLockExclusive };
    match rustix::fs::flock(file, how) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
            let holder = holder(file).unwrap_or_else(|| "another process".into());
            Err(LockError::InUse { path: path.to_path_buf(), holder, what })
        }
        Err(e) => Err(failed(path)(e.into())),
    }
}

/// Locks `path`, or where it does not exist yet, the nearest directory above it that does (so
/// two runs about to create the same directory cannot both go ahead).
pub fn lock_place(path: &Path, what: &'static str) -> Result<Lock, LockError> {
    let absolute = files::resolve(path).unwrap_or_else(|_| path.to_path_buf());
    let existing = absolute.ancestors().find(|p| p.exists()).unwrap_or(Path::new("/"));
    lock(existing, what)
}

/// Who holds the flock on `file`: "pid N: its command line" from /proc/locks, or else (a holder
/// on another host) what [`lock_file`] wrote into a regular file.
fn holder(file: &File) -> Option<String> {
    let meta = file.metadata().ok()?;
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let Some(pid) = holder_pid(&locks, meta.dev(), meta.ino()) else {
        return meta.is_file().then(|| written_holder(file)).flatten();
    };
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let command = crate::secret::redact(&words.join(" "));
    Some(if command.is_empty() { format!("pid {pid}") } else { format!("pid {pid}: {command}") })
}

/// The holder [`lock_file`] wrote, if the file holds one.
fn written_holder(file: &File) -> Option<String> {
    let mut text = String::new();
    file.take(200).read_to_string(&mut text).ok()?;
    written_holder_line(&text)
}

fn written_holder_line(text: &str) -> Option<String> {
    let line = text.lines().next()?.trim();
    line.starts_with("storbench pid ").then(|| line.to_string())
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
    fn a_lock_file_that_cannot_be_written_says_what_to_do_by_why() {
        let fix = |errno| fix_for(&std::io::Error::from_raw_os_error(errno));
        assert_eq!(fix(libc::ENOSPC), "the disk is full: free space on it");
        assert_eq!(fix(libc::EACCES), "check the directory's permissions");
        assert_eq!(fix(libc::EROFS), "the filesystem is read-only: use a writable place");
    }

    #[test]
    fn the_holder_is_read_from_proc_locks() {
        let text = "1: POSIX  ADVISORY  WRITE 11 fd:01:99 0 EOF\n2: FLOCK  ADVISORY  WRITE 4242 fd:01:131090 0 EOF\n";
        assert_eq!(holder_pid(text, rustix::fs::makedev(0xfd, 1), 131090), Some(4242));
        assert_eq!(holder_pid(text, rustix::fs::makedev(0xfd, 1), 99), None, "a POSIX lock is not ours");
    }

    #[test]
    fn a_lock_file_has_one_holder_even_in_this_process_named_and_written_into_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db.lock");
        let first = lock_file(&path, "database").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), this_process());
        // flock is per open file description, so a second open in this process conflicts too.
        match lock_file(&path, "database") {
            Err(LockError::InUse { holder, .. }) => {
                assert!(holder.starts_with(&format!("pid {}", std::process::id())), "{holder}")
            }
            other => panic!("the second holder must be refused: {other:?}"),
        }
        drop(first);
        // Free once dropped; a test on another thread that forks a child in the same instant
        // holds a copy of the descriptor until its exec closes it, so allow that moment.
        crate::testing::wait_until(
            "the lock to be free once dropped",
            std::time::Duration::from_secs(2),
            || lock_file(&path, "database").is_ok(),
        );
    }

    #[test]
    fn a_holder_proc_locks_does_not_list_is_named_from_the_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.db.lock");
        std::fs::write(&path, "storbench pid 77 on elsewhere\n").unwrap();
        assert_eq!(
            written_holder(&File::open(&path).unwrap()).as_deref(),
            Some("storbench pid 77 on elsewhere")
        );
        std::fs::write(&path, "some data\n").unwrap();
        assert_eq!(written_holder(&File::open(&path).unwrap()), None, "only what lock_file writes");
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
