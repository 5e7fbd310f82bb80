//! What a replay counts: per source while it runs (`SourceRecorder`, request types by index),
//! and per interval as the driver and the record see it (`ReplayData`, request types by name,
//! since each run finds its own). Merging is exact and order-independent.
//!
//! # In the record
//!
//! An interval's counts: `in_flight`, `refused` (requests not sent: their session could get
//! no connection), `errors.<kind>` (`connection`, `query`, ...),
//! `sources` (how many) with `s<i>.calls` and `s<i>.errors` per source in the run's order, and
//! per request type `type.<name>.calls`, `.errors` and `.sum_ns` (the exact sum of the
//! answered requests' latencies). Its histograms: `type.<name>` (the answered requests'
//! latency, where any) and `lateness` (time-sync, where any). A type's `<name>` is escaped so
//! that a tag holds no blank, comma or dot: every byte but ASCII letters, digits and `_` is
//! `%` and two upper-case hex digits (`SELECT login` is `SELECT%20login`).

use crate::db::DbErrorKind;
use crate::metrics::{ErrorTally, LatencyHistogram};
use crate::run::IntervalData;
use crate::run::record::{Recordable, Tally};
use std::collections::BTreeMap;

/// One request type's requests.
#[derive(Clone, Debug, Default)]
pub struct TypeFigures {
    /// Requests answered, failed ones included.
    pub calls: u64,
    pub errors: u64,
    /// The answered requests' latencies, exact sum (the histogram's mean is bucketed).
    pub sum_ns: u64,
    /// Latency of the requests that did not fail: from the intended start in time-sync, from
    /// the actual start in fire-hose.
    pub latency: LatencyHistogram,
}

impl TypeFigures {
    fn merge(&mut self, o: &TypeFigures) {
        self.calls += o.calls;
        self.errors += o.errors;
        self.sum_ns += o.sum_ns;
        self.latency.merge(&o.latency);
    }

    fn reset(&mut self) {
        (self.calls, self.errors, self.sum_ns) = (0, 0, 0);
        self.latency.reset();
    }
}

/// One source's requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceFigures {
    pub calls: u64,
    pub errors: u64,
}

/// How a request went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answer {
    Done {
        latency_ns: u64,
    },
    Failed(DbErrorKind),
    /// Not sent: the session could get no connection (the database refused it). Never a
    /// call, never in a rate.
    Refused,
}

/// What one source's workers counted since the driver last took it; types by index.
#[derive(Debug, Default)]
pub(super) struct SourceRecorder {
    types: Vec<TypeFigures>,
    errors: ErrorTally,
    lateness: LatencyHistogram,
    refused: u64,
}

impl SourceRecorder {
    /// Counts one request of type `kind`; `lateness_ns` in time-sync.
    pub(super) fn record(&mut self, kind: u32, answer: Answer, lateness_ns: Option<u64>) {
        let kind = kind as usize;
        if answer == Answer::Refused {
            self.refused += 1;
            return;
        }
        if kind >= self.types.len() {
            self.types.resize_with(kind + 1, TypeFigures::default);
        }
        let t = &mut self.types[kind];
        t.calls += 1;
        match answer {
            Answer::Done { latency_ns } => {
                t.sum_ns += latency_ns;
                t.latency.record(latency_ns);
            }
            Answer::Failed(why) => {
                t.errors += 1;
                self.errors.count(why.as_str());
            }
            Answer::Refused => {}
        }
        if let Some(ns) = lateness_ns {
            self.lateness.record(ns);
        }
    }

    /// Empties it, keeping its histograms' room for the next interval.
    pub(super) fn reset(&mut self) {
        self.types.iter_mut().for_each(TypeFigures::reset);
        self.errors = ErrorTally::default();
        self.lateness.reset();
        self.refused = 0;
    }
}

/// One interval of a replay (or, merged, a run), every source together.
#[derive(Clone, Debug, Default)]
pub struct ReplayData {
    /// Per request type, by name.
    pub by_type: BTreeMap<String, TypeFigures>,
    /// Per source, in the run's order.
    pub by_source: Vec<SourceFigures>,
    /// Failed requests by kind (`DbErrorKind`'s names).
    pub errors: ErrorTally,
    /// Every type's latency together.
    pub latency: LatencyHistogram,
    /// Time-sync: how late requests started (actual start − intended start).
    pub lateness: LatencyHistogram,
    /// Requests running at the interval's end; merged, the most at any interval's end.
    pub in_flight: u64,
    /// Requests not sent because their session could get no connection: never calls.
    pub refused: u64,
}

