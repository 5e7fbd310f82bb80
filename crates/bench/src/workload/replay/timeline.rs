//! The logs' requests as one timeline: every source merged by the log's time (each source's
//! own order kept; a tie goes to the source named first), with the replay's filters, window
//! and limit applied. A run sends what this gives and its preview counts the same, so the line
//! said before a replay ("will send ...") is what it sends. [`Filter::verdict`] is the one
//! place that decides whether a request applies.
//!
//! Reading stops where nothing more can apply: a source at its first request past the
//! window's end, every source at the limit. Lines that could not be read are counted up to
//! there, in both, and so are the requests withheld as reaching beyond the database
//! (`ReplaySpec::statements`): they are not sent, and do not count toward the limit.
//!
//! A request whose log time is before the one before it in its log (a log written by several
//! processes, a clock stepped back) keeps its place: it is given at the time of the one
//! before, and counted (`backwards`), never dropped or run ahead of what preceded it.

use super::ReplayError;
use super::log::{Entry, LineError, Read, What};
use super::spec::{Filter, Mode, ReplaySpec, Source};
use crate::run::StopFlag;
use std::collections::{BTreeMap, HashMap};
use storbench_report::UnreadLine;

/// Unread lines kept with their line numbers (the rest are counted).
pub const FIRST_UNREAD_KEPT: usize = 10;

/// Request types told apart; those found after are counted together as `OTHER_TYPES` (each
/// type keeps latency histograms per source: a few hundred KiB).
pub const MAX_TYPES: usize = 100;
/// The type of requests of the types found after the first `MAX_TYPES - 1`.
pub const OTHER_TYPES: &str = "(other types)";

/// Request types by index, in the order they were found.
#[derive(Debug, Default)]
pub(super) struct Kinds {
    index: HashMap<String, u32>,
    pub(super) names: Vec<String>,
}

impl Kinds {
    /// The index of type `kind`, given on first sight.
    pub(super) fn index(&mut self, kind: &str) -> u32 {
        if let Some(&i) = self.index.get(kind) {
            return i;
        }
        let name = if self.names.len() + 1 < MAX_TYPES { kind } else { OTHER_TYPES };
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.names.push(name.to_string());
        let i = (self.names.len() - 1) as u32;
        self.index.insert(name.to_string(), i);
        i
    }
}

/// What the filters say of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Applies,
    /// Before the window, or of another database or user.
    Skipped,
    /// Past the window's end: nothing after it in its log applies.
    After,
}

impl Filter {
    /// Whether request `e`, `offset_ns` after the logs' first request, applies.
    pub(super) fn verdict(&self, e: &Entry, offset_ns: i128) -> Verdict {
        if self.end.is_some_and(|end| offset_ns > end.as_nanos() as i128) {
            return Verdict::After;
        }
        let other = |want: &Option<String>, got: &str| want.as_deref().is_some_and(|w| w != got);
        if offset_ns < self.start.as_nanos() as i128
            || other(&self.database, &e.database)
            || other(&self.user, &e.user)
        {
            return Verdict::Skipped;
        }
        Verdict::Applies
    }
}

/// Paths told apart among a web log's requests that no route takes; the rest are counted
/// together as `OTHER_PATHS`.
pub const MAX_UNMATCHED_PATHS: usize = 100;
/// The requests of the paths found after the first `MAX_UNMATCHED_PATHS - 1`.
pub const OTHER_PATHS: &str = "(other paths)";

/// Lines that could not be read as requests: how many, and the first few; and apart, a web
/// log's requests that no route takes, per path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Unread {
    pub count: u64,
    pub first: Vec<UnreadLine>,
    pub unmatched: BTreeMap<String, u64>,
}

impl Unread {
    fn add(&mut self, source: &str, e: LineError) {
        if let Some(path) = e.unmatched {
            let known = self.unmatched.contains_key(&path) || self.unmatched.len() + 1 < MAX_UNMATCHED_PATHS;
            *self.unmatched.entry(if known { path } else { OTHER_PATHS.into() }).or_default() += 1;
            return;
        }
        self.count += 1;
        if self.first.len() < FIRST_UNREAD_KEPT {
            self.first.push(UnreadLine { source: source.into(), line: e.line, why: e.why });
        }
    }
}

