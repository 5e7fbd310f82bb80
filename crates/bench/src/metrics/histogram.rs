//! An HDR latency histogram in nanoseconds with 3 significant digits.
//!
//! Precision: any recorded value is reported within 0.1 % of itself. Range: 1 ns to
//! `HISTOGRAM_MAX_NS`; a longer latency is recorded as that maximum (and still counted).

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use storbench_report::LatencyNs;

/// The longest latency a histogram tells apart: 10 minutes.
pub const HISTOGRAM_MAX_NS: u64 = 600_000_000_000;

#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(1, HISTOGRAM_MAX_NS, 3).expect("valid static bounds");
        LatencyHistogram { inner }
    }

    /// Records one latency; values outside the range are clamped into it.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.inner.saturating_record(ns.clamp(1, HISTOGRAM_MAX_NS));
    }

    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Adds every value of `other`; exact.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.inner.add(&other.inner).expect("histograms share bounds");
    }

    pub fn reset(&mut self) {
        self.inner.reset();
    }

    /// Value at `quantile` (0..=1), reported as the highest value equivalent to it.
    pub fn quantile_ns(&self, quantile: f64) -> u64 {
        self.inner.value_at_quantile(quantile)
    }

    pub fn mean_ns(&self) -> f64 {
        self.inner.mean()
    }

    /// The summary a report shows, or None when nothing was recorded.
    pub fn summary(&self) -> Option<LatencyNs> {
        if self.is_empty() {
            return None;
        }
        let h = &self.inner;
        Some(LatencyNs {
            min: h.min(),
            mean: h.mean(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            p9999: h.value_at_quantile(0.9999),
            max: h.max(),
        })
    }

    /// HdrHistogram's compressed V2 encoding, as HdrHistogram tools read and merge it.
    pub fn encode(&self) -> Vec<u8> {
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&self.inner, &mut plain).expect("in-memory write");
        sparse::compressed(&plain)
    }

    /// Decodes `encode`'s output.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        // hdrhistogram sizes its buffer by the payload length the header claims, before reading
        // it: the uncompressed form's claim must fit in what was given.
        const V2_COOKIE: [u8; 4] = 0x1c84_9313u32.to_be_bytes();
        if bytes.starts_with(&V2_COOKIE) {
            let claimed = bytes.get(4..8).map_or(0, |b| u32::from_be_bytes(b.try_into().expect("4 bytes")));
            if claimed as usize > bytes.len().saturating_sub(40) {
                return Err(format!("the histogram claims {claimed} bytes of counts; it holds fewer"));
            }
        }
        let mut d = hdrhistogram::serialization::Deserializer::new();
        let inner: Histogram<u64> = d.deserialize(&mut &bytes[..]).map_err(|e| format!("{e:?}"))?;
        Ok(LatencyHistogram { inner })
    }
}

/// A sum of histograms kept as bucket counts: each histogram is added from its encoding
/// (`encode`'s output) exactly, one addition a non-zero bucket, without a full-size histogram
/// for it (decoding one allocates and scans every bucket of the range, ~250 KB, where an
/// interval's holds a few hundred); the sum is encoded straight from its counts (`encode`),
/// or made a histogram once, at the end. A sum is emptied for reuse (`clear`) by zeroing only
/// the buckets it used.
pub struct BucketSum {
    counts: Vec<u64>,
    /// One past the highest bucket that holds a count.
    used: usize,
    /// Histograms of another layout than ours (written by another tool), decoded.
    other: Option<LatencyHistogram>,
}

impl Default for BucketSum {
    fn default() -> Self {
        BucketSum { counts: vec![0; LatencyHistogram::new().inner.distinct_values()], used: 0, other: None }
    }
}

