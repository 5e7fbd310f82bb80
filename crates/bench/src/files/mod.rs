//! The one module that creates, opens and removes storbench's files, and reads the files a
//! user names as input. Nothing else in storbench calls `File::create`, `OpenOptions`,
//! `remove_file` or `rename`; the rules below hold because every caller goes through here.
//!
//! - **A path is resolved once.** A path the user gives is resolved by [`resolve`] when it is
//!   checked: links the user put in it are followed then (they chose them). Every operation
//!   afterwards walks its whole path with no symbolic link at any step (openat2's
//!   RESOLVE_NO_SYMLINKS; one component at a time with O_NOFOLLOW where the kernel lacks it),
//!   so a link planted where storbench writes is refused by name, never followed.
//! - **New files are created exclusively** ([`create`], [`create_dir`]): whatever is at that
//!   name already (a file, a dangling link, a FIFO, a device) is never replaced, truncated or
//!   written; the caller is told what is there.
//! - **An existing file is opened only when it is a regular file** ([`open`]): the kind is
//!   checked before the open (opening a FIFO would wait for a writer, opening a device could
//!   write it) and again on what was opened (the same inode).
//! - **A file is removed only as the file storbench recorded** ([`remove_own`],
//!   [`remove_own_dir`]): by its device and inode ([`FileId`]), recorded when this process created
//!   it or when a caller proved it storbench's own by its mark or manifest ([`claim`]); a name
//!   that holds another file is left alone.
//! - **A file is replaced only over nothing or over storbench's own** ([`write_atomic`],
//!   [`rename`]): the rename is refused when the name holds anything but the recorded file.
//!
//! Block devices are opened here too ([`open_device`]), only where a device is expected, and
//! the kernel's tracing filesystem is written only in an instance of storbench's own
//! ([`tracefs`]).

mod input_impl;
mod ops;
pub mod tracefs;
mod walk;

pub mod input {
    //! Reading a file the user named as input: see [`read_bounded`].
    pub use super::input_impl::*;
}

pub use ops::{
    How, claim, claim_at, create, create_dir, create_dirs, entry, is_own, is_own_at, open, open_device,
    open_for_lock, open_or_create, remove_own, remove_own_dir, rename, write_atomic,
};
pub use walk::{resolve, resolve_parent};

use std::os::fd::AsFd;
use std::path::PathBuf;

/// A file by device, inode and birth time: the same file whatever name it has, and not the
/// same file as whatever is put at its name later (a new file may get a freed inode number,
/// never the old birth time). `born` is 0 where the filesystem keeps no birth time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
    #[serde(default)]
    pub born: u64,
}

impl FileId {
    /// The identity of an open file.
    pub fn of(file: impl AsFd) -> std::io::Result<FileId> {
        let empty = rustix::fs::AtFlags::EMPTY_PATH;
        Ok(Entry::of(&rustix::fs::statx(file, "", empty, STATX_MASK)?).id)
    }
}

/// What `statx` is asked for: the type, size, inode and birth time.
const STATX_MASK: rustix::fs::StatxFlags =
    rustix::fs::StatxFlags::BASIC_STATS.union(rustix::fs::StatxFlags::BTIME);

/// What kind of file a name holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    File,
    Dir,
    Link,
    BlockDevice,
    CharDevice,
    Fifo,
    Socket,
}

impl FileKind {
    fn of(mode: u32) -> FileKind {
        use rustix::fs::FileType as T;
        match T::from_raw_mode(mode) {
            T::RegularFile => FileKind::File,
            T::Directory => FileKind::Dir,
            T::Symlink => FileKind::Link,
            T::BlockDevice => FileKind::BlockDevice,
            T::CharacterDevice => FileKind::CharDevice,
            T::Fifo => FileKind::Fifo,
            _ => FileKind::Socket,
        }
    }

    /// For a message: "a regular file", "a FIFO", ...
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::File => "a regular file",
            FileKind::Dir => "a directory",
            FileKind::Link => "a symbolic link",
            FileKind::BlockDevice => "a block device",
            FileKind::CharDevice => "a character device",
            FileKind::Fifo => "a FIFO",
            FileKind::Socket => "a socket",
        }
    }
}

/// What a name holds: its kind, identity and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub kind: FileKind,
    pub id: FileId,
    pub len: u64,
}

impl Entry {
    fn of(st: &rustix::fs::Statx) -> Entry {
        let born = if st.stx_mask & rustix::fs::StatxFlags::BTIME.bits() != 0 {
            (st.stx_btime.tv_sec as u64)
                .wrapping_mul(1_000_000_000)
                .wrapping_add(u64::from(st.stx_btime.tv_nsec))
        } else {
            0
        };
        let dev = rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor);
        Entry {
            kind: FileKind::of(u32::from(st.stx_mode)),
            id: FileId { dev, ino: st.stx_ino, born },
            len: st.stx_size,
        }
    }
}

/// Why a file was not created, opened, replaced or removed. Each message names the path and
/// what to do.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error(
        "{} is a symbolic link; storbench does not follow links where it reads or writes its files: give \
         the real path, or remove the link",
        path.display()
    )]
    Link { path: PathBuf },
    #[error("{} is {}, not a regular file; give the path of a regular file", path.display(), kind.describe())]
    NotRegular { path: PathBuf, kind: FileKind },
    #[error("{} is {}, not a directory; give the path of a directory", path.display(), kind.describe())]
    NotDir { path: PathBuf, kind: FileKind },
    #[error("{} is {}, not a block device", path.display(), kind.describe())]
    NotDevice { path: PathBuf, kind: FileKind },
    #[error(
        "{} already exists ({}) and storbench did not create it; it is left as it is: remove it yourself if \
         it is expendable, or use another path",
        path.display(),
        kind.describe()
    )]
    Exists { path: PathBuf, kind: FileKind },
    #[error(
        "{} is not a file storbench made (or no longer the one it made: another file is at that name \
         now); it is left as it is",
        path.display()
    )]
    NotOurs { path: PathBuf },
    #[error(
        "{} holds {size} bytes, more than the {limit} bytes such a file can have; give the right file",
        path.display()
    )]
    TooLarge { path: PathBuf, size: u64, limit: u64 },
    #[error("{op} {}: {source}", path.display())]
    Io { op: &'static str, path: PathBuf, source: std::io::Error },
}

impl FileError {
    /// Nothing is at the path (a caller may treat that as "none yet").
    pub fn is_not_found(&self) -> bool {
        self.os_error() == Some(libc::ENOENT)
    }

    /// The OS error behind an I/O failure (EINVAL for O_DIRECT refused, ENOSPC, ...).
    pub fn os_error(&self) -> Option<i32> {
        match self {
            FileError::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// The path the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            FileError::Link { path }
            | FileError::NotRegular { path, .. }
            | FileError::NotDir { path, .. }
            | FileError::NotDevice { path, .. }
            | FileError::Exists { path, .. }
            | FileError::NotOurs { path }
            | FileError::TooLarge { path, .. }
            | FileError::Io { path, .. } => path,
        }
    }
}

impl From<FileError> for std::io::Error {
    fn from(e: FileError) -> std::io::Error {
        match e {
            FileError::Io { source, .. } => source,
            other => {
                let kind = match other {
                    FileError::Exists { .. } => std::io::ErrorKind::AlreadyExists,
                    _ => std::io::ErrorKind::InvalidInput,
                };
                std::io::Error::new(kind, other.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests;