/// The logs read as one timeline.
pub(super) struct Timeline {
    names: Vec<String>,
    reads: Vec<Box<dyn Iterator<Item = Read> + Send>>,
    /// Each source's next request, read and not yet given.
    heads: Vec<Option<Entry>>,
    /// Sources still read.
    open: Vec<bool>,
    filter: Filter,
    statements: super::Statements,
    strict: bool,
    /// Any of these set ends the timeline where it is (a stop request, the run's end), even
    /// in a long stretch of log that does not apply.
    quit: Vec<StopFlag>,
    /// The logs' first request's time.
    origin: Option<i128>,
    /// Requests given so far.
    pub(super) applied: u64,
    pub(super) unread: Unread,
    /// Requests that applied but were withheld, by the kind that reaches beyond.
    pub(super) not_sent: BTreeMap<String, u64>,
    /// Requests read from the logs, whether they applied or not.
    pub(super) read: u64,
    /// Requests whose log time went back behind the one before them in their log.
    pub(super) backwards: u64,
    /// Each source's latest log time given.
    last_at: Vec<Option<i128>>,
}

impl Timeline {
    pub(super) fn new(spec: &ReplaySpec, sources: Vec<Source>, quit: Vec<StopFlag>) -> Timeline {
        let n = sources.len();
        let (names, reads) = sources.into_iter().map(|s| (s.name, s.reads)).unzip();
        Timeline {
            names,
            reads,
            heads: (0..n).map(|_| None).collect(),
            open: vec![true; n],
            filter: spec.filter.clone(),
            statements: spec.statements.clone(),
            strict: spec.strict,
            quit,
            origin: None,
            applied: 0,
            unread: Unread::default(),
            not_sent: BTreeMap::new(),
            read: 0,
            backwards: 0,
            last_at: vec![None; n],
        }
    }

    /// The next request that applies (or session end: ends are not counted as requests), with
    /// its source's index; None after the last, or once asked to quit. A line that cannot be read is an error when the replay is strict.
    pub(super) fn next(&mut self) -> Result<Option<(usize, Entry)>, ReplayError> {
        loop {
            let quit = self.quit.iter().any(StopFlag::is_stopped);
            if quit || self.filter.limit.is_some_and(|limit| self.applied >= limit) {
                return Ok(None);
            }
            let Some(i) = self.earliest()? else { return Ok(None) };
            let e = self.heads[i].take().expect("the earliest source has a request read");
            let origin = *self.origin.get_or_insert(e.at_ns);
            match self.filter.verdict(&e, e.at_ns - origin) {
                Verdict::Applies => {
                    if let Some(kind) = self.statements.withheld(e.what.sql()) {
                        *self.not_sent.entry(kind).or_default() += 1;
                        continue;
                    }
                    self.applied += u64::from(matches!(e.what, What::Request(_)));
                    return Ok(Some((i, e)));
                }
                Verdict::After => self.open[i] = false,
                Verdict::Skipped => {}
            }
        }
    }

    /// The source whose next request is the earliest, every open source's next request read.
    fn earliest(&mut self) -> Result<Option<usize>, ReplayError> {
        for i in 0..self.heads.len() {
            if self.heads[i].is_none() && self.open[i] {
                self.heads[i] = self.read(i)?;
            }
        }
        Ok((0..self.heads.len())
            .filter_map(|i| Some((i, self.heads[i].as_ref()?.at_ns)))
            .min_by_key(|h| h.1)
            .map(|h| h.0))
    }

    /// `e` of source `i` at no time before the one before it there (counted where it was).
    fn in_order(&mut self, i: usize, mut e: Entry) -> Entry {
        self.read += u64::from(matches!(e.what, What::Request(_)));
        match self.last_at[i] {
            Some(last) if e.at_ns < last => {
                self.backwards += 1;
                e.at_ns = last;
            }
            _ => self.last_at[i] = Some(e.at_ns),
        }
        e
    }

