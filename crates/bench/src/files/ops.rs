//! The operations: create, open, replace and remove, each by the rules in the module doc, and
//! the record of the files that are storbench's own in this process.

use super::walk::{entry_at, entry_of, explain, open_nofollow, parent, split};
use super::{Entry, FileError, FileId, FileKind};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The files this process may replace or remove: the ones it created, and the ones a caller
/// proved storbench's own (a mark or a manifest) and [`claim`]ed.
static OWN: Mutex<Option<HashSet<FileId>>> = Mutex::new(None);

fn own(f: impl FnOnce(&mut HashSet<FileId>) -> bool) -> bool {
    f(OWN.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashSet::new))
}

/// Records `file` as storbench's own, once the caller proved it (by the mark storbench
/// writes, or by a manifest that names its device and inode): it may then be replaced or
/// removed.
pub fn claim(id: FileId) {
    own(|set| set.insert(id));
}

/// Whether `id` is a file this process created or claimed.
pub fn is_own(id: FileId) -> bool {
    own(|set| set.contains(&id))
}

/// Claims the regular file at `path` as storbench's own, once the caller proved it so by its
/// content (a summary, an evaluation, a manifest storbench wrote); false when no regular file
/// is there.
pub fn claim_at(path: &Path) -> bool {
    match entry(path) {
        Ok(Some(found)) if found.kind == FileKind::File => {
            claim(found.id);
            true
        }
        _ => false,
    }
}

/// Whether the file at `path` is one this process created or claimed.
pub fn is_own_at(path: &Path) -> bool {
    entry(path).ok().flatten().is_some_and(|e| is_own(e.id))
}

/// How a file is opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct How {
    read: bool,
    write: bool,
    direct: bool,
    dsync: bool,
    sync: bool,
    append: bool,
}

impl How {
    pub const READ: How =
        How { read: true, write: false, direct: false, dsync: false, sync: false, append: false };
    pub const WRITE: How =
        How { read: false, write: true, direct: false, dsync: false, sync: false, append: false };
    pub const READ_WRITE: How =
        How { read: true, write: true, direct: false, dsync: false, sync: false, append: false };

    /// With O_DIRECT when `on` (the page cache bypassed).
    pub const fn direct(self, on: bool) -> How {
        How { direct: on, ..self }
    }

    /// With O_DSYNC when `on` (every write durable when it completes).
    pub const fn dsync(self, on: bool) -> How {
        How { dsync: on, ..self }
    }

    /// With O_SYNC when `on` (every write durable with its metadata when it completes).
    pub const fn sync(self, on: bool) -> How {
        How { sync: on, ..self }
    }

    /// Writes go to the end.
    pub const fn append(self) -> How {
        How { append: true, write: true, ..self }
    }

    fn flags(self) -> OFlags {
        let mut f = match (self.read, self.write) {
            (true, true) => OFlags::RDWR,
            (false, true) => OFlags::WRONLY,
            _ => OFlags::RDONLY,
        };
        f.set(OFlags::DIRECT, self.direct);
        // rustix's OFlags::DSYNC is O_SYNC's value on Linux; O_DSYNC is its own bit, which
        // O_SYNC holds too.
        if self.dsync {
            f |= O_DSYNC;
        }
        if self.sync {
            f |= OFlags::SYNC;
        }
        f.set(OFlags::APPEND, self.append);
        f
    }
}

/// O_DSYNC: each write's data durable when it returns (not its metadata, as O_SYNC).
pub(crate) const O_DSYNC: OFlags = OFlags::from_bits_retain(libc::O_DSYNC as u32);

const FILE_MODE: Mode = Mode::from_raw_mode(0o644);
const DIR_MODE: Mode = Mode::from_raw_mode(0o755);

