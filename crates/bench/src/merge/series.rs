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

/// A second's value of each column (by its place in the header) so far.
type Cells = Vec<Cell>;

/// One second's value of a column, added up as the shards' rows come (in the shards' order,
/// so each sum is the one a list of the values would give), by the column's rule: a
/// merge holds a few numbers a cell, not every shard's value.
#[derive(Clone, Debug, Default)]
enum Cell {
    #[default]
    Empty,
    /// Over the shards: their sum, how many, and the largest.
    Shards { sum: f64, n: u32, max: f64 },
    /// Over the hosts: each host's sum and how many of its shards gave one (a host by its
    /// index among the hosts, in the order they came).
    Hosts(Vec<(usize, f64, u32)>),
}

impl Cell {
    /// Adds `value` from a shard on `host`, where the column adds up as `merge`.
    fn add(&mut self, merge: Merge, host: usize, value: f64) {
        match (merge, &mut *self) {
            (Merge::Shards(_), Cell::Empty) => *self = Cell::Shards { sum: value, n: 1, max: value },
            (Merge::Shards(_), Cell::Shards { sum, n, max }) => {
                *sum += value;
                *n += 1;
                *max = max.max(value);
            }
            (Merge::EachHost(_), Cell::Empty) => *self = Cell::Hosts(vec![(host, value, 1)]),
            (Merge::EachHost(_), Cell::Hosts(hosts)) => match hosts.iter_mut().find(|(h, ..)| *h == host) {
                Some((_, sum, n)) => {
                    *sum += value;
                    *n += 1;
                }
                None => hosts.push((host, value, 1)),
            },
            _ => unreachable!("a column's rule is the same for every second"),
        }
    }

    /// The second's value where any shard gave one: by the shards as `how` adds them up, or
    /// each host's mean added up by `how` (in the hosts' order).
    fn value(&self, merge: Merge) -> Option<f64> {
        match (self, merge) {
            (Cell::Empty, _) => None,
            (&Cell::Shards { sum, n, max }, Merge::Shards(how) | Merge::EachHost(how)) => Some(match how {
                Combine::Sum => sum,
                Combine::Max => max,
                Combine::Mean => sum / f64::from(n),
            }),
            (Cell::Hosts(hosts), Merge::Shards(how) | Merge::EachHost(how)) => {
                let mut hosts = hosts.clone();
                hosts.sort_by_key(|(h, ..)| *h);
                let means: Vec<f64> = hosts.iter().map(|(_, sum, n)| sum / f64::from(*n)).collect();
                Some(how.of(&means))
            }
        }
    }
}

/// The shards' series added up by wall-clock second after `epoch_ns`.
pub struct Merged {
    /// The CSV text.
    pub csv: String,
    /// The columns left out: names this storbench does not know how to add up.
    pub unknown: Vec<String>,
}

/// The shards' series added up by wall-clock second after `epoch_ns`.
pub fn merged(shards: &[Shard], epoch_ns: i128) -> Result<Merged> {
    let mut header: Vec<(String, Option<Merge>)> = Vec::new();
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
        let places: Vec<(usize, Option<Merge>)> =
            series.columns.iter().map(|(name, _)| place(&mut header, name)).collect();
        let offset_s = (shard.record.start.epoch_ns - epoch_ns) as f64 / 1e9;
        for (row, t) in series.t_s.iter().enumerate() {
            let second = (t + offset_s).round() as i64;
            let (phase, cells) =
                seconds.entry(second).or_insert_with(|| (series.phase[row].clone(), Cells::new()));
            if series.phase[row] == "measure" && phase != "measure" {
                phase.clone_from(&series.phase[row]);
            }
            cells.resize_with(header.len(), Cell::default);
            for ((_, values), &(at, merge)) in series.columns.iter().zip(&places) {
                if let (Some(v), Some(merge)) = (values[row], merge) {
                    cells[at].add(merge, host, v);
                }
            }
        }
    }
    let unknown = header.iter().filter(|(_, m)| m.is_none()).map(|(n, _)| n.clone()).collect();
    let kept: Vec<(usize, Merge)> =
        header.iter().enumerate().filter_map(|(at, (_, m))| Some((at, (*m)?))).collect();
    if kept.is_empty() {
        return Ok(Merged { csv: String::new(), unknown });
    }
    let names: Vec<&str> = kept.iter().map(|(at, _)| header[*at].0.as_str()).collect();
    let mut out = format!("t_s,phase,{}\n", names.join(","));
    for (second, (phase, cells)) in &seconds {
        out.push_str(&format!("{second}.000,{phase}"));
        for (at, merge) in &kept {
            out.push(',');
            if let Some(v) = cells.get(*at).and_then(|c| c.value(*merge)) {
                out.push_str(&format!("{}", (v * 1000.0).round() / 1000.0));
            }
        }
        out.push('\n');
    }
    Ok(Merged { csv: out, unknown })
}

/// The place of column `name` in `header` (with how it adds up, None where this storbench
/// does not know it), added at its end when new.
fn place(header: &mut Vec<(String, Option<Merge>)>, name: &str) -> (usize, Option<Merge>) {
    let at = header.iter().position(|(h, _)| h == name).unwrap_or_else(|| {
        header.push((name.to_string(), header::resolve(name).map(|c| c.merge)));
        header.len() - 1
    });
    (at, header[at].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One second's value of column `name` over the shards' `values` (each with its host).
    fn combined(name: &str, values: &[(usize, f64)]) -> f64 {
        let merge = header::resolve(name).unwrap().merge;
        let mut cell = Cell::default();
        values.iter().for_each(|&(host, v)| cell.add(merge, host, v));
        cell.value(merge).unwrap()
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