    /// Source `i`'s next request, its unreadable lines before it counted.
    fn read(&mut self, i: usize) -> Result<Option<Entry>, ReplayError> {
        loop {
            match self.reads[i].next() {
                Some(Ok(e)) => return Ok(Some(self.in_order(i, e))),
                Some(Err(e)) if self.strict && e.unmatched.is_none() => {
                    return Err(ReplayError::Unreadable {
                        log: self.names[i].clone(),
                        line: e.line,
                        why: e.why,
                    });
                }
                Some(Err(e)) => self.unread.add(&self.names[i], e),
                None => {
                    self.open[i] = false;
                    return Ok(None);
                }
            }
        }
    }
}

/// What a replay will send, counted before it starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preview {
    /// Requests that apply (after the filters, window and limit).
    pub requests: u64,
    /// The same per request type.
    pub by_type: BTreeMap<String, u64>,
    /// The same per source, in the sources' order: (name, requests).
    pub by_source: Vec<(String, u64)>,
    pub unread: Unread,
    /// Requests withheld as reaching beyond the database, by kind.
    pub not_sent: BTreeMap<String, u64>,
    /// Requests read from the logs, whether they applied or not (0: the logs hold none that
    /// could be read).
    pub read: u64,
    /// Requests whose log time went back behind the one before them in their log: given
    /// in the log's order at the time of the one before.
    pub backwards: u64,
    /// Seconds of log from the first request that applies to the last.
    pub span_s: f64,
}

impl Preview {
    /// How long the replay's sending lasts at the least: time-sync's span of log at its speed;
    /// None in fire-hose, which lasts as long as the database takes.
    pub fn seconds(&self, mode: Mode) -> Option<f64> {
        mode.speed().map(|speed| self.span_s / speed)
    }
}

