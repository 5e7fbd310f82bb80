//! Files as targets: choosing what to do with a path, the "created by storbench" mark, free
//! space, O_DIRECT alignment, and opening.

use super::{Action, CheckedTarget, Refusal, Target, TargetRequest, device};
use crate::files::{self, FileId, FileKind, How};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The file storbench creates in a directory target.
pub const DEFAULT_FILE_NAME: &str = "storbench-io.dat";

/// The shard of a run this process is (0: none): shards sharing a directory each have a file.
static SHARD: AtomicU32 = AtomicU32::new(0);

/// Gives this process, shard `index` of a run, its own files in a directory target.
pub(super) fn name_for_shard(index: u32) {
    SHARD.store(index, Ordering::Relaxed);
}

/// The name of a file or directory storbench makes in a target directory, for this process:
/// `name` itself, or for shard I of a run `name` with `.shardI` before its extension
/// (`storbench-io.shard2.dat`), so that the shards of one run can share a directory.
pub fn own_name(name: &str) -> String {
    match SHARD.load(Ordering::Relaxed) {
        0 => name.to_string(),
        i => match name.split_once('.') {
            Some((stem, ext)) => format!("{stem}.shard{i}.{ext}"),
            None => format!("{name}.shard{i}"),
        },
    }
}

/// Extended attribute that marks a file storbench created, with its size and whether the fill
/// finished: `v1 filling size=N` from creation on, `v1 size=N` once every byte is written
/// and synced. A file killed mid-fill keeps the first, so it is never taken as ready.
const MARK_XATTR: &str = "user.storbench";

/// What a file's mark says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    /// Created by storbench; the fill has not finished.
    Filling { size: u64 },
    /// Created and completely filled by storbench.
    Complete { size: u64 },
}

/// Checks the request and decides what to do; writes nothing. The path is resolved once here
/// (links the user put in it followed); the plan's path has none, and a link at the file's
/// own name is refused, never followed or replaced.
pub fn plan(req: &TargetRequest) -> Result<CheckedTarget, Refusal> {
    let path = files::resolve(&req.path).map_err(|e| Refusal::file(&req.path, e))?;
    match look(&path)? {
        Some(FileKind::BlockDevice) => plan_device(req, &path),
        Some(FileKind::Dir) => plan_file(req, &path.join(own_name(DEFAULT_FILE_NAME))),
        _ => plan_file(req, &path),
    }
}

/// What `path` is (None: nothing yet); a link or a special file is refused.
fn look(path: &Path) -> Result<Option<FileKind>, Refusal> {
    match files::entry(path).map_err(|e| Refusal::file(path, e))? {
        None => Ok(None),
        Some(e) if e.kind == FileKind::Link => Err(Refusal::Link { path: path.to_path_buf() }),
        Some(e) if matches!(e.kind, FileKind::File | FileKind::Dir | FileKind::BlockDevice) => {
            Ok(Some(e.kind))
        }
        Some(e) => Err(Refusal::Unsupported { path: path.to_path_buf(), kind: e.kind.describe() }),
    }
}

fn plan_device(req: &TargetRequest, path: &Path) -> Result<CheckedTarget, Refusal> {
    if !req.allow_device {
        return Err(Refusal::DeviceNotAllowed { path: path.to_path_buf() });
    }
    device::check_writable(path, req.force)?;
    let geo = device::geometry(path)
        .map_err(|e| Refusal::NotWritable { path: path.to_path_buf(), reason: e.to_string() })?;
    let size = req.size.unwrap_or(geo.size_bytes);
    if size > geo.size_bytes {
        return Err(Refusal::TooSmall { path: path.to_path_buf(), actual: geo.size_bytes, wanted: size });
    }
    let plan = CheckedTarget {
        path: path.to_path_buf(),
        action: Action::UseDevice,
        size,
        direct: req.direct,
        direct_align: geo.logical_sector_size,
        writes: req.writes,
    };
    Ok(plan)
}

