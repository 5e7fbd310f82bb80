//! Crash cycles (`--crash-after`, `--crash-cmd`, `--crash-cycles`): each cycle runs the stress
//! as a separate writer process (the caller's [`WriterCommand`]: storbench's binary with its
//! hidden `--crash-writer`, which runs [`writer`]) on new files,
//! kills it (or runs the user's command, e.g. a power cut) at a random point once its
//! activities run, then audits every page against the journal the writer left: every write
//! it acknowledged must be there; writes in flight at the crash may hold either generation.
//!
//! The writer and the command run through `crate::command`: each is contained with
//! everything it starts, dies with storbench, and ends on a stop request (Ctrl-C, SIGTERM)
//! within a moment. The command has a time limit (`--crash-cmd-timeout`); its output and the
//! writer's go to the run's log ([`Voice::log`]), never to stdout. A cycle whose command fails or
//! times out, or whose writer ends before its crash point, is a failed cycle: it is audited
//! (the writer was killed), the run stops there and fails with the reason, and the times the
//! crash really came are recorded.
//!
//! Each writer hands every interval it closes to the run (`handover`), which records it as the
//! cycle's stream in the bundle: the cycles' I/O figures are their writers' intervals, and
//! the record's end keeps each cycle's crash and what the audits found, so the summary is
//! built again from the bundle alone.

pub mod handover;

use super::bundle::ErrorFile;
use super::summary::crash::{CrashFacts, CycleRecord};
use super::{self as integ, AuditReport, IntegrityRecorder, IntegritySpec, Journal, Layout};
use crate::Result;
use crate::command::{self, Ending, Finished, Running, Waited};
use crate::error::Doing;
use crate::monitor::{SystemSampler, resolve_device};
use crate::rng::{stream, unit};
use crate::run::StopFlag;
use crate::run::record::Facts;
use handover::{Handover, Intake, Sink};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The crash options, checked.
pub struct CrashSpec {
    /// The crash comes between half this and this after the writer's activities start.
    pub after: Duration,
    /// The command run at the crash point instead of killing the writer.
    pub command: Option<String>,
    pub command_limit: Duration,
    pub cycles: u32,
}

/// How the cycles speak: a line for the person ([`Voice::say`]), one that reaches them even
/// while a run's output goes only to its log ([`Voice::alert`]), and what a process said, for
/// the run's log only ([`Voice::log`]).
#[derive(Clone, Copy)]
pub struct Voice<'a> {
    pub say: &'a dyn Fn(&str),
    pub alert: &'a dyn Fn(&str),
    pub log: &'a dyn Fn(&str),
}

/// How a cycle's writer process starts: `program` with the arguments `args` gives for its
/// [`WriterSpec`] (storbench's own binary with its hidden `--crash-writer`, which runs
/// [`writer`]).
#[derive(Clone, Copy)]
pub struct WriterCommand<'a> {
    pub program: &'a Path,
    pub args: &'a dyn Fn(&WriterSpec) -> Result<Vec<String>>,
}

/// What the cycles found, as the record's end keeps it.
pub struct Cycles {
    pub facts: CrashFacts,
    /// False when a stop request or an audit cut short ended the run.
    pub complete: bool,
}

impl Cycles {
    /// The run's outcome: the writers' intervals that `sink` recorded, with the cycles' facts.
    pub fn outcome(self, sink: Sink) -> crate::run::Outcome<IntegrityRecorder, CrashFacts> {
        let facts = Facts {
            measured_s: sink.measured_ns as f64 / 1e9,
            cpu_user_ns: u64::try_from(sink.cpu.user.as_nanos()).unwrap_or(u64::MAX),
            cpu_sys_ns: u64::try_from(sink.cpu.sys.as_nanos()).unwrap_or(u64::MAX),
            complete: self.complete,
            ..Facts::default()
        };
        facts.outcome(sink.totals.clone(), sink.totals, self.facts)
    }
}

/// What a crash cycle's writer is handed (`--writer-spec`, as JSON).
#[derive(Debug, Serialize, Deserialize)]
pub struct WriterSpec {
    /// The parent's spec with the cycle's seed.
    pub spec: IntegritySpec,
    /// Where it appends its intervals (`handover`).
    pub intervals: PathBuf,
}

/// How long a writer may take to create its files and start.
const START_LIMIT: Duration = Duration::from_secs(600);
/// How long a writer may live on after the crash command.
const AFTER_COMMAND: Duration = Duration::from_secs(10);
/// A writer's own length: longer than any cycle, which kills it (or its time limit does).
pub const WRITER_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// The cycles' surroundings: how a writer starts and how they speak.
#[derive(Clone, Copy)]
pub struct Around<'a> {
    pub writer: WriterCommand<'a>,
    pub voice: Voice<'a>,
}

