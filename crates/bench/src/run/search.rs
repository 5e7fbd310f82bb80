//! Capacity under a latency limit: the highest load (threads, queue depth or rate) at which
//! every `--latency-limit` holds, found by a bounded search. Jetstress searches its thread
//! count against its thresholds and fio's latency_target searches the queue depth; this is
//! the same idea for every workload, kept pure so it is tested on models with a known knee.
//!
//! The search starts at a load, doubles while the limit holds (up to a maximum), then bisects
//! between the last load that held and the first that broke, until they are adjacent (integer
//! loads) or within a relative resolution (rates), or until the step budget is used. The best
//! load that held is then confirmed by one full-length run; if that run breaks the limit the
//! search steps down once (a thread or a depth less, a rate by the resolution) and confirms
//! that (bounded by [`CONFIRMATIONS`]). Where holding is monotonic in the load, this ends at the knee.

use std::fmt;
use std::str::FromStr;

/// Full-length confirmations at most: the best load, then one step down.
pub const CONFIRMATIONS: u32 = 2;

/// What a search moves: a workload's load, as its registry entry lists the ones it has
/// (`workload::registry::Workload::loads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Load {
    /// Workers, threads or connections.
    Threads,
    /// Requests in flight per worker.
    Iodepth,
    /// Requests (or the log's speed) a second.
    Rate,
}

impl Load {
    /// Every load, as `--search` offers them.
    pub const ALL: [Load; 3] = [Load::Threads, Load::Iodepth, Load::Rate];

    pub fn name(self) -> &'static str {
        match self {
            Load::Threads => "threads",
            Load::Iodepth => "iodepth",
            Load::Rate => "rate",
        }
    }

    /// Whether it moves in whole steps.
    pub fn integer(self) -> bool {
        self != Load::Rate
    }

    /// The most a search tries of it, starting from `start`, where no maximum is given.
    pub fn default_max(self, start: f64) -> f64 {
        match self {
            Load::Threads => 256.0,
            Load::Iodepth => 1024.0,
            Load::Rate => start * 1000.0,
        }
    }
}

impl FromStr for Load {
    type Err = String;

    fn from_str(s: &str) -> Result<Load, String> {
        let names: Vec<&str> = Load::ALL.iter().map(|l| l.name()).collect();
        Load::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("`{s}` is no load; a search moves {}", names.join(", ")))
    }
}

/// Which latency figure a limit is on.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub enum Statistic {
    Mean,
    /// A percentile (50, 90, 95, 99, 99.9, 99.99).
    Percentile(f64),
}

impl Statistic {
    /// The percentiles storbench's reports carry, as a limit may name them.
    pub const PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Statistic::Mean => write!(f, "mean"),
            Statistic::Percentile(p) => write!(f, "p{p}"),
        }
    }
}

/// One `--latency-limit`: `[TYPE:]STATISTIC<=LATENCY`, e.g. `p99<=50ms`, `order:p99.9<=200ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyLimit {
    /// The request type it is on (`order`, `read`, `db_read`); None: every type the workload
    /// judges by default.
    pub request: Option<String>,
    pub statistic: Statistic,
    /// The highest latency that holds, ns.
    pub max_ns: f64,
}

impl fmt::Display for LatencyLimit {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if let Some(r) = &self.request {
            write!(f, "{r}:")?;
        }
        write!(f, "{}<={}", self.statistic, duration_text(self.max_ns))
    }
}

/// `50ms`, `1.5s`, `800us`: the shortest unit that keeps the figure at 1 or more.
fn duration_text(ns: f64) -> String {
    let (v, unit) = match ns {
        n if n >= 1e9 => (n / 1e9, "s"),
        n if n >= 1e6 => (n / 1e6, "ms"),
        n => (n / 1e3, "us"),
    };
    format!("{}{unit}", (v * 1000.0).round() / 1000.0)
}

const LIMIT_FORM: &str = "give it as [TYPE:]STATISTIC<=LATENCY, e.g. p99<=50ms, order:p99<=50ms, \
     read:p99.9<=5ms, db_read:mean<=20ms (STATISTIC: mean, avg, p50, p90, p95, p99, p99.9, p99.99; \
     LATENCY in us, ms or s)";

impl FromStr for LatencyLimit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (lhs, rhs) = text
            .split_once("<=")
            .ok_or_else(|| format!("latency limit `{text}` has no `<=`; {LIMIT_FORM}"))?;
        let (request, stat) = match lhs.trim().rsplit_once(':') {
            Some((r, s)) if !r.trim().is_empty() => (Some(r.trim().to_string()), s),
            Some((_, s)) => (None, s),
            None => (None, lhs),
        };
        let statistic = statistic(stat.trim()).ok_or_else(|| {
            format!("latency limit `{text}`: `{}` is not a statistic; {LIMIT_FORM}", stat.trim())
        })?;
        let max_ns = latency_ns(rhs.trim()).ok_or_else(|| {
            format!("latency limit `{text}`: `{}` is not a latency; {LIMIT_FORM}", rhs.trim())
        })?;
        Ok(LatencyLimit { request, statistic, max_ns })
    }
}

