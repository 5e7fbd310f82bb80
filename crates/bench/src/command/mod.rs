//! Every outside command storbench runs (a `cmd:` or IPMI power meter's command,
//! `--crash-cmd`, the crash cycles' writer process) starts here and nowhere else, and ends
//! here with everything it started.
//!
//! A command:
//! - runs in a session and process group of its own (so a terminal's Ctrl-C reaches
//!   storbench only, which ends it), with stdin from /dev/null, and dies with the thread that
//!   started it (`PR_SET_PDEATHSIG`, so a storbench killed outright takes it along);
//! - is contained: in a cgroup v2 of its own where one can be made under storbench's
//!   (`cgroup.rs`: everything it starts, daemons included, is ended with one write to
//!   `cgroup.kill`), else by its recorded descendants (`tree.rs`: the processes whose parent
//!   chain, session or process group leads to it, recorded while it runs, storbench being their
//!   subreaper so that none escapes to PID 1 by double-forking);
//! - has a time limit, and stops with the run ([`StopFlag`]);
//! - has its stdout and stderr read into bounded buffers (`output.rs`), for the caller to put
//!   into the run's log: nothing it prints reaches storbench's own stdout;
//! - ends in a [`Finished`]: its exit status, how it ended ([`Ending`]) and when it started and
//!   ended, by the wall clock.
//!
//! A command is done when it exits: whatever it left running is ended then. [`end_all`] ends
//! every command still running (storbench calls it as it exits), and dropping a [`Running`]
//! ends its command.

mod cgroup;
mod output;
mod tree;

pub use output::Output;

use crate::run::StopFlag;
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

/// Output kept of each stream when the caller says nothing else.
pub const OUTPUT_LIMIT: usize = 64 << 10;

/// How often a waiting caller looks at its command: the reaction time to an exit, a stop
/// request or the time limit.
const POLL: Duration = Duration::from_millis(10);

/// How long a killed command may take to go; one stuck in the kernel (a dead NFS mount) is
/// given up on after this rather than hanging storbench.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// How often the processes of a command contained by its descendants are recorded: a scan of
/// `/proc` costs a few milliseconds on a busy server.
const RECORD_EVERY: Duration = Duration::from_millis(500);

/// How long output may keep arriving once a command ended (its pipes close when the last
/// process holding them is gone).
const DRAIN_WAIT: Duration = Duration::from_millis(500);

/// A command to run: its program and arguments, its time limit and how much of its output to
/// keep.
#[derive(Debug, Clone)]
pub struct Spec {
    argv: Vec<OsString>,
    time_limit: Duration,
    output_limit: usize,
    cgroup: bool,
}

impl Spec {
    /// `program` with `args`, ended when it runs longer than `time_limit`.
    pub fn new<S: Into<OsString>>(
        program: impl Into<OsString>,
        args: impl IntoIterator<Item = S>,
        time_limit: Duration,
    ) -> Spec {
        let argv = std::iter::once(program.into()).chain(args.into_iter().map(Into::into)).collect();
        Spec { argv, time_limit, output_limit: OUTPUT_LIMIT, cgroup: true }
    }

    /// `script` run by `sh -c`.
    pub fn shell(script: &str, time_limit: Duration) -> Spec {
        Spec::new("sh", ["-c", script], time_limit)
    }

    /// Keep at most `bytes` of each of stdout and stderr (the rest is read and counted).
    pub fn output_limit(mut self, bytes: usize) -> Spec {
        self.output_limit = bytes;
        self
    }

    /// Contain the command by its recorded descendants even where a cgroup could be made:
    /// what happens on a machine without a writable cgroup v2, so that tests can prove it.
    pub fn without_cgroup(mut self) -> Spec {
        self.cgroup = false;
        self
    }

    pub fn time_limit(&self) -> Duration {
        self.time_limit
    }

    /// The command line, for messages.
    pub fn describe(&self) -> String {
        self.argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited (or a signal from elsewhere ended it): its status says how.
    Exited,
    /// Killed at its time limit.
    TimeLimit,
    /// Killed because the run was stopped (Ctrl-C, SIGTERM).
    Stopped,
    /// Killed by its owner: [`Running::end`], a [`Killer`], [`end_all`] or a drop.
    Ended,
}

/// A command that ran.
#[derive(Debug, Clone)]
pub struct Finished {
    pub ending: Ending,
    /// Its exit status; `None` only when it could not be reaped (stuck in the kernel after
    /// [`KILL_WAIT`]).
    pub status: Option<ExitStatus>,
    /// When it started and when it ended: when its exit was seen (within 10 ms) or when it was
    /// killed.
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    /// From start to end, by the monotonic clock.
    pub ran_for: Duration,
    pub stdout: Output,
    pub stderr: Output,
}

impl Finished {
    /// Whether it exited by itself with status 0.
    pub fn succeeded(&self) -> bool {
        self.ending == Ending::Exited && self.status.is_some_and(|s| s.success())
    }

