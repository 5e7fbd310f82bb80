//! Crash cycles (`--crash-after`, `--crash-cmd`, `--crash-cycles`): each cycle runs the stress
//! as a separate writer process (this binary with the hidden `--crash-writer`) on new files,
//! kills it (or runs the user's command, e.g. a power cut) at a random point once its
//! activities run, then audits every page against the journal the writer left: every write
//! it acknowledged must be there; writes in flight at the crash may hold either generation.

use super::ErrorFile;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use storbench_bench::rng::{stream, unit};
use storbench_bench::run::{HostSampler, StopFlag};
use storbench_bench::workload::integrity::{self as integ, AuditReport, IntegritySpec, Journal, Layout};
use storbench_report::{CrashResult, IntegrityErrors};

/// What the cycles found.
pub struct Cycles {
    pub crash: CrashResult,
    pub errors: IntegrityErrors,
    /// Seconds the writers ran, crash to crash.
    pub run_s: f64,
    pub audit_s: f64,
    pub pages_checked: u64,
    pub complete: bool,
}

/// How long a writer may take to create its files and start.
const START_LIMIT: Duration = Duration::from_secs(600);
/// How long a writer may live on after the crash command.
const AFTER_COMMAND: Duration = Duration::from_secs(10);

/// Runs `cycles` crash cycles of `spec` at most `after` apart; error records go to `errors`.
pub fn run_cycles(
    spec: &IntegritySpec,
    after: Duration,
    command: Option<&str>,
    cycles: u32,
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
    };
    for cycle in 1..=cycles {
        let writer = start_writer(spec, cycle)?;
        let mut rng = stream(spec.seed, 7_000 + u64::from(cycle));
        let delay = after.mul_f64(0.5 + 0.5 * unit(&mut rng));
        let started = Instant::now();
        let crashed = crash(writer, delay, command, stop)?;
        out.run_s += started.elapsed().as_secs_f64();
        if !crashed {
            layout.remove();
            out.complete = false;
            break;
        }
        let (report, acknowledged, seconds) = audit_cycle(&layout, &spec.sizes, stop)?;
        say!(
            "crash cycle {cycle} of {cycles}: killed after {:.1} s; {} pages acknowledged, {}",
            delay.as_secs_f64(),
            acknowledged,
            if report.ok() { "all found".to_string() } else { format!("{} errors", report.errors()) }
        );
        errors.write(&report.first_errors);
        add_cycle(&mut out, &report, acknowledged, seconds);
        if !report.complete {
            out.complete = false;
            break;
        }
        if cycle < cycles || report.ok() {
            layout.remove();
        }
    }
    Ok(out)
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

/// The writer for `cycle`: this binary on the same options, its own seed, run until killed.
fn start_writer(spec: &IntegritySpec, cycle: u32) -> Result<Child> {
    let exe = std::env::current_exe().context("finding storbench's own binary")?;
    let page = integ::PAGE as u64;
    let ms = |d: Duration| format!("{}ms", d.as_millis());
    let s = spec.sizes;
    let mut args: Vec<String> = vec!["integrity".into(), "--crash-writer".into(), "--target".into()];
    match &spec.device {
        // The parent checked the device and holds its lock.
        Some(dev) => args.extend([
            dev.display().to_string(),
            "--allow-device".into(),
            "--force".into(),
            "--journal-dir".into(),
            spec.dir.display().to_string(),
        ]),
        None => args.push(spec.dir.display().to_string()),
    }
    for (flag, value) in [
        ("--data-size", (s.data_pages * page).to_string()),
        ("--data-max", (s.data_max_pages * page).to_string()),
        ("--data-growth", (s.growth_pages * page).to_string()),
        ("--log-size", (s.log_pages * page).to_string()),
        ("--duration", "30d".to_string()),
        ("--users", spec.users.to_string()),
        ("--target-io-ms", spec.target_io.as_millis().to_string()),
        ("--delay-threshold", ms(spec.delay_threshold)),
        ("--shrink-every", ms(spec.shrink_every)),
        ("--seed", spec.seed.wrapping_add(u64::from(cycle) - 1).to_string()),
        ("--engine", spec.engine.name().to_string()),
    ] {
        args.extend([flag.to_string(), value]);
    }
    if !spec.direct {
        args.push("--buffered".into());
    }
    if spec.write_through {
        args.push("--write-through".into());
    }
    Command::new(exe)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting the writer process")
}

/// Waits until the writer's activities run, then after `delay` kills it (or runs `command`);
/// false when a stop request came first (the writer is then killed too).
fn crash(mut writer: Child, delay: Duration, command: Option<&str>, stop: &StopFlag) -> Result<bool> {
    let ready = wait_ready(&mut writer);
    if let Err(e) = ready {
        let _ = writer.kill();
        let _ = writer.wait();
        return Err(e);
    }
    let reached = storbench_bench::run::sleep_until(Instant::now() + delay, stop);
    if reached && let Some(cmd) = command {
        let status = Command::new("sh").args(["-c", cmd]).status().context("running --crash-cmd")?;
        if !status.success() {
            alert!("--crash-cmd exited with {status}");
        }
        let until = Instant::now() + AFTER_COMMAND;
        while writer.try_wait()?.is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        if writer.try_wait()?.is_none() {
            alert!("the writer was still running {} s after --crash-cmd; killed it", AFTER_COMMAND.as_secs());
        }
    }
    let _ = writer.kill();
    writer.wait().context("waiting for the writer to end")?;
    Ok(reached)
}

/// Reads the writer's "ready" line: its files are made and its activities started.
fn wait_ready(writer: &mut Child) -> Result<()> {
    let stdout = writer.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(START_LIMIT) {
        Ok(line) if line.trim() == "ready" => Ok(()),
        Ok(_) => bail!("the writer process ended before its activities started (its message is above)"),
        Err(_) => bail!("the writer process did not start within {} s", START_LIMIT.as_secs()),
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
    impl HostSampler for NoHost {
        fn sample(&mut self) -> storbench_report::SystemSample {
            Default::default()
        }
    }
    integ::run(spec, created, &mut NoHost, stop, &mut |_| {}, &mut |_, _| {})?;
    Ok(())
}
