//! A trace's fingerprint: what a person reads to know a workload's I/O and what a synthetic
//! job is built from. One pass over the requests in issue order; memory grows with the
//! distinct blocks touched (the hot set, up to [`MAX_BLOCKS`]: past it the block doubles, so
//! a footprint of terabytes is counted in coarser blocks, never in unbounded memory) and the
//! requests in flight, not the trace's length.

use super::format::{FUA, NO_LATENCY, Op, Record};
use crate::metrics::LatencyHistogram;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
pub use storbench_report::fingerprint::{Fingerprint, Latency};

/// The unit the hot set counts in, at first.
const BLOCK: u64 = 4096;
/// The most distinct blocks counted before the block doubles.
pub const MAX_BLOCKS: usize = 1 << 20;

/// Builds a fingerprint request by request.
#[derive(Default)]
pub struct Builder {
    f: Fingerprint,
    first_ns: Option<u64>,
    last_ns: u64,
    prev_end: Option<u64>,
    sequential: u64,
    fua_writes: u64,
    blocks: HashMap<u64, u32>,
    /// How many times the hot set's block has doubled from 4 KiB (past `MAX_BLOCKS`).
    block_shift: u32,
    in_flight: BinaryHeap<Reverse<u64>>,
    latency_sum_us: u128,
    hists: BTreeMap<Op, LatencyHistogram>,
}

impl Builder {
    pub fn add(&mut self, r: &Record) {
        let f = &mut self.f;
        f.requests += 1;
        let first = *self.first_ns.get_or_insert(r.issue_ns);
        self.last_ns = self.last_ns.max(r.issue_ns);
        let second = ((r.issue_ns.saturating_sub(first)) / 1_000_000_000) as usize;
        if f.iops_per_second.len() <= second {
            f.iops_per_second.resize(second + 1, 0);
        }
        f.iops_per_second[second] += 1;
        match r.op {
            Op::Read => f.reads += 1,
            Op::Write => f.writes += 1,
            Op::Flush => f.flushes += 1,
            Op::Discard => f.discards += 1,
            Op::Other => {}
        }
        if matches!(r.op, Op::Read | Op::Write) {
            self.data(r);
        }
        self.queue(r);
        if r.latency_us != NO_LATENCY {
            self.latency_sum_us += u128::from(r.latency_us);
            self.hists.entry(r.op).or_default().record(u64::from(r.latency_us) * 1000);
        }
    }

    fn data(&mut self, r: &Record) {
        let f = &mut self.f;
        if r.op == Op::Read {
            f.bytes_read += u64::from(r.bytes);
        } else {
            f.bytes_written += u64::from(r.bytes);
            if r.flags & FUA != 0 {
                self.fua_writes += 1;
            }
        }
        *f.size_histogram.entry(r.bytes).or_default() += 1;
        let distance = self.prev_end.map(|end| r.offset().abs_diff(end));
        if distance == Some(0) {
            self.sequential += 1;
        }
        if let Some(d) = distance {
            *f.distance_histogram.entry(d.next_power_of_two() * u64::from(d > 0)).or_default() += 1;
        }
        self.prev_end = Some(r.end());
        self.touch(r.offset(), r.end());
    }

    /// Counts an access to each block of bytes `offset..end`, doubling the block first where
    /// they would take the count past `MAX_BLOCKS`.
    fn touch(&mut self, offset: u64, end: u64) {
        let shift = |s: u32| (offset >> s, end.saturating_sub(1).max(offset) >> s);
        loop {
            let (first, last) = shift(BLOCK.trailing_zeros() + self.block_shift);
            if self.blocks.len() as u64 + (last - first + 1) <= MAX_BLOCKS as u64 {
                break;
            }
            self.coarsen();
        }
        let (first, last) = shift(BLOCK.trailing_zeros() + self.block_shift);
        for block in first..=last {
            let n = self.blocks.entry(block).or_default();
            *n = n.saturating_add(1);
        }
    }

