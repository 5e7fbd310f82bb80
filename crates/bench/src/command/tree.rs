//! Containment without a cgroup: a command's processes found in `/proc`. They are the
//! command (its session and process group leader, unreaped until it is done, so its ids stay
//! its own) and every process
//! - in its session or process group,
//! - whose parent is one of them (a child that called setsid, and its children), or
//! - that storbench adopted: storbench is the child subreaper of what it starts
//!   (`PR_SET_CHILD_SUBREAPER`), so an orphan (a double-forked daemon) comes to storbench, not
//!   to PID 1, and one that left storbench's session is a command's.
//!
//! They are recorded while the command runs (by pid and start time, so a reused pid is not
//! taken for one of them); killing repeats until a scan finds none alive, which also catches
//! what forked meanwhile. An orphan first seen after its parent ended is taken as the
//! command's being ended then, when several run at once.

use rustix::process::{Pid, Signal, WaitOptions};
use std::collections::HashSet;
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// Most rounds of scanning and killing; each one kills what the previous one missed.
const KILL_ROUNDS: usize = 50;

/// How long to wait for killed orphans to be reaped.
const REAP_WAIT: Duration = Duration::from_millis(500);

/// The processes of one command seen so far.
#[derive(Default)]
pub(super) struct Tree {
    known: Mutex<HashSet<Id>>,
}

/// A process: its pid and its start time (clock ticks since boot), which tell it apart from
/// a later process given the same pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Id {
    pid: i32,
    start: u64,
}

/// What `/proc/PID/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Proc {
    id: Id,
    ppid: i32,
    pgrp: i32,
    session: i32,
    zombie: bool,
}

/// Makes storbench the subreaper of everything it starts, once.
pub(super) fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Without it, an orphan that left the session goes to PID 1 and is not found.
        let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    });
}

impl Tree {
    /// Records the command's processes alive now.
    pub(super) fn record(&self, leader: Pid) {
        self.members(leader, &scan());
    }