/// Runs the `plan`'s crash cycles of `spec`: their intervals go to `sink`, error records to
/// `errors`.
pub fn run_cycles(
    spec: &IntegritySpec,
    plan: &CrashSpec,
    around: Around<'_>,
    (errors, sink): (&mut ErrorFile, &mut Sink),
    stop: &StopFlag,
) -> Result<Cycles> {
    let layout = spec.layout();
    let facts = CrashFacts { planned: plan.cycles, ..CrashFacts::default() };
    let mut out = Cycles { facts, complete: true };
    for cycle in 1..=plan.cycles {
        let mut rng = stream(spec.seed, 7_000 + u64::from(cycle));
        let delay = plan.after.mul_f64(0.5 + 0.5 * unit(&mut rng));
        let Some(record) = crash_cycle(spec, (plan, around), (cycle, delay), sink, stop)? else {
            layout.remove();
            out.complete = false;
            break;
        };
        let (report, acknowledged, seconds) = audit_cycle(&layout, &spec.sizes, stop)?;
        let found = if report.ok() { "all found".to_string() } else { format!("{} errors", report.errors()) };
        (around.voice.say)(&format!(
            "crash cycle {cycle} of {}: {}; {acknowledged} pages acknowledged, {found}",
            plan.cycles,
            record.describe()
        ));
        errors.write(&report.first_errors);
        add_cycle(&mut out.facts, &report, acknowledged, seconds);
        let failed = record.failure.is_some();
        out.facts.cycles.push(record);
        if !report.complete {
            out.complete = false;
            break;
        }
        if failed {
            if report.ok() {
                layout.remove();
            }
            break;
        }
        if cycle < plan.cycles || report.ok() {
            layout.remove();
        }
    }
    out.facts.interrupted = stop.is_stopped();
    Ok(out)
}

fn add_cycle(out: &mut CrashFacts, report: &AuditReport, acknowledged: u64, seconds: f64) {
    let e = super::summary::errors_of_audit(report);
    // A page whose acknowledged generation is missing: lost, torn back, or replaced.
    let lost = e.lost_writes + e.torn_pages + e.misplaced_pages + e.checksum + e.read_errors;
    out.crash.cycles += 1;
    out.crash.writes_acknowledged += acknowledged;
    out.crash.writes_found += acknowledged.saturating_sub(lost);
    out.crash.lost += lost.min(acknowledged);
    out.errors.add(&e);
    out.audit_s += seconds;
    out.pages_checked += report.pages_checked;
}

/// The writer for `cycle`: `writer`'s program on the parent's spec with the cycle's own
/// seed, run until killed (at the latest when every wait of the cycle is over), handing its
/// intervals over in `intervals`.
fn start_writer(
    spec: &IntegritySpec,
    (plan, writer): (&CrashSpec, WriterCommand),
    cycle: u32,
    intervals: &Path,
) -> Result<Running> {
    let limit = START_LIMIT + plan.after + plan.command_limit + AFTER_COMMAND + Duration::from_secs(60);
    let args = (writer.args)(&WriterSpec::of_cycle(spec, cycle, intervals))?;
    command::start(&command::Spec::new(writer.program, args, limit)).doing("starting the writer process")
}

impl WriterSpec {
    /// What cycle `cycle`'s writer is handed: the parent's spec with the cycle's own seed, run
    /// until killed, its intervals appended to `intervals`.
    pub fn of_cycle(spec: &IntegritySpec, cycle: u32, intervals: &Path) -> WriterSpec {
        WriterSpec {
            spec: IntegritySpec {
                duration: WRITER_DURATION,
                seed: spec.seed.wrapping_add(u64::from(cycle) - 1),
                ..spec.clone()
            },
            intervals: intervals.to_path_buf(),
        }
    }
}

/// How often the run records what a running writer handed over.
const TAKE_EVERY: Duration = Duration::from_millis(200);

/// One cycle up to its crash: the writer started, its activities running, then killed (or
/// the command run) `delay` after they started; its intervals recorded in `sink` as they come
/// and once it is gone. None when a stop request came first; the writer and the command are
/// ended either way.
fn crash_cycle(
    spec: &IntegritySpec,
    (plan, around): (&CrashSpec, Around),
    (cycle, delay): (u32, Duration),
    sink: &mut Sink,
    stop: &StopFlag,
) -> Result<Option<CycleRecord>> {
    let mut intake = Intake::create(sink, cycle)?;
    let crashed = start_writer(spec, (plan, around.writer), cycle, intake.path())
        .and_then(|w| crash_writer(w, (plan, around.voice), (cycle, delay), (&mut intake, sink), stop));
    // The writer is gone (ended, or dropped with the error): every line it wrote is there.
    let finished = intake.finish(sink, around.voice);
    let record = crashed?;
    finished.map(|()| record)
}

