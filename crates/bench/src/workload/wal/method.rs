//! The ways a log write is made durable before the commit returns, as PostgreSQL's
//! `wal_sync_method` names them and `pg_test_fsync` measures them: a write then a sync call
//! (fdatasync, fsync), or a file opened so that every write is durable when it returns
//! (O_DSYNC, O_SYNC, O_DIRECT with O_DSYNC). Each is safe on Linux: the kernel sends the device
//! a cache flush (or a FUA write) before it answers, unless the device says it has no volatile
//! cache.

use crate::files::How;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// How a commit's log write is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMethod {
    /// write(), then fdatasync(): the data and only the metadata needed to read it back.
    Fdatasync,
    /// write(), then fsync(): the data and every metadata change (times included).
    Fsync,
    /// The file opened with O_DSYNC: each write returns once its data is durable.
    OpenDatasync,
    /// The file opened with O_SYNC: each write returns once data and metadata are durable.
    OpenSync,
    /// O_DIRECT with O_DSYNC: the page cache bypassed, each write durable when it returns
    /// (PostgreSQL's open_datasync with wal_level minimal, or `debug_io_direct = wal`).
    OpenDirectDatasync,
}

impl SyncMethod {
    /// Every method, in the order a run measures them by default.
    pub const ALL: [SyncMethod; 5] = [
        SyncMethod::Fdatasync,
        SyncMethod::Fsync,
        SyncMethod::OpenDatasync,
        SyncMethod::OpenSync,
        SyncMethod::OpenDirectDatasync,
    ];

    /// As a plan and the report name it (PostgreSQL's `wal_sync_method` values).
    pub fn name(self) -> &'static str {
        match self {
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Fsync => "fsync",
            SyncMethod::OpenDatasync => "open_datasync",
            SyncMethod::OpenSync => "open_sync",
            SyncMethod::OpenDirectDatasync => "open_direct_datasync",
        }
    }

    /// The method named `name`, or an error listing the names.
    pub fn parse(name: &str) -> Result<SyncMethod, String> {
        SyncMethod::ALL.into_iter().find(|m| m.name() == name).ok_or_else(|| {
            let names: Vec<&str> = SyncMethod::ALL.iter().map(|m| m.name()).collect();
            format!("`{name}` is not a sync method; the methods are {}", names.join(", "))
        })
    }

    /// Whether writes bypass the page cache, and so must be aligned to the device's blocks.
    pub fn direct(self) -> bool {
        self == SyncMethod::OpenDirectDatasync
    }

    /// How the log file is opened for this method.
    pub fn how(self) -> How {
        let dsync = matches!(self, SyncMethod::OpenDatasync | SyncMethod::OpenDirectDatasync);
        How::WRITE.dsync(dsync).sync(self == SyncMethod::OpenSync).direct(self.direct())
    }

    /// What follows each write: the sync call of a write-then-sync method; nothing where the
    /// write itself was durable.
    pub fn after_write(self, file: &File) -> io::Result<()> {
        let fd = file.as_raw_fd();
        // SAFETY: `fd` is an open descriptor owned by `file` for the whole call.
        let rc = match self {
            SyncMethod::Fdatasync => unsafe { libc::fdatasync(fd) },
            SyncMethod::Fsync => unsafe { libc::fsync(fd) },
            _ => 0,
        };
        if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
    }
}

impl std::fmt::Display for SyncMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_reads_back_from_its_name_and_an_unknown_one_lists_them() {
        for m in SyncMethod::ALL {
            assert_eq!(SyncMethod::parse(m.name()), Ok(m));
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.name()), "a plan names it as the report does");
        }
        let e = SyncMethod::parse("osync").unwrap_err();
        assert!(e.contains("fdatasync, fsync, open_datasync, open_sync, open_direct_datasync"), "{e}");
        assert!(SyncMethod::OpenDirectDatasync.direct() && !SyncMethod::OpenDatasync.direct());
    }
}