    /// Doubles the block: each pair of blocks becomes one, with the larger of their access
    /// counts (a request over both halves is one access of the whole, as it is counted from
    /// now on; two requests on either half are then counted as one: the coarser view).
    fn coarsen(&mut self) {
        self.block_shift += 1;
        let mut coarser: HashMap<u64, u32> = HashMap::with_capacity(self.blocks.len() / 2 + 1);
        for (block, n) in self.blocks.drain() {
            let merged = coarser.entry(block >> 1).or_default();
            *merged = (*merged).max(n);
        }
        self.blocks = coarser;
    }

    /// In flight when `r` is issued: those issued before it that had not completed.
    fn queue(&mut self, r: &Record) {
        while self.in_flight.peek().is_some_and(|Reverse(done)| *done <= r.issue_ns) {
            self.in_flight.pop();
        }
        if r.latency_us != NO_LATENCY {
            self.in_flight.push(Reverse(r.issue_ns + u64::from(r.latency_us) * 1000));
        }
        self.f.max_queue_depth = self.f.max_queue_depth.max(self.in_flight.len() as u64);
    }

    pub fn finish(mut self) -> Fingerprint {
        let f = &mut self.f;
        let data = f.reads + f.writes;
        f.read_fraction = ratio(f.reads, data);
        f.read_bytes_fraction = ratio(f.bytes_read, f.bytes_read + f.bytes_written);
        f.sequential_fraction = ratio(self.sequential, data.saturating_sub(1));
        f.flush_fraction = ratio(f.flushes, f.requests);
        f.fua_fraction = ratio(self.fua_writes, f.writes);
        f.duration_s = self.first_ns.map_or(0.0, |a| (self.last_ns - a) as f64 / 1e9);
        f.mean_iops = if f.duration_s > 0.0 { f.requests as f64 / f.duration_s } else { 0.0 };
        f.peak_iops = f.iops_per_second.iter().copied().max().unwrap_or(0);
        f.burstiness = spread(&f.iops_per_second);
        f.mean_queue_depth =
            if f.duration_s > 0.0 { self.latency_sum_us as f64 / 1e6 / f.duration_s } else { 0.0 };
        f.block_bytes = BLOCK << self.block_shift;
        f.footprint_bytes = self.blocks.len() as u64 * f.block_bytes;
        f.hot_set_bytes = hot_sets(self.blocks.into_values().collect(), f.block_bytes);
        f.latency = self.hists.iter().map(|(op, h)| (op_name(*op).to_string(), latency(h))).collect();
        self.f
    }
}

/// The header and fingerprint of the trace file at `path`, read as it streams from disk;
/// why not, naming the file.
pub fn of_file(path: &std::path::Path) -> Result<(super::format::Header, Fingerprint), String> {
    let named = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = crate::input::open_input(path).map_err(|e| named(&e))?;
    let input = std::io::BufReader::with_capacity(1 << 20, file);
    let mut reader = super::format::TraceReader::new(input)
        .map_err(|e| named(&format!("{e}; give a trace `storbench capture` wrote")))?;
    let mut b = Builder::default();
    while let Some(r) = reader.next_record().map_err(|e| named(&e))? {
        b.add(&r);
    }
    let f = Fingerprint { cut_short: reader.cut_short, ..b.finish() };
    Ok((reader.header, f))
}

