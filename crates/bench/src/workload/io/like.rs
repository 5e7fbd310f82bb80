//! `--like TRACE`: an io job made from a captured trace's fingerprint, for storage too small or
//! too different for the trace itself. Each option the user did not give is taken from the
//! trace: the pattern (sequential when most requests follow the one before), the share of
//! random requests (the others continue where the one before ended), the read share, the
//! flushes per write, the request sizes (the sizes that make 99 % of requests, as a weighted
//! mix), the queue depth (its mean), the rate (second by second), where offsets fall (zones
//! holding 50, 40, 9 and 1 % of the accesses over the space its hot sets give), the size (the
//! trace's footprint) and the length.

use super::Share;
use super::options::{BlockSizes, IoOptions, RateProfile, Rw};
use crate::blocktrace::fingerprint::Fingerprint;
use crate::units::{ByteSize, Seconds};
use std::time::Duration;

type Result<T> = std::result::Result<T, String>;

/// The most sizes a mix takes from a trace.
const MOST_SIZES: usize = 8;

/// `args` with what it leaves out taken from the trace's fingerprint `fp`.
pub fn like(args: &IoOptions, fp: &Fingerprint) -> Result<IoOptions> {
    let data = fp.reads + fp.writes;
    if data == 0 {
        return Err("the trace has no reads or writes to be like".into());
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
    let own_zones = a.random_distribution.is_none() && !sequential;
    if a.fdatasync.is_none() && fp.flushes > 0 && fp.writes > 0 {
        // Where the trace flushed more often than it wrote, a flush after every write is the
        // nearest a job of writes can come.
        a.fdatasync = Some((fp.writes as f64 / fp.flushes as f64).clamp(1.0, 1_000_000.0));
    }
    if a.bs.is_none() {
        a.bs = Some(size_mix(fp, data)?);
    }
    a.iodepth.get_or_insert(fp.mean_queue_depth.round().clamp(1.0, 1024.0) as u32);
    if a.rate_iops.is_none() && a.rate_bw.is_none() && a.rate_profile.is_none() && fp.duration_s > 0.0 {
        a.rate_profile = rate_profile(fp, data);
        if a.rate_profile.is_none() {
            a.rate_iops = Some(data as f64 / fp.duration_s);
        }
    }
    let zones = zones(fp).filter(|_| own_zones);
    if let Some(z) = &zones {
        a.random_distribution = Some(zoned_text(z));
    }
    if a.size.is_none() && fp.footprint_bytes > 0 {
        a.size = Some(ByteSize(fp.footprint_bytes.div_ceil(1 << 20) << 20));
    }
    if a.percentage_random.is_none() && !sequential && fp.sequential_fraction > 0.0 {
        // Random requests that happen to start where the one before ended count as
        // sequential too: the continued ones are fewer by that share.
        let align = a.bs.as_ref().map_or(4096, |b| b.mix.min());
        let chance = match (&zones, a.size) {
            (Some(z), Some(size)) => by_chance(z, size.0, align),
            _ => 0.0,
        };
        let random = ((1.0 - fp.sequential_fraction) / (1.0 - chance)).min(1.0);
        a.percentage_random = Some(Share::of_fraction(random));
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
    parts.join(":").parse::<BlockSizes>().map_err(|e| format!("its sizes ({}): {e}", parts.join(":")))
}

/// The trace's reads and writes second by second (its flushes follow their writes), the last,
/// part of a second, at its rate over the whole second; None for a trace under 2 s.
fn rate_profile(fp: &Fingerprint, data: u64) -> Option<RateProfile> {
    if fp.duration_s < 2.0 || fp.requests == 0 {
        return None;
    }
    let share = data as f64 / fp.requests as f64;
    let mut rates: Vec<f64> = fp.iops_per_second.iter().map(|&n| n as f64 * share).collect();
    let part = fp.duration_s.fract();
    if rates.len() as f64 > fp.duration_s {
        match rates.pop() {
            Some(last) if part >= 0.1 => rates.push(last / part),
            _ => {}
        }
    }
    Some(RateProfile(rates))
}

/// The share of random requests that start where the request before ended by chance, over
/// `zones` (accesses and space in hundredths of a percent) of `size` bytes at offsets aligned
/// to `align`: the one before ended in a zone as often as a request lands there, and the next
/// lands there again as often, at one of the zone's aligned offsets.
fn by_chance(zones: &[(u32, u32)], size: u64, align: u32) -> f64 {
    let share = |h: u32| f64::from(h) / 10_000.0;
    let offsets = |space: u32| (share(space) * size as f64 / f64::from(align.max(1))).max(1.0);
    zones.iter().map(|&(io, space)| share(io) * share(io) / offsets(space)).sum()
}

/// Zones as `--random-distribution` takes them: `zoned:50/S1:40/S2:9/S3:1/S4`.
fn zoned_text(zones: &[(u32, u32)]) -> String {
    let pct = |h: u32| Share::of_fraction(f64::from(h) / 10_000.0).to_string();
    let zones: Vec<String> = zones.iter().map(|&(io, space)| format!("{}/{}", pct(io), pct(space))).collect();
    format!("zoned:{}", zones.join(":"))
}

/// Zones from the region's start that put 50, 40, 9 and 1 % of the accesses on spaces the
/// size of the trace's hot sets (its hottest blocks that take 50 %, the next that take it to
/// 90 %, to 99 %, the rest of the footprint), in hundredths of a percent; a zone with no space
/// gives its accesses to the next. None (uniform) without hot sets.
fn zones(fp: &Fingerprint) -> Option<Vec<(u32, u32)>> {
    let footprint = fp.footprint_bytes as f64;
    let bound = |key: &str| Some((*fp.hot_set_bytes.get(key)? as f64 / footprint * 10_000.0).round() as u32);
    if footprint == 0.0 {
        return None;
    }
    let bounds = [bound("p50")?, bound("p90")?, bound("p99")?, 10_000];
    let (mut zones, mut carried, mut before) = (Vec::new(), 0, 0);
    for (io, end) in [5000u32, 4000, 900, 100].into_iter().zip(bounds) {
        let end = end.clamp(before, 10_000);
        if end == before {
            carried += io;
            continue;
        }
        zones.push((io + std::mem::take(&mut carried), end - before));
        before = end;
    }
    if let Some(last) = zones.last_mut() {
        last.0 += carried;
    }
    Some(zones)
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
            hot_set_bytes: BTreeMap::from([
                ("p50".to_string(), 5 << 20),
                ("p90".to_string(), 10 << 20),
                ("p99".to_string(), 40 << 20),
            ]),
            ..Fingerprint::default()
        };
        let a = like(&IoOptions::default(), &fp).unwrap();
        assert_eq!((a.rw, a.rwmix_read, a.iodepth), (Some(Rw::RandMixed), Some(Share::percent(70)), Some(4)));
        assert_eq!(a.bs.unwrap().to_string(), "4096/690:65536/300");
        assert_eq!((a.rate_iops, a.rate_profile), (Some(100.0), None), "no seconds, the mean");
        let seconds = Fingerprint {
            iops_per_second: vec![400, 100, 50],
            duration_s: 2.5,
            requests: 1100,
            ..fp.clone()
        };
        let a = like(&IoOptions::default(), &seconds).unwrap();
        // Reads and writes are 1000 of the 1100 requests; the last half second at its rate.
        assert_eq!(a.rate_iops, None);
        let rates = a.rate_profile.unwrap().0;
        assert!(
            rates.iter().zip([363.6, 90.9, 90.9]).all(|(got, want)| (got - want).abs() < 0.1),
            "{rates:?}"
        );
        // 2 % of requests continued the one before, less those random ones that follow theirs
        // by chance: half land in 5 MiB (1280 offsets of 4 KiB), two fifths in the next 5 MiB,
        // a tenth in the rest; 120 flushes over 300 writes.
        let chance = 0.25 / 1280.0 + 0.16 / 1280.0 + 0.0081 / 7680.0 + 0.0001 / 15360.0;
        assert_eq!(
            (a.percentage_random, a.fdatasync),
            (Some(Share::of_fraction(0.98 / (1.0 - chance))), Some(2.5))
        );
        assert_eq!(a.percentage_random.map(Share::hundredths), Some(9803));
        assert_eq!(a.random_distribution.as_deref(), Some("zoned:50/5:40/5:9/30:1/60"));
        // Hot sets that are the whole footprint leave no room for the later zones.
        let whole = BTreeMap::from([("p50", 100 << 20), ("p90", 100 << 20), ("p99", 100 << 20)]);
        let fp =
            Fingerprint { hot_set_bytes: whole.into_iter().map(|(k, v)| (k.to_string(), v)).collect(), ..fp };
        assert_eq!(
            like(&IoOptions::default(), &fp).unwrap().random_distribution.as_deref(),
            Some("zoned:100/100")
        );
        assert_eq!(a.size.map(|s| s.0), Some(100 << 20));
        // What the user gives wins.
        let given = IoOptions { iodepth: Some(32), rw: Some(Rw::Randread), ..IoOptions::default() };
        let a = like(&given, &fp).unwrap();
        assert_eq!((a.rw, a.iodepth), (Some(Rw::Randread), Some(32)));
    }
}
