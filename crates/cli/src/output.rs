//! What the terminal shows: a progress line while a run goes (stderr, only on a terminal) and
//! readable tables of results.

use comfy_table::{Cell, CellAlignment, Table, presets};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;
use storbench_bench::target::{Refusal, Remedy};
use storbench_report::Summary;

/// Writes a command's result to stdout, secrets hidden (a reader that closed the pipe is not
/// an error).
pub fn print_result(text: impl FnOnce() -> String) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let text = crate::console::shown(&text());
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}

/// An error and its causes in one line, each said once, a target refusal's remedy worded for
/// the command line's flags: a library error often includes its cause in its own message
/// (`opening X: No such file`), and that cause, listed again, would read "No such file: No
/// such file".
pub fn reason(e: &anyhow::Error) -> String {
    reason_worded(e, &flag_for)
}

/// `reason`, with `how` wording a target refusal's remedy for where its options were given
/// (flags, or a plan's keys: `plan::configuration::key_for`).
pub fn reason_worded(e: &anyhow::Error, how: &dyn Fn(Remedy) -> String) -> String {
    let mut text = String::new();
    for cause in e.chain().map(|c| refusal_of(c).map_or_else(|| c.to_string(), |r| r.message(how))) {
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

/// The target refusal `e` is, bare or as the library's error.
fn refusal_of<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refusal> {
    match e.downcast_ref::<storbench_bench::Error>() {
        Some(storbench_bench::Error::Refused(r)) => Some(r),
        _ => e.downcast_ref::<Refusal>(),
    }
}

/// Says each of a run's warnings, each once per command: a profile set or an evaluation
/// repeats the same run's warnings (no power source) on every run, and the terminal needs them
/// once. The summaries keep them all.
pub fn say_warnings<'a>(warnings: impl IntoIterator<Item = &'a String>) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    for w in warnings {
        // The power note said at the start stands for this one.
        if crate::power::is_no_source_warning(w) || said.contains(w) {
            continue;
        }
        alert!("warning: {w}");
        said.push(w.clone());
    }
}

/// A progress bar of bytes, for filling a test file.
pub fn fill_bar(total: u64, label: &str) -> ProgressBar {
    let bar = new_bar(total);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_message(label.to_string());
    bar
}

/// A progress bar of counted things (rows), with their rate.
pub fn count_bar(label: &str, unit: &str) -> ProgressBar {
    let bar = new_bar(0);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{label} {{msg}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit} {{per_sec}} eta {{eta}}"
        ))
        .expect("template from static text")
        .progress_chars("=> "),
    );
    bar
}

/// The files `oltp gen` wrote: path, rows, bytes.
pub fn gen_table(files: &[(String, u64, u64)]) -> String {
    let mut t = new_table(&["file", "rows", "bytes"]);
    for (path, rows, bytes) in files {
        t.add_row(vec![path.clone(), rows.to_string(), storbench_bench::units::human_bytes(*bytes)]);
    }
    t.to_string()
}

/// A bar of `len` steps, drawn only where the run's output reaches the terminal.
fn new_bar(len: u64) -> ProgressBar {
    if crate::console::shows_run_output() { ProgressBar::new(len) } else { ProgressBar::hidden() }
}

/// A one-line status for a running job, refreshed every interval: on the terminal a spinner,
/// in the run's output.log a line per interval.
pub struct StatusLine {
    bar: ProgressBar,
    label: String,
}

