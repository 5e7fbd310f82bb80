//! An interval's data as the record stores it: integer counts by name and histograms by tag,
//! and the conversion of each workload's interval data to and from it (`Recordable`).

use crate::metrics::{DirectionCounters, ErrorTally, LatencyHistogram};
use crate::run::{IntervalData, Parts};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// One interval of one stream: counts (absent means 0) and histograms in the order they go to
/// `latency.hlog`.
#[derive(Debug, Default)]
pub struct Tally<'a> {
    pub counts: BTreeMap<String, u64>,
    pub hists: Vec<(String, Cow<'a, LatencyHistogram>)>,
}

impl<'a> Tally<'a> {
    /// Keeps `n` under `name` (a zero is left out).
    pub fn count(&mut self, name: impl Into<String>, n: u64) {
        if n > 0 {
            self.counts.insert(name.into(), n);
        }
    }

    /// The same tally holding its own histograms (to keep it past the data it was made of).
    pub fn into_owned(self) -> Tally<'static> {
        Tally {
            counts: self.counts,
            hists: self.hists.into_iter().map(|(t, h)| (t, Cow::Owned(h.into_owned()))).collect(),
        }
    }

    /// The same tally with every histogram's tag under `prefix` (`bg1.` + `write`).
    pub fn tagged_under(mut self, prefix: &str) -> Tally<'a> {
        for (tag, _) in &mut self.hists {
            tag.insert_str(0, prefix);
        }
        self
    }

    pub fn get(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    /// Keeps histogram `h` under `tag`, empty or not (the tags every bundle has had).
    pub fn hist(&mut self, tag: impl Into<String>, h: &'a LatencyHistogram) {
        self.hists.push((tag.into(), Cow::Borrowed(h)));
    }

    /// Keeps a histogram made for the record (a sum of others) under `tag`.
    pub fn hist_owned(&mut self, tag: impl Into<String>, h: LatencyHistogram) {
        self.hists.push((tag.into(), Cow::Owned(h)));
    }

    /// Keeps histogram `h` under `tag` when it holds anything.
    pub fn hist_if_any(&mut self, tag: impl Into<String>, h: &'a LatencyHistogram) {
        if !h.is_empty() {
            self.hist(tag, h);
        }
    }

    /// The histogram under `tag` (empty when there is none).
    pub fn histogram(&self, tag: &str) -> LatencyHistogram {
        self.hists.iter().find(|(t, _)| t == tag).map(|(_, h)| h.as_ref().clone()).unwrap_or_default()
    }

    /// Error counts under `prefix.<kind>`.
    pub fn errors(&mut self, prefix: &str, e: &ErrorTally) {
        for (kind, n) in &e.by_kind {
            self.count(format!("{prefix}.{kind}"), *n);
        }
    }

    pub fn error_tally(&self, prefix: &str) -> ErrorTally {
        let mut e = ErrorTally::default();
        let prefix = format!("{prefix}.");
        for (name, n) in &self.counts {
            if let Some(kind) = name.strip_prefix(&prefix) {
                e.add(Cow::Owned(kind.to_string()), *n);
            }
        }
        e
    }

    /// A direction's counts under `prefix.ios` and `prefix.bytes`, its latency under `tag`
    /// (always) and its service time under `tag.service` (when any).
    pub fn direction(&mut self, prefix: &str, tag: &str, d: &'a DirectionCounters) {
        self.count(format!("{prefix}.ios"), d.ios);
        self.count(format!("{prefix}.bytes"), d.bytes);
        self.hist(tag, &d.latency);
        self.hist_if_any(format!("{tag}.service"), &d.service);
    }

    /// As `direction`, the latency kept only when any (a part's, a stream no summary shows
    /// without I/O).
    pub fn direction_if_any(&mut self, prefix: &str, tag: &str, d: &'a DirectionCounters) {
        self.count(format!("{prefix}.ios"), d.ios);
        self.count(format!("{prefix}.bytes"), d.bytes);
        self.hist_if_any(tag, &d.latency);
        self.hist_if_any(format!("{tag}.service"), &d.service);
    }

    pub fn direction_counters(&self, prefix: &str, tag: &str) -> DirectionCounters {
        DirectionCounters {
            ios: self.get(&format!("{prefix}.ios")),
            bytes: self.get(&format!("{prefix}.bytes")),
            latency: self.histogram(tag),
            service: self.histogram(&format!("{tag}.service")),
        }
    }

    /// The counts and histograms under `prefix.`, without it.
    fn under(&self, prefix: &str) -> Tally<'_> {
        Tally {
            counts: self
                .counts
                .iter()
                .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_string(), *v)))
                .collect(),
            hists: self
                .hists
                .iter()
                .filter_map(|(k, h)| {
                    k.strip_prefix(prefix).map(|k| (k.to_string(), Cow::Borrowed(h.as_ref())))
                })
                .collect(),
        }
    }

    /// Adds `other`'s counts and histograms under `prefix`.
    fn put_under(&mut self, prefix: &str, other: Tally<'a>) {
        self.counts.extend(other.counts.into_iter().map(|(k, v)| (format!("{prefix}{k}"), v)));
        self.hists.extend(other.hists.into_iter().map(|(k, h)| (format!("{prefix}{k}"), h)));
    }
}

