//! Where synthetic I/O goes: a file storbench creates (or reuses), a file the user already
//! has, or a block device the user explicitly allowed.
//!
//! `plan` checks everything and writes nothing; `prepare` then creates and fills what the plan
//! says. storbench never writes to a file or device it did not create unless told to.

pub mod device;
mod file;
mod fill;

/// `plan` checks the request and decides what to do, writing nothing; `prepare` carries the
/// plan out (create and fill a new file with progress, then open the target), removing a
/// partial file when a stop request cuts the fill short.
pub use file::{DEFAULT_FILE_NAME, free_space, plan, prepare};
pub use fill::fill;

use std::fs::File;
use std::path::PathBuf;

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct TargetRequest {
    pub path: PathBuf,
    /// Bytes of the target to use; None = the whole of an existing file or device, or the
    /// default for a new file.
    pub size: Option<u64>,
    pub default_size: u64,
    pub direct: bool,
    pub allow_device: bool,
    pub force: bool,
    /// Whether the workload writes (decides what may be used without --force).
    pub writes: bool,
}

/// What `prepare` will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Create (or re-create, when it is ours with another size) and fill a file.
    CreateFile,
    /// Use our own file as it is.
    ReuseFile,
    /// Use a file storbench did not create (read-only workloads, or `--force`).
    UseForeignFile,
    /// Use a block device.
    UseDevice,
}

/// A checked target: nothing has been written yet.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    pub path: PathBuf,
    pub action: Action,
    pub size: u64,
    pub direct: bool,
    /// Alignment O_DIRECT needs for offsets and lengths, bytes.
    pub direct_align: u32,
    /// Whether the workload writes; a read-only job opens the target read-only.
    pub writes: bool,
}

/// An open target, ready for the workload.
#[derive(Debug)]
pub struct Target {
    pub file: File,
    pub path: PathBuf,
    pub is_device: bool,
    pub size: u64,
    pub direct: bool,
    /// Whether `prepare` created and filled the file this time.
    pub created: bool,
}

/// Why a target cannot be used; each message names the problem and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(transparent)]
    Device(#[from] device::DeviceRefusal),
    #[error(
        "{path}: block devices are only used with --allow-device (the benchmark may overwrite the device)"
    )]
    DeviceNotAllowed { path: PathBuf },
    #[error(
        "{path} does not exist, and its parent directory {parent} does not exist either; create the directory or name another path"
    )]
    MissingParent { path: PathBuf, parent: PathBuf },
    #[error("{path} is not writable ({reason}); choose a directory you can write to")]
    NotWritable { path: PathBuf, reason: String },
    #[error(
        "{path} exists and storbench did not create it; a write workload would overwrite it. Pass --force to use it anyway, or name a directory or a new file"
    )]
    ForeignFile { path: PathBuf },
    #[error("{path} is {actual} bytes, smaller than --size {wanted}; use a smaller --size or another file")]
    TooSmall { path: PathBuf, actual: u64, wanted: u64 },
    #[error(
        "not enough free space for a {wanted}-byte test file in {dir}: {free} bytes free; use a smaller --size or another directory"
    )]
    NoSpace { dir: PathBuf, wanted: u64, free: u64 },
    #[error("{path} is not a regular file, directory or block device")]
    Unsupported { path: PathBuf },
    #[error(
        "{path} cannot be opened with O_DIRECT ({reason}); the filesystem may not support it: pass --buffered to go through the page cache"
    )]
    NoDirect { path: PathBuf, reason: String },
}
