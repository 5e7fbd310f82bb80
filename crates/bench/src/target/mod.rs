//! Where synthetic I/O goes: a file storbench creates (or reuses), a file the user already
//! has, or a block device the user explicitly allowed.
//!
//! `plan` checks everything and writes nothing; `prepare` then creates and fills what the plan
//! says. storbench never writes to a file or device it did not create unless told to.

pub mod device;
mod file;
mod fill;
pub mod lock;
pub mod source;

/// `plan` checks the request and decides what to do, writing nothing; `prepare` carries the
/// plan out (create and fill a new file with progress, then open the target), removing a
/// partial file when a stop request cuts the fill short.
pub use file::{DEFAULT_FILE_NAME, existing_ancestor, free_space, own_name, plan, prepare};
pub use fill::fill;

use std::fs::File;
use std::path::PathBuf;

/// Makes this process shard `index` of several of one run, started together on shared
/// storage: its places are locked together with the other shards' (and still refused to any
/// other run), and in a directory target it has a file of its own.
pub fn as_shard(index: u32) {
    lock::share_among_shards();
    file::name_for_shard(index);
}

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
    /// Whether the workload writes (decides what may be used without `force`).
    pub writes: bool,
}

/// What `prepare` will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Create (or re-create, when it is ours with another size) and fill a file.
    CreateFile,
    /// Fill our own file again: a fill that was killed (or lost power) left it partly written,
    /// and measuring it would read holes and stale blocks.
    RefillPartial,
    /// Use our own file as it is.
    ReuseFile,
    /// Use a file storbench did not create (read-only workloads, or `force`).
    UseForeignFile,
    /// Use a block device.
    UseDevice,
}

/// A checked target: nothing has been written yet.
#[derive(Debug, Clone)]
pub struct CheckedTarget {
    pub path: PathBuf,
    pub action: Action,
    pub size: u64,
    pub direct: bool,
    /// Alignment O_DIRECT needs for offsets and lengths, bytes.
    pub direct_align: u32,
    /// Whether the workload writes; a read-only job opens the target read-only.
    pub writes: bool,
}

impl CheckedTarget {
    /// Takes the one-run-at-a-time lock: on the device, or on the directory the file is in
    /// (where a directory target's file goes, so the lock also covers its creation).
    pub fn lock(&self) -> Result<lock::Lock, lock::LockError> {
        match self.action {
            Action::UseDevice => lock::lock(&self.path, "target"),
            _ => lock::lock_place(self.path.parent().unwrap_or(std::path::Path::new(".")), "target"),
        }
    }
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
    /// Whether the file was an earlier fill that never finished, filled again this time.
    pub refilled: bool,
}

/// What the user can change to get past a refusal. The library knows which remedy applies;
/// the caller knows where the option was given (a command-line flag, a plan key) and words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// Use a file or device that may hold data anyway, overwriting it.
    Force,
    /// Let a block device be the target.
    AllowDevice,
    /// Ask for a smaller size of the target.
    SmallerSize,
    /// Go through the page cache instead of O_DIRECT.
    Buffered,
}

impl Remedy {
    /// The remedy as a plain instruction, for a caller that does not word it itself.
    pub fn neutral(self) -> String {
        match self {
            Remedy::Force => "allow it to be overwritten",
            Remedy::AllowDevice => "allow a block device as target",
            Remedy::SmallerSize => "ask for a smaller size",
            Remedy::Buffered => "use buffered I/O",
        }
        .to_string()
    }
}

/// Why a target cannot be used. Each message names the problem and the fix; where the fix is
/// an option, [`Refusal::message`] lets the caller word it (`Display` words it neutrally).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Device(device::DeviceRefusal),
    DeviceNotAllowed {
        path: PathBuf,
    },
    MissingParent {
        path: PathBuf,
        parent: PathBuf,
    },
    NotWritable {
        path: PathBuf,
        reason: String,
    },
    /// A file or device to read (a copy's source) that is not there.
    Missing {
        path: PathBuf,
    },
    NotReadable {
        path: PathBuf,
        reason: String,
    },
    ForeignFile {
        path: PathBuf,
    },
    TooSmall {
        path: PathBuf,
        actual: u64,
        wanted: u64,
    },
    NoSpace {
        dir: PathBuf,
        wanted: u64,
        free: u64,
    },
    Unsupported {
        path: PathBuf,
        kind: &'static str,
    },
    NoDirect {
        path: PathBuf,
        reason: String,
    },
    /// A symbolic link where the target's file goes (dangling, or to a device or another
    /// file): never followed, never replaced.
    Link {
        path: PathBuf,
    },
}