impl BucketSum {
    /// Adds the histogram `bytes` encodes; `scratch` keeps the inflater between calls.
    pub fn add_encoded(&mut self, bytes: &[u8], scratch: &mut Inflater) -> Result<(), String> {
        let Some(payload) = sparse::counts(bytes, scratch)? else {
            let h = LatencyHistogram::decode(bytes)?;
            self.other.get_or_insert_with(LatencyHistogram::new).merge(&h);
            return Ok(());
        };
        self.used = self.used.max(sparse::add(payload, &mut self.counts)?);
        Ok(())
    }

    /// Adds everything `other` holds.
    pub fn add(&mut self, other: &BucketSum) {
        for (sum, n) in self.counts.iter_mut().zip(&other.counts[..other.used]) {
            *sum = sum.saturating_add(*n);
        }
        self.used = self.used.max(other.used);
        if let Some(h) = &other.other {
            self.other.get_or_insert_with(LatencyHistogram::new).merge(h);
        }
    }

    /// Empty again, for the next sum.
    pub fn clear(&mut self) {
        self.counts[..self.used].fill(0);
        self.used = 0;
        self.other = None;
    }

    /// The histogram of everything added.
    pub fn histogram(&self) -> LatencyHistogram {
        let mut h = self.other.clone().unwrap_or_default();
        for (index, &count) in self.counts[..self.used].iter().enumerate().filter(|(_, c)| **c > 0) {
            h.inner.saturating_record_n(sparse::value_of(index), count);
        }
        h
    }

    /// What `histogram().encode()` gives (HdrHistogram's compressed V2 encoding: the same
    /// histogram decoded), and the histogram's highest value (`quantile_ns(1.0)`, 0 when
    /// empty), made from the counts without a full-size histogram.
    pub fn encode(&self) -> (Vec<u8>, u64) {
        if self.other.is_some() {
            let h = self.histogram();
            let max = if h.is_empty() { 0 } else { h.quantile_ns(1.0) };
            return (h.encode(), max);
        }
        let counts = &self.counts[..self.used];
        let max = counts.iter().rposition(|c| *c > 0).map_or(0, sparse::highest_of);
        (sparse::encode(counts), max)
    }
}

/// Histograms summed by tag (`read`, `write`...), in the order their tags first came.
#[derive(Default)]
pub struct TagSums(Vec<(String, BucketSum)>);

impl TagSums {
    /// The place of `tag`'s sum, a new empty one on the tag's first use.
    pub fn place(&mut self, tag: &str) -> usize {
        self.0.iter().position(|(t, _)| t == tag).unwrap_or_else(|| {
            self.0.push((tag.to_string(), BucketSum::default()));
            self.0.len() - 1
        })
    }

    /// The sum at `place`.
    pub fn at(&mut self, place: usize) -> &mut BucketSum {
        &mut self.0[place].1
    }

    /// `tag`'s sum, a new empty one on the tag's first use.
    pub fn of(&mut self, tag: &str) -> &mut BucketSum {
        let place = self.place(tag);
        self.at(place)
    }

    /// `tag`'s sum where there is one.
    pub fn get_mut(&mut self, tag: &str) -> Option<&mut BucketSum> {
        self.0.iter_mut().find(|(t, _)| t == tag).map(|(_, s)| s)
    }

    /// Each of `other`'s sums added to this one's of its tag.
    pub fn add(&mut self, other: &TagSums) {
        for (tag, sum) in &other.0 {
            self.of(tag).add(sum);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &BucketSum)> {
        self.0.iter().map(|(t, s)| (t.as_str(), s))
    }
}

/// What decoding histograms one after another reuses: the inflater's state (tens of KB,
/// zeroed when made) and its output buffer.
pub struct Inflater {
    out: Vec<u8>,
    zlib: flate2::Decompress,
}

impl Default for Inflater {
    fn default() -> Self {
        Inflater { out: Vec::new(), zlib: flate2::Decompress::new(true) }
    }
}

/// HdrHistogram's V2 encoding read bucket by bucket, for this module's layout only (lowest
/// value 1, 3 significant digits: 2048 sub-buckets, the lower half of each bucket after the
/// first unused).
mod sparse {
    use super::Inflater;

