//! Background streams in the report: for every run that had any (`--background`), what each
//! stream did over the measured phase beside the workload, so a reader sees the load the
//! workload's figures were measured under.

use super::ReportInput;
use super::doc::{Block, Table, num, opt};

/// A table with a row per stream of every run that had one; nothing when no run had any.
pub fn blocks(input: &ReportInput) -> Vec<Block> {
    let mut t =
        Table::new(&["run", "stream", "as asked", "seconds", "read MB/s", "write MB/s", "p99", "errors"]);
    for r in &input.evaluation.runs {
        let Some(data) = input.runs.get(&r.id) else { continue };
        for b in &data.summary.background {
            let p99 = b.read_lat_p99_us.into_iter().chain(b.write_lat_p99_us).reduce(f64::max);
            t.push(vec![
                format!("{} · {}", r.configuration, r.workload),
                b.name.clone(),
                b.spec.clone(),
                num(b.measured_s),
                num(b.read_bytes_per_sec / 1e6),
                num(b.write_bytes_per_sec / 1e6),
                opt(p99.map(|us| us / 1e3), "ms"),
                b.errors.to_string(),
            ]);
        }
    }
    if t.rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading(2, "Background streams".into()),
        Block::Para(
            "Each stream ran beside its run's workload from the start to the end; its figures cover the \
             measured phase, and its columns are in the run's time series under its name."
                .into(),
        ),
        Block::Table(t),
    ]
}