fn statistic(s: &str) -> Option<Statistic> {
    let s = s.to_ascii_lowercase();
    if s == "mean" || s == "avg" {
        return Some(Statistic::Mean);
    }
    let p: f64 = s.strip_prefix('p')?.parse().ok()?;
    Statistic::PERCENTILES.contains(&p).then_some(Statistic::Percentile(p))
}

/// `50ms` → 5e7. A latency needs its unit: a bare number could be any of them.
fn latency_ns(s: &str) -> Option<f64> {
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = s.split_at(split);
    let scale = match unit.trim() {
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    let v: f64 = number.parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v * scale)
}

/// One latency figure a run reports: a request type's statistic.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub request: String,
    pub statistic: Statistic,
    pub ns: f64,
}

/// A limit judged against a run's figures: the figures it covers, and whether all held.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub limit: String,
    /// The worst of the figures it covers, ns; None when the run has none of them (no request
    /// of that type completed): the limit is not judged, which never holds.
    pub worst_ns: Option<f64>,
    pub held: bool,
}

impl LatencyLimit {
    /// Judges the limit against `figures`: those of its request type, or of every type in
    /// `default_types` when it names none.
    pub fn judge(&self, figures: &[Figure], default_types: &[&str]) -> Judged {
        let covers = |f: &&Figure| {
            f.statistic == self.statistic
                && match &self.request {
                    Some(r) => &f.request == r,
                    None => default_types.contains(&f.request.as_str()),
                }
        };
        let worst_ns = figures.iter().filter(covers).map(|f| f.ns).reduce(f64::max);
        Judged { limit: self.to_string(), worst_ns, held: worst_ns.is_some_and(|w| w <= self.max_ns) }
    }

    /// Refuses a limit the workload cannot judge: an unknown request type or a statistic it
    /// does not report. `types` None: the types are only known once it ran (replay).
    pub fn check(&self, workload: &str, types: Option<&[&str]>, stats: &[Statistic]) -> Result<(), String> {
        if let (Some(r), Some(types)) = (&self.request, types)
            && !types.contains(&r.as_str())
        {
            return Err(format!(
                "latency limit `{self}`: {workload} has no request type `{r}`; its types are {}",
                types.join(", ")
            ));
        }
        if !stats.contains(&self.statistic) {
            let have: Vec<String> = stats.iter().map(ToString::to_string).collect();
            return Err(format!(
                "latency limit `{self}`: {workload} does not report {}; it reports {}",
                self.statistic,
                have.join(", ")
            ));
        }
        Ok(())
    }
}

/// The bounds of a search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// The first load tried.
    pub start: f64,
    /// The lowest load: a search whose lowest step breaks the limit ends with none.
    pub min: f64,
    /// The highest load tried.
    pub max: f64,
    /// Whole loads (threads, queue depth); otherwise rates, searched to `resolution`.
    pub integer: bool,
    /// Rates: the bisection ends when the gap is at most this share of the load held.
    pub resolution: f64,
    /// Short measured steps at most, confirmations not counted.
    pub steps: u32,
}

/// What to run next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// A short measured step at this load.
    Step(f64),
    /// A full-length run confirming this load.
    Confirm(f64),
    /// Finished: the highest load confirmed to hold, or None when no load held.
    Done(Option<f64>),
}

/// A step as it went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tried {
    pub load: f64,
    pub held: bool,
    /// A full-length confirmation rather than a short step.
    pub confirm: bool,
}

/// The search's state: feed each step's outcome to [`Search::record`], ask [`Search::next`].
#[derive(Debug, Clone)]
pub struct Search {
    bounds: Bounds,
    held: Option<f64>,
    broken: Option<f64>,
    next: f64,
    /// A load being confirmed, and how many confirmations ran.
    confirming: Option<f64>,
    confirmations: u32,
    done: Option<Option<f64>>,
    pub tried: Vec<Tried>,
}

impl Search {
    pub fn new(bounds: Bounds) -> Search {
        let start = bounds.start.clamp(bounds.min, bounds.max);
        Search {
            bounds,
            held: None,
            broken: None,
            next: start,
            confirming: None,
            confirmations: 0,
            done: None,
            tried: Vec::new(),
        }
    }

    /// Short steps run so far.
    pub fn steps_run(&self) -> u32 {
        self.tried.iter().filter(|t| !t.confirm).count() as u32
    }

