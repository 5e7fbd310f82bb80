//! What a copy reads (an emulated rebuild's `source=`): any regular file or block device the
//! user names, only ever read. Unlike a target it may be a mounted device or a file of the
//! user's, since nothing is written to it; it must be readable and hold what the copy reads.

use super::Refusal;
use crate::files::{self, FileKind, How};
use std::fs::File;
use std::path::{Path, PathBuf};

/// A checked source: nothing has been opened yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedSource {
    pub path: PathBuf,
    pub is_device: bool,
    /// Its whole size, bytes.
    pub size: u64,
    /// Alignment O_DIRECT needs for offsets and lengths, bytes.
    pub direct_align: u32,
}

/// Checks `path` as a source of at least `wanted` bytes: a readable regular file or block
/// device, not a link. Resolved once here, as a target is.
pub fn plan(path: &Path, wanted: u64) -> Result<CheckedSource, Refusal> {
    let resolved = files::resolve(path).map_err(|e| Refusal::file(path, e))?;
    let entry = files::entry(&resolved).map_err(|e| Refusal::file(&resolved, e))?;
    let plan = match entry {
        None => return Err(Refusal::Missing { path: resolved }),
        Some(e) if e.kind == FileKind::Link => return Err(Refusal::Link { path: resolved }),
        Some(e) if e.kind == FileKind::File => {
            let parent = resolved.parent().unwrap_or(Path::new("."));
            CheckedSource {
                direct_align: super::file::direct_alignment(parent),
                size: e.len,
                is_device: false,
                path: resolved,
            }
        }
        Some(e) if e.kind == FileKind::BlockDevice => {
            let geo = super::device::geometry(&resolved)
                .map_err(|e| Refusal::NotReadable { path: resolved.clone(), reason: e.to_string() })?;
            CheckedSource {
                direct_align: geo.logical_sector_size,
                size: geo.size_bytes,
                is_device: true,
                path: resolved,
            }
        }
        Some(e) => return Err(Refusal::Unsupported { path: resolved, kind: e.kind.describe() }),
    };
    rustix::fs::access(&plan.path, rustix::fs::Access::READ_OK)
        .map_err(|e| Refusal::NotReadable { path: plan.path.clone(), reason: e.to_string() })?;
    if plan.size < wanted {
        return Err(Refusal::TooSmall { path: plan.path, actual: plan.size, wanted });
    }
    Ok(plan)
}

impl CheckedSource {
    /// Opens the source for reading, with O_DIRECT when `direct`.
    pub fn open(&self, direct: bool) -> Result<File, Refusal> {
        let how = How::READ.direct(direct);
        let opened =
            if self.is_device { files::open_device(&self.path, how) } else { files::open(&self.path, how) };
        opened.map_err(|e| match e.os_error() {
            Some(libc::EINVAL) if direct => {
                Refusal::NoDirect { path: self.path.clone(), reason: e.to_string() }
            }
            _ => Refusal::file(&self.path, e),
        })
    }
}
