//! What a `wal` run concludes from its points: which points are implausibly fast for a durable
//! write on the device (a cache that acknowledges a write before it is durable: tmpfs, a
//! virtual disk's host cache, a disk's write cache that ignores flushes), and, for each layout,
//! size and writer count, the fastest method whose figures are plausible: the fastest safe one.

use super::method::SyncMethod;
use super::spec::{Layout, Point};
use crate::metrics::LatencyHistogram;

/// A median commit faster than this is faster than any storage makes a write durable (the
/// fastest, Optane-class NVMe, takes about 10 µs): something volatile answered.
pub const FASTEST_DURABLE_NS: u64 = 10_000;
/// A spinning disk cannot make an append durable in less than a fraction of a rotation
/// (4 ms at 15,000 rpm): a median under 1 ms means its write cache answered.
pub const FASTEST_SPINNING_NS: u64 = 1_000_000;

/// What a run knows of the device under its log files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Device {
    /// Its kernel name (`sda`, `nvme0n1`); None on a filesystem without one (tmpfs).
    pub name: Option<String>,
    pub rotational: Option<bool>,
}

impl Device {
    /// The device holding `dir`, as far as sysfs tells.
    pub fn of(dir: &std::path::Path) -> Device {
        match crate::monitor::resolve_device(dir) {
            Ok(Some(d)) => Device { name: Some(d.name), rotational: d.rotational },
            _ => Device::default(),
        }
    }
}

/// Why commits with this median latency are implausible for a durable write on `device`,
/// or None where they are plausible (or nothing was measured).
pub fn implausible(method: SyncMethod, latency: &LatencyHistogram, device: &Device) -> Option<String> {
    if latency.is_empty() {
        return None;
    }
    let p50 = latency.quantile_ns(0.5);
    let on =
        device.name.as_deref().map_or_else(|| "a filesystem with no block device".into(), |n| n.to_string());
    if p50 < FASTEST_DURABLE_NS {
        return Some(format!(
            "{method}: a median commit of {:.1} µs on {on} is faster than any storage makes a write \
             durable (about 10 µs at best): a volatile cache answered (tmpfs, a virtual disk's host \
             cache, a write cache that ignores flushes), so these commits would not survive a power loss",
            p50 as f64 / 1e3
        ));
    }
    if device.rotational == Some(true) && p50 < FASTEST_SPINNING_NS {
        return Some(format!(
            "{method}: {on} reports itself a spinning disk, yet made a commit durable in {:.0} µs (median), \
             less than a fraction of a rotation: a cache acknowledged the commits before the platter held \
             them (a virtual disk's host cache, or the disk's own write cache), so a power loss may lose them",
            p50 as f64 / 1e3
        ));
    }
    None
}

/// The fastest plausible method at one layout, size and writer count.
#[derive(Debug, Clone, PartialEq)]
pub struct Fastest {
    pub layout: Layout,
    pub size: u32,
    pub writers: u32,
    /// None where no method's figures were plausible (or none ran).
    pub method: Option<SyncMethod>,
    pub commits_per_sec: Option<f64>,
}

/// One measured point as the choice sees it.
pub struct Candidate<'a> {
    pub point: &'a Point,
    pub commits_per_sec: f64,
    /// It ran to its end with no failed commit and plausible figures.
    pub trusted: bool,
}

/// For each layout, size and writer count among `candidates` (in their order), the method
/// with the most commits a second among the trusted ones.
pub fn fastest_safe(candidates: &[Candidate]) -> Vec<Fastest> {
    let mut out: Vec<Fastest> = Vec::new();
    for c in candidates {
        let p = c.point;
        let at = out.iter().position(|f| (f.layout, f.size, f.writers) == (p.layout, p.size, p.writers));
        let i = at.unwrap_or_else(|| {
            out.push(Fastest {
                layout: p.layout,
                size: p.size,
                writers: p.writers,
                method: None,
                commits_per_sec: None,
            });
            out.len() - 1
        });
        let f = &mut out[i];
        if c.trusted && f.commits_per_sec.is_none_or(|best| c.commits_per_sec > best) {
            (f.method, f.commits_per_sec) = (Some(p.method), Some(c.commits_per_sec));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(ns: u64) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        (0..10).for_each(|_| h.record(ns));
        h
    }

    #[test]
    fn a_commit_faster_than_any_storage_or_than_a_spinning_disk_turns_is_named() {
        let ssd = Device { name: Some("nvme0n1".into()), rotational: Some(false) };
        let hdd = Device { name: Some("sda".into()), rotational: Some(true) };
        let m = SyncMethod::Fdatasync;
        let e = implausible(m, &latency(3_000), &Device::default()).unwrap();
        assert!(
            e.starts_with("fdatasync: a median commit of 3.0 µs on a filesystem with no block device"),
            "{e}"
        );
        assert_eq!(implausible(m, &latency(60_000), &ssd), None);
        let e = implausible(m, &latency(200_000), &hdd).unwrap();
        assert!(e.contains("sda reports itself a spinning disk") && e.contains("write cache"), "{e}");
        assert_eq!(implausible(m, &latency(6_000_000), &hdd), None);
        assert_eq!(implausible(m, &LatencyHistogram::new(), &hdd), None, "nothing measured, nothing said");
    }

    #[test]
    fn the_fastest_safe_method_skips_untrusted_points_per_size() {
        let p = |method, size| Point { method, layout: Layout::Preallocated, size, writers: 1 };
        let points = [
            p(SyncMethod::Fdatasync, 512),
            p(SyncMethod::OpenDatasync, 512),
            p(SyncMethod::Fdatasync, 8192),
            p(SyncMethod::OpenDatasync, 8192),
        ];
        let c = |i: usize, cps, trusted| Candidate { point: &points[i], commits_per_sec: cps, trusted };
        let fastest =
            fastest_safe(&[c(0, 900.0, true), c(1, 1200.0, true), c(2, 800.0, true), c(3, 90_000.0, false)]);
        let chosen: Vec<(u32, Option<SyncMethod>)> = fastest.iter().map(|f| (f.size, f.method)).collect();
        assert_eq!(chosen, [(512, Some(SyncMethod::OpenDatasync)), (8192, Some(SyncMethod::Fdatasync))]);
        let none = fastest_safe(&[c(3, 90_000.0, false)]);
        assert_eq!((none[0].method, none[0].commits_per_sec), (None, None));
    }
}
