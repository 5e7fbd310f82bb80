//! The merged `timeseries.csv`: the shards' rows placed on the wall clock (each shard's start
//! plus the row's `t_s`) and aligned by whole second from the merged start, each column's
//! values added up as the column declares (`columns::Merge`): the shards' work summed, their
//! latencies the worst shard's (percentiles do not add: the merged record and latency.hlog
//! hold the exact ones), their own levels averaged, and the host's readings (disks, CPU,
//! memory, power) counted once per host, since shards on one host read the same counters. A
//! column this storbench does not know is left out and named, never averaged by guess.

use super::header;
use crate::Result;
use crate::error::Doing;
use crate::input::{DATA_LIMIT, read_text};
use crate::run::record::merge::Shard;
use std::collections::BTreeMap;
use storbench_report::columns::{Combine, Merge};
use storbench_report::render::timeseries::Series;

/// A second's values of each column (by its place in the header) from the shards that had a
/// row in it, each with its shard's host (an index into the hosts).
type Cells = Vec<Vec<(usize, f64)>>;

/// The shards' series added up by wall-clock second after `epoch_ns`.
pub struct Merged {
    /// The CSV text.
    pub csv: String,
    /// The columns left out: names this storbench does not know how to add up.
    pub unknown: Vec<String>,
}

/// The shards' series added up by wall-clock second after `epoch_ns`.
pub fn merged(shards: &[Shard], epoch_ns: i128) -> Result<Merged> {
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
        let series = Series::parse(&text).doing(&format!("reading {}", path.display()))?;
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
    let resolved: Vec<Option<Merge>> =
        header.iter().map(|name| header::resolve(name).map(|c| c.merge)).collect();
    let unknown = header.iter().zip(&resolved).filter(|(_, m)| m.is_none()).map(|(n, _)| n.clone()).collect();
    let kept: Vec<(usize, Merge)> =
        resolved.iter().enumerate().filter_map(|(at, m)| Some((at, (*m)?))).collect();
    if kept.is_empty() {
        return Ok(Merged { csv: String::new(), unknown });
    }
    let names: Vec<&str> = kept.iter().map(|(at, _)| header[*at].as_str()).collect();
    let mut out = format!("t_s,phase,{}\n", names.join(","));
    for (second, (phase, cells)) in &seconds {
        out.push_str(&format!("{second}.000,{phase}"));
        for (at, merge) in &kept {
            out.push(',');
            if let Some(values) = cells.get(*at).filter(|v| !v.is_empty()) {
                out.push_str(&format!("{}", (combine(*merge, values) * 1000.0).round() / 1000.0));
            }
        }
        out.push('\n');
    }
    Ok(Merged { csv: out, unknown })
}

/// The place of column `name` in `header`, added at its end when new.
fn place(header: &mut Vec<String>, name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| {
        header.push(name.to_string());
        header.len() - 1
    })
}

/// One second's value of a column that adds up as `merge` over the shards' `values` (each
/// with its host).
fn combine(merge: Merge, values: &[(usize, f64)]) -> f64 {
    match merge {
        Merge::Shards(how) => how.of(&values.iter().map(|(_, v)| *v).collect::<Vec<f64>>()),
        Merge::EachHost(how) => {
            let hosts: Vec<f64> = per_host(values).iter().map(|of_host| Combine::Mean.of(of_host)).collect();
            how.of(&hosts)
        }
    }
}

/// `values` grouped by their host.
fn per_host(values: &[(usize, f64)]) -> Vec<Vec<f64>> {
    let mut out: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for (host, v) in values {
        out.entry(*host).or_default().push(*v);
    }
    out.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One second's value of column `name` over the shards' `values` (each with its host).
    fn combined(name: &str, values: &[(usize, f64)]) -> f64 {
        combine(header::resolve(name).unwrap().merge, values)
    }

    #[test]
    fn the_hosts_readings_count_each_host_once_and_the_shards_work_adds_up() {
        // Two shards on host 0 read its meter as 100 and 110 W, one on host 1 as 50 W.
        let readings = [(0, 100.0), (0, 110.0), (1, 50.0)];
        assert_eq!(combined("power_watts", &readings), 155.0);
        assert_eq!(combined("power.enclosure.watts", &readings), 155.0);
        assert_eq!(combined("read_iops", &readings), 260.0);
        assert_eq!(combined("login_calls", &readings), 260.0, "a transaction type's calls add up");
        assert_eq!(combined("read_lat_p99_us", &readings), 110.0);
        // Shards on one host share its disk: its rate once per host, not once per shard.
        assert_eq!(combined("disk_read_bytes_per_sec", &readings), 155.0);
        assert_eq!(combined("disk.loop1.read_bytes_per_sec", &readings), 155.0);
        assert_eq!(combined("cpu_user_pct", &readings), 155.0 / 2.0);
    }
}
