//! Disk counters per volume, as 001's Figures 8 and 9 and 003's Figure 2 give them: for every
//! run that passed, each device's reads and writes a second, MB/s, average wait, queue and
//! busy time over the seconds its results cover (the measured phase, or its steady-state
//! rounds), from the run's time series (`disk.<device>.<column>`).

use super::ReportInput;
use super::doc::{Block, Table, num};
use crate::columns::{Column, system};
use crate::evaluation::RunStatus;

/// The counters, each with its heading and the factor that puts it in the heading's unit.
const COUNTERS: [(Column, &str, f64); 8] = [
    (system::DISK_READS_PER_SEC, "reads/s", 1.0),
    (system::DISK_WRITES_PER_SEC, "writes/s", 1.0),
    (system::DISK_READ_BYTES_PER_SEC, "read MB/s", 1e-6),
    (system::DISK_WRITE_BYTES_PER_SEC, "write MB/s", 1e-6),
    (system::DISK_READ_AWAIT_MS, "read wait ms", 1.0),
    (system::DISK_WRITE_AWAIT_MS, "write wait ms", 1.0),
    (system::DISK_QUEUE_SIZE, "queue", 1.0),
    (system::DISK_BUSY_PCT, "busy %", 1.0),
];

/// A row per run that passed and device it counted; nothing where no run has per-device
/// counters.
pub fn blocks(input: &ReportInput) -> Vec<Block> {
    let mut header = vec!["run", "device"];
    header.extend(COUNTERS.iter().map(|(_, heading, _)| *heading));
    let mut t = Table::new(&header);
    for r in input.evaluation.runs.iter().filter(|r| r.status == RunStatus::Done) {
        let Some(data) = input.runs.get(&r.id) else { continue };
        let Some(series) = &data.series else { continue };
        let Some(window) = series.counted_window(data.summary.steady_state.as_ref()) else { continue };
        let mut means: Vec<Vec<(&str, Option<f64>)>> =
            COUNTERS.iter().map(|(c, _, _)| series.device_means(*c, window)).collect();
        // A run on one device has its counters in the `disk_*` columns only.
        if means.iter().all(Vec::is_empty)
            && let Some(one) = &data.summary.target.device
        {
            means = COUNTERS
                .iter()
                .map(|(c, _, _)| vec![(one.name.as_str(), series.mean_between(*c, window))])
                .collect();
        }
        let devices: Vec<&str> = means.iter().flatten().map(|(d, _)| *d).fold(Vec::new(), |mut all, d| {
            if !all.contains(&d) {
                all.push(d);
            }
            all
        });
        for d in devices {
            let of = |of_counter: &Vec<(&str, Option<f64>)>| {
                of_counter.iter().find(|(name, _)| *name == d).and_then(|(_, m)| *m)
            };
            let values: Vec<Option<f64>> = means.iter().map(of).collect();
            if values.iter().all(Option::is_none) {
                continue;
            }
            let mut row = vec![r.id.clone(), d.to_string()];
            for ((_, _, factor), mean) in COUNTERS.iter().zip(values) {
                row.push(mean.map_or_else(|| "—".into(), |m| num(m * factor)));
            }
            t.push(row);
        }
    }
    if t.rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading(2, "Disk counters per volume".into()),
        Block::Para(
            "Each device under a run's targets, counted on its own from /proc/diskstats every second and \
             averaged over the seconds the run's results cover; runs that did not pass are left out."
                .into(),
        ),
        Block::Table(t),
    ]
}
