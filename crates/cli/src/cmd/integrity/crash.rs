//! Crash cycles (`--crash-after`, `--crash-cmd`, `--crash-cycles`): each cycle runs the stress
//! as a separate writer process (this binary with the hidden `--crash-writer`) on new files,
//! kills it (or runs the user's command, e.g. a power cut) at a random point once its
//! activities run, then audits every page against the journal the writer left: every write
//! it acknowledged must be there; writes in flight at the crash may hold either generation.
//!
//! The writer and the command run through `storbench_bench::command`: each is contained with
//! everything it starts, dies with storbench, and ends on a stop request (Ctrl-C, SIGTERM)
//! within a moment. The command has a time limit (`--crash-cmd-timeout`); its output and the
//! writer's go to the bundle's output.log, never to stdout. A cycle whose command fails or
//! times out, or whose writer ends before its crash point, is a failed cycle: it is audited
//! (the writer was killed), the run stops there and fails with the reason, and the times the
//! crash really came are recorded.

use super::ErrorFile;
use crate::args::IntegrityArgs;
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};
use storbench_bench::command::{self, Ending, Finished, Running, Waited};
use storbench_bench::rng::{stream, unit};
use storbench_bench::run::{Beside, StopFlag};
use storbench_bench::workload::integrity::{self as integ, AuditReport, IntegritySpec, Journal, Layout};
use storbench_report::{CrashResult, IntegrityErrors, Results, Summary};

/// The crash options, checked.
pub struct Plan {
    /// The crash comes between half this and this after the writer's activities start.
    pub after: Duration,
    /// The command run at the crash point instead of killing the writer.
    pub command: Option<String>,
    pub command_limit: Duration,
    pub cycles: u32,
}

impl Plan {
    pub fn of(a: &IntegrityArgs, after: Duration) -> Plan {
        Plan {
            after,
            command: a.crash_cmd.clone(),
            command_limit: a.crash_cmd_timeout_or_default(),
            cycles: a.crash_cycles.unwrap_or(1),
        }
    }
}

/// What the cycles found.
pub struct Cycles {
    pub crash: CrashResult,
    pub errors: IntegrityErrors,
    /// Seconds the writers ran, crash to crash.
    pub run_s: f64,
    pub audit_s: f64,
    pub pages_checked: u64,
    pub complete: bool,
    /// Every cycle that came to its crash, as it went; a failed one fails the run.
    pub records: Vec<CycleRecord>,
}

/// One cycle's crash: when it was planned, when it really came and how. Times are seconds
/// after the writer's activities started.
#[derive(Debug, Clone, Default)]
pub struct CycleRecord {
    pub cycle: u32,
    pub planned_s: f64,
    /// When the writer was killed, or the command started.
    pub crash_s: f64,
    /// When the writer was gone (killed, or ended by the command).
    pub writer_ended_s: f64,
    /// Whether storbench killed the writer after the command (it failed, or left the writer
    /// running).
    pub writer_killed: bool,
    /// The command's end ("exit status: 0 after 0.21 s"), with a command.
    pub command: Option<String>,
    /// Why the cycle failed, if it did.
    pub failure: Option<String>,
}

