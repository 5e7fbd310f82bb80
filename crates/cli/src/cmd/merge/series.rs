//! The merged `timeseries.csv`: the shards' rows placed on the wall clock (each shard's start
//! plus the row's `t_s`) and aligned by whole second from the merged start; rates and counts
//! are summed over the shards, latencies are the worst shard's (percentiles do not add: the
//! merged record and latency.hlog hold the exact ones), levels (CPU, memory, queue) are the
//! shards' mean. Power is each host's once (shards on one host read its one meter): the mean
//! of its shards' readings, summed over the hosts.

use super::Shard;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use storbench_bench::input::{DATA_LIMIT, read_text};
use storbench_report::columns::{self, Kind};
use storbench_report::render::timeseries::Series;

/// A second's values of each column (by its place in the header) from the shards that had a
/// row in it, each with its shard's host (an index into the hosts).
type Cells = Vec<Vec<(usize, f64)>>;

/// The CSV text of the shards' series, summed by wall-clock second after `epoch_ns`.
pub fn merged(shards: &[Shard], epoch_ns: i128) -> Result<String> {
    let mut header: Vec<String> = Vec::new();
    let mut seconds: BTreeMap<i64, (String, Cells)> = BTreeMap::new();
    let mut hosts: Vec<&str> = Vec::new();
    for shard in shards {
        let name = shard.record.start.summary.host.hostname.as_str();
        let host = hosts.iter().position(|h| *h == name).unwrap_or_else(|| {
            hosts.push(name);
            hosts.len() - 1
        });
        let path = std::path::Path::new(&shard.bundle).join("timeseries.csv");
        let Ok(text) = read_text(&path, DATA_LIMIT) else { continue };
        let series = Series::parse(&text).with_context(|| format!("reading {}", path.display()))?;
        let places: Vec<usize> = series.columns.iter().map(|(name, _)| place(&mut header, name)).collect();
        let offset_s = (shard.record.start.epoch_ns - epoch_ns) as f64 / 1e9;
        for (row, t) in series.t_s.iter().enumerate() {
            let second = (t + offset_s).round() as i64;
            let (phase, cells) =
                seconds.entry(second).or_insert_with(|| (series.phase[row].clone(), Cells::new()));
            if series.phase[row] == "measure" && phase != "measure" {
                phase.clone_from(&series.phase[row]);
            }
            cells.resize_with(header.len(), Vec::new);
            for ((_, values), &at) in series.columns.iter().zip(&places) {
                if let Some(v) = values[row] {
                    cells[at].push((host, v));
                }
            }
        }
    }
    let mut out = format!("t_s,phase,{}\n", header.join(","));
    if header.is_empty() {
        return Ok(String::new());
    }
    let how: Vec<How> = header.iter().map(|name| how(name)).collect();
    for (second, (phase, cells)) in &seconds {
        out.push_str(&format!("{second}.000,{phase}"));
        for (at, how) in how.iter().enumerate() {
            out.push(',');
            if let Some(values) = cells.get(at).filter(|v| !v.is_empty()) {
                out.push_str(&format!("{}", (combine(*how, values) * 1000.0).round() / 1000.0));
            }
        }
        out.push('\n');
    }
    Ok(out)
}

/// The place of column `name` in `header`, added at its end when new.
fn place(header: &mut Vec<String>, name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| {
        header.push(name.to_string());
        header.len() - 1
    })
}

/// How a column's values combine: a power meter's (each host once), or by the column's kind.
#[derive(Clone, Copy)]
enum How {
    Power,
    Of(Kind),
}

fn how(name: &str) -> How {
    if is_power(name) { How::Power } else { How::Of(kind_of(name)) }
}

/// One second's value of column `name` over the shards' `values` (each with its host).
#[cfg(test)]
fn combined(name: &str, values: &[(usize, f64)]) -> f64 {
    combine(how(name), values)
}

/// One second's value of a column that combines as `how` over the shards' `values`.
fn combine(how: How, values: &[(usize, f64)]) -> f64 {
    let kind = match how {
        How::Power => return per_host(values).iter().map(|of_host| mean(of_host)).sum(),
        How::Of(kind) => kind,
    };
    let values: Vec<f64> = values.iter().map(|(_, v)| *v).collect();
    match kind {
        Kind::Rate | Kind::Count => values.iter().sum(),
        Kind::Latency => values.iter().copied().fold(f64::MIN, f64::max),
        Kind::Level => mean(&values),
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// A power meter's column: the host's (`power_watts`) or a named meter's (`power.<meter>.watts`).
fn is_power(name: &str) -> bool {
    let meter = name.strip_prefix(columns::meter::PREFIX).and_then(|r| r.strip_prefix('.'));
    name == columns::system::POWER_WATTS.name
        || meter.is_some_and(|r| r.ends_with(&format!(".{}", columns::meter::WATTS.name)))
}

/// `values` grouped by their host.
fn per_host(values: &[(usize, f64)]) -> Vec<Vec<f64>> {
    let mut out: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for (host, v) in values {
        out.entry(*host).or_default().push(*v);
    }
    out.into_values().collect()
}

/// The kind of the column a header cell names (a background stream's under its name); a
/// column this storbench does not know is taken as a level.
fn kind_of(name: &str) -> Kind {
    use columns::{backup, db, integrity, io, mailbox, oltp, pace, replay, system};
    let groups = [
        io::ALL,
        pace::ALL,
        oltp::ALL,
        db::ALL,
        mailbox::ALL,
        replay::ALL,
        integrity::ALL,
        backup::ALL,
        system::ALL,
    ];
    let bare = name.split_once('.').map_or(name, |(_, rest)| rest);
    let known = |n: &str| groups.iter().flat_map(|g| g.iter()).find(|c| c.answers_to(n)).map(|c| c.kind);
    known(name).or_else(|| known(bare)).unwrap_or(Kind::Level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_counts_each_host_once_and_other_columns_add_or_average() {
        // Two shards on host 0 read its meter as 100 and 110 W, one on host 1 as 50 W.
        let readings = [(0, 100.0), (0, 110.0), (1, 50.0)];
        assert_eq!(combined("power_watts", &readings), 155.0);
        assert_eq!(combined("power.enclosure.watts", &readings), 155.0);
        assert_eq!(combined("read_iops", &readings), 260.0);
        assert_eq!(combined("cpu_user_pct", &readings), 260.0 / 3.0);
    }
}
