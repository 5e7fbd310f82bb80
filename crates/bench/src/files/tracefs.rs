//! The kernel's tracing filesystem, the one place storbench writes outside its own files: a
//! tracing instance of its own (`instances/storbench-<pid>-<n>`, made by mkdir there, which the
//! kernel gives its own buffer and event switches), the settings of that instance only, and
//! its `trace_pipe` read. Nothing of the system's own tracing (the top-level instance, another
//! tool's instance) is written; the instance is removed when done.

use super::ops::io as io_error;
use super::{FileError, Kind, entry};
use rustix::fs::{Mode, OFlags};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted on a current kernel.
pub const ROOT: &str = "/sys/kernel/tracing";

/// The instance directory's prefix: a name only storbench uses.
const PREFIX: &str = "storbench-";

/// Why tracing cannot be used here, with what to enable; None when it can.
pub fn unavailable(root: &Path) -> Option<String> {
    if !root.join("instances").is_dir() {
        return Some(format!(
            "the kernel's tracing filesystem is not mounted at {} (mount it: mount -t tracefs nodev {}; \
             the kernel needs CONFIG_FTRACE and block tracepoints)",
            root.display(),
            root.display()
        ));
    }
    if !root.join("events/block/block_rq_issue").is_dir() {
        return Some(format!(
            "{} has no block tracepoints (events/block/block_rq_issue): the kernel needs CONFIG_BLOCK \
             tracepoints (CONFIG_FTRACE)",
            root.display()
        ));
    }
    if !rustix::process::geteuid().is_root() {
        return Some(
            "capturing block requests needs root (tracefs is root's): run it as root or with sudo".into(),
        );
    }
    None
}

/// Makes a tracing instance of storbench's own under `root` and returns its directory.
pub fn make_instance(root: &Path, tag: &str) -> Result<PathBuf, FileError> {
    let dir = root.join("instances").join(format!("{PREFIX}{}-{tag}", std::process::id()));
    rustix::fs::mkdir(&dir, Mode::from_raw_mode(0o700)).map_err(|e| io_error("making", &dir, e.into()))?;
    Ok(dir)
}

/// Writes `value` into the setting file `name` of storbench's instance `instance`.
pub fn set(instance: &Path, name: &str, value: &str) -> Result<(), FileError> {
    check_own(instance)?;
    let path = instance.join(name);
    let fd = rustix::fs::open(
        &path,
        OFlags::WRONLY | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_error("opening", &path, e.into()))?;
    File::from(fd).write_all(value.as_bytes()).map_err(|e| io_error("writing", &path, e))
}

/// Opens the instance's `trace_pipe` for reading (a read waits for events).
pub fn open_pipe(instance: &Path) -> Result<File, FileError> {
    check_own(instance)?;
    let path = instance.join("trace_pipe");
    let fd = rustix::fs::open(&path, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| io_error("opening", &path, e.into()))?;
    Ok(File::from(fd))
}

/// Removes storbench's instance (its events go with it).
pub fn remove_instance(instance: &Path) -> Result<(), FileError> {
    check_own(instance)?;
    rustix::fs::rmdir(instance).map_err(|e| io_error("removing", instance, e.into()))
}

/// Only an instance directory of storbench's: a directory named with its prefix, in
/// `instances/`.
fn check_own(instance: &Path) -> Result<(), FileError> {
    let named = instance.file_name().is_some_and(|n| n.to_string_lossy().starts_with(PREFIX));
    let placed = instance.parent().and_then(Path::file_name).is_some_and(|n| n == "instances");
    let dir = matches!(entry(instance), Ok(Some(e)) if e.kind == Kind::Dir);
    if named && placed && dir { Ok(()) } else { Err(FileError::NotOurs { path: instance.to_path_buf() }) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_tracefs_or_its_block_events_a_capture_is_told_what_to_enable() {
        let dir = tempfile::tempdir().unwrap();
        let said = unavailable(dir.path()).unwrap();
        assert!(said.contains("mount -t tracefs nodev"), "{said}");
        std::fs::create_dir(dir.path().join("instances")).unwrap();
        let said = unavailable(dir.path()).unwrap();
        assert!(said.contains("no block tracepoints"), "{said}");
    }

    #[test]
    fn only_an_instance_of_storbenchs_own_is_written_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("instances").join("perf-1");
        std::fs::create_dir_all(&theirs).unwrap();
        assert!(matches!(set(&theirs, "tracing_on", "0"), Err(FileError::NotOurs { .. })));
        assert!(matches!(remove_instance(dir.path()), Err(FileError::NotOurs { .. })));
        assert!(theirs.is_dir());
    }
}