    const V2: u32 = 0x1c84_9313;
    const V2_COMPRESSED: u32 = 0x1c84_9314;
    const HEADER: usize = 40;
    const HALF_MAGNITUDE: u32 = 10;

    fn u32_at(b: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    }

    fn u64_at(b: &[u8], at: usize) -> Option<u64> {
        Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
    }

    /// The run-length counts of `bytes` (in place where stored, else inflated into
    /// `scratch`), or None where the histogram's layout is not this module's.
    pub fn counts<'a>(bytes: &'a [u8], scratch: &'a mut Inflater) -> Result<Option<&'a [u8]>, String> {
        let short = || "the histogram is cut short".to_string();
        let plain = match u32_at(bytes, 0).ok_or_else(short)? {
            V2 => bytes,
            V2_COMPRESSED => {
                let len = u32_at(bytes, 4).ok_or_else(short)? as usize;
                let deflated = bytes.get(8..8 + len).ok_or_else(short)?;
                match stored(deflated) {
                    Some(plain) => plain,
                    None => {
                        inflate(deflated, scratch)?;
                        &scratch.out
                    }
                }
            }
            other => return Err(format!("not an HdrHistogram V2 encoding (cookie {other:#x})")),
        };
        if u32_at(plain, 0) != Some(V2) {
            return Err("not an HdrHistogram V2 encoding inside its compression".into());
        }
        let len = u32_at(plain, 4).ok_or_else(short)? as usize;
        let ours = u32_at(plain, 8) == Some(0)
            && u32_at(plain, 12) == Some(3)
            && u64_at(plain, 16) == Some(1)
            && u64_at(plain, 32) == Some(1f64.to_bits());
        ours.then(|| plain.get(HEADER..HEADER + len).ok_or_else(short)).transpose()
    }

    /// `deflated` inflated into `scratch.out`.
    fn inflate(deflated: &[u8], scratch: &mut Inflater) -> Result<(), String> {
        let Inflater { out, zlib } = scratch;
        zlib.reset(true);
        out.clear();
        loop {
            out.reserve(out.len().max(4096));
            let read = zlib.total_in() as usize;
            let status = zlib
                .decompress_vec(&deflated[read..], out, flate2::FlushDecompress::Finish)
                .map_err(|e| e.to_string())?;
            match status {
                flate2::Status::StreamEnd => return Ok(()),
                _ if zlib.total_in() as usize == deflated.len() && out.len() < out.capacity() => {
                    return Err("the histogram's compressed counts are cut short".into());
                }
                _ => {}
            }
        }
    }

    /// Adds the counts of `payload` (zigzag LEB128 numbers, a count or, negative, a run of
    /// empty buckets) to `sums` bucket by bucket: one past the highest bucket it counts in.
    /// Counts and runs alternate as the latencies fall, so the loop chooses between them
    /// with arithmetic, not a branch the processor would mispredict at every other number.
    pub fn add(mut payload: &[u8], sums: &mut [u64]) -> Result<usize, String> {
        let (mut index, mut used) = (0usize, 0usize);
        while let Some(&b) = payload.first() {
            // Most numbers are one byte: a small count or a short run.
            let z = if b < 0x80 {
                payload = &payload[1..];
                u64::from(b)
            } else {
                leb128(&mut payload).ok_or("a bucket's count is cut short")?
            };
            // Zigzag: an even number is a count of one bucket, an odd one a run of
            // (z >> 1) + 1 empty buckets.
            let run = z & 1;
            let half = z >> 1;
            let count = half & run.wrapping_sub(1);
            let step = 1 + (half & run.wrapping_neg());
            match sums.get_mut(index) {
                Some(sum) => *sum = sum.saturating_add(count),
                None if count > 0 => {
                    return Err(format!("the histogram holds a count at bucket {index}, beyond its range"));
                }
                None => {}
            }
            used = if count > 0 { index + 1 } else { used };
            index = index.saturating_add(usize::try_from(step).unwrap_or(usize::MAX));
        }
        Ok(used)
    }

