//! Live metrics (`--metrics-listen`): the run's latest per-second row, its counters so far and
//! its phase, served to Prometheus while it runs.
//!
//! The state is one [`Snapshot`] behind a mutex, updated once a second from the interval
//! callback that writes the bundle (`Bundle::recorded`), never from the I/O path; the
//! listener (`http`) renders it (the report crate's pure exporter, `openmetrics`) for each
//! scrape. Without `--metrics-listen` there is no state and every hook here does nothing. The
//! listener lives as long as the process: the command's end is its end.

mod http;

use anyhow::Result;
use std::sync::{Mutex, MutexGuard};
use storbench_bench::run::record::Tally;
use storbench_report::openmetrics::{self as render, Format, Snapshot};
use storbench_report::series::SeriesRow;

/// The served state; None while nothing is served.
static LIVE: Mutex<Option<Snapshot>> = Mutex::new(None);

/// The phase shown before a run's first interval.
const STARTING: &str = "starting";

fn live() -> MutexGuard<'static, Option<Snapshot>> {
    // A scrape that panicked leaves a state that is still whole (each update is one assignment).
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts serving at `addr` (`HOST:PORT`, `:PORT`) from now to the process's end, and says
/// where. An address that cannot be listened on is an error naming it, before any run starts.
pub fn serve(addr: &str) -> Result<()> {
    let listener = http::listen(addr)?;
    let at = listener.local_addr().map(|a| a.to_string()).unwrap_or_else(|_| addr.to_string());
    let mut first = Snapshot { phase: STARTING.into(), ..Snapshot::default() };
    first.labels.shard = crate::shard::label();
    *live() = Some(first);
    http::spawn(listener, scrape)?;
    say!("metrics: serving http://{at}/metrics");
    Ok(())
}

/// What a scrape in `format` returns.
fn scrape(format: Format) -> String {
    live().as_ref().map(|s| render::render(s, format)).unwrap_or_default()
}

/// A run starts: its labels from now on, no row yet, its counters from zero.
pub fn begin_run(run: &str, workload: &str) {
    if let Some(s) = live().as_mut() {
        s.labels.run = run.into();
        s.labels.workload = workload.into();
        s.phase = STARTING.into();
        s.row = None;
        s.counters.clear();
    }
}

/// The evaluation's configuration whose runs follow.
pub fn set_configuration(name: &str) {
    if let Some(s) = live().as_mut() {
        s.labels.configuration = name.into();
    }
}

/// A phase outside a run's rows: `prepare`, `idle` in an evaluation, `done` after a run.
pub fn set_phase(phase: &str) {
    if let Some(s) = live().as_mut() {
        s.phase = phase.into();
    }
}

/// A closed interval: its row becomes the latest, its counts join the counters.
pub fn observe(row: &SeriesRow, tally: &Tally<'_>) {
    if let Some(s) = live().as_mut() {
        fold(s, row, tally);
    }
}

/// `row` into `s`: the latest row and phase, and the counters (the workload's count columns,
/// and `ios`: every `*.ios` count of its record, each direction and activity).
fn fold(s: &mut Snapshot, row: &SeriesRow, tally: &Tally<'_>) {
    let ios = tally.counts.iter().filter(|(k, _)| k.ends_with(".ios")).map(|(_, n)| *n);
    let ios = ios.reduce(|a, b| a + b).map(|n| n as f64);
    let counted = render::counted_columns(row).map(|c| (c.name, row.value(c)));
    for (name, value) in ios.map(|n| ("ios", Some(n))).into_iter().chain(counted) {
        add_count(&mut s.counters, name, value.unwrap_or(0.0));
    }
    s.phase = row.phase.as_str().into();
    s.row = Some(row.clone());
}

fn add_count(counters: &mut Vec<(String, f64)>, name: &str, n: f64) {
    match counters.iter_mut().find(|(c, _)| c == name) {
        Some((_, total)) => *total += n,
        None => counters.push((name.to_string(), n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_report::columns::io;
    use storbench_report::series::Phase;

    #[test]
    fn counters_add_up_every_interval_of_the_run_and_the_row_and_phase_are_the_latest() {
        let mut s = Snapshot::default();
        let row = |phase, errors| SeriesRow {
            t_s: 1.0,
            phase,
            workload: vec![(io::READ_IOPS, Some(5.0)), (io::ERRORS, errors)],
            streams: vec![],
            system: Default::default(),
        };
        let mut tally = Tally::default();
        tally.count("read.ios", 5);
        tally.count("write.ios", 2);
        tally.count("read.bytes", 4096);
        fold(&mut s, &row(Phase::Ramp, Some(1.0)), &tally);
        fold(&mut s, &row(Phase::Measure, None), &tally);
        assert_eq!(s.counters, [("ios".to_string(), 14.0), ("errors".to_string(), 1.0)]);
        assert_eq!((s.phase.as_str(), s.row.map(|r| r.phase)), ("measure", Some(Phase::Measure)));
    }
}
