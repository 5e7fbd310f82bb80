//! The commit path (`wal`): what a database's write-ahead log asks of storage, as
//! `pg_test_fsync` and fio's `--fdatasync=1` measure it. Small sequential appends to a log
//! file, each made durable before the commit returns, by each sync method the platform offers
//! (`method`), at each write size and number of writers committing at once (`spec`: each
//! combination a point). Every point runs on the run driver (`point`, `writer`): commit latency
//! from an HDR histogram, commits a second, storbench's CPU per commit, a warm-up not counted.
//! The run then names the points too fast for a durable write on the device and the fastest
//! method that is not (`judge`).
//!
//! Its one entry point is [`run`]: a spec in, the points' figures out; it prints nothing.

pub mod bundle;
pub mod entry;
pub mod judge;
pub mod method;
pub mod options;
pub mod point;
pub mod spec;
pub mod summary;
pub mod writer;

pub use judge::{Device, Fastest};
pub use method::SyncMethod;
pub use options::WalOptions;
pub use spec::{Layout, Point, WalSpec};
pub use writer::WalRecorder;

use crate::metrics::LatencyHistogram;
use crate::run::{Beside, Closed, StopFlag};

/// What one point measured.
#[derive(Debug, Clone)]
pub struct PointResult {
    pub point: Point,
    /// Why the platform does not offer this point (O_DIRECT refused); its figures are then
    /// empty.
    pub not_offered: Option<String>,
    /// Commits over the measured time (the warm-up's are not counted).
    pub commits: u64,
    pub measured_s: f64,
    pub commits_per_sec: f64,
    pub bytes_per_sec: f64,
    /// Commit latency, write and sync together, ns.
    pub latency: LatencyHistogram,
    /// Commits that failed, warm-up included, and the first one's error.
    pub errors: u64,
    pub first_error: Option<String>,
    /// storbench's CPU time per commit over the measured time, ns.
    pub cpu_ns_per_commit: Option<f64>,
    /// It ran to its end: not stopped, no writer failed as a whole.
    pub complete: bool,
    /// Why it ended early, where it did (every commit failing, for one).
    pub failures: Vec<String>,
    /// Why its figures are implausible for a durable write on the device, where they are.
    pub implausible: Option<String>,
}

impl PointResult {
    fn not_offered(point: Point, why: String) -> PointResult {
        PointResult {
            point,
            not_offered: Some(why),
            commits: 0,
            measured_s: 0.0,
            commits_per_sec: 0.0,
            bytes_per_sec: 0.0,
            latency: LatencyHistogram::new(),
            errors: 0,
            first_error: None,
            cpu_ns_per_commit: None,
            complete: true,
            failures: Vec::new(),
            implausible: None,
        }
    }

    fn ran(point: Point, out: crate::run::Outcome<WalRecorder>, device: &Device) -> PointResult {
        let t = &out.totals;
        let secs = out.measured_s;
        let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        PointResult {
            point,
            not_offered: None,
            commits: t.commits,
            measured_s: secs,
            commits_per_sec: rate(t.commits),
            bytes_per_sec: rate(t.bytes),
            implausible: judge::implausible(point.method, &t.latency, device),
            latency: t.latency.clone(),
            errors: out.all.errors,
            first_error: out.all.first_error.clone(),
            cpu_ns_per_commit: (t.commits > 0)
                .then(|| out.cpu.total().as_secs_f64() * 1e9 / t.commits as f64),
            complete: out.complete,
            failures: out.failures,
        }
    }

    /// It ran to its end, every commit succeeded, and its figures are plausible.
    pub fn trusted(&self) -> bool {
        self.not_offered.is_none()
            && self.complete
            && self.errors == 0
            && self.commits > 0
            && self.implausible.is_none()
    }
}

/// The outcome of a point that did not run (its method not offered): nothing measured, and
/// complete, since nothing was cut short.
pub fn empty_outcome() -> crate::run::Outcome<WalRecorder> {
    crate::run::Outcome {
        totals: WalRecorder::default(),
        all: WalRecorder::default(),
        warmup_s: 0.0,
        measured_s: 0.0,
        cpu: crate::run::OwnCpuTime::default(),
        complete: true,
        failures: Vec::new(),
        warnings: Vec::new(),
        steady: None,
        detail: (),
    }
}

/// What a `wal` run measured.
#[derive(Debug, Clone)]
pub struct WalOutcome {
    /// Every point measured (or not offered), in the spec's order; fewer when stopped.
    pub points: Vec<PointResult>,
    /// Per layout, size and writer count: the fastest method among the trusted points.
    pub fastest: Vec<Fastest>,
    pub device: Device,
    /// Every point ran to its end.
    pub complete: bool,
}

/// Measures every point of `spec` in turn, each in a new log file under `spec.dir` that is
/// removed after it; `on_interval` sees each closed second of each point. A stop request ends
/// the run after the point it interrupts, which is kept as measured so far.
pub fn run(
    spec: &WalSpec,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&Point, &Closed<'_, WalRecorder>),
) -> Result<WalOutcome, String> {
    spec.validate()?;
    let device = Device::of(&spec.dir);
    let mut points = Vec::new();
    for (n, point) in spec.points().into_iter().enumerate() {
        if stop.is_stopped() {
            break;
        }
        let measured = point::measure(spec, &point, n, sampler, stop, &mut |c| on_interval(&point, c))?;
        points.push(match measured {
            point::Measured::Ran(out) => PointResult::ran(point, *out, &device),
            point::Measured::NotOffered(why) => PointResult::not_offered(point, why),
        });
    }
    let complete = points.len() == spec.points().len() && points.iter().all(|p| p.complete);
    let candidates: Vec<judge::Candidate> = points
        .iter()
        .filter(|p| p.not_offered.is_none())
        .map(|p| judge::Candidate {
            point: &p.point,
            commits_per_sec: p.commits_per_sec,
            trusted: p.trusted(),
        })
        .collect();
    let fastest = judge::fastest_safe(&candidates);
    Ok(WalOutcome { points, fastest, device, complete })
}

#[cfg(test)]
mod tests;
