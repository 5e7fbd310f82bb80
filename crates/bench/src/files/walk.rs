//! Resolving a user's path once, and walking a path afterwards with no symbolic link at any
//! step.

use super::{Entry, FileError};
use rustix::fs::{AtFlags, CWD, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

/// The path the user meant: the longest part of `path` that exists, with the links in it
/// followed (the user chose them), then the rest as given. Operations on the result follow no
/// link, so this is the one place a link is followed.
pub fn resolve(path: &Path) -> Result<PathBuf, FileError> {
    let io = |source| FileError::Io { op: "resolving", path: path.to_path_buf(), source };
    if path.as_os_str().is_empty() {
        return Err(io(std::io::Error::new(std::io::ErrorKind::InvalidInput, "an empty path")));
    }
    let absolute = std::path::absolute(path).map_err(io)?;
    let mut rest = Vec::new();
    let mut existing = absolute.as_path();
    loop {
        match existing.canonicalize() {
            Ok(real) => return Ok(append(real, rest.iter().rev())),
            // A dangling link, or a name not made yet: keep it as given, below what exists.
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_owned());
                    existing = parent;
                }
                _ => return Err(io(std::io::Error::from(std::io::ErrorKind::NotFound))),
            },
        }
    }
}

/// Like [`resolve`], but the last name is kept as given: the path of a file storbench will
/// create or write, where a link is refused when it is used, not followed now.
pub fn resolve_parent(path: &Path) -> Result<PathBuf, FileError> {
    let absolute = std::path::absolute(path).map_err(|source| FileError::Io {
        op: "resolving",
        path: path.to_path_buf(),
        source,
    })?;
    match (absolute.parent(), absolute.file_name()) {
        (Some(parent), Some(name)) => Ok(resolve(parent)?.join(name)),
        _ => resolve(&absolute),
    }
}

/// `base` with `names` appended, `..` taking one name off (names below what exists are not
/// links, so this is what the kernel would do).
fn append<'a>(mut base: PathBuf, names: impl Iterator<Item = &'a std::ffi::OsString>) -> PathBuf {
    for name in names {
        match Path::new(name).components().next() {
            Some(Component::ParentDir) => {
                base.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(_) => base.push(name),
        }
    }
    base
}

/// Opens `path` with `flags`, following no link at any step.
pub(super) fn open_nofollow(path: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, FileError> {
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let opened = match rustix::fs::openat2(CWD, path, flags, mode, how) {
        Err(Errno::NOSYS | Errno::PERM) => walk_open(path, flags, mode),
        other => other,
    };
    opened.map_err(|e| explain(path, "opening", e))
}

/// The same walk by hand, for kernels without openat2 (before 5.6) or where a filter forbids it.
fn walk_open(path: &Path, flags: OFlags, mode: Mode) -> rustix::io::Result<OwnedFd> {
    let (dir, name) = split(path);
    let Some(name) = name else { return rustix::fs::openat(CWD, path, flags, mode) };
    let mut at: Option<OwnedFd> = None;
    for part in dir.components() {
        let step = match part {
            Component::RootDir => Path::new("/").as_os_str(),
            Component::CurDir => continue,
            other => other.as_os_str(),
        };
        let dir_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let next = match &at {
            Some(fd) => rustix::fs::openat(fd, step, dir_flags, Mode::empty())?,
            None => rustix::fs::openat(CWD, step, dir_flags, Mode::empty())?,
        };
        at = Some(next);
    }
    match &at {
        Some(fd) => rustix::fs::openat(fd, name, flags, mode),
        None => rustix::fs::openat(CWD, name, flags, mode),
    }
}

/// `path` as (its directory, its last name); the directory is "." for a bare name.
pub(super) fn split(path: &Path) -> (&Path, Option<&OsStr>) {
    match (path.parent(), path.file_name()) {
        (Some(p), Some(n)) if !p.as_os_str().is_empty() => (p, Some(n)),
        (_, Some(n)) => (Path::new("."), Some(n)),
        _ => (path, None),
    }
}

/// The directory holding `path`, opened (no link at any step), and the last name.
pub(super) fn parent(path: &Path) -> Result<(OwnedFd, &OsStr), FileError> {
    let (dir, name) = split(path);
    let Some(name) = name else {
        let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, "a path that names no file");
        return Err(FileError::Io { op: "using", path: path.to_path_buf(), source: e });
    };
    let fd = open_nofollow(dir, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
    Ok((fd, name))
}

/// What `name` in `dir` is (a link is a link, not what it points at).
pub(super) fn entry_at(dir: impl AsFd, name: &OsStr) -> rustix::io::Result<Entry> {
    Ok(Entry::of(&rustix::fs::statx(dir, name, AtFlags::SYMLINK_NOFOLLOW, super::STATX_MASK)?))
}

/// What the open file `fd` is.
pub(super) fn entry_of(fd: impl AsFd) -> rustix::io::Result<Entry> {
    Ok(Entry::of(&rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, super::STATX_MASK)?))
}

/// An error of the walk, in the user's terms: a link on the way is named (ELOOP or ENOTDIR say
/// only that something was in the way), anything else keeps its OS error.
pub(super) fn explain(path: &Path, op: &'static str, e: Errno) -> FileError {
    match first_link(path) {
        Some(link) => FileError::Link { path: link },
        None => FileError::Io { op, path: path.to_path_buf(), source: e.into() },
    }
}

/// The first name along `path` that is a symbolic link.
fn first_link(path: &Path) -> Option<PathBuf> {
    let mut at = PathBuf::new();
    for part in path.components() {
        at.push(part);
        if at.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(at);
        }
    }
    None
}
