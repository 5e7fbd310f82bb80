//! The kernel's tracing filesystem, the one place storbench writes outside its own files: a
//! tracing instance of its own (`instances/storbench-<pid>-<n>`, made by mkdir there, which the
//! kernel gives its own buffer and event switches), the settings of that instance only, and
//! its `trace_pipe` read. Nothing of the system's own tracing (the top-level instance, another
//! tool's instance) is written; the instance is removed when done.
//!
//! Where tracefs is not mounted, [`mount_if_missing`] mounts it at its standard place, as
//! trace-cmd and libtracefs do: a root tool sets up what it needs, and says so.

use super::ops::io as io_error;
use super::{FileError, FileKind, entry};
use rustix::fs::{Mode, OFlags};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted on a current kernel.
pub const ROOT: &str = "/sys/kernel/tracing";

/// The instance directory's prefix: a name only storbench uses.
const PREFIX: &str = "storbench-";

/// Mounts tracefs at `root` when nothing is mounted there and this process may (root, a
/// kernel with tracefs, a place to mount it on): Some(root) when it mounted it, None when it
/// was there already or could not be (then [`unavailable`] says why, naming the fix). The
/// mount is left for the next tool, as trace-cmd leaves it.
pub fn mount_if_missing(root: &Path) -> Option<PathBuf> {
    let mountable =
        !mounted(root) && rustix::process::geteuid().is_root() && root.is_dir() && kernel_has_tracefs();
    let flags = rustix::mount::MountFlags::NOSUID
        | rustix::mount::MountFlags::NODEV
        | rustix::mount::MountFlags::NOEXEC;
    (mountable && rustix::mount::mount("nodev", root, "tracefs", flags, None).is_ok() && mounted(root))
        .then(|| root.to_path_buf())
}

/// Whether tracefs is mounted at `root` (its `instances` directory is there).
fn mounted(root: &Path) -> bool {
    root.join("instances").is_dir()
}

/// Whether the running kernel has tracefs (`/proc/filesystems` lists it).
fn kernel_has_tracefs() -> bool {
    let listed = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    listed.lines().any(|l| l.split_whitespace().last() == Some("tracefs"))
}

/// Why tracing cannot be used here, with what to enable; None when it can.
pub fn unavailable(root: &Path) -> Option<String> {
    if !mounted(root) {
        let why = if !kernel_has_tracefs() {
            "this kernel has no tracefs (it needs CONFIG_FTRACE and block tracepoints)".to_string()
        } else if !rustix::process::geteuid().is_root() {
            "only root may mount it; run storbench as root or with sudo".to_string()
        } else if !root.is_dir() {
            format!(
                "{} does not exist to mount it on (a /sys without the kernel's tracing directory)",
                root.display()
            )
        } else {
            "mounting it failed (a read-only /sys, or a container without CAP_SYS_ADMIN)".to_string()
        };
        return Some(format!(
            "the kernel's tracing filesystem is not mounted at {} and storbench could not mount it: {why}; \
             mount it: mount -t tracefs nodev {}",
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

/// Removes the tracing instances of storbench processes that no longer run (one killed
/// outright leaves its instance recording, its buffer held): those named `storbench-<pid>-`
/// whose pid is gone. The names of those it removed.
pub fn remove_stale(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join("instances")) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name.strip_prefix(PREFIX).and_then(|rest| rest.split('-').next()?.parse::<u32>().ok());
        let gone = pid.is_some_and(|p| p != std::process::id() && !Path::new(&format!("/proc/{p}")).exists());
        if gone && remove_instance(&entry.path()).is_ok() {
            removed.push(name);
        }
    }
    removed
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

/// The instance's per-CPU directories (`per_cpu/cpuN`), in CPU order.
pub fn cpu_dirs(instance: &Path) -> Result<Vec<PathBuf>, FileError> {
    check_own(instance)?;
    let per_cpu = instance.join("per_cpu");
    let mut cpus: Vec<u32> = std::fs::read_dir(&per_cpu)
        .map_err(|e| io_error("listing", &per_cpu, e))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    Ok(cpus.iter().map(|cpu| per_cpu.join(format!("cpu{cpu}"))).collect())
}

/// Opens the instance's per-CPU binary buffers (`per_cpu/cpuN/trace_pipe_raw`), each not
/// waiting when empty; a read returns one page.
pub fn open_raw_pipes(instance: &Path) -> Result<Vec<File>, FileError> {
    let open = |cpu: PathBuf| {
        let path = cpu.join("trace_pipe_raw");
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(&path, flags, Mode::empty())
            .map_err(|e| io_error("opening", &path, e.into()))?;
        Ok(File::from(fd))
    };
    cpu_dirs(instance)?.into_iter().map(open).collect()
}

/// The text of a small tracefs file (an event's `format`, a CPU's `stats`): at most 64 KiB.
pub fn read_small(path: &Path) -> Result<String, FileError> {
    let fd = rustix::fs::open(path, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| io_error("opening", path, e.into()))?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(File::from(fd), 64 << 10), &mut text)
        .map_err(|e| io_error("reading", path, e))?;
    Ok(text)
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
    let dir = matches!(entry(instance), Ok(Some(e)) if e.kind == FileKind::Dir);
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
    fn a_missing_tracefs_is_mounted_by_root_and_a_mounted_one_is_left_as_it_is() {
        if !rustix::process::geteuid().is_root() || !kernel_has_tracefs() {
            return crate::testing::skip(
                "mounting tracefs needs root and a kernel with tracefs",
                "run the tests as root",
            );
        }
        // A place of the test's own, so the machine's tracing is not touched.
        let dir = tempfile::tempdir().unwrap();
        assert!(
            unavailable(dir.path())
                .is_some_and(|why| why.contains("mounting it failed") || why.contains("not mounted"))
        );
        assert_eq!(
            mount_if_missing(dir.path()),
            Some(dir.path().to_path_buf()),
            "mounted where it was missing"
        );
        let mounted_now = unavailable(dir.path());
        let again = mount_if_missing(dir.path());
        rustix::mount::unmount(dir.path(), rustix::mount::UnmountFlags::DETACH).unwrap();
        assert_eq!(mounted_now, None, "usable once mounted");
        assert_eq!(again, None, "a mounted tracefs is not mounted again");
    }

    #[test]
    fn only_the_instances_of_storbench_processes_that_no_longer_run_are_removed_as_stale() {
        let dir = tempfile::tempdir().unwrap();
        let instances = dir.path().join("instances");
        // A pid above the kernel's largest never runs.
        for name in ["storbench-99999999-capture", "perf-99999999", "storbench-1-capture"] {
            std::fs::create_dir_all(instances.join(name)).unwrap();
        }
        let own = format!("storbench-{}-capture", std::process::id());
        std::fs::create_dir(instances.join(&own)).unwrap();
        assert_eq!(remove_stale(dir.path()), ["storbench-99999999-capture"]);
        for kept in ["perf-99999999", "storbench-1-capture", own.as_str()] {
            assert!(instances.join(kept).is_dir(), "{kept} is another tool's or a live process's");
        }
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