impl ReplayData {
    /// The intervals' data of sources `recorders` (in order), whose request types are named
    /// by `kinds` (by index), with `in_flight` requests running.
    pub(super) fn of(recorders: &[SourceRecorder], kinds: &[String], in_flight: u64) -> ReplayData {
        let mut d = ReplayData { in_flight, ..ReplayData::default() };
        for r in recorders {
            let mut source = SourceFigures::default();
            for (t, name) in r.types.iter().zip(kinds).filter(|(t, _)| t.calls > 0) {
                (source.calls, source.errors) = (source.calls + t.calls, source.errors + t.errors);
                d.by_type.entry(name.clone()).or_default().merge(t);
                d.latency.merge(&t.latency);
            }
            d.by_source.push(source);
            d.errors.merge(&r.errors);
            d.lateness.merge(&r.lateness);
            d.refused += r.refused;
        }
        d
    }

    /// Requests answered, failed ones included.
    pub fn calls(&self) -> u64 {
        self.by_type.values().map(|t| t.calls).sum()
    }

    pub fn errors(&self) -> u64 {
        self.errors.total()
    }

    /// The exact mean latency of the answered requests, ns.
    pub fn mean_ns(&self) -> Option<f64> {
        let sum: u64 = self.by_type.values().map(|t| t.sum_ns).sum();
        let answered = self.calls().saturating_sub(self.errors());
        (answered > 0).then(|| sum as f64 / answered as f64)
    }
}

impl IntervalData for ReplayData {
    const HEADLINE: crate::run::Headline = crate::run::Headline { name: "calls/s", per_op_per_s: 1.0 };

    fn merge(&mut self, o: &Self) {
        for (name, t) in &o.by_type {
            self.by_type.entry(name.clone()).or_default().merge(t);
        }
        if self.by_source.len() < o.by_source.len() {
            self.by_source.resize(o.by_source.len(), SourceFigures::default());
        }
        for (mine, theirs) in self.by_source.iter_mut().zip(&o.by_source) {
            (mine.calls, mine.errors) = (mine.calls + theirs.calls, mine.errors + theirs.errors);
        }
        self.errors.merge(&o.errors);
        self.latency.merge(&o.latency);
        self.lateness.merge(&o.lateness);
        self.in_flight = self.in_flight.max(o.in_flight);
        self.refused += o.refused;
    }

    fn ops(&self) -> u64 {
        self.calls()
    }
}

/// A request type's tag in the record: `type.` and its escaped name.
fn type_tag(name: &str) -> String {
    let mut tag = String::from("type.");
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' {
            tag.push(b as char);
        } else {
            tag.push_str(&format!("%{b:02X}"));
        }
    }
    tag
}

/// The name an escaped name (a tag without its `type.`) stands for.
fn type_name(escaped: &str) -> Result<String, String> {
    let mut bytes = Vec::with_capacity(escaped.len());
    let mut rest = escaped.as_bytes();
    while let Some((&b, after)) = rest.split_first() {
        rest = after;
        if b != b'%' {
            bytes.push(b);
            continue;
        }
        let hex = rest.get(..2).and_then(|h| std::str::from_utf8(h).ok());
        let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
        bytes.push(byte.ok_or_else(|| format!("request type {escaped:?}: a % without two hex digits"))?);
        rest = &rest[2..];
    }
    String::from_utf8(bytes).map_err(|_| format!("request type {escaped:?} is not UTF-8"))
}

/// The most sources a record may say it has.
const MAX_SOURCES: u64 = 1 << 16;

