//! Background streams in the report: for every run that had any (`--background`), what each
//! stream did over the measured phase beside the workload, so a reader sees the load the
//! workload's figures were measured under.

use super::ReportInput;
use super::doc::{Block, Table, num, opt};
use crate::{BackgroundResult, CommandRun};

/// A table with a row per stream of every run that had one; nothing when no run had any.
pub fn blocks(input: &ReportInput) -> Vec<Block> {
    let mut t = Table::new(&[
        "run",
        "stream",
        "as asked",
        "seconds",
        "read MB/s",
        "write MB/s",
        "p99",
        "errors",
        "command ended",
    ]);
    for r in &input.evaluation.runs {
        let Some(data) = input.runs.get(&r.id) else { continue };
        for b in &data.summary.background {
            let mut row =
                vec![format!("{} · {}", r.configuration, r.workload), b.name.clone(), b.spec.clone()];
            row.extend(match &b.command {
                Some(c) => command_cells(c),
                None => io_cells(b),
            });
            t.push(row);
        }
    }
    if t.rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading(2, "Background streams".into()),
        Block::Para(
            "Each stream ran beside its run's workload from the start to the end; its figures cover the \
             measured phase, and its columns are in the run's time series under its name. A command \
             ran from the measured phase's start; its seconds are its own."
                .into(),
        ),
        Block::Table(t),
    ]
}

/// A stream of storbench's own I/O: its rates, p99 and errors over the measured phase.
fn io_cells(b: &BackgroundResult) -> Vec<String> {
    let p99 = b.read_lat_p99_us.into_iter().chain(b.write_lat_p99_us).reduce(f64::max);
    vec![
        num(b.measured_s),
        num(b.read_bytes_per_sec / 1e6),
        num(b.write_bytes_per_sec / 1e6),
        opt(p99.map(|us| us / 1e3), "ms"),
        b.errors.to_string(),
        String::new(),
    ]
}

/// A command: how long it ran and how it ended (its exit status, or stopped by storbench).
fn command_cells(c: &CommandRun) -> Vec<String> {
    let ended = match (c.stopped, c.exit_code) {
        (true, _) => "stopped at the run's end".to_string(),
        (false, Some(code)) => format!("exit {code}"),
        (false, None) => "ended by a signal".to_string(),
    };
    let none = || "—".to_string();
    vec![num(c.seconds), none(), none(), none(), none(), ended]
}