    pub fn next(&self) -> Next {
        if let Some(done) = self.done {
            return Next::Done(done);
        }
        match self.confirming {
            Some(load) => Next::Confirm(load),
            None => Next::Step(self.next),
        }
    }

    /// Records how the run `next` asked for went.
    pub fn record(&mut self, held: bool) {
        match self.next() {
            Next::Done(_) => {}
            Next::Confirm(load) => self.confirmed(load, held),
            Next::Step(load) => {
                self.tried.push(Tried { load, held, confirm: false });
                if held {
                    self.held = Some(self.held.map_or(load, |h| h.max(load)));
                } else {
                    self.broken = Some(self.broken.map_or(load, |b| b.min(load)));
                }
                self.advance();
            }
        }
    }

    /// After a step: the next load, or the best one to confirm, or the end.
    fn advance(&mut self) {
        let b = self.bounds;
        let next = match (self.held, self.broken) {
            (Some(h), None) if h >= b.max => None,
            (Some(h), None) => Some(self.whole(h * 2.0).min(b.max)),
            (None, Some(l)) if l <= b.min => return self.done = Some(None),
            (None, Some(l)) => Some(self.whole(l / 2.0).max(b.min)),
            (Some(h), Some(l)) if self.adjacent(h, l) => None,
            (Some(h), Some(l)) => Some(self.whole((h + l) / 2.0)),
            (None, None) => Some(self.next),
        };
        match next {
            Some(n) if self.steps_run() < b.steps && !self.was_tried(n) => self.next = n,
            _ => self.settle(),
        }
    }

    /// The bisection is done: the loads are adjacent, or within the resolution.
    fn adjacent(&self, held: f64, broken: f64) -> bool {
        if self.bounds.integer {
            broken - held <= 1.0
        } else {
            broken - held <= held * self.bounds.resolution
        }
    }

    /// A load as the parameter takes it: whole loads round down (never below 1).
    fn whole(&self, load: f64) -> f64 {
        if self.bounds.integer { load.floor().max(1.0) } else { load }
    }

    fn was_tried(&self, load: f64) -> bool {
        self.tried.iter().any(|t| !t.confirm && t.load == load)
    }

    /// The short steps are over: confirm the best load that held, or end with none.
    fn settle(&mut self) {
        match self.held {
            Some(h) => self.confirming = Some(h),
            None => self.done = Some(None),
        }
    }