/// Reads `sources` through as `spec`'s replay would, and counts what it would send. Stops
/// with `ReplayError::Interrupted` at a stop request.
pub fn preview(spec: &ReplaySpec, sources: Vec<Source>, stop: &StopFlag) -> Result<Preview, ReplayError> {
    let mut p =
        Preview { by_source: sources.iter().map(|s| (s.name.clone(), 0)).collect(), ..Preview::default() };
    let mut timeline = Timeline::new(spec, sources, vec![stop.clone()]);
    let mut kinds = Kinds::default();
    let mut span: Option<(i128, i128)> = None;
    while let Some((source, e)) = timeline.next()? {
        if let What::End(_) = e.what {
            continue;
        }
        p.by_source[source].1 += 1;
        let kind = kinds.index(&e.kind) as usize;
        *p.by_type.entry(kinds.names[kind].clone()).or_default() += 1;
        let (first, last) = span.get_or_insert((e.at_ns, e.at_ns));
        (*first, *last) = ((*first).min(e.at_ns), (*last).max(e.at_ns));
    }
    if stop.is_stopped() {
        return Err(ReplayError::Interrupted);
    }
    p.requests = timeline.applied;
    p.unread = timeline.unread;
    p.not_sent = timeline.not_sent;
    (p.read, p.backwards) = (timeline.read, timeline.backwards);
    p.span_s = span.map_or(0.0, |(first, last)| (last - first) as f64 / 1e9);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::replay::Statements;
    use crate::workload::replay::testing::{entry, source};
    use std::time::Duration;

    const S: i128 = 1_000_000_000;

    fn spec(filter: Filter) -> ReplaySpec {
        ReplaySpec { filter, ..ReplaySpec::default() }
    }

    /// Two logs, a request a second each, the second log half a second behind the first; every
    /// fourth of the first log's on database `other`, every third of the second's by user `bob`.
    fn two_logs() -> Vec<Source> {
        let a = (0..10).map(|i| {
            let mut e = entry("a1", i * S, if i % 2 == 0 { "SELECT 1" } else { "UPDATE t SET x = 1" });
            if i % 4 == 3 {
                e.database = "other".into();
            }
            Ok(e)
        });
        let b = (0..10).map(|i| {
            let mut e = entry("b1", i * S + S / 2, "INSERT INTO t VALUES (1)");
            if i % 3 == 2 {
                e.user = "bob".into();
            }
            Ok(e)
        });
        vec![source("a", a), source("b", b)]
    }

    fn counts(filter: Filter) -> Preview {
        preview(&spec(filter), two_logs(), &StopFlag::new()).unwrap()
    }

    #[test]
    fn the_logs_merge_in_time_order_and_every_request_applies_without_filters() {
        let mut t = Timeline::new(&ReplaySpec::default(), two_logs(), Vec::new());
        let mut order = Vec::new();
        while let Some((source, e)) = t.next().unwrap() {
            order.push((source, e.at_ns));
        }
        assert_eq!(order.len(), 20);
        assert!(order.windows(2).all(|w| w[0].1 <= w[1].1), "{order:?}");
        assert_eq!(&order[..3], &[(0, 0), (1, S / 2), (0, S)]);
        let p = counts(Filter::default());
        assert_eq!(p.requests, 20);
        assert_eq!(
            p.by_type,
            BTreeMap::from([("INSERT".into(), 10), ("SELECT".into(), 5), ("UPDATE".into(), 5)])
        );
        assert_eq!(p.by_source, [("a".to_string(), 10), ("b".to_string(), 10)]);
        assert_eq!(p.span_s, 9.5);
        assert_eq!(p.seconds(Mode::TimeSync { speed: 2.0, in_flight: 1 }), Some(4.75));
        assert_eq!(p.seconds(Mode::default()), None);
    }

    #[test]
    fn database_user_window_and_limit_each_narrow_what_applies() {
        let db = counts(Filter { database: Some("db".into()), ..Filter::default() });
        assert_eq!(
            db.by_source,
            [("a".to_string(), 8), ("b".to_string(), 10)],
            "a's 3rd and 7th are on other"
        );
        let user = counts(Filter { user: Some("bob".into()), ..Filter::default() });
        assert_eq!(user.by_source, [("a".to_string(), 0), ("b".to_string(), 3)]);
        // From 2 s to 5 s after a's first request: a's 2..=5 and b's 2.5, 3.5, 4.5.
        let window =
            Filter { start: Duration::from_secs(2), end: Some(Duration::from_secs(5)), ..Filter::default() };
        let w = counts(window);
        assert_eq!(w.by_source, [("a".to_string(), 4), ("b".to_string(), 3)]);
        assert_eq!(w.span_s, 3.0);
        let limit = counts(Filter { limit: Some(5), ..Filter::default() });
        assert_eq!(limit.by_source, [("a".to_string(), 3), ("b".to_string(), 2)], "the first five in time");
        assert_eq!(limit.by_type.values().sum::<u64>(), 5);
    }

    #[test]
    fn unreadable_lines_are_counted_and_kept_or_stop_a_strict_replay_naming_the_line() {
        let bad = |line| Err(LineError::new(line, "not a request"));
        let reads = || {
            let mut v: Vec<Read> = (1..=12).map(bad).collect();
            v.insert(3, Ok(entry("s", 0, "SELECT 1")));
            source("web1", v.into_iter())
        };
        let p = preview(&ReplaySpec::default(), vec![reads()], &StopFlag::new()).unwrap();
        assert_eq!((p.requests, p.unread.count, p.unread.first.len()), (1, 12, FIRST_UNREAD_KEPT));
        assert_eq!(
            p.unread.first[0],
            UnreadLine { source: "web1".into(), line: 1, why: "not a request".into() }
        );
        let strict = ReplaySpec { strict: true, ..ReplaySpec::default() };
        let err = preview(&strict, vec![reads()], &StopFlag::new()).unwrap_err();
        assert_eq!(err, ReplayError::Unreadable { log: "web1".into(), line: 1, why: "not a request".into() });
        assert!(err.to_string().starts_with("web1 line 1: not a request"), "{err}");
    }

    #[test]
    fn statements_beyond_the_database_are_withheld_and_counted_unless_their_kind_is_allowed() {
        let log = || {
            let sql = ["SELECT 1", "DROP DATABASE other", "COPY t TO PROGRAM 'rm -rf /'", "DROP DATABASE x"];
            source("a", sql.map(|q| Ok(entry("s", 0, q))).into_iter())
        };
        let statements = Statements { database: "db".into(), ..Statements::default() };
        let guarded = ReplaySpec { statements: statements.clone(), ..ReplaySpec::default() };
        let mut t = Timeline::new(&guarded, vec![log()], Vec::new());
        let mut sent = Vec::new();
        while let Some((_, e)) = t.next().unwrap() {
            sent.push(e.what.sql().to_string());
        }
        assert_eq!(sent, ["SELECT 1"], "only what stays inside the database is given to be sent");
        let p = preview(&guarded, vec![log()], &StopFlag::new()).unwrap();
        assert_eq!(p.requests, 1);
        assert_eq!(p.not_sent, BTreeMap::from([("DROP DATABASE".into(), 2), ("COPY TO PROGRAM".into(), 1)]));
        let allowed = Statements { allowed: ["DROP DATABASE".to_string()].into(), ..statements };
        let p = preview(
            &ReplaySpec { statements: allowed, ..ReplaySpec::default() },
            vec![log()],
            &StopFlag::new(),
        )
        .unwrap();
        assert_eq!((p.requests, p.not_sent), (3, BTreeMap::from([("COPY TO PROGRAM".into(), 1)])));
    }

    #[test]
    fn a_request_whose_time_goes_back_keeps_its_place_and_is_counted() {
        let times = [0, 2 * S, S, 3 * S];
        let log = || source("a", times.map(|t| Ok(entry("s", t, "SELECT 1"))).into_iter());
        let mut t = Timeline::new(&ReplaySpec::default(), vec![log()], Vec::new());
        let mut given = Vec::new();
        while let Some((_, e)) = t.next().unwrap() {
            given.push(e.at_ns);
        }
        assert_eq!(given, [0, 2 * S, 2 * S, 3 * S], "in the log's order, none dropped");
        let p = preview(&ReplaySpec::default(), vec![log()], &StopFlag::new()).unwrap();
        assert_eq!((p.requests, p.read, p.backwards), (4, 4, 1));
    }

    #[test]
    fn types_past_the_most_told_apart_are_counted_together() {
        let calls = (0..MAX_TYPES as i128 + 5).map(|i| Ok(entry("s", i, &format!("SELECT f{i}(1)"))));
        let p = preview(&ReplaySpec::default(), vec![source("a", calls)], &StopFlag::new()).unwrap();
        assert_eq!(p.by_type.len(), MAX_TYPES);
        assert_eq!(p.by_type[OTHER_TYPES], 6);
        assert_eq!(p.by_type["SELECT f98"], 1);
    }

    #[test]
    fn reading_stops_at_the_window_end_and_at_the_limit() {
        let endless = || source("big", (0..).map(|i| Ok(entry("s", i * S, "SELECT 1"))));
        let window = Filter { end: Some(Duration::from_secs(99)), ..Filter::default() };
        assert_eq!(preview(&spec(window), vec![endless()], &StopFlag::new()).unwrap().requests, 100);
        let limit = Filter { limit: Some(1_000), ..Filter::default() };
        assert_eq!(preview(&spec(limit), vec![endless()], &StopFlag::new()).unwrap().requests, 1_000);
    }

    #[test]
    fn a_stop_request_ends_the_reading_even_where_nothing_applies() {
        let stop = StopFlag::new();
        let asked = stop.clone();
        // An endless log of which nothing applies; the stop comes as its 1000th line is read.
        let lines = (0..).map(move |i| {
            if i == 1_000 {
                asked.stop();
            }
            Ok(entry("s", i * S, "SELECT 1"))
        });
        let nobody = Filter { user: Some("nobody".into()), ..Filter::default() };
        let err = preview(&spec(nobody), vec![source("big", lines)], &stop).unwrap_err();
        assert_eq!(err, ReplayError::Interrupted);
    }
}
