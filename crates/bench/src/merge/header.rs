//! Which column a header cell of `timeseries.csv` names, whichever namespace it is written
//! under (its own, a device's, a meter's, a rebuilding stack's, a background stream's): how a
//! merge knows to add a column up, average it or take its worst (`columns::Merge`, declared on
//! the column). A workload's own columns are those its registry entry declares.

use crate::workload::WORKLOADS;
use storbench_report::columns::{Column, device, meter, rebuild, system};

/// Every column a workload (or a background stream, io's) writes under its own name, as each
/// registry entry declares them, and the host's.
fn named() -> impl Iterator<Item = &'static Column> {
    WORKLOADS.iter().flat_map(|w| (w.columns)()).flatten().flatten().chain(system::ALL)
}

/// The column a header cell of `timeseries.csv` names: its own (`read_iops`), a device's
/// (`disk.<device>.<column>`), a meter's (`power.<meter>.watts`), a rebuilding stack's
/// (`rebuild.<stack>.<column>`, the stack may hold dots) or a background stream's
/// (`<stream>.<column>`); None for a name this storbench does not write.
pub fn resolve(header: &str) -> Option<Column> {
    let own = |name: &str| named().find(|c| c.answers_to(name)).copied();
    let under = |prefix: &str| header.strip_prefix(prefix).and_then(|r| r.strip_prefix('.'));
    if let Some(rest) = under(device::PREFIX) {
        let (_, short) = rest.rsplit_once('.')?;
        return device::ALL.iter().find(|c| device::short(**c) == short).copied();
    }
    if let Some(rest) = under(meter::PREFIX) {
        return rest.rsplit_once('.').filter(|(_, c)| meter::WATTS.answers_to(c)).map(|_| meter::WATTS);
    }
    if let Some(rest) = under(rebuild::PREFIX) {
        let (_, column) = rest.rsplit_once('.')?;
        return rebuild::ALL.iter().find(|c| c.answers_to(column)).copied();
    }
    own(header).or_else(|| own(header.split_once('.')?.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_report::columns::{Combine, Merge};

    #[test]
    fn no_two_columns_of_one_file_share_a_name() {
        for shape in WORKLOADS.iter().flat_map(|w| (w.columns)()) {
            let mut names: Vec<&str> = shape.concat().iter().chain(system::ALL).map(|c| c.name).collect();
            let all = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), all, "{names:?}");
        }
    }

    #[test]
    fn every_header_storbench_writes_resolves_to_its_column_and_how_shards_add_it_up() {
        for c in named() {
            assert_eq!(resolve(c.name).map(|r| r.name), Some(c.name));
        }
        let merge = |header: &str| resolve(header).map(|c| c.merge);
        let each_host = |how| Some(Merge::EachHost(how));
        let shards = |how| Some(Merge::Shards(how));
        // The shards' own work adds up, their latencies are the worst shard's, and the host's
        // readings count each host once, under every namespace.
        assert_eq!(merge("login_calls"), shards(Combine::Sum), "a transaction type's calls");
        assert_eq!(merge("db3_mb_per_sec"), shards(Combine::Sum), "a database's backup rate");
        assert_eq!(merge("bg1.read_iops"), shards(Combine::Sum), "a background stream's");
        assert_eq!(merge("bg1.read_lat_p99_us"), shards(Combine::Max));
        assert_eq!(merge("disk_read_bytes_per_sec"), each_host(Combine::Sum));
        assert_eq!(merge("disk.loop1.read_bytes_per_sec"), each_host(Combine::Sum), "a device's");
        assert_eq!(merge("disk.nvme0n1.busy_pct"), each_host(Combine::Mean));
        assert_eq!(merge("power.enclosure.watts"), each_host(Combine::Sum));
        assert_eq!(merge("rebuild./srv/db.pct_done"), each_host(Combine::Mean), "a stack with dots");
        assert_eq!(merge("cpu_user_pct"), each_host(Combine::Mean));
        assert_eq!(merge("storbench_cpu_pct"), shards(Combine::Mean), "each shard's own process");
        for unknown in ["no_such_column", "disk.loop1.no_such", "power.x.volts", "bg1.nothing"] {
            assert_eq!(resolve(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn for_every_workload_a_merge_adds_up_each_of_its_columns_by_the_columns_own_rule() {
        // A merge finds a column by its name: two workloads' columns of one name must add up
        // alike, or one workload's shards would be merged by the other's rule (a column a
        // merge did not know was once averaged instead of summed, silently).
        for w in WORKLOADS {
            let shapes = (w.columns)();
            assert!(!shapes.is_empty(), "{} declares no columns", w.name);
            for c in shapes.concat().concat() {
                for header in [c.name.to_string(), format!("bg1.{}", c.name)] {
                    let found =
                        resolve(&header).unwrap_or_else(|| panic!("{}: merge knows no {header}", w.name));
                    assert_eq!(
                        (found.unit, found.quantity, found.merge),
                        (c.unit, c.quantity, c.merge),
                        "{}: {header}",
                        w.name
                    );
                }
            }
        }
    }
}
