//! `--like TRACE`: an io job made from a captured trace's fingerprint, for storage too small or
//! too different for the trace itself. Each option the user did not give is taken from the
//! trace: the pattern (sequential when most requests follow the one before), the share of
//! random requests (the others continue where the one before ended), the read share, the
//! flushes per write, the request sizes (the sizes that make 99 % of requests, as a weighted
//! mix), the queue depth (its mean), the rate (the trace's mean), where offsets fall (a hot
//! spot where 90 % of accesses go to a small part), the size (the trace's footprint) and the
//! length.

use crate::args::{BlockSizes, IoArgs, Rw};
use crate::units::{ByteSize, Seconds};
use anyhow::{Result, bail};
use std::path::Path;
use std::time::Duration;
use storbench_bench::blocktrace::fingerprint::Fingerprint;
use storbench_bench::workload::io::Share;

/// The most sizes a mix takes from a trace.
const MOST_SIZES: usize = 8;

/// `args` with what it leaves out taken from the trace at `trace`.
pub fn filled(args: &IoArgs, trace: &Path) -> Result<IoArgs> {
    let fp = crate::cmd::trace::read_fingerprint(trace)?;
    like(args, &fp).map_err(|e| anyhow::anyhow!("--like {}: {e}", trace.display()))
}

fn like(args: &IoArgs, fp: &Fingerprint) -> Result<IoArgs> {
    let data = fp.reads + fp.writes;
    if data == 0 {
        bail!("the trace has no reads or writes to be like");
    }
    let mut a = args.clone();
    let sequential = fp.sequential_fraction >= 0.5;
    a.rw.get_or_insert(match (fp.reads, fp.writes, sequential) {
        (_, 0, true) => Rw::Read,
        (0, _, true) => Rw::Write,
        (_, _, true) => Rw::Mixed,
        (_, 0, false) => Rw::Randread,
        (0, _, false) => Rw::Randwrite,
        _ => Rw::RandMixed,
    });
    a.rwmix_read.get_or_insert(Share::of_fraction(fp.read_fraction));
    if a.percentage_random.is_none() && !sequential && fp.sequential_fraction > 0.0 {
        a.percentage_random = Some(Share::of_fraction(1.0 - fp.sequential_fraction));
    }
    if a.fdatasync.is_none() && fp.flushes > 0 && fp.writes > 0 {
        // Where the trace flushed more often than it wrote, a flush after every write is the
        // nearest a job of writes can come.
        a.fdatasync = Some((fp.writes as f64 / fp.flushes as f64).clamp(1.0, 1_000_000.0));
    }
    if a.bs.is_none() {
        a.bs = Some(size_mix(fp, data)?);
    }
    a.iodepth.get_or_insert(fp.mean_queue_depth.round().clamp(1.0, 1024.0) as u32);
    if a.rate_iops.is_none() && a.rate_bw.is_none() && fp.duration_s > 0.0 {
        a.rate_iops = Some(data as f64 / fp.duration_s);
    }
    if a.random_distribution.is_none() && !sequential {
        a.random_distribution = hot_spot(fp);
    }
    if a.size.is_none() && fp.footprint_bytes > 0 {
        a.size = Some(ByteSize(fp.footprint_bytes.div_ceil(1 << 20) << 20));
    }
    if a.runtime.is_none() && a.io_size.is_none() && a.steady_state.is_none() && fp.duration_s >= 1.0 {
        a.runtime = Some(Seconds(Duration::from_secs_f64(fp.duration_s)));
    }
    Ok(a)
}

/// The sizes that make 99 % of the reads and writes (at most [`MOST_SIZES`], each rounded up
/// to 512 bytes), each weighted by its count in the trace (exact shares, no rounding to whole
/// percents): fio's bssplit form, `4096/690:65536/300`.
fn size_mix(fp: &Fingerprint, data: u64) -> Result<BlockSizes> {
    let mut sizes: Vec<(u32, u64)> =
        fp.size_histogram.iter().filter(|(b, _)| **b > 0).map(|(b, n)| (b.div_ceil(512) * 512, *n)).collect();
    sizes.sort_by_key(|s| std::cmp::Reverse(s.1));
    let mut taken = Vec::new();
    let mut covered = 0;
    for (bytes, n) in sizes.into_iter().take(MOST_SIZES) {
        if covered * 100 >= data * 99 {
            break;
        }
        covered += n;
        taken.push((bytes, n));
    }
    let parts: Vec<String> = taken.iter().map(|(bytes, n)| format!("{bytes}/{n}")).collect();
    parts.join(":").parse::<BlockSizes>().map_err(|e| anyhow::anyhow!("its sizes ({}): {e}", parts.join(":")))
}

/// A hot spot where 90 % of the accesses go to the blocks that take them in the trace, when
/// those are less than half the footprint; None (uniform) otherwise.
fn hot_spot(fp: &Fingerprint) -> Option<String> {
    let hot = *fp.hot_set_bytes.get("p90")? as f64;
    let space = (hot / fp.footprint_bytes.max(1) as f64 * 100.0).round().max(1.0);
    (space < 50.0).then(|| format!("hotspot:90/{space:.0}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_random_mixed_trace_makes_a_randrw_job_with_its_mix_sizes_depth_and_rate() {
        let fp = Fingerprint {
            reads: 700,
            writes: 300,
            read_fraction: 0.7,
            size_histogram: BTreeMap::from([(4096, 690), (65536, 300), (1000, 10)]),
            sequential_fraction: 0.02,
            flushes: 120,
            mean_queue_depth: 3.6,
            duration_s: 10.0,
            footprint_bytes: 100 << 20,
            hot_set_bytes: BTreeMap::from([("p90".to_string(), 10 << 20)]),
            ..Fingerprint::default()
        };
        let a = like(&IoArgs::default(), &fp).unwrap();
        assert_eq!((a.rw, a.rwmix_read, a.iodepth), (Some(Rw::RandMixed), Some(Share::percent(70)), Some(4)));
        assert_eq!(a.bs.unwrap().to_string(), "4096/690:65536/300");
        assert_eq!(a.rate_iops, Some(100.0));
        // 2 % of requests continued the one before; 120 flushes over 300 writes.
        assert_eq!((a.percentage_random, a.fdatasync), (Some(Share::of_fraction(0.98)), Some(2.5)));
        assert_eq!(a.random_distribution.as_deref(), Some("hotspot:90/10"));
        assert_eq!(a.size.map(|s| s.0), Some(100 << 20));
        // What the user gives wins.
        let given = IoArgs { iodepth: Some(32), rw: Some(Rw::Randread), ..IoArgs::default() };
        let a = like(&given, &fp).unwrap();
        assert_eq!((a.rw, a.iodepth), (Some(Rw::Randread), Some(32)));
    }
}