impl Recordable for ReplayData {
    fn tally(&self) -> Tally<'_> {
        let mut t = Tally::default();
        t.count("in_flight", self.in_flight);
        t.count("refused", self.refused);
        t.errors("errors", &self.errors);
        t.count("sources", self.by_source.len() as u64);
        for (i, s) in self.by_source.iter().enumerate() {
            t.count(format!("s{i}.calls"), s.calls);
            t.count(format!("s{i}.errors"), s.errors);
        }
        for (name, f) in &self.by_type {
            let tag = type_tag(name);
            t.count(format!("{tag}.calls"), f.calls);
            t.count(format!("{tag}.errors"), f.errors);
            t.count(format!("{tag}.sum_ns"), f.sum_ns);
            t.hist_if_any(tag, &f.latency);
        }
        t.hist_if_any("lateness", &self.lateness);
        t
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        let sources = t.get("sources");
        if sources > MAX_SOURCES {
            return Err(format!("{sources} sources"));
        }
        let mut d = ReplayData {
            by_source: (0..sources)
                .map(|i| SourceFigures {
                    calls: t.get(&format!("s{i}.calls")),
                    errors: t.get(&format!("s{i}.errors")),
                })
                .collect(),
            errors: t.error_tally("errors"),
            lateness: t.histogram("lateness"),
            in_flight: t.get("in_flight"),
            refused: t.get("refused"),
            ..ReplayData::default()
        };
        for (key, &n) in &t.counts {
            let Some((escaped, field)) = key.strip_prefix("type.").and_then(|k| k.rsplit_once('.')) else {
                continue;
            };
            let f = d.by_type.entry(type_name(escaped)?).or_default();
            match field {
                "calls" => f.calls = n,
                "errors" => f.errors = n,
                "sum_ns" => f.sum_ns = n,
                other => return Err(format!("{key}: no such count of a request type ({other})")),
            }
        }
        for (tag, h) in &t.hists {
            if let Some(escaped) = tag.strip_prefix("type.") {
                d.by_type.entry(type_name(escaped)?).or_default().latency = h.as_ref().clone();
                d.latency.merge(h);
            }
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorder of requests of `kinds` (by index): (kind, latency ns or the failure).
    fn recorder(requests: &[(u32, Result<u64, DbErrorKind>)], lateness: bool) -> SourceRecorder {
        let mut r = SourceRecorder::default();
        for (i, &(kind, answer)) in requests.iter().enumerate() {
            let answer = answer.map_or_else(Answer::Failed, |latency_ns| Answer::Done { latency_ns });
            r.record(kind, answer, lateness.then_some(1_000 * i as u64));
        }
        r
    }

    fn sample() -> ReplayData {
        let kinds = ["SELECT login".to_string(), "UPDATE".into(), "CALL x.y,z-total".into()];
        let a = recorder(&[(0, Ok(1_000)), (0, Ok(3_000)), (1, Err(DbErrorKind::Query))], true);
        let b = recorder(&[(2, Ok(5_000_000)), (1, Ok(2_000)), (2, Err(DbErrorKind::Connection))], true);
        ReplayData::of(&[a, b], &kinds, 7)
    }

    #[test]
    fn an_interval_counts_each_type_by_name_and_each_source_in_order() {
        let d = sample();
        assert_eq!((d.calls(), d.errors(), d.in_flight), (6, 2, 7));
        assert_eq!(
            d.by_source,
            [SourceFigures { calls: 3, errors: 1 }, SourceFigures { calls: 3, errors: 1 }]
        );
        let login = &d.by_type["SELECT login"];
        assert_eq!((login.calls, login.errors, login.sum_ns, login.latency.count()), (2, 0, 4_000, 2));
        assert_eq!(d.by_type["UPDATE"].errors, 1);
        assert_eq!(d.latency.count(), 4, "failed requests have no latency");
        assert_eq!(d.lateness.count(), 6);
        assert_eq!(d.mean_ns(), Some((1_000 + 3_000 + 5_000_000 + 2_000) as f64 / 4.0));
        assert_eq!(
            d.errors.by_kind.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
            ["connection", "query"]
        );
    }

    #[test]
    fn merging_is_exact_and_keeps_the_most_in_flight() {
        let mut twice = sample();
        let mut other = sample();
        other.in_flight = 3;
        other.by_source.push(SourceFigures { calls: 1, errors: 0 });
        twice.merge(&other);
        assert_eq!((twice.calls(), twice.errors(), twice.in_flight), (12, 4, 7));
        assert_eq!(twice.by_source.len(), 3);
        assert_eq!(twice.by_type["SELECT login"].latency.count(), 4);
        assert_eq!(twice.latency.count(), 8);
    }

    #[test]
    fn the_record_reads_back_every_count_and_histogram_whatever_the_types_name() {
        let d = sample();
        let tally = d.tally();
        let tags: Vec<&str> = tally.hists.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(tags, ["type.CALL%20x%2Ey%2Cz%2Dtotal", "type.SELECT%20login", "type.UPDATE", "lateness"]);
        assert_eq!(tally.get("type.SELECT%20login.sum_ns"), 4_000);
        let back = ReplayData::from_tally(&tally).unwrap();
        assert_eq!(back.by_type.keys().collect::<Vec<_>>(), d.by_type.keys().collect::<Vec<_>>());
        for (name, t) in &d.by_type {
            let b = &back.by_type[name];
            assert_eq!((b.calls, b.errors, b.sum_ns), (t.calls, t.errors, t.sum_ns), "{name}");
            assert_eq!(b.latency.summary(), t.latency.summary(), "{name}");
        }
        assert_eq!((back.by_source, back.errors, back.in_flight), (d.by_source.clone(), d.errors.clone(), 7));
        assert_eq!(
            (back.latency.summary(), back.lateness.summary()),
            (d.latency.summary(), d.lateness.summary())
        );
        let mut bad = Tally::default();
        bad.count("type.SELECT%2.calls", 1);
        assert!(ReplayData::from_tally(&bad).unwrap_err().contains("two hex digits"));
        assert_eq!(type_name("%C3%A9t%C3%A9").unwrap(), "été");
    }
}