    /// The compressed V2 encoding of a histogram of this module's layout whose buckets hold
    /// `counts` (the last non-zero or none), as HdrHistogram's own serializer writes it.
    pub fn encode(counts: &[u64]) -> Vec<u8> {
        let top = counts.iter().rposition(|c| *c > 0).unwrap_or(0);
        let mut plain = Vec::with_capacity(HEADER + 2 * (top + 1));
        plain.extend_from_slice(&V2.to_be_bytes());
        plain.extend_from_slice(&0u32.to_be_bytes()); // the payload's length, below
        plain.extend_from_slice(&0u32.to_be_bytes()); // normalizing index offset
        plain.extend_from_slice(&3u32.to_be_bytes()); // significant digits
        plain.extend_from_slice(&1u64.to_be_bytes()); // lowest discernible value
        plain.extend_from_slice(&super::HISTOGRAM_MAX_NS.to_be_bytes());
        plain.extend_from_slice(&1f64.to_bits().to_be_bytes());
        let counts = if counts.is_empty() { &[0][..] } else { counts };
        let mut index = 0;
        while index <= top {
            let zeros = counts[index..=top].iter().take_while(|c| **c == 0).count();
            let n = match zeros {
                0 | 1 => i64::try_from(counts[index]).unwrap_or(i64::MAX),
                z => -(z as i64),
            };
            index += zeros.max(1);
            put_leb128(&mut plain, ((n << 1) ^ (n >> 63)) as u64);
        }
        let len = (plain.len() - HEADER) as u32;
        plain[4..8].copy_from_slice(&len.to_be_bytes());
        compressed(&plain)
    }

    /// The zlib stream's header as `compressed` writes it: deflate with a 32 KiB window, no
    /// dictionary, the header's check bits.
    const ZLIB_STORED: [u8; 2] = [0x78, 0x01];

    /// The compressed V2 encoding of the plain V2 encoding `plain`: a zlib stream of one
    /// stored (uncompressed) deflate block, which every inflater reads (HdrHistogram's tools
    /// too) and this module reads in place. A merge of 100 shards' 10-minute logs reads
    /// 240,000 histograms: inflating them was a third of its time, and their counts (a byte or
    /// two a bucket) shrink by a third at most. Over 64 KiB, deflated with the fixed codes.
    pub fn compressed(plain: &[u8]) -> Vec<u8> {
        let Ok(len) = u16::try_from(plain.len()) else { return deflated(plain) };
        let stream = ZLIB_STORED.len() + 5 + plain.len() + 4;
        let mut out = Vec::with_capacity(8 + stream);
        out.extend_from_slice(&V2_COMPRESSED.to_be_bytes());
        out.extend_from_slice(&(stream as u32).to_be_bytes());
        out.extend_from_slice(&ZLIB_STORED);
        // The last block, stored: its length and that length's complement, little-endian.
        out.push(0x01);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(plain);
        out.extend_from_slice(&zlib_rs::adler32::adler32(1, plain).to_be_bytes());
        out
    }

    /// The data of a zlib stream that is one stored block, as `compressed` writes it, where
    /// its Adler-32 holds; None for any other stream (it is inflated).
    fn stored(z: &[u8]) -> Option<&[u8]> {
        let [h0, h1, 0x01, l0, l1, n0, n1, ..] = *z else { return None };
        let len = u16::from_le_bytes([l0, l1]);
        if [h0, h1] != ZLIB_STORED || len != !u16::from_le_bytes([n0, n1]) || z.len() != 11 + usize::from(len)
        {
            return None;
        }
        let (data, sum) = z[7..].split_at(usize::from(len));
        (u32::from_be_bytes(sum.try_into().ok()?) == zlib_rs::adler32::adler32(1, data)).then_some(data)
    }