    /// How it ended, for a message: "exit status: 3", "killed at its time limit of 60 s".
    pub fn describe(&self, time_limit: Duration) -> String {
        let status = || self.status.map_or_else(|| "status unknown".to_owned(), |s| s.to_string());
        match self.ending {
            Ending::Exited => status(),
            Ending::TimeLimit => format!("killed at its time limit of {} s", time_limit.as_secs_f64()),
            Ending::Stopped => "killed: the run was stopped".to_owned(),
            Ending::Ended => "killed".to_owned(),
        }
    }
}

/// What [`Running::wait_for`] came back with.
pub enum Waited {
    /// The command ended (by itself, at its time limit or on a stop request).
    Finished(Finished),
    /// It still runs: the condition held or the deadline passed.
    Running(Running),
}

/// A running command. Dropping it ends the command and everything it started.
pub struct Running {
    child: Child,
    shared: Arc<Shared>,
    stdout: output::Capture,
    stderr: output::Capture,
    started_at: SystemTime,
    started: Instant,
    time_limit: Duration,
    done: bool,
}

/// Ends a running command from any thread.
#[derive(Clone)]
pub struct Killer(Arc<Shared>);

impl Killer {
    /// Ends the command and everything it started (nothing happens once it was reaped).
    pub fn end(&self) {
        self.0.kill(Ending::Ended);
    }
}

/// Starts `spec`'s command. An error when it cannot start (its program is missing, say) or
/// when [`end_all`] was called. The command dies when the calling thread ends, so the caller
/// keeps its thread while the command runs (as every wait here does).
pub fn start(spec: &Spec) -> io::Result<Running> {
    let mut registry = lock(&REGISTRY);
    if registry.ended {
        return Err(io::Error::other("storbench is exiting: no command starts now"));
    }
    let cgroup = (spec.cgroup && cgroup::usable()).then(cgroup::Cgroup::create).flatten();
    let (mut child, contain) = match cgroup {
        Some(cg) => match spawn(spec, Some(cg.procs_fd())) {
            Ok(child) => (child, Contain::Cgroup(cg)),
            Err(_) => {
                cg.remove();
                let child = spawn_tracked(spec)?;
                // It starts, so the cgroup would not take it (not delegated to us, say): from
                // now on commands are contained by their descendants.
                cgroup::give_up();
                (child, Contain::Tree(tree::Tree::default()))
            }
        },
        None => (spawn_tracked(spec)?, Contain::Tree(tree::Tree::default())),
    };
    let shared = Arc::new(Shared {
        pid: Pid::from_child(&child),
        contain,
        state: Mutex::new(State::default()),
        done: AtomicBool::new(false),
    });
    let (started_at, started) = (SystemTime::now(), Instant::now());
    registry.commands.push(shared.clone());
    drop(registry);
    if matches!(shared.contain, Contain::Tree(_)) {
        record_while_running(&shared);
    }
    let limit = spec.output_limit;
    Ok(Running {
        stdout: output::Capture::start(child.stdout.take(), limit),
        stderr: output::Capture::start(child.stderr.take(), limit),
        child,
        shared,
        started_at,
        started,
        time_limit: spec.time_limit,
        done: false,
    })
}

/// Runs `spec`'s command to its end: its exit, its time limit or a stop request.
pub fn run(spec: &Spec, stop: &StopFlag) -> io::Result<Finished> {
    Ok(start(spec)?.wait(stop))
}

/// Ends every command still running, with everything each started, and lets none start
/// after: storbench calls this as it exits (a second Ctrl-C quits at once).
pub fn end_all() {
    let commands = {
        let mut registry = lock(&REGISTRY);
        registry.ended = true;
        registry.commands.clone()
    };
    for shared in &commands {
        shared.kill(Ending::Ended);
    }
    // The owners will not get to it: storbench is exiting.
    for shared in &commands {
        if let Contain::Cgroup(cg) = &shared.contain {
            cg.remove();
        }
    }
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its stdout so far.
    pub fn stdout(&self) -> Output {
        self.stdout.snapshot()
    }

    /// A handle that ends the command from another thread.
    pub fn killer(&self) -> Killer {
        Killer(self.shared.clone())
    }

    /// Waits until the command ends: it exits, reaches its time limit, or `stop` is raised
    /// (then it is killed).
    pub fn wait(mut self, stop: &StopFlag) -> Finished {
        while !self.watch(None, stop, &|_| false) {}
        self.finish()
    }

    /// Waits as [`wait`](Self::wait) does, but comes back with the command still running once
    /// `ready` holds for its stdout so far or `deadline` passes.
    pub fn wait_for(
        mut self,
        deadline: Option<Instant>,
        stop: &StopFlag,
        ready: impl Fn(&Output) -> bool,
    ) -> Waited {
        match self.watch(deadline, stop, &ready) {
            true => Waited::Finished(self.finish()),
            false => Waited::Running(self),
        }
    }

    /// Ends the command now, with everything it started.
    pub fn end(mut self) -> Finished {
        self.kill_and_finish()
    }

    /// Asks the command to end (SIGTERM to its process group, so that it may clean up), waits
    /// up to `grace` for it to exit, then ends it with everything it started, as [`end`]
    /// does. Its ending is [`Ending::Ended`] unless it had exited already.
    ///
    /// [`end`]: Self::end
    pub fn terminate(mut self, grace: Duration) -> Finished {
        if !self.exited() && self.shared.signal(Signal::TERM, Ending::Ended) {
            let until = Instant::now() + grace;
            while !self.exited() && Instant::now() < until {
                std::thread::sleep(POLL);
            }
        }
        self.kill_and_finish()
    }

    /// Watches the command, killing it on a stop request or at its time limit; true once it
    /// ended (or, killed, is stuck in the kernel), false when `ready` holds or `deadline`
    /// passes first.
    fn watch(&mut self, deadline: Option<Instant>, stop: &StopFlag, ready: &dyn Fn(&Output) -> bool) -> bool {
        let limit = self.started + self.time_limit;
        loop {
            if self.exited() {
                return true;
            }
            let now = Instant::now();
            match self.shared.killed_at() {
                Some(at) if at.elapsed().unwrap_or_default() > KILL_WAIT => return true,
                Some(_) => {}
                None if stop.is_stopped() => self.shared.kill(Ending::Stopped),
                None if now >= limit => self.shared.kill(Ending::TimeLimit),
                None if self.stdout.peek(ready) || deadline.is_some_and(|d| now >= d) => return false,
                None => {}
            }
            std::thread::sleep(POLL);
        }
    }

    /// Kills the command (unless it ended already) and finishes it once it is gone.
    fn kill_and_finish(&mut self) -> Finished {
        self.shared.kill(Ending::Ended);
        let until = Instant::now() + KILL_WAIT;
        while !self.exited() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.finish()
    }

    /// The cgroup the command runs in, if it has one.
    #[cfg(test)]
    fn cgroup_dir(&self) -> Option<&std::path::Path> {
        match &self.shared.contain {
            Contain::Cgroup(cg) => Some(cg.dir()),
            Contain::Tree(_) => None,
        }
    }

    /// Whether the command exited (it stays unreaped, so its pid, process group and session
    /// stay its own).
    fn exited(&self) -> bool {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        let exited = !matches!(rustix::process::waitid(WaitId::Pid(self.shared.pid), options), Ok(None));
        if exited {
            lock(&self.shared.state).exited.get_or_insert_with(SystemTime::now);
        }
        exited
    }

    /// Ends what the command left running, reaps it and collects its output.
    fn finish(&mut self) -> Finished {
        self.done = true;
        self.shared.done.store(true, Ordering::Relaxed);
        let (status, ending, ended_at) = {
            let mut state = lock(&self.shared.state);
            self.shared.contain.kill(self.shared.pid);
            let reaped = state.exited.is_some();
            let status = if reaped { self.child.wait().ok() } else { None };
            state.reaped = true;
            let (ending, at) = match (state.killed, state.exited) {
                (Some((why, at)), exited) if exited.is_none_or(|e| e >= at) => (why, at),
                (_, exited) => (Ending::Exited, exited.unwrap_or_else(SystemTime::now)),
            };
            (status, ending, at)
        };
        self.shared.contain.release();
        lock(&REGISTRY).commands.retain(|c| !Arc::ptr_eq(c, &self.shared));
        let drained = Instant::now() + DRAIN_WAIT;
        Finished {
            ending,
            status,
            started_at: self.started_at,
            ended_at,
            ran_for: ended_at.duration_since(self.started_at).unwrap_or_else(|_| self.started.elapsed()),
            stdout: self.stdout.finish(drained),
            stderr: self.stderr.finish(drained),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.done {
            self.kill_and_finish();
        }
    }
}

/// Every command running, for [`end_all`].
static REGISTRY: Mutex<Registry> = Mutex::new(Registry { commands: Vec::new(), ended: false });

struct Registry {
    commands: Vec<Arc<Shared>>,
    ended: bool,
}

/// The pids of the commands running now: storbench's own children, never taken for the
/// orphans of a command (`tree.rs`).
fn running_pids() -> Vec<Pid> {
    lock(&REGISTRY).commands.iter().map(|c| c.pid).collect()
}

/// What the owner and a [`Killer`] share.
struct Shared {
    pid: Pid,
    contain: Contain,
    state: Mutex<State>,
    /// Set once the owner finished it: the recorder thread ends.
    done: AtomicBool,
}

/// Held while a signal goes to the command: it is only signalled while unreaped, so its pid
/// cannot be another process's.
#[derive(Default)]
struct State {
    reaped: bool,
    /// When its exit was first seen.
    exited: Option<SystemTime>,
    /// The first reason it was killed for, and when.
    killed: Option<(Ending, SystemTime)>,
}

impl Shared {
    fn kill(&self, why: Ending) {
        let mut state = lock(&self.state);
        if state.reaped {
            return;
        }
        state.killed.get_or_insert((why, SystemTime::now()));
        self.contain.kill(self.pid);
    }

    /// Sends `signal` to the command's process group (while unreaped, so the group is still
    /// its own), noting `why` as the reason it ends; false once it was reaped.
    fn signal(&self, signal: Signal, why: Ending) -> bool {
        let mut state = lock(&self.state);
        if state.reaped {
            return false;
        }
        state.killed.get_or_insert((why, SystemTime::now()));
        let _ = rustix::process::kill_process_group(self.pid, signal);
        true
    }

    fn killed_at(&self) -> Option<SystemTime> {
        lock(&self.state).killed.map(|(_, at)| at)
    }
}

/// How everything a command started is found and ended.
enum Contain {
    Cgroup(cgroup::Cgroup),
    Tree(tree::Tree),
}

impl Contain {
    /// Kills the command (unreaped, so `leader` is still its pid) and everything it started.
    fn kill(&self, leader: Pid) {
        // Its own session and group first: the leader and what did not leave them.
        let _ = rustix::process::kill_process_group(leader, Signal::KILL);
        match self {
            Contain::Cgroup(cg) => cg.kill(),
            Contain::Tree(tree) => tree.kill(leader),
        }
    }

    /// After the leader is reaped: the cgroup removed, or killed orphans reaped.
    fn release(&self) {
        match self {
            Contain::Cgroup(cg) => cg.remove(),
            Contain::Tree(tree) => tree.release(),
        }
    }
}

/// Records a descendants-contained command's processes every [`RECORD_EVERY`] while it runs,
/// so that one that leaves its session is still known as its own.
fn record_while_running(shared: &Arc<Shared>) {
    let shared = shared.clone();
    // Without the thread the final scan still finds the command's processes; only orphans of
    // several commands running at once are then told apart less well.
    let _ = std::thread::Builder::new().name("command-tree".into()).spawn(move || {
        while !shared.done.load(Ordering::Relaxed) {
            if let Contain::Tree(tree) = &shared.contain {
                let state = lock(&shared.state);
                if !state.reaped {
                    tree.record(shared.pid);
                }
            }
            let next = Instant::now() + RECORD_EVERY;
            while Instant::now() < next && !shared.done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    });
}

/// Spawns the command for containment by its descendants: storbench becomes the subreaper
/// of what it starts first.
fn spawn_tracked(spec: &Spec) -> io::Result<Child> {
    tree::become_subreaper();
    spawn(spec, None)
}

/// Forks and execs the command in a new session, dying with this thread, inside the cgroup
/// whose `cgroup.procs` is `procs` if one is given.
fn spawn(spec: &Spec, procs: Option<BorrowedFd>) -> io::Result<Child> {
    let (program, args) = spec.argv.split_first().ok_or_else(|| io::Error::other("the command is empty"))?;
    let parent = rustix::process::getpid();
    let procs: Option<RawFd> = procs.map(|fd| fd.as_raw_fd());
    let mut command = std::process::Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: between fork and exec the closure makes only async-signal-safe system calls
    // (setsid, prctl, getppid, write) and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            rustix::process::setsid()?;
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            // storbench died before the line above: nothing would end the command.
            if rustix::process::getppid() != Some(parent) {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(fd) = procs {
                // "0": the writing process itself.
                rustix::io::write(BorrowedFd::borrow_raw(fd), b"0")?;
            }
            Ok(())
        });
    }
    command.spawn()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests;