    /// Kills every process of the command but the leader (the caller signals it), scanning
    /// again until none is left alive.
    pub(super) fn kill(&self, leader: Pid) {
        let _ = rustix::process::kill_process(leader, Signal::KILL);
        for _ in 0..KILL_ROUNDS {
            let alive: Vec<Proc> = self
                .members(leader, &scan())
                .into_iter()
                .filter(|p| !p.zombie && p.id.pid != leader.as_raw_nonzero().get())
                .collect();
            if alive.is_empty() {
                return;
            }
            for p in alive {
                if let Some(pid) = Pid::from_raw(p.id.pid) {
                    let _ = rustix::process::kill_process(pid, Signal::KILL);
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Reaps the command's processes that storbench adopted and killed (its own children
    /// now, and zombies until reaped).
    pub(super) fn release(&self) {
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let until = Instant::now() + REAP_WAIT;
        loop {
            let known = lock(&self.known).clone();
            let ours: Vec<Proc> =
                scan().into_iter().filter(|p| p.ppid == me && known.contains(&p.id)).collect();
            let running = super::running_pids();
            let mut left = false;
            for p in ours.iter().filter(|p| !running.iter().any(|r| r.as_raw_nonzero().get() == p.id.pid)) {
                match (p.zombie, Pid::from_raw(p.id.pid)) {
                    (true, Some(pid)) => {
                        let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
                    }
                    _ => left = true,
                }
            }
            if !left || Instant::now() >= until {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The command's processes among `procs` (the leader included), recorded.
    fn members(&self, leader: Pid, procs: &[Proc]) -> Vec<Proc> {
        let me = rustix::process::getpid().as_raw_nonzero().get();
        // Our session as /proc shows it: 0 when its leader is outside our pid namespace (a
        // container), where getsid's zero would not make a valid pid.
        let my_session = procs.iter().find(|p| p.id.pid == me).map_or(-1, |p| p.session);
        let running = super::running_pids();
        let mut known = lock(&self.known);
        let found = members_of(leader.as_raw_nonzero().get(), procs, &known, |p| {
            p.ppid == me
                && p.session != my_session
                && !running.iter().any(|r| r.as_raw_nonzero().get() == p.id.pid)
        });
        known.extend(found.iter().map(|p| p.id));
        found
    }
}

/// The processes of the command led by `leader`: the leader, those `known` before, those in
/// its session or group, those `adopted`, and the children of any of them.
fn members_of(
    leader: i32,
    procs: &[Proc],
    known: &HashSet<Id>,
    adopted: impl Fn(&Proc) -> bool,
) -> Vec<Proc> {
    let mut pids: HashSet<i32> = HashSet::from([leader]);
    let mut found: Vec<Proc> = Vec::new();
    loop {
        let before = found.len();
        for p in procs {
            if found.iter().any(|f| f.id == p.id) {
                continue;
            }
            let joined = p.id.pid == leader
                || known.contains(&p.id)
                || p.session == leader
                || p.pgrp == leader
                || pids.contains(&p.ppid)
                || adopted(p);
            if joined {
                pids.insert(p.id.pid);
                found.push(*p);
            }
        }
        if found.len() == before {
            return found;
        }
    }
}

/// Every process in `/proc` now.
fn scan() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| {
        let name = e.ok()?.file_name();
        let pid: i32 = name.to_str()?.parse().ok()?;
        parse_stat(pid, &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    })
    .collect()
}

/// A line of `/proc/PID/stat`; the command name in parentheses may hold anything, so the
/// fields are counted after its last ')'.
fn parse_stat(pid: i32, line: &str) -> Option<Proc> {
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), pgrp (5), session (6), ..., starttime (22).
    Some(Proc {
        id: Id { pid, start: fields.get(19)?.parse().ok()? },
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        zombie: matches!(*fields.first()?, "Z" | "X"),
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(pid: i32, ppid: i32, pgrp: i32, session: i32) -> Proc {
        Proc { id: Id { pid, start: pid as u64 * 10 }, ppid, pgrp, session, zombie: false }
    }

    #[test]
    fn stat_fields_are_counted_after_the_name_whatever_it_holds() {
        let line = "4242 (a) b (c)) S 4200 4242 4242 0 -1 4194560 96 0 0 0 0 0 0 0 20 0 1 0 987654 2433024 \
                    200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let p = parse_stat(4242, line).unwrap();
        assert_eq!((p.ppid, p.pgrp, p.session, p.id.start, p.zombie), (4200, 4242, 4242, 987654, false));
        assert!(parse_stat(1, "1 (x) S 0").is_none(), "a cut line");
        assert!(parse_stat(7, &line.replace(" S ", " Z ")).unwrap().zombie);
    }

    #[test]
    fn members_are_the_session_the_group_the_children_and_the_adopted() {
        let (me, leader) = (100, 200);
        let procs = [
            proc(me, 1, me, me),
            proc(leader, me, leader, leader),
            proc(201, leader, leader, leader), // a plain child
            proc(202, 201, 202, 202),          // a grandchild that called setsid
            proc(203, 202, 202, 202),          // its child
            proc(204, 1, 204, leader),         // an orphan still in the session
            proc(205, me, 205, 205),           // adopted: left storbench's session
            proc(206, me, me, me),             // storbench's own child (a test's, say)
            proc(207, 1, 207, 207),            // someone else's daemon
            proc(208, 206, me, me),            // and that child's child
        ];
        let adopted = |p: &Proc| p.ppid == me && p.session != me;
        let mut pids: Vec<i32> =
            members_of(leader, &procs, &HashSet::new(), adopted).iter().map(|p| p.id.pid).collect();
        pids.sort();
        assert_eq!(pids, [200, 201, 202, 203, 204, 205]);
        // Known before: kept, as long as its start time matches (a reused pid is not).
        let orphan = proc(209, 1, 209, 209);
        let known = HashSet::from([orphan.id]);
        let with = |p: Proc| members_of(leader, &[p], &known, |_| false).len();
        assert_eq!(with(orphan), 1);
        assert_eq!(with(Proc { id: Id { pid: 209, start: 1 }, ..orphan }), 0, "a reused pid");
    }
}