/// `crash_cycle` once the writer started.
fn crash_writer(
    writer: Running,
    (plan, voice): (&CrashSpec, Voice),
    (cycle, delay): (u32, Duration),
    (intake, sink): (&mut Intake, &mut Sink),
    stop: &StopFlag,
) -> Result<Option<CycleRecord>> {
    let Some(writer) = wait_ready(writer, voice, stop)? else { return Ok(None) };
    let clock = CycleClock { ready: Instant::now(), ready_at: SystemTime::now() };
    let mut record = CycleRecord { cycle, planned_s: delay.as_secs_f64(), ..CycleRecord::default() };
    let writer = match wait_taking(writer, clock.ready + delay, (intake, sink), voice, stop)? {
        Waited::Running(w) => w,
        Waited::Finished(f) => return Ok(ended_early(record, &f, &clock, voice)),
    };
    match &plan.command {
        None => {
            let f = writer.end();
            record.crash_s = clock.since(f.ended_at);
            record.writer_ended_s = record.crash_s;
            Ok(Some(record))
        }
        Some(cmd) => command_crash(writer, (cmd, plan, voice), record, &clock, stop),
    }
}

/// Waits for the writer until `until` (or its end, or a stop request), recording what it hands
/// over every [`TAKE_EVERY`].
fn wait_taking(
    mut writer: Running,
    until: Instant,
    (intake, sink): (&mut Intake, &mut Sink),
    voice: Voice,
    stop: &StopFlag,
) -> Result<Waited> {
    loop {
        let next = until.min(Instant::now() + TAKE_EVERY);
        match writer.wait_for(Some(next), stop, |_| false) {
            Waited::Running(w) if Instant::now() < until => writer = w,
            done => return Ok(done),
        }
        intake.take(sink, voice)?;
    }
}

/// When a cycle's writer started its activities, by both clocks.
struct CycleClock {
    ready: Instant,
    ready_at: SystemTime,
}

impl CycleClock {
    /// Seconds from the start of the activities to `t`.
    fn since(&self, t: SystemTime) -> f64 {
        t.duration_since(self.ready_at).unwrap_or_default().as_secs_f64()
    }
}

/// A writer that ended before its crash point: a failed cycle, or None on a stop request.
fn ended_early(
    mut record: CycleRecord,
    f: &Finished,
    clock: &CycleClock,
    voice: Voice,
) -> Option<CycleRecord> {
    log_output("the writer", f, voice);
    if f.ending == Ending::Stopped {
        return None;
    }
    record.crash_s = clock.since(f.ended_at);
    record.writer_ended_s = record.crash_s;
    record.failure = Some(format!(
        "the writer ended before its crash point, {:.2} s after its activities started ({}){}",
        record.writer_ended_s,
        f.describe(Duration::ZERO),
        said(&f.stderr)
    ));
    Some(record)
}

/// The crash by `cmd`: run to its end or its time limit; the writer is then waited for (the
/// command succeeded) or killed (it failed: a failed cycle). None on a stop request.
fn command_crash(
    writer: Running,
    (cmd, plan, voice): (&str, &CrashSpec, Voice),
    mut record: CycleRecord,
    clock: &CycleClock,
    stop: &StopFlag,
) -> Result<Option<CycleRecord>> {
    let c = command::run(&command::Spec::shell(cmd, plan.command_limit), stop);
    let c = c.doing("running --crash-cmd")?;
    log_output("--crash-cmd", &c, voice);
    let end = c.describe(plan.command_limit);
    record.crash_s = clock.since(c.started_at);
    record.command = Some(match c.ending {
        Ending::Exited => format!("{end} after {:.2} s", c.ran_for.as_secs_f64()),
        _ => end.clone(),
    });
    let w = match c.ending {
        Ending::Stopped | Ending::Ended => None,
        _ if c.succeeded() => writer_after_command(writer, voice, stop),
        _ => {
            let why = match c.ending {
                Ending::TimeLimit => format!("did not finish: {end} (--crash-cmd-timeout)"),
                _ => format!("failed ({end})"),
            };
            record.failure = Some(format!("--crash-cmd {why}{}", said(&c.stderr)));
            Some(writer.end())
        }
    };
    let Some(w) = w else { return Ok(None) };
    log_output("the writer", &w, voice);
    record.writer_ended_s = clock.since(w.ended_at);
    record.writer_killed = w.ending == Ending::Ended;
    Ok(Some(record))
}