fn plan_file(req: &TargetRequest, path: &Path) -> Result<CheckedTarget, Refusal> {
    let existing = match look(path)? {
        Some(FileKind::File) => Some(files::entry(path).ok().flatten().map_or(0, |e| e.len)),
        Some(kind) => return Err(Refusal::Unsupported { path: path.to_path_buf(), kind: kind.describe() }),
        None => None,
    };
    let mark = existing.and_then(|_| read_mark(path));
    let (action, size) = match (existing, mark) {
        (Some(len), Some(Mark::Complete { size })) if size == len && req.size.is_none_or(|s| s == len) => {
            (Action::ReuseFile, len)
        }
        (Some(_), Some(Mark::Filling { size })) => (Action::RefillPartial, req.size.unwrap_or(size)),
        (Some(_), Some(_)) => (Action::CreateFile, req.size.unwrap_or(req.default_size)),
        (Some(len), None) => {
            if req.writes && !req.force {
                return Err(Refusal::ForeignFile { path: path.to_path_buf() });
            }
            let size = req.size.unwrap_or(len);
            if size > len {
                return Err(Refusal::TooSmall { path: path.to_path_buf(), actual: len, wanted: size });
            }
            (Action::UseForeignFile, size)
        }
        (None, _) => (Action::CreateFile, req.size.unwrap_or(req.default_size)),
    };
    let dir = parent_dir(path)?;
    if matches!(action, Action::CreateFile | Action::RefillPartial) {
        check_creatable(&dir, size, existing.unwrap_or(0))?;
    }
    let direct_align = direct_alignment(&dir);
    Ok(CheckedTarget {
        path: path.to_path_buf(),
        action,
        size,
        direct: req.direct,
        direct_align,
        writes: req.writes,
    })
}

fn parent_dir(path: &Path) -> Result<PathBuf, Refusal> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(Refusal::MissingParent { path: path.to_path_buf(), parent });
    }
    Ok(parent)
}

/// The directory must be writable and hold the file (less what a file we replace frees).
fn check_creatable(dir: &Path, size: u64, replaced: u64) -> Result<(), Refusal> {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK)
        .map_err(|e| Refusal::NotWritable { path: dir.to_path_buf(), reason: e.to_string() })?;
    let free = free_space(dir).unwrap_or(u64::MAX);
    if size > free.saturating_add(replaced) {
        return Err(Refusal::NoSpace { dir: dir.to_path_buf(), wanted: size, free });
    }
    Ok(())
}

/// The nearest directory that exists at or above `p` (the target may not exist yet).
pub fn existing_ancestor(p: &Path) -> &Path {
    let mut at = p;
    loop {
        if at.as_os_str().is_empty() {
            return Path::new(".");
        }
        if at.exists() {
            return at;
        }
        match at.parent() {
            Some(parent) => at = parent,
            None => return Path::new("."),
        }
    }
}