    fn confirmed(&mut self, load: f64, held: bool) {
        self.tried.push(Tried { load, held, confirm: true });
        self.confirmations += 1;
        if held {
            self.done = Some(Some(load));
            return;
        }
        // The full run broke what the short one held: one step lower (a thread or a depth
        // less, a rate by the resolution), confirmed in turn, a bounded number of times.
        let b = self.bounds;
        let lower = if b.integer { load - 1.0 } else { load * (1.0 - b.resolution) };
        match lower {
            l if l >= b.min && self.confirmations < CONFIRMATIONS => self.confirming = Some(l),
            _ => self.done = Some(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(start: f64, max: f64, integer: bool, steps: u32) -> Bounds {
        Bounds {
            start,
            min: if integer { 1.0 } else { start / 1024.0 },
            max,
            integer,
            resolution: 0.05,
            steps,
        }
    }

    /// Runs a search on a storage model: `holds(load, confirm)`. Returns the end and the steps.
    fn run(b: Bounds, holds: impl Fn(f64, bool) -> bool) -> (Option<f64>, Vec<Tried>) {
        let mut s = Search::new(b);
        for _ in 0..100 {
            match s.next() {
                Next::Step(l) => s.record(holds(l, false)),
                Next::Confirm(l) => s.record(holds(l, true)),
                Next::Done(d) => return (d, s.tried),
            }
        }
        panic!("the search did not end: {:?}", s.tried);
    }

    #[test]
    fn on_a_model_with_a_known_knee_it_finds_the_knee_within_its_steps() {
        // Latency = depth × 2 ms (one device serving in turn), limit 17 ms: the knee is 8.
        for (start, knee) in [(1.0, 8.0), (1.0, 1.0), (32.0, 8.0), (4.0, 100.0), (1.0, 300.0)] {
            let (done, tried) = run(bounds(start, 1024.0, true, 20), |d, _| d <= knee);
            assert_eq!(done, Some(knee), "start {start}: {tried:?}");
            assert!(tried.iter().filter(|t| !t.confirm).count() <= 20, "{tried:?}");
            assert_eq!(tried.last(), Some(&Tried { load: knee, held: true, confirm: true }));
        }
    }

    #[test]
    fn a_rate_is_bisected_to_its_resolution() {
        // Holds up to 3,337 IOPS; the search ends within 5 % below it.
        let (done, tried) = run(bounds(100.0, 1e6, false, 20), |r, _| r <= 3337.0);
        let found = done.unwrap();
        assert!((3337.0 * 0.95..=3337.0).contains(&found), "{found}: {tried:?}");
    }

    #[test]
    fn a_load_that_always_holds_ends_at_the_maximum_and_one_that_never_does_at_none() {
        let (done, tried) = run(bounds(1.0, 64.0, true, 12), |_, _| true);
        assert_eq!(done, Some(64.0));
        let loads: Vec<f64> = tried.iter().map(|t| t.load).collect();
        assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 64.0], "doubling, then the confirmation");
        let (done, tried) = run(bounds(8.0, 64.0, true, 12), |_, _| false);
        assert_eq!(done, None);
        let loads: Vec<f64> = tried.iter().map(|t| t.load).collect();
        assert_eq!(loads, [8.0, 4.0, 2.0, 1.0], "halving down to the minimum, nothing to confirm");
    }

    #[test]
    fn the_step_budget_ends_the_search_at_the_best_load_that_held() {
        let (done, tried) = run(bounds(1.0, 1e6, true, 4), |d, _| d <= 1000.0);
        assert_eq!(done, Some(8.0));
        assert_eq!(tried.iter().filter(|t| !t.confirm).count(), 4);
    }

    #[test]
    fn a_confirmation_that_breaks_steps_down_once() {
        // Short steps hold up to 8, but a full run holds only up to 7 (the device tires).
        let (done, tried) = run(bounds(1.0, 64.0, true, 12), |d, full| d <= if full { 7.0 } else { 8.0 });
        assert_eq!(done, Some(7.0));
        let confirms: Vec<(f64, bool)> =
            tried.iter().filter(|t| t.confirm).map(|t| (t.load, t.held)).collect();
        assert_eq!(confirms, [(8.0, false), (7.0, true)]);
        // A rate steps down by the resolution.
        let (done, _) = run(bounds(100.0, 400.0, false, 12), |r, full| !full || r < 400.0);
        assert!((done.unwrap() - 380.0).abs() < 1e-9, "{done:?}");
        // Bounded: when the step down breaks too, the search ends with none.
        let (done, tried) = run(bounds(1.0, 64.0, true, 12), |d, full| !full && d <= 8.0);
        assert_eq!(done, None);
        assert_eq!(tried.iter().filter(|t| t.confirm).count() as u32, CONFIRMATIONS);
    }

    #[test]
    fn limits_read_as_written_and_judge_the_types_they_name() {
        let l: LatencyLimit = "order:p99<=50ms".parse().unwrap();
        assert_eq!(
            l,
            LatencyLimit {
                request: Some("order".into()),
                statistic: Statistic::Percentile(99.0),
                max_ns: 5e7
            }
        );
        assert_eq!(l.to_string(), "order:p99<=50ms");
        let l: LatencyLimit = " p99.9 <= 1.5s".parse().unwrap();
        assert_eq!((l.request, l.statistic, l.max_ns), (None, Statistic::Percentile(99.9), 1.5e9));
        assert_eq!("db_read:avg<=20ms".parse::<LatencyLimit>().unwrap().statistic, Statistic::Mean);
        assert_eq!("read:mean<=800us".parse::<LatencyLimit>().unwrap().to_string(), "read:mean<=800us");
        for bad in ["p99<50ms", "p98<=5ms", "p99<=50", "p99<=-1ms", "p99<=fast"] {
            let e = bad.parse::<LatencyLimit>().unwrap_err();
            assert!(e.contains("e.g. p99<=50ms"), "{bad}: {e}");
        }
        let p99 = Statistic::Percentile(99.0);
        let figures = [
            Figure { request: "read".into(), statistic: p99, ns: 4e6 },
            Figure { request: "write".into(), statistic: p99, ns: 9e6 },
        ];
        let all: LatencyLimit = "p99<=5ms".parse().unwrap();
        assert_eq!(all.judge(&figures, &["read", "write"]).worst_ns, Some(9e6), "every default type");
        assert!(!all.judge(&figures, &["read", "write"]).held);
        assert!("read:p99<=5ms".parse::<LatencyLimit>().unwrap().judge(&figures, &[]).held);
        // A limit on a type with no sample is not judged, and never holds.
        let unsampled = "db_read:p99<=5ms".parse::<LatencyLimit>().unwrap().judge(&figures, &[]);
        assert_eq!((unsampled.worst_ns, unsampled.held), (None, false));
        let unknown: LatencyLimit = "trim:p99<=5ms".parse().unwrap();
        let e = unknown.check("io", Some(&["read", "write"]), &[p99]).unwrap_err();
        assert!(e.contains("its types are read, write"), "{e}");
        let e = "p95<=5ms".parse::<LatencyLimit>().unwrap().check("io", None, &[p99]).unwrap_err();
        assert!(e.contains("does not report p95; it reports p99"), "{e}");
    }
}