/// Interval data that the record stores and reads back exactly.
pub trait Recordable: IntervalData + Sized {
    /// Whether its counts and histograms add up: the tally of intervals summed (counts added,
    /// histograms' buckets added) reads back as those intervals' data merged. A rebuild then
    /// sums the encoded histograms bucket by bucket instead of decoding each whole
    /// (`StoredRecord::merged`); a test holds each such kind to it.
    const ADDS_UP: bool = false;

    /// The interval's counts and histograms.
    fn tally(&self) -> Tally<'_>;
    /// The data `tally` gave, read back; what is not counted (kept examples, messages) is
    /// empty.
    fn from_tally(t: &Tally<'_>) -> Result<Self, String>;
}

/// A run with parts keeps each part under `p<index>.` and their number under `parts`; the
/// parts' sum keeps its own histograms' tags (the ones bundles had) and is read back as the
/// parts merged.
impl<T: Recordable> Recordable for Parts<T> {
    fn tally(&self) -> Tally<'_> {
        let mut t = self.total.tally();
        t.counts.clear();
        t.count("parts", self.parts.len() as u64);
        for (i, p) in self.parts.iter().enumerate() {
            let mut part = p.tally();
            part.hists.retain(|(_, h)| !h.is_empty());
            t.put_under(&format!("p{i}."), part);
        }
        t
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        let n = t.get("parts");
        if n > 1 << 20 {
            return Err(format!("{n} parts"));
        }
        let parts = (0..n).map(|i| T::from_tally(&t.under(&format!("p{i}.")))).collect::<Result<_, _>>()?;
        Ok(Parts::new(parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{BucketSum, Inflater, Recorder};

    /// A tally as compared: its counts, and its non-empty histograms' encodings by tag.
    type Seen = (BTreeMap<String, u64>, Vec<(String, Vec<u8>)>);

    /// What a kind's intervals give merged one by one, and what their tallies give added up
    /// (counts added, histograms summed from their encodings), each as its tally: the
    /// counts, and each histogram's encoding.
    fn merged_and_summed<T: Recordable>(intervals: &[T]) -> [Seen; 2] {
        let mut merged = T::default();
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        let mut sums: BTreeMap<String, BucketSum> = BTreeMap::new();
        let mut scratch = Inflater::default();
        for i in intervals {
            merged.merge(i);
            let t = i.tally();
            for (k, n) in &t.counts {
                *counts.entry(k.clone()).or_default() += n;
            }
            for (tag, h) in &t.hists {
                sums.entry(tag.clone()).or_default().add_encoded(&h.encode(), &mut scratch).unwrap();
            }
        }
        let hists = sums.iter().map(|(t, s)| (t.clone(), Cow::Owned(s.histogram()))).collect();
        let summed = T::from_tally(&Tally { counts, hists }).unwrap();
        let seen = |t: Tally<'_>| {
            let mut hists: Vec<(String, Vec<u8>)> = t
                .hists
                .iter()
                .filter(|(_, h)| !h.is_empty())
                .map(|(tag, h)| (tag.clone(), h.encode()))
                .collect();
            hists.sort();
            (t.counts, hists)
        };
        [seen(merged.tally()), seen(summed.tally())]
    }

    #[test]
    fn io_intervals_add_up_as_its_kind_says_so_a_rebuild_may_sum_their_encodings() {
        const { assert!(Recorder::ADDS_UP) };
        let interval = |seed: u64| {
            let mut r = Recorder::default();
            for k in 0..200 {
                let ns = 1_000 + (seed * 7919 + k * 104_729) % 5_000_000;
                r.read.ios += 1;
                r.read.bytes += 4096;
                r.read.latency.record(ns);
                if k % 3 == 0 {
                    r.write.ios += 1;
                    r.write.bytes += 8192;
                    r.write.latency.record(ns * 2);
                    r.lag.record(ns / 10);
                }
            }
            r.errors.add(Cow::Borrowed("EIO"), seed);
            r
        };
        let [merged, summed] = merged_and_summed(&[interval(1), interval(2), interval(3)]);
        assert!(merged.0["read.ios"] == 600 && !merged.1.is_empty(), "{:?}", merged.0);
        assert_eq!(merged, summed);
    }

    #[test]
    fn wal_intervals_add_up_as_its_kind_says_so_a_rebuild_may_sum_their_encodings() {
        use crate::workload::wal::writer::WalRecorder;
        const { assert!(WalRecorder::ADDS_UP) };
        let interval = |seed: u64| {
            let mut r = WalRecorder::default();
            for k in 0..100 {
                r.commits += 1;
                r.bytes += 8192;
                r.latency.record(20_000 + (seed * 31 + k * 977) % 900_000);
            }
            r.errors = seed % 2;
            r
        };
        let [merged, summed] = merged_and_summed(&[interval(1), interval(2), interval(5)]);
        assert!(merged.0["commits"] == 300 && merged.0["errors"] == 2, "{:?}", merged.0);
        assert_eq!(merged, summed);
    }
}