/// What `path` holds, without following a link at any step; None when nothing is there (or
/// a directory on the way is missing).
pub fn entry(path: &Path) -> Result<Option<Entry>, FileError> {
    if split(path).1.is_none() {
        // "/" or ".": no name to look at without following, and no link either.
        let fd = open_nofollow(path, OFlags::PATH, Mode::empty())?;
        return entry_of(&fd).map(Some).map_err(|e| explain(path, "looking at", e));
    }
    let (dir, name) = match parent(path) {
        Ok(found) => found,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    match entry_at(&dir, name) {
        Ok(e) => Ok(Some(e)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(explain(path, "looking at", e)),
    }
}

/// Creates `path` as a new regular file: whatever is at that name already is left as it is
/// and named in the error. The file is storbench's own from now on.
pub fn create(path: &Path, how: How) -> Result<File, FileError> {
    let flags = how.flags() | OFlags::CREATE | OFlags::EXCL;
    match open_nofollow(path, flags, FILE_MODE) {
        Ok(fd) => {
            let file = File::from(fd);
            claim(FileId::of(&file).map_err(|source| io("creating", path, source))?);
            Ok(file)
        }
        Err(e) if e.os_error() == Some(libc::EEXIST) => Err(what_is_there(path, e)),
        Err(e) => Err(e),
    }
}

/// The error for a name that is taken: a link, or whatever else is there.
fn what_is_there(path: &Path, e: FileError) -> FileError {
    match entry(path) {
        Ok(Some(Entry { kind: FileKind::Link, .. })) => FileError::Link { path: path.to_path_buf() },
        Ok(Some(found)) => FileError::Exists { path: path.to_path_buf(), kind: found.kind },
        _ => e,
    }
}

/// Opens the existing regular file `path`. Anything else (a FIFO, a device, a directory, a
/// link) is refused before it is opened, and what was opened is checked to be the file that
/// was looked at.
pub fn open(path: &Path, how: How) -> Result<File, FileError> {
    let found = entry(path)?.ok_or_else(|| io("opening", path, Errno::NOENT.into()))?;
    match found.kind {
        FileKind::File => {}
        FileKind::Link => return Err(FileError::Link { path: path.to_path_buf() }),
        kind => return Err(FileError::NotRegular { path: path.to_path_buf(), kind }),
    }
    // Non-blocking, in case the name was changed to a FIFO since: the check below refuses it.
    let fd = open_nofollow(path, how.flags() | OFlags::NONBLOCK, Mode::empty())?;
    let file = File::from(fd);
    let opened = entry_of(&file).map_err(|e| io("opening", path, e.into()))?;
    if opened.kind != FileKind::File || opened.id != found.id {
        return Err(FileError::NotOurs { path: path.to_path_buf() });
    }
    rustix::fs::fcntl_setfl(&file, how.flags() & (OFlags::APPEND | OFlags::DIRECT))
        .map_err(|e| io("opening", path, e.into()))?;
    Ok(file)
}

/// Opens `path` when it is a regular file, or creates it when nothing is there: true when it
/// was created (and is storbench's own).
pub fn open_or_create(path: &Path, how: How) -> Result<(File, bool), FileError> {
    match create(path, how) {
        Ok(file) => Ok((file, true)),
        Err(FileError::Exists { kind: FileKind::File, .. }) => Ok((open(path, how)?, false)),
        Err(e) => Err(e),
    }
}

/// Opens the block device `path`, where a device is what the user allowed.
pub fn open_device(path: &Path, how: How) -> Result<File, FileError> {
    match entry(path)? {
        Some(Entry { kind: FileKind::BlockDevice, .. }) => {}
        Some(found) => return Err(FileError::NotDevice { path: path.to_path_buf(), kind: found.kind }),
        None => return Err(io("opening", path, Errno::NOENT.into())),
    }
    let file = File::from(open_nofollow(path, how.flags(), Mode::empty())?);
    match entry_of(&file) {
        Ok(opened) if opened.kind == FileKind::BlockDevice => Ok(file),
        _ => Err(FileError::NotOurs { path: path.to_path_buf() }),
    }
}

/// Opens a directory, block device or regular file read-only, to hold an advisory lock on it
/// (opening it this way neither writes it nor waits).
pub fn open_for_lock(path: &Path) -> Result<File, FileError> {
    match entry(path)? {
        Some(Entry { kind: FileKind::Dir | FileKind::BlockDevice | FileKind::File, .. }) => {}
        Some(Entry { kind: FileKind::Link, .. }) => return Err(FileError::Link { path: path.to_path_buf() }),
        Some(found) => return Err(FileError::NotRegular { path: path.to_path_buf(), kind: found.kind }),
        None => return Err(io("locking", path, Errno::NOENT.into())),
    }
    Ok(File::from(open_nofollow(path, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())?))
}

/// Creates the directory `path` (its parent exists); whatever is at that name already is left
/// as it is. The directory is storbench's own from now on.
pub fn create_dir(path: &Path) -> Result<FileId, FileError> {
    let (dir, name) = parent(path)?;
    match rustix::fs::mkdirat(&dir, name, DIR_MODE) {
        Ok(()) => {}
        Err(Errno::EXIST) => return Err(what_is_there(path, io("creating", path, Errno::EXIST.into()))),
        Err(e) => return Err(explain(path, "creating", e)),
    }
    let made = entry_at(&dir, name).map_err(|e| explain(path, "creating", e))?;
    claim(made.id);
    Ok(made.id)
}

/// Creates `path` and whatever directories above it are missing; the ones that exist must be
/// directories (no link on the way). Returns the directories it made, outermost first, for
/// the caller to remove when it gives up.
pub fn create_dirs(path: &Path) -> Result<Vec<(PathBuf, FileId)>, FileError> {
    let mut made = Vec::new();
    let mut outermost_first: Vec<&Path> = path.ancestors().filter(|p| !p.as_os_str().is_empty()).collect();
    outermost_first.reverse();
    for dir in outermost_first {
        match entry(dir)? {
            Some(Entry { kind: FileKind::Dir, .. }) => {}
            Some(Entry { kind: FileKind::Link, .. }) => {
                return Err(FileError::Link { path: dir.to_path_buf() });
            }
            Some(found) => return Err(FileError::NotDir { path: dir.to_path_buf(), kind: found.kind }),
            None => made.push((dir.to_path_buf(), create_dir(dir)?)),
        }
    }
    Ok(made)
}

/// Removes the file at `path` when it is storbench's own (created or claimed in this
/// process); false when nothing is there. Another file at that name is left, with an error.
fn remove(path: &Path, at: AtFlags) -> Result<bool, FileError> {
    let (dir, name) = match parent(path) {
        Ok(found) => found,
        Err(e) if e.is_not_found() => return Ok(false),
        Err(e) => return Err(e),
    };
    let found = match entry_at(&dir, name) {
        Ok(found) => found,
        Err(Errno::NOENT) => return Ok(false),
        Err(e) => return Err(explain(path, "removing", e)),
    };
    if !is_own(found.id) {
        return Err(FileError::NotOurs { path: path.to_path_buf() });
    }
    match rustix::fs::unlinkat(&dir, name, at) {
        Ok(()) | Err(Errno::NOENT) => {
            own(|set| set.remove(&found.id));
            Ok(true)
        }
        Err(e) => Err(explain(path, "removing", e)),
    }
}

/// Removes the file at `path` when it is storbench's own; false when nothing is there.
pub fn remove_own(path: &Path) -> Result<bool, FileError> {
    remove(path, AtFlags::empty())
}

/// Removes the empty directory at `path` when it is storbench's own; false when nothing is
/// there.
pub fn remove_own_dir(path: &Path) -> Result<bool, FileError> {
    remove(path, AtFlags::REMOVEDIR)
}

/// Renames storbench's own file `from` to `to`, which must hold nothing or storbench's own
/// file (then replaced, atomically).
pub fn rename(from: &Path, to: &Path) -> Result<(), FileError> {
    let (from_dir, from_name) = parent(from)?;
    let moved = entry_at(&from_dir, from_name).map_err(|e| explain(from, "renaming", e))?;
    if !is_own(moved.id) {
        return Err(FileError::NotOurs { path: from.to_path_buf() });
    }
    let (to_dir, to_name) = parent(to)?;
    let replaced = match entry_at(&to_dir, to_name) {
        Ok(found) if is_own(found.id) => Some(found.id),
        Ok(found) if found.kind == FileKind::Link => return Err(FileError::Link { path: to.to_path_buf() }),
        Ok(found) => return Err(FileError::Exists { path: to.to_path_buf(), kind: found.kind }),
        Err(Errno::NOENT) => None,
        Err(e) => return Err(explain(to, "renaming", e)),
    };
    let flags = if replaced.is_some() { RenameFlags::empty() } else { RenameFlags::NOREPLACE };
    let renamed = match rustix::fs::renameat_with(&from_dir, from_name, &to_dir, to_name, flags) {
        // A filesystem without RENAME_NOREPLACE: the name was free a moment ago.
        Err(Errno::INVAL) if !flags.is_empty() => {
            rustix::fs::renameat(&from_dir, from_name, &to_dir, to_name)
        }
        other => other,
    };
    match renamed {
        Ok(()) => {
            if let Some(old) = replaced {
                own(|set| set.remove(&old));
            }
            Ok(())
        }
        Err(Errno::EXIST) => Err(what_is_there(to, io("renaming", to, Errno::EXIST.into()))),
        Err(e) => Err(explain(to, "renaming", e)),
    }
}

/// Writes `bytes` as the file `path` through a new file beside it renamed into place, so a
/// reader never sees half of it; `path` must hold nothing or storbench's own file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = create(&tmp, How::WRITE)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_data());
    if let Err(source) = written {
        let _ = remove_own(&tmp);
        return Err(io("writing", &tmp, source));
    }
    rename(&tmp, path).inspect_err(|_| {
        let _ = remove_own(&tmp);
    })
}

/// The error of an operation `op` on `path`.
pub(super) fn io(op: &'static str, path: &Path, source: std::io::Error) -> FileError {
    FileError::Io { op, path: path.to_path_buf(), source }
}