/// The writer after a command that succeeded: gone (the crash took it), or killed when still
/// alive [`AFTER_COMMAND`] later. None on a stop request.
fn writer_after_command(writer: Running, voice: Voice, stop: &StopFlag) -> Option<Finished> {
    match writer.wait_for(Some(Instant::now() + AFTER_COMMAND), stop, |_| false) {
        Waited::Finished(f) if f.ending == Ending::Stopped => None,
        Waited::Finished(f) => Some(f),
        Waited::Running(w) => {
            (voice.alert)(&format!(
                "the writer was still running {} s after --crash-cmd; killed it",
                AFTER_COMMAND.as_secs()
            ));
            Some(w.end())
        }
    }
}

/// Waits for the writer's "ready" line: its files are made and its activities started. None
/// on a stop request (the writer is ended).
fn wait_ready(writer: Running, voice: Voice, stop: &StopFlag) -> Result<Option<Running>> {
    let limit = Instant::now() + START_LIMIT;
    let f = match writer.wait_for(Some(limit), stop, |out| out.has_line("ready")) {
        Waited::Running(w) if w.stdout().has_line("ready") => return Ok(Some(w)),
        Waited::Running(w) => {
            log_output("the writer", &w.end(), voice);
            refuse!("the writer process did not start within {} s", START_LIMIT.as_secs());
        }
        Waited::Finished(f) => f,
    };
    log_output("the writer", &f, voice);
    if f.ending == Ending::Stopped {
        return Ok(None);
    }
    refuse!(
        "the writer process ended before its activities started ({}){}",
        f.describe(START_LIMIT),
        said(&f.stderr)
    )
}

/// The last thing a process said on `stderr`, to quote after a colon ("" when nothing).
fn said(stderr: &command::Output) -> String {
    let text = stderr.text();
    let last = text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("");
    let last = last.strip_prefix("error: ").unwrap_or(last);
    if last.is_empty() { String::new() } else { format!(": {}", last.chars().take(300).collect::<String>()) }
}

/// A process's output into the run's log (output.log), never onto the terminal's stdout.
fn log_output(what: &str, f: &Finished, voice: Voice) {
    for (stream, out) in [("stdout", &f.stdout), ("stderr", &f.stderr)] {
        let text = out.text();
        // The writer's "ready" is for storbench, not for the reader.
        if text.trim().is_empty() || (what == "the writer" && stream == "stdout" && text == "ready\n") {
            continue;
        }
        let more =
            if out.dropped > 0 { format!("\n({} bytes more not kept)", out.dropped) } else { String::new() };
        (voice.log)(&format!("{what} said on {stream}:\n{}{more}", text.trim_end()));
    }
}

/// The audit after a crash: the files against the journal the writer left.
fn audit_cycle(layout: &Layout, sizes: &integ::Sizes, stop: &StopFlag) -> Result<(AuditReport, u64, f64)> {
    let expected = Journal::load(&layout.journal()).doing("reading the writer's journal")?;
    let acknowledged = expected.pages().count() as u64;
    let started = Instant::now();
    let report = integ::audit(&layout.regions(sizes), &expected, stop, &mut |_, _| {})
        .doing("auditing after the crash")?;
    Ok((report, acknowledged, started.elapsed().as_secs_f64()))
}

/// The writer process: create the files, call `ready` (the parent waits for its "ready"
/// line), run until killed, handing each closed interval over (`handover`) with the host's
/// figures over it; a failed hand-over is said once to `alert`. The parent validated the spec
/// and holds the target's lock; the files must not be there yet.
pub fn writer(w: &WriterSpec, ready: &mut dyn FnMut(), alert: fn(&str), stop: &StopFlag) -> Result<()> {
    let spec = &w.spec;
    super::place::refuse_existing(spec)?;
    let created = integ::create(spec, &mut |_, _| {}).doing("creating the integrity files")?;
    let mut handover = Handover::open(&w.intervals, alert)?;
    let device = resolve_device(&spec.dir).ok().flatten();
    let mut host = SystemSampler::new(device.as_ref().map(|d| d.name.as_str()));
    ready();
    handover.start();
    integ::run(spec, created, &mut host, stop, &mut |iv| handover.hand(iv), &mut |_, _| {})?;
    Ok(())
}