/// Bytes an unprivileged user may still write on the filesystem holding `dir`.
pub fn free_space(dir: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(dir)?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// O_DIRECT alignment the filesystem under `dir` asks for (statx DIOALIGN), else the logical
/// sector size of the device below, else 512.
pub(super) fn direct_alignment(dir: &Path) -> u32 {
    use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
    if let Ok(st) = statx(CWD, dir, AtFlags::empty(), StatxFlags::DIOALIGN)
        && st.stx_dio_offset_align > 0
    {
        return st.stx_dio_offset_align;
    }
    crate::monitor::resolve_device(dir).ok().flatten().and_then(|d| d.logical_sector_size).unwrap_or(512)
}

/// Our mark, if the file carries one (an extended attribute, or a sidecar file naming this
/// very file where the filesystem has no user xattrs).
pub(super) fn read_mark(path: &Path) -> Option<Mark> {
    let file = files::open(path, How::READ).ok()?;
    let mut buf = [0u8; 64];
    let text = match rustix::fs::fgetxattr(&file, MARK_XATTR, &mut buf) {
        Ok(n) => String::from_utf8_lossy(&buf[..n]).into_owned(),
        Err(_) => read_sidecar(path, FileId::of(&file).ok()?)?,
    };
    parse_mark(&text)
}

fn parse_mark(text: &str) -> Option<Mark> {
    let text = text.strip_prefix("v1 ")?.trim();
    let (filling, rest) = match text.strip_prefix("filling ") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let size = rest.split_whitespace().next()?.strip_prefix("size=")?.parse().ok()?;
    Some(if filling { Mark::Filling { size } } else { Mark::Complete { size } })
}

/// The sidecar's mark when it names the file `id` (a sidecar left beside another file, or
/// planted beside the user's, is not a mark). A sidecar that is is claimed as storbench's.
fn read_sidecar(path: &Path, id: FileId) -> Option<String> {
    let car = sidecar(path);
    let text = files::input::read_own_text(&car, 128).ok()?;
    let named = text.split_whitespace().find_map(|w| w.strip_prefix("file="))?;
    (named == file_key(id)).then(|| {
        if let Ok(Some(e)) = files::entry(&car) {
            files::claim(e.id);
        }
        text
    })
}

/// The file a sidecar is for, as `dev:ino:born`.
fn file_key(id: FileId) -> String {
    format!("{}:{}:{}", id.dev, id.ino, id.born)
}

/// Claims the file at `path` (and its sidecar) as storbench's when it carries storbench's
/// mark: a partial fill storbench may then remove.
pub(super) fn claim_marked(path: &Path) -> bool {
    let marked = read_mark(path).is_some();
    if marked && let Ok(Some(e)) = files::entry(path) {
        files::claim(e.id);
    }
    marked
}

/// `dir/.name.storbench`, the mark where extended attributes are unsupported.
pub(super) fn sidecar(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.storbench"))
}

/// Marks `file` (at `path`) as created by storbench, filling or completely filled. The
/// sidecar is replaced by a rename, so a crash leaves the old mark or the new one, never half.
pub(super) fn write_mark(file: &File, path: &Path, mark: Mark) -> io::Result<()> {
    let value = match mark {
        Mark::Filling { size } => format!("v1 filling size={size}"),
        Mark::Complete { size } => format!("v1 size={size}"),
    };
    match rustix::fs::fsetxattr(file, MARK_XATTR, value.as_bytes(), rustix::fs::XattrFlags::empty()) {
        Ok(()) => Ok(()),
        Err(_) => {
            let text = format!("{value} file={}", file_key(FileId::of(file)?));
            Ok(files::write_atomic(&sidecar(path), text.as_bytes())?)
        }
    }
}

/// Opens the planned target for the workload, with O_DIRECT unless buffered I/O was asked for,
/// and for reading only when the workload does not write.
pub(super) fn open(plan: &CheckedTarget) -> Result<File, Refusal> {
    let how = if plan.writes { How::READ_WRITE } else { How::READ }.direct(plan.direct);
    let opened = match plan.action {
        Action::UseDevice => files::open_device(&plan.path, how),
        _ => files::open(&plan.path, how),
    };
    opened.map_err(|e| match e.os_error() {
        Some(libc::EINVAL) if plan.direct => {
            Refusal::NoDirect { path: plan.path.clone(), reason: e.to_string() }
        }
        _ => Refusal::file(&plan.path, e),
    })
}

/// Carries out `plan`: creates and fills a new file (progress as bytes done and total), then
/// opens the target for the workload.
pub fn prepare(
    plan: &CheckedTarget,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
    stop: &crate::run::StopFlag,
) -> crate::Result<Target> {
    let created = matches!(plan.action, Action::CreateFile | Action::RefillPartial);
    if created {
        super::fill::create_filled(plan, seed, progress, stop)?;
    }
    let file = open(plan)?;
    Ok(Target {
        file,
        path: plan.path.clone(),
        is_device: plan.action == Action::UseDevice,
        size: plan.size,
        direct: plan.direct,
        created,
        refilled: plan.action == Action::RefillPartial,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_read_from_the_xattr_or_else_from_the_sidecar() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("t.dat");
        let f = File::create(&path).unwrap();
        assert_eq!(read_mark(&path), None, "an unmarked file is not ours");
        std::fs::write(sidecar(&path), "v1 size=4096").unwrap();
        assert_eq!(read_mark(&path), None, "a sidecar that does not name this file is no mark");
        let named = format!("v1 size=4096 file={}", file_key(FileId::of(&f).unwrap()));
        std::fs::write(sidecar(&path), named).unwrap();
        assert_eq!(
            read_mark(&path),
            Some(Mark::Complete { size: 4096 }),
            "the sidecar counts without xattrs"
        );
        write_mark(&f, &path, Mark::Filling { size: 8192 }).unwrap();
        assert_eq!(read_mark(&path), Some(Mark::Filling { size: 8192 }), "the xattr comes first");
        write_mark(&f, &path, Mark::Complete { size: 8192 }).unwrap();
        assert_eq!(read_mark(&path), Some(Mark::Complete { size: 8192 }));
    }
}