/// The status line of a job labelled `label`.
pub fn run_line(label: &str) -> StatusLine {
    let bar =
        if crate::console::shows_run_output() { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    bar.set_style(ProgressStyle::with_template("{spinner} {prefix} {msg}").expect("static template"));
    bar.set_prefix(label.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    StatusLine { bar, label: label.to_string() }
}

impl StatusLine {
    /// The status now.
    pub fn set_message(&self, text: String) {
        crate::console::log_only(&format!("{} {text}", self.label));
        self.bar.set_message(text);
    }

    /// Takes the spinner off the terminal.
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }
}

/// A run's headline figure as its line per run ends: `33.6k IOPS`, `4,776 OPM`,
/// `0.412 seconds per log`, with the share of failed I/Os when any failed.
pub fn headline(h: &storbench_report::evaluation::Headline) -> String {
    let figure = match h.value {
        v if v >= 1e4 => si(v),
        v if v >= 100.0 => thousands(v.round() as u64),
        v if v >= 1.0 => format!("{v:.1}"),
        v => format!("{v:.3}"),
    };
    format!("{figure} {}{}", h.metric, h.errors_note())
}

/// A finished run in a few words: its headline, and that it was interrupted if it was.
pub fn result_text(s: &Summary) -> String {
    let figure =
        storbench_report::evaluation::headline(s).map_or_else(|| "no result".into(), |h| headline(&h));
    if s.complete { figure } else { format!("{figure}, interrupted") }
}

/// `4776` → `4,776`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `123456.7` → `123.5k`.
pub fn si(v: f64) -> String {
    match v {
        v if v >= 1e9 => format!("{:.2}G", v / 1e9),
        v if v >= 1e6 => format!("{:.2}M", v / 1e6),
        v if v >= 1e4 => format!("{:.1}k", v / 1e3),
        v => format!("{v:.0}"),
    }
}

/// Nanoseconds as µs or ms with 3 significant digits.
pub fn latency(ns: f64) -> String {
    match ns {
        ns if ns >= 1e9 => format!("{:.2} s", ns / 1e9),
        ns if ns >= 1e6 => format!("{:.3} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    }
}

pub(crate) fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED);
    t.set_header(header.iter().map(Cell::new));
    for i in 1..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// Under a run's table: its failed I/Os, when any.
pub fn errors_line(s: &Summary) -> Option<String> {
    let e = s.io_errors().filter(|e| e.any())?;
    Some(format!("{e}; {}", storbench_report::model::ONLY_COMPLETED))
}

/// A paced run's schedule lag under its table (how late starts were against their intended
/// times); None for an unpaced run.
pub fn lag_line(lag: Option<&storbench_report::LatenessMs>) -> Option<String> {
    let l = lag?;
    Some(format!("schedule lag: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms", l.p50, l.p99, l.max))
}

/// The evaluation at a glance: per workload, configuration and sweep point, the median
/// headline of the repetitions, their range, and the run reported.
pub fn evaluation_table(e: &storbench_report::evaluation::Evaluation) -> String {
    let mut t = new_table(&[
        "workload",
        "configuration",
        "point",
        "runs",
        "median",
        "min - max",
        "spread",
        "W",
        "per W",
        "reported run",
    ]);
    for g in e.groups() {
        let point = g.sweep.map(|p| format!("{} = {}", p.param, p.value)).unwrap_or_default();
        let runs = format!("{}/{}", g.runs.iter().filter(|r| r.headline.is_some()).count(), g.runs.len());
        let reported = g.reported();
        let metric = reported.and_then(|r| r.headline.as_ref()).map(|h| h.metric.as_str()).unwrap_or("");
        let (median, range, spread) = match g.spread() {
            Some(s) => (
                format!("{} {metric}{}", si(s.median), g.errors_note()),
                format!("{} - {}", si(s.min), si(s.max)),
                if s.n < 2 { "one run".into() } else { format!("{:.1} %", s.range_pct) },
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let watts = reported.and_then(|r| r.active_watts).map_or("-".into(), |w| format!("{w:.0}"));
        let per_watt = reported.and_then(|r| r.per_watt).map_or("-".into(), |v| format!("{v:.2}"));
        let id = reported.map_or("(none finished)".to_string(), |r| r.id.clone());
        t.add_row(vec![
            g.workload.to_string(),
            g.configuration.to_string(),
            point,
            runs,
            median,
            range,
            spread,
            watts,
            per_watt,
            id,
        ]);
    }
    t.to_string()
}

/// A progress line with each background stream's throughput after it (`  bg1 10.5 MB/s`).
pub fn with_streams(text: String, row: &storbench_report::SeriesRow) -> String {
    use storbench_report::columns::io as col;
    let mut text = text;
    for s in &row.streams {
        let bytes = [col::READ_BYTES_PER_SEC, col::WRITE_BYTES_PER_SEC]
            .iter()
            .filter_map(|c| row.stream_value(&s.stream, *c))
            .sum::<f64>();
        text.push_str(&format!("  {} {:.1} MB/s", s.stream, bytes / 1e6));
    }
    text
}

/// A target refusal's remedy as the flag to pass, for a command-line user.
pub fn flag_for(remedy: storbench_bench::target::Remedy) -> String {
    match remedy {
        storbench_bench::target::Remedy::Force => "pass --force",
        storbench_bench::target::Remedy::AllowDevice => "pass --allow-device",
        storbench_bench::target::Remedy::SmallerSize => "give a smaller --size",
        storbench_bench::target::Remedy::Buffered => "pass --buffered",
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::{headline, reason};
    use storbench_report::evaluation::Headline;

    #[test]
    fn a_headline_reads_as_the_run_line_gives_it() {
        let h = |metric: &str, value: f64| Headline {
            metric: metric.into(),
            value,
            higher_is_better: true,
            error_rate_pct: None,
        };
        assert_eq!(headline(&h("IOPS", 33_612.0)), "33.6k IOPS");
        assert_eq!(headline(&h("OPM", 4_776.4)), "4,776 OPM");
        assert_eq!(headline(&h("OPM", 1_234_567.0)), "1.23M OPM");
        assert_eq!(headline(&h("transactional IOPS", 212.3)), "212 transactional IOPS");
        assert_eq!(headline(&h("backup MB/s", 52.34)), "52.3 backup MB/s");
        assert_eq!(headline(&h("seconds per log", 0.4123)), "0.412 seconds per log");
        let failing = Headline { error_rate_pct: Some(12.5), ..h("IOPS", 900.0) };
        assert!(headline(&failing).starts_with("900 IOPS (12.5 % of I/Os failed"), "{}", headline(&failing));
    }

    #[test]
    fn a_cause_the_message_already_holds_is_said_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let lib = anyhow::Error::new(io)
            .context(format!("opening X: {}", std::io::Error::from(std::io::ErrorKind::NotFound)));
        let e = lib.context("verifying the databases");
        assert_eq!(reason(&e), "verifying the databases: opening X: entity not found");
    }
}
