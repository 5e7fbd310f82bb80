//! A cgroup v2 of one command's own, made under storbench's cgroup where that can be written
//! (as root, or in a cgroup delegated to the user): everything the command starts, whatever
//! session or parent it ends up with, stays in it and is ended with one write to
//! `cgroup.kill` (Linux 5.14; before it, by killing each of `cgroup.procs` until none is
//! left). The directory is removed once it is empty. What a storbench killed outright (which
//! no code of its own outlives) left in its cgroups is ended by the next storbench to run a
//! command there.

use rustix::fd::OwnedFd;
use rustix::process::Pid;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Set when a cgroup would not take a command: commands are then contained by their
/// descendants for the rest of the process.
static GIVEN_UP: AtomicBool = AtomicBool::new(false);

/// How long the kill may take to empty the cgroup before its directory is left behind.
const EMPTY_WAIT: Duration = Duration::from_secs(1);

pub(super) struct Cgroup {
    dir: PathBuf,
    /// `cgroup.procs`, open for the new process to write itself into before exec.
    procs: OwnedFd,
}

/// Whether commands may still be put into cgroups.
pub(super) fn usable() -> bool {
    !GIVEN_UP.load(Ordering::Relaxed) && own_cgroup().is_some()
}

/// No more cgroups for this process (one would not take a command).
pub(super) fn give_up() {
    GIVEN_UP.store(true, Ordering::Relaxed);
}

impl Cgroup {
    /// A new cgroup beside nothing else, under storbench's own; None where none can be made.
    pub(super) fn create() -> Option<Cgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        static SWEPT: std::sync::Once = std::sync::Once::new();
        let parent = own_cgroup()?;
        SWEPT.call_once(|| sweep_leftovers(parent));
        let name = format!("storbench-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = parent.join(name);
        let made = std::fs::create_dir(&dir).map_err(drop).and_then(|()| {
            open_control(&dir.join("cgroup.procs")).map_err(|_| {
                let _ = std::fs::remove_dir(&dir);
            })
        });
        match made {
            Ok(procs) => Some(Cgroup { dir, procs }),
            Err(()) => {
                // Not ours to write (no root, no delegation) or read-only: it will not change.
                give_up();
                None
            }
        }
    }

    pub(super) fn procs_fd(&self) -> BorrowedFd<'_> {
        self.procs.as_fd()
    }

    /// Kills every process in the cgroup.
    pub(super) fn kill(&self) {
        kill_in(&self.dir);
    }

    /// Removes the directory once the cgroup is empty.
    pub(super) fn remove(&self) {
        remove_when_empty(&self.dir);
    }

    #[cfg(test)]
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Kills every process in the cgroup at `dir`.
fn kill_in(dir: &Path) {
    let killed = open_control(&dir.join("cgroup.kill")).and_then(|fd| rustix::io::write(fd, b"1"));
    if killed.is_err() {
        // A kernel before 5.14: one by one, until no process is left (a fork between the
        // reading and the kill is caught by the next round).
        for _ in 0..100 {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            let pids: Vec<Pid> =
                procs.lines().filter_map(|l| Pid::from_raw(l.trim().parse().ok()?)).collect();
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// Removes the cgroup at `dir` once it is empty (killed processes take a moment to go); one
/// still busy after [`EMPTY_WAIT`] is left.
fn remove_when_empty(dir: &Path) {
    let until = Instant::now() + EMPTY_WAIT;
    while populated(dir) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = std::fs::remove_dir(dir);
}

/// Ends what a storbench killed outright (SIGKILL, a crash) left in its commands' cgroups:
/// those named after a pid that no longer runs, or after this process's own (before it made
/// any: an earlier process had the pid). Its direct children died with it.
fn sweep_leftovers(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("storbench-")?.split('-').next()) else {
            continue;
        };
        let stale = |p: u32| p == std::process::id() || !Path::new(&format!("/proc/{p}")).exists();
        if pid.parse::<u32>().is_ok_and(stale) {
            kill_in(&entry.path());
            remove_when_empty(&entry.path());
        }
    }
}

/// A cgroup's control file, opened for writing: it exists (the kernel makes it), is never
/// created, and no link is followed to it.
fn open_control(path: &Path) -> rustix::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW, Mode::empty())
}

/// Whether a process is still in the cgroup at `dir`.
fn populated(dir: &Path) -> bool {
    let events = std::fs::read_to_string(dir.join("cgroup.events")).unwrap_or_default();
    events.lines().any(|l| l.trim() == "populated 1")
}

/// storbench's own cgroup v2 directory, found once: where the v2 hierarchy is mounted
/// (`/proc/self/mountinfo`) joined with the path `/proc/self/cgroup` gives for it.
pub(super) fn own_cgroup() -> Option<&'static Path> {
    static OWN: OnceLock<Option<PathBuf>> = OnceLock::new();
    OWN.get_or_init(|| {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        own_cgroup_in(&cgroups, &mountinfo)
    })
    .as_deref()
}

/// The directory of the v2 cgroup that `cgroups` (as in `/proc/self/cgroup`) names, under
/// the cgroup2 mount in `mountinfo`.
fn own_cgroup_in(cgroups: &str, mountinfo: &str) -> Option<PathBuf> {
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let (root, mount_point) = mountinfo.lines().find_map(|line| {
        let (fields, rest) = line.split_once(" - ")?;
        if rest.split_whitespace().next() != Some("cgroup2") {
            return None;
        }
        let fields: Vec<&str> = fields.split_whitespace().collect();
        Some((*fields.get(3)?, *fields.get(4)?))
    })?;
    // A mount of part of the hierarchy shows only what lies under its root.
    let inside = Path::new(path).strip_prefix(root).ok()?;
    Some(Path::new(mount_point).join(inside))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_cgroup_is_the_v2_path_under_the_cgroup2_mount() {
        let mountinfo = "25 30 0:22 / /sys rw - sysfs sysfs rw\n\
                         41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let cgroups = "4:memory:/x\n0::/user.slice/session-3.scope\n";
        assert_eq!(
            own_cgroup_in(cgroups, mountinfo),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/session-3.scope"))
        );
        assert_eq!(own_cgroup_in("4:memory:/x\n", mountinfo), None, "no v2 hierarchy");
        assert_eq!(own_cgroup_in(cgroups, "25 30 0:22 / /sys rw - sysfs sysfs rw\n"), None, "not mounted");
        let partial = "50 31 0:38 /user.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            own_cgroup_in(cgroups, partial),
            Some(PathBuf::from("/sys/fs/cgroup/session-3.scope")),
            "a mount of a subtree"
        );
    }
}