/// The fingerprint of `records`.
pub fn of(records: impl IntoIterator<Item = Record>) -> Fingerprint {
    let mut b = Builder::default();
    for r in records {
        b.add(&r);
    }
    b.finish()
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

fn spread(per_second: &[u64]) -> f64 {
    let n = per_second.len() as f64;
    let mean = per_second.iter().sum::<u64>() as f64 / n.max(1.0);
    if mean == 0.0 {
        return 0.0;
    }
    let var = per_second.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    var.sqrt() / mean
}

/// Bytes of the hottest blocks (of `block` bytes) that take 50, 90 and 99 % of the accesses.
fn hot_sets(mut counts: Vec<u32>, block: u64) -> BTreeMap<String, u64> {
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    let mut out = BTreeMap::new();
    for pct in [50u64, 90, 99] {
        let want = (total * pct).div_ceil(100);
        let (mut sum, mut n) = (0u64, 0u64);
        for &c in &counts {
            if sum >= want {
                break;
            }
            sum += u64::from(c);
            n += 1;
        }
        out.insert(format!("p{pct}"), n * block);
    }
    out
}

fn latency(h: &LatencyHistogram) -> Latency {
    let us = |ns: u64| ns as f64 / 1000.0;
    Latency {
        count: h.count(),
        mean_us: h.mean_ns() / 1000.0,
        p50_us: us(h.quantile_ns(0.5)),
        p99_us: us(h.quantile_ns(0.99)),
        max_us: us(h.quantile_ns(1.0)),
    }
}

pub fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Flush => "flush",
        Op::Discard => "discard",
        Op::Other => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(issue_ms: u64, kib_offset: u64, kib: u32, op: Op, latency_us: u32) -> Record {
        Record {
            issue_ns: issue_ms * 1_000_000,
            sector: kib_offset * 2,
            bytes: kib * 1024,
            latency_us,
            op,
            flags: 0,
            pid: 1,
        }
    }

    #[test]
    fn a_footprint_past_a_million_blocks_is_counted_in_coarser_blocks_in_bounded_memory() {
        // 80 writes of 64 MiB, 5 GiB in all: 1.31 million 4-KiB blocks.
        let f = of((0..80).map(|i| req(i, i * 65536, 65536, Op::Write, 10)));
        assert_eq!(f.block_bytes, 8192, "doubled once");
        assert_eq!(f.footprint_bytes, 5 << 30, "every byte touched, counted in 8 KiB blocks");
        assert_eq!(f.hot_set_bytes["p50"], 5 << 29, "each block once: half of them take half");
        let small = of([req(0, 0, 4, Op::Read, 10)]);
        assert_eq!((small.block_bytes, small.footprint_bytes), (4096, 4096));
    }

    #[test]
    fn a_known_trace_has_its_known_fingerprint() {
        // Second 0: three sequential 4 KiB reads, one 64 KiB write far away; second 1: a
        // flush and a read of the first block again.
        let f = of([
            req(0, 0, 4, Op::Read, 100),
            req(10, 4, 4, Op::Read, 100),
            req(20, 8, 4, Op::Read, 100),
            req(30, 1024, 64, Op::Write, 1000),
            req(1000, 0, 0, Op::Flush, 500),
            req(1500, 0, 4, Op::Read, 300),
        ]);
        assert_eq!((f.requests, f.reads, f.writes, f.flushes), (6, 4, 1, 1));
        assert_eq!(f.read_fraction, 0.8);
        assert_eq!((f.bytes_read, f.bytes_written), (16 << 10, 64 << 10));
        assert_eq!(f.size_histogram, BTreeMap::from([(4096, 4), (65536, 1)]));
        // 2 of the 4 steps between data requests continue the one before.
        assert_eq!(f.sequential_fraction, 0.5);
        assert_eq!(f.iops_per_second, [4, 2]);
        assert_eq!((f.peak_iops, f.duration_s), (4, 1.5));
        assert_eq!(f.mean_iops, 4.0);
        // 19 blocks touched, 20 accesses: the first 4 KiB twice, the others once; half of the
        // accesses are the first block's two and 8 more.
        assert_eq!(f.footprint_bytes, 19 * 4096);
        assert_eq!(f.hot_set_bytes["p50"], 9 * 4096);
        assert_eq!(f.max_queue_depth, 1, "every request completed before the next");
        assert_eq!(f.latency["read"].count, 4);
        assert!((f.latency["write"].p99_us - 1000.0).abs() < 1.0);
        assert!((f.flush_fraction - 1.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn requests_in_flight_are_counted_at_each_issue() {
        let f =
            of([req(0, 0, 4, Op::Read, 5000), req(1, 8, 4, Op::Read, 5000), req(2, 16, 4, Op::Read, 100)]);
        assert_eq!(f.max_queue_depth, 3);
    }
}