    /// `plain` deflated with the fixed Huffman codes (no code tables to build when inflated).
    pub fn deflated(plain: &[u8]) -> Vec<u8> {
        let config = zlib_rs::DeflateConfig { strategy: zlib_rs::Strategy::Fixed, ..Default::default() };
        let mut out = vec![0u8; 8 + zlib_rs::compress_bound(plain.len())];
        let (deflated, code) = zlib_rs::compress_slice(&mut out[8..], plain, config);
        assert_eq!(code, zlib_rs::ReturnCode::Ok, "deflating into a buffer of its bound");
        let len = deflated.len();
        out[..4].copy_from_slice(&V2_COMPRESSED.to_be_bytes());
        out[4..8].copy_from_slice(&(len as u32).to_be_bytes());
        out.truncate(8 + len);
        out
    }

    fn put_leb128(out: &mut Vec<u8>, mut n: u64) {
        for _ in 0..8 {
            if n < 0x80 {
                out.push(n as u8);
                return;
            }
            out.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    /// HdrHistogram's LEB128: 7 bits a byte, the ninth byte whole.
    fn leb128(bytes: &mut &[u8]) -> Option<u64> {
        let mut value = 0u64;
        for shift in 0..9 {
            let (&b, rest) = bytes.split_first()?;
            *bytes = rest;
            if shift == 8 {
                return Some(value | u64::from(b) << 56);
            }
            value |= u64::from(b & 0x7f) << (7 * shift);
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// The highest value bucket `index` holds (what HdrHistogram reports for it).
    pub fn highest_of(index: usize) -> u64 {
        let bucket = (index >> HALF_MAGNITUDE) as i64 - 1;
        value_of(index) + (1u64 << bucket.max(0)) - 1
    }

    /// The lowest value bucket `index` holds.
    pub fn value_of(index: usize) -> u64 {
        let half = 1u64 << HALF_MAGNITUDE;
        let bucket = (index >> HALF_MAGNITUDE) as i64 - 1;
        let sub = (index as u64 & (half - 1)) + half;
        match bucket {
            b if b < 0 => sub - half,
            b => sub << b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1]
    }

    #[test]
    fn percentiles_are_within_a_tenth_of_a_percent_of_the_exact_ones() {
        let mut values: Vec<u64> = (0..100_000u64).map(|i| 1_000 + (i * 7_919) % 5_000_000).collect();
        let mut h = LatencyHistogram::new();
        values.iter().for_each(|v| h.record(*v));
        values.sort_unstable();
        for q in [0.5, 0.9, 0.99, 0.999, 0.9999] {
            let exact = exact_quantile(&values, q) as f64;
            let got = h.quantile_ns(q) as f64;
            assert!((got - exact).abs() / exact <= 0.001, "q={q}: got {got}, exact {exact}");
        }
        let s = h.summary().unwrap();
        assert_eq!(s.min, 1_000);
        assert!((s.max as f64 - *values.last().unwrap() as f64).abs() / (s.max as f64) < 0.001);
    }

    #[test]
    fn merging_two_halves_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) =
            (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
        for i in 0..10_000u64 {
            let v = 500 + i * i % 1_000_003;
            if i % 2 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
        assert_eq!(a.count(), 10_000);
    }

    #[test]
    fn encoding_round_trips_and_out_of_range_values_are_clamped() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(HISTOGRAM_MAX_NS * 10);
        h.record(42_000);
        let back = LatencyHistogram::decode(&h.encode()).unwrap();
        assert_eq!(back.summary(), h.summary());
        assert_eq!(back.count(), 3);
        assert_eq!(h.summary().unwrap().min, 1);
    }

    #[test]
    fn adding_an_encoded_histogram_equals_merging_it_decoded() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut sparse, mut full, mut scratch) =
            (BucketSum::default(), LatencyHistogram::new(), Inflater::default());
        for round in 0..20 {
            let mut h = LatencyHistogram::new();
            // Every magnitude from 1 ns to the maximum, some values many times.
            for _ in 0..500 {
                let v = next() % (1u64 << (next() % 40));
                (0..1 + next() % 3).for_each(|_| h.record(v));
            }
            h.record(HISTOGRAM_MAX_NS * (round % 2));
            sparse.add_encoded(&h.encode(), &mut scratch).unwrap();
            full.merge(&LatencyHistogram::decode(&h.encode()).unwrap());
        }
        let (encoded, max) = sparse.encode();
        let sparse = sparse.histogram();
        assert_eq!(sparse.summary(), full.summary());
        let all = |h: &LatencyHistogram| {
            h.inner.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect::<Vec<_>>()
        };
        assert_eq!(all(&sparse), all(&full), "bucket for bucket");
        // Encoded from the counts, it decodes as the histogram, bucket for bucket.
        assert_eq!(all(&LatencyHistogram::decode(&encoded).unwrap()), all(&full));
        assert_eq!(max, full.quantile_ns(1.0));
        assert!(BucketSum::default().add_encoded(&h_cut(), &mut scratch).is_err());
    }

    #[test]
    fn an_encoding_is_one_stored_zlib_block_that_any_inflater_reads_and_a_changed_count_is_refused() {
        let mut h = LatencyHistogram::new();
        (1..2_000u64).for_each(|v| h.record(v * v));
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&h.inner, &mut plain).unwrap();
        let bytes = h.encode();
        // HdrHistogram's compressed cookie, then a zlib stream any inflater reads back.
        assert_eq!(bytes[..4], 0x1c84_9314u32.to_be_bytes());
        let mut inflated = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&bytes[8..]), &mut inflated).unwrap();
        assert_eq!(inflated, plain);
        // Read in place: the counts are a slice of the encoding itself.
        let mut scratch = Inflater::default();
        let counts = sparse::counts(&bytes, &mut scratch).unwrap().unwrap();
        assert!(bytes.as_ptr_range().contains(&counts.as_ptr()));
        // Deflated as earlier versions wrote it, the same histogram adds up the same.
        let (mut stored, mut deflated) = (BucketSum::default(), BucketSum::default());
        stored.add_encoded(&bytes, &mut scratch).unwrap();
        deflated.add_encoded(&sparse::deflated(&plain), &mut scratch).unwrap();
        assert_eq!(stored.encode(), deflated.encode());
        assert_eq!(stored.histogram().summary(), h.summary());
        // One count changed in the stream: its checksum refuses it.
        let mut changed = bytes.clone();
        let at = changed.len() - 10;
        changed[at] ^= 0x02;
        let e = BucketSum::default().add_encoded(&changed, &mut scratch).unwrap_err();
        assert!(e.contains("check"), "{e}");
    }

    /// An encoding cut in the middle.
    fn h_cut() -> Vec<u8> {
        let mut h = LatencyHistogram::new();
        h.record(1234);
        let bytes = h.encode();
        bytes[..bytes.len() / 2].to_vec()
    }

    #[test]
    fn sums_cleared_for_reuse_and_added_together_stay_exact() {
        let (mut scratch, mut total, mut sum) =
            (Inflater::default(), BucketSum::default(), BucketSum::default());
        let mut all = LatencyHistogram::new();
        for round in 1..4u64 {
            let mut h = LatencyHistogram::new();
            (0..100).for_each(|i| h.record(round * 1_000_000 / (i + 1)));
            all.merge(&h);
            sum.clear();
            sum.add_encoded(&h.encode(), &mut scratch).unwrap();
            assert_eq!(sum.histogram().summary(), h.summary(), "only this round's");
            total.add(&sum);
        }
        assert_eq!(total.histogram().summary(), all.summary());
        let (empty, max) = BucketSum::default().encode();
        assert_eq!((LatencyHistogram::decode(&empty).unwrap().count(), max), (0, 0));
    }

    #[test]
    fn an_empty_histogram_has_no_summary() {
        assert!(LatencyHistogram::new().summary().is_none());
    }
}