/// How long a writer may take to create its files and start.
const START_LIMIT: Duration = Duration::from_secs(600);
/// How long a writer may live on after the crash command.
const AFTER_COMMAND: Duration = Duration::from_secs(10);
/// A writer's own length: longer than any cycle, which kills it (or its time limit does).
const WRITER_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// Runs the `plan`'s crash cycles of `spec`; error records go to `errors`.
pub fn run_cycles(
    spec: &IntegritySpec,
    plan: &Plan,
    errors: &mut ErrorFile,
    stop: &StopFlag,
) -> Result<Cycles> {
    let layout = spec.layout();
    let mut out = Cycles {
        crash: CrashResult::default(),
        errors: IntegrityErrors::default(),
        run_s: 0.0,
        audit_s: 0.0,
        pages_checked: 0,
        complete: true,
        records: Vec::new(),
    };
    for cycle in 1..=plan.cycles {
        let mut rng = stream(spec.seed, 7_000 + u64::from(cycle));
        let delay = plan.after.mul_f64(0.5 + 0.5 * unit(&mut rng));
        let started = Instant::now();
        let crashed = crash_cycle(spec, plan, cycle, delay, stop)?;
        out.run_s += started.elapsed().as_secs_f64();
        let Some(record) = crashed else {
            layout.remove();
            out.complete = false;
            break;
        };
        let (report, acknowledged, seconds) = audit_cycle(&layout, &spec.sizes, stop)?;
        let found = if report.ok() { "all found".to_string() } else { format!("{} errors", report.errors()) };
        say!(
            "crash cycle {cycle} of {}: {}; {acknowledged} pages acknowledged, {found}",
            plan.cycles,
            record.describe()
        );
        errors.write(&report.first_errors);
        add_cycle(&mut out, &report, acknowledged, seconds);
        let failed = record.failure.is_some();
        out.records.push(record);
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
    Ok(out)
}

/// `s` (the audits' summary) with the cycles' failures: one fails the run, each with its
/// reason among the warnings, and cycles left unrun are said.
pub fn judged(mut s: Summary, c: &Cycles, plan: &Plan) -> Summary {
    let failures: Vec<String> = c
        .records
        .iter()
        .filter_map(|r| {
            r.failure.as_ref().map(|f| format!("crash cycle {} failed: {}", r.cycle, r.failed_because(f)))
        })
        .collect();
    if failures.is_empty() {
        return s;
    }
    if let Results::Integrity(r) = &mut s.results {
        r.pass = false;
    }
    s.warnings.extend(failures);
    let ran = c.records.len() as u32;
    if ran < plan.cycles {
        s.warnings.push(format!(
            "crash cycles {} to {} were not run: the cycle before failed",
            ran + 1,
            plan.cycles
        ));
    }
    s
}

impl CycleRecord {
    /// "the writer killed 0.74 s (planned 0.72 s) into its activities", and so on; a failed
    /// cycle starts with why.
    fn describe(&self) -> String {
        match &self.failure {
            None => self.crash(),
            Some(why) => format!("FAILED: {}", self.failed_because(why)),
        }
    }

    /// Why the cycle failed, with its times.
    fn failed_because(&self, why: &str) -> String {
        match (&self.command, self.crash()) {
            (None, _) => why.to_owned(),
            (Some(_), crash) => format!("{why}; {crash}"),
        }
    }

    /// When the crash came, and how.
    fn crash(&self) -> String {
        let at = format!("{:.2} s (planned {:.2} s)", self.crash_s, self.planned_s);
        let gone =
            if self.writer_killed { "the writer killed by storbench at" } else { "the writer gone at" };
        match &self.command {
            None => format!("the writer killed {at} into its activities"),
            Some(end) => format!(
                "--crash-cmd ran {at} into the writer's activities, {end}; {gone} {:.2} s",
                self.writer_ended_s
            ),
        }
    }
}

fn add_cycle(out: &mut Cycles, report: &AuditReport, acknowledged: u64, seconds: f64) {
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

/// The writer for `cycle`: this binary on the parent's spec, with the cycle's own seed, run
/// until killed (at the latest when every wait of the cycle is over).
fn start_writer(spec: &IntegritySpec, plan: &Plan, cycle: u32) -> Result<Running> {
    let exe = std::env::current_exe().context("finding storbench's own binary")?;
    let limit = START_LIMIT + plan.after + plan.command_limit + AFTER_COMMAND + Duration::from_secs(60);
    let args = writer_args(spec, cycle)?;
    command::start(&command::Spec::new(exe, args, limit)).context("starting the writer process")
}

/// The writer's command line: the spec as JSON, named by its target for a crash command
/// that looks for it (`pkill -f -- '--crash-writer --target DIR'`).
fn writer_args(spec: &IntegritySpec, cycle: u32) -> Result<Vec<String>> {
    let writer = IntegritySpec {
        duration: WRITER_DURATION,
        seed: spec.seed.wrapping_add(u64::from(cycle) - 1),
        ..spec.clone()
    };
    let json = serde_json::to_string(&writer).context("handing the writer its spec")?;
    let place = spec.device.as_ref().unwrap_or(&spec.dir).display().to_string();
    // The parent's meter measures; the writer's figures are not kept.
    let args = ["integrity", "--crash-writer", "--target", &place, "--writer-spec", &json, "--power", "none"];
    Ok(args.map(String::from).to_vec())
}

/// One cycle up to its crash: the writer started, its activities running, then killed (or
/// the command run) after `delay`. None when a stop request came first; the writer and the
/// command are ended either way.
fn crash_cycle(
    spec: &IntegritySpec,
    plan: &Plan,
    cycle: u32,
    delay: Duration,
    stop: &StopFlag,
) -> Result<Option<CycleRecord>> {
    let Some(writer) = wait_ready(start_writer(spec, plan, cycle)?, stop)? else { return Ok(None) };
    let clock = CycleClock { ready: Instant::now(), ready_at: SystemTime::now() };
    let mut record = CycleRecord { cycle, planned_s: delay.as_secs_f64(), ..CycleRecord::default() };
    let writer = match writer.wait_for(Some(clock.ready + delay), stop, |_| false) {
        Waited::Running(w) => w,
        Waited::Finished(f) => return Ok(ended_early(record, &f, &clock)),
    };
    match &plan.command {
        None => {
            let f = writer.end();
            record.crash_s = clock.since(f.ended_at);
            record.writer_ended_s = record.crash_s;
            Ok(Some(record))
        }
        Some(cmd) => command_crash(writer, cmd, plan, record, &clock, stop),
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
fn ended_early(mut record: CycleRecord, f: &Finished, clock: &CycleClock) -> Option<CycleRecord> {
    log_output("the writer", f);
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
    cmd: &str,
    plan: &Plan,
    mut record: CycleRecord,
    clock: &CycleClock,
    stop: &StopFlag,
) -> Result<Option<CycleRecord>> {
    let c = command::run(&command::Spec::shell(cmd, plan.command_limit), stop);
    let c = c.context("running --crash-cmd")?;
    log_output("--crash-cmd", &c);
    let end = c.describe(plan.command_limit);
    record.crash_s = clock.since(c.started_at);
    record.command = Some(match c.ending {
        Ending::Exited => format!("{end} after {:.2} s", c.ran_for.as_secs_f64()),
        _ => end.clone(),
    });
    let w = match c.ending {
        Ending::Stopped | Ending::Ended => None,
        _ if c.succeeded() => writer_after_command(writer, stop),
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
    log_output("the writer", &w);
    record.writer_ended_s = clock.since(w.ended_at);
    record.writer_killed = w.ending == Ending::Ended;
    Ok(Some(record))
}

/// The writer after a command that succeeded: gone (the crash took it), or killed when still
/// alive [`AFTER_COMMAND`] later. None on a stop request.
fn writer_after_command(writer: Running, stop: &StopFlag) -> Option<Finished> {
    match writer.wait_for(Some(Instant::now() + AFTER_COMMAND), stop, |_| false) {
        Waited::Finished(f) if f.ending == Ending::Stopped => None,
        Waited::Finished(f) => Some(f),
        Waited::Running(w) => {
            alert!("the writer was still running {} s after --crash-cmd; killed it", AFTER_COMMAND.as_secs());
            Some(w.end())
        }
    }
}

/// Waits for the writer's "ready" line: its files are made and its activities started. None
/// on a stop request (the writer is ended).
fn wait_ready(writer: Running, stop: &StopFlag) -> Result<Option<Running>> {
    let limit = Instant::now() + START_LIMIT;
    let f = match writer.wait_for(Some(limit), stop, |out| out.has_line("ready")) {
        Waited::Running(w) if w.stdout().has_line("ready") => return Ok(Some(w)),
        Waited::Running(w) => {
            log_output("the writer", &w.end());
            bail!("the writer process did not start within {} s", START_LIMIT.as_secs());
        }
        Waited::Finished(f) => f,
    };
    log_output("the writer", &f);
    if f.ending == Ending::Stopped {
        return Ok(None);
    }
    bail!(
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
fn log_output(what: &str, f: &Finished) {
    for (stream, out) in [("stdout", &f.stdout), ("stderr", &f.stderr)] {
        let text = out.text();
        // The writer's "ready" is for storbench, not for the reader.
        if text.trim().is_empty() || (what == "the writer" && stream == "stdout" && text == "ready\n") {
            continue;
        }
        let more =
            if out.dropped > 0 { format!("\n({} bytes more not kept)", out.dropped) } else { String::new() };
        crate::console::log_only(&format!("{what} said on {stream}:\n{}{more}", text.trim_end()));
    }
}

/// The audit after a crash: the files against the journal the writer left.
fn audit_cycle(layout: &Layout, sizes: &integ::Sizes, stop: &StopFlag) -> Result<(AuditReport, u64, f64)> {
    let expected = Journal::load(&layout.journal()).context("reading the writer's journal")?;
    let acknowledged = expected.pages().count() as u64;
    let started = Instant::now();
    let report = integ::audit(&layout.regions(sizes), &expected, stop, &mut |_, _| {})
        .context("auditing after the crash")?;
    Ok((report, acknowledged, started.elapsed().as_secs_f64()))
}

/// The writer process: create the files, say "ready", run until killed.
pub fn writer(spec: &IntegritySpec, stop: &StopFlag) -> Result<()> {
    // The parent checked the room for the cycle; the writer's own duration is "until killed".
    super::validate::refuse_existing(spec)?;
    let created = integ::create(spec, &mut |_, _| {}).context("creating the integrity files")?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(b"ready\n").and_then(|()| out.flush());
    drop(out);
    struct NoHost;
    impl Beside for NoHost {
        fn sample(&mut self) -> storbench_report::SystemSample {
            Default::default()
        }
    }
    integ::run(spec, created, &mut NoHost, stop, &mut |_| {}, &mut |_, _| {})?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_writer_runs_the_parents_spec_exactly_with_its_cycles_seed() {
        let dir = tempfile::tempdir().unwrap();
        let parse = |argv: Vec<String>| crate::args::parse_kind::<crate::args::IntegrityCommand>(&argv).run;
        let target = dir.path().display().to_string();
        let parent = parse(["storbench", "integrity", "--target", &target].map(String::from).to_vec());
        let spec = IntegritySpec {
            users: 3,
            sync_every: Duration::from_millis(700),
            ..super::super::validate::validate(&parent).unwrap()
        };
        let w = parse(["storbench".to_string()].into_iter().chain(writer_args(&spec, 3).unwrap()).collect());
        assert!(w.crash_writer);
        assert_eq!(w.target.as_deref(), Some(spec.dir.as_path()), "named by its target");
        let got: IntegritySpec = serde_json::from_str(w.writer_spec.as_deref().unwrap()).unwrap();
        let expected = IntegritySpec { duration: WRITER_DURATION, seed: spec.seed + 2, ..spec };
        assert_eq!(format!("{got:?}"), format!("{expected:?}"));
    }
}
