//! Where what storbench says goes: the terminal, a run's `output.log`, or both.
//!
//! A run tees everything it says (`say!`, `tell!`, its per-second status and result table)
//! into `output.log` in its bundle. Inside a profile set or an evaluation the caller shows one
//! line per run ([`RunLine`]) and the run's own output goes only to its log, unless the user
//! asked to see it (`--verbose`). Warnings and the stop notice (`alert!`) reach the terminal
//! either way.
//!
//! Every line is redacted (`storbench_bench::secret`) before it goes anywhere, the log
//! included. A closed or full terminal drops the line; a log that cannot be written stops
//! being written: neither ends a run whose results are not yet written.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

/// The run whose output is being logged, if one is running.
static CAPTURE: Mutex<Option<Capture>> = Mutex::new(None);

/// The start of a [`RunLine`] and whether it is still the last thing on the terminal.
static OPEN_LINE: Mutex<Option<(String, bool)>> = Mutex::new(None);

/// The name of a run's log in its bundle.
pub const LOG_NAME: &str = "output.log";

struct Capture {
    /// None once a write failed.
    log: Option<BufWriter<File>>,
    /// Whether the run's own output also goes to the terminal.
    show: bool,
}

/// Logs a run's output while it lives; dropping it ends the logging it began.
#[must_use = "the run's output is logged only while this lives"]
pub struct Captured {
    owner: bool,
}

impl Drop for Captured {
    fn drop(&mut self) {
        if self.owner {
            let mut capture = lock(&CAPTURE);
            if let Some(log) = capture.as_mut().and_then(|c| c.log.as_mut()) {
                let _ = log.flush();
            }
            *capture = None;
        }
    }
}

/// Sends everything said from now on to `dir/output.log`, and to the terminal only when
/// `show`: a profile set or an evaluation, which shows its own line per run, starts this
/// before the run (and its preparation) begins.
pub fn capture(dir: &Path, show: bool) -> Result<Captured> {
    let path = dir.join(LOG_NAME);
    let file = storbench_bench::files::create(&path, storbench_bench::files::How::WRITE)
        .with_context(|| format!("creating {}", path.display()))?;
    *lock(&CAPTURE) = Some(Capture { log: Some(BufWriter::new(file)), show });
    Ok(Captured { owner: true })
}

/// Tees what a run says into `dir/output.log`, unless its caller already logs it there.
pub fn log_run(dir: &Path) -> Result<Captured> {
    if lock(&CAPTURE).is_some() {
        return Ok(Captured { owner: false });
    }
    capture(dir, true)
}

/// Whether what a run says reaches the terminal (progress bars are drawn only then).
pub fn shows_run_output() -> bool {
    lock(&CAPTURE).as_ref().is_none_or(|c| c.show)
}

/// Writes one line to stderr, secrets hidden, dropping it when stderr is closed or full: a
/// message must never end a run whose measurements are not yet written. Inside a run it goes
/// to the run's log, and to stderr when the run's output is shown.
pub fn to_stderr(args: std::fmt::Arguments) {
    let text = shown(&args.to_string());
    if log(&text) {
        terminal(&mut std::io::stderr().lock(), &text, true);
    }
}

/// [`to_stderr`] for a line the library hands over (a file it created, tracefs mounted).
pub fn say_line(line: &str) {
    to_stderr(format_args!("{line}"));
}

/// Writes to stdout, secrets hidden, with a newline when `line`; a closed pipe drops the text
/// (see `to_stderr`).
pub fn to_stdout(args: std::fmt::Arguments, line: bool) {
    let text = shown(&args.to_string());
    if log(&text) {
        terminal(&mut std::io::stdout().lock(), &text, line);
    }
}

/// A line for the person at the terminal whatever a run's output does (a warning, the stop
/// notice); the run's log gets it too.
pub fn to_terminal(args: std::fmt::Arguments) {
    let text = shown(&args.to_string());
    log(&text);
    terminal(&mut std::io::stderr().lock(), &text, true);
}

/// A line for the run's log only: a per-second status the terminal shows as a bar, or the
/// run's result table.
pub fn log_only(text: &str) {
    log(&shown(text));
}

/// `text` as it may be shown anywhere: secrets hidden, control characters (an escape sequence
/// in a path, a NUL in a description) written as visible escapes.
pub fn shown(text: &str) -> String {
    storbench_report::text::visible(&storbench_bench::secret::redact(text)).into_owned()
}

/// Appends `text` to the current run's log; returns whether it also goes to the terminal.
fn log(text: &str) -> bool {
    let mut capture = lock(&CAPTURE);
    let Some(c) = capture.as_mut() else { return true };
    if let Some(log) = c.log.as_mut() {
        let written = writeln!(log, "{}", text.trim_end_matches('\n')).and_then(|()| log.flush());
        if written.is_err() {
            // The results matter more than the log: it stops, the run goes on.
            c.log = None;
        }
    }
    c.show
}

/// Writes `text` to the terminal (ending an open run line first), ignoring a closed pipe.
fn terminal(out: &mut dyn Write, text: &str, newline: bool) {
    let mut open = lock(&OPEN_LINE);
    if let Some((_, on_screen @ true)) = open.as_mut() {
        let _ = writeln!(std::io::stderr());
        *on_screen = false;
    }
    let _ = if newline { writeln!(out, "{text}") } else { write!(out, "{text}") }.and_then(|()| out.flush());
}

/// One line per run of a set or an evaluation: its start when the run starts, completed with
/// the run's result when it ends. Anything said in between (a warning, or the run's own
/// output under --verbose) ends the line there; it is then said whole at the end.
pub struct RunLine;

impl RunLine {
    /// Says `start` and leaves the line open for the result.
    pub fn start(start: &str) -> RunLine {
        let start = format!("{} ...", shown(start));
        let mut open = lock(&OPEN_LINE);
        let mut err = std::io::stderr().lock();
        let shown = write!(err, "{start}").and_then(|()| err.flush()).is_ok();
        *open = Some((start, shown));
        RunLine
    }

    /// Ends the line with `result`.
    pub fn end(self, result: &str) {
        let result = shown(result);
        let mut open = lock(&OPEN_LINE);
        let mut err = std::io::stderr().lock();
        let _ = match open.take() {
            Some((_, true)) => writeln!(err, " {result}"),
            Some((start, false)) => writeln!(err, "{start} {result}"),
            None => writeln!(err, "{result}"),
        };
        let _ = err.flush();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