impl Refusal {
    /// The option that gets past this refusal, if one does.
    pub fn remedy(&self) -> Option<Remedy> {
        match self {
            Refusal::Device(d) => d.remedy(),
            Refusal::DeviceNotAllowed { .. } => Some(Remedy::AllowDevice),
            Refusal::ForeignFile { .. } => Some(Remedy::Force),
            Refusal::TooSmall { .. } | Refusal::NoSpace { .. } => Some(Remedy::SmallerSize),
            Refusal::NoDirect { .. } => Some(Remedy::Buffered),
            Refusal::MissingParent { .. }
            | Refusal::NotWritable { .. }
            | Refusal::Missing { .. }
            | Refusal::NotReadable { .. }
            | Refusal::Unsupported { .. }
            | Refusal::Link { .. } => None,
        }
    }

    /// The message, with `how` wording the remedy as an instruction ("pass --force").
    pub fn message(&self, how: &dyn Fn(Remedy) -> String) -> String {
        let fix = self.remedy().map(how).unwrap_or_default();
        match self {
            Refusal::Device(d) => d.message(how),
            Refusal::DeviceNotAllowed { path } => format!(
                "{} is a block device, which the benchmark may overwrite; to use it, {fix}",
                path.display()
            ),
            Refusal::MissingParent { path, parent } => format!(
                "{} does not exist, and its parent directory {} does not exist either; create the directory or name another path",
                path.display(),
                parent.display()
            ),
            Refusal::NotWritable { path, reason } => format!(
                "{} is not writable ({reason}); check its permissions and attributes (ls -ld, lsattr), or choose another target",
                path.display()
            ),
            Refusal::ForeignFile { path } => format!(
                "{} exists and storbench did not create it: a write workload would overwrite it. To use it anyway, {fix}; or name a directory or a new file",
                path.display()
            ),
            Refusal::Missing { path } => format!(
                "{} does not exist; name an existing file or block device to read, or a directory for storbench's own file",
                path.display()
            ),
            Refusal::NotReadable { path, reason } => {
                format!(
                    "{} cannot be read ({reason}); check its permissions, or name another",
                    path.display()
                )
            }
            Refusal::TooSmall { path, actual, wanted } => format!(
                "{} is {actual} bytes, smaller than the {wanted} bytes asked for; {fix} or use another file",
                path.display()
            ),
            Refusal::NoSpace { dir, wanted, free } => format!(
                "not enough free space for a {wanted}-byte test file in {}: {free} bytes free; {fix} or use another directory",
                dir.display()
            ),
            Refusal::Unsupported { path, kind } => format!(
                "{} is {kind}, not a regular file, directory or block device; name a directory, a file or a device",
                path.display()
            ),
            Refusal::Link { path } => format!(
                "{} is a symbolic link; storbench never writes through a link or replaces one: name the real \
                 file or directory, or remove the link",
                path.display()
            ),
            Refusal::NoDirect { path, reason } => format!(
                "{} cannot be opened with O_DIRECT ({reason}); the filesystem may not support it: {fix} to go through the page cache",
                path.display()
            ),
        }
    }
}

impl Refusal {
    /// The refusal for what the file module would not do at `path`.
    pub fn file(path: &std::path::Path, e: crate::files::FileError) -> Refusal {
        use crate::files::FileError as F;
        match e {
            F::Link { path } => Refusal::Link { path },
            F::NotRegular { path, kind } | F::NotDevice { path, kind } | F::NotDir { path, kind } => {
                Refusal::Unsupported { path, kind: kind.describe() }
            }
            F::Exists { path, .. } | F::NotOurs { path } => Refusal::ForeignFile { path },
            other => Refusal::NotWritable { path: path.to_path_buf(), reason: other.to_string() },
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message(&Remedy::neutral))
    }
}

impl std::error::Error for Refusal {}

impl From<device::DeviceRefusal> for Refusal {
    fn from(d: device::DeviceRefusal) -> Self {
        Refusal::Device(d)
    }
}
