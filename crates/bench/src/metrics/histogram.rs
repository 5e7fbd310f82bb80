//! An HDR latency histogram in nanoseconds with 3 significant digits.
//!
//! Precision: any recorded value is reported within 0.1 % of itself. Range: 1 ns to
//! `HISTOGRAM_MAX_NS`; a longer latency is recorded as that maximum (and still counted).

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
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
        let mut out = Vec::new();
        V2DeflateSerializer::new().serialize(&self.inner, &mut out).expect("in-memory write");
        out
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
    fn an_empty_histogram_has_no_summary() {
        assert!(LatencyHistogram::new().summary().is_none());
    }
}
