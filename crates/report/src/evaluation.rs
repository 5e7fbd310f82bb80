//! An evaluation (`evaluation.json`): every run of a plan, grouped by workload, configuration
//! and sweep point, with the repetitions' spread and the run reported for each group.
//!
//! An evaluation bundle is a directory:
//!
//! - `evaluation.json`: this model, rewritten (atomically) after every run, so an interrupted
//!   evaluation shows what finished and `storbench run --resume DIR` knows what to skip.
//! - `plan.toml`: the plan as given; `--resume` runs it again.
//! - `disclosure.json`: the system under test, with the devices under every configuration's
//!   target.
//! - `runs/<run id>/<stamp>-<name>/`: each run's own bundle (`summary.json`,
//!   `timeseries.csv`, `latency.hlog`, `disclosure.json`, and `output.log`: what the run said,
//!   which the evaluation's terminal leaves out), as `storbench io`, `oltp run` and `mailbox`
//!   write them.
//! - `report.html`, `report.md`: written by `storbench report`.
//!
//! Which run is reported: the median of the headline figure over the repetitions that
//! completed and passed their workload's own check (for an even count, the lower of the two
//! middle runs, so the claim is never the luckier one); its power figures are that run's own.

use crate::summary::Summary;
use serde::{Deserialize, Serialize};

/// Version of the `evaluation.json` layout; bump on any change that is not an addition.
pub const EVALUATION_VERSION: u32 = 1;

/// `evaluation.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub evaluation_version: u32,
    /// storbench's version that ran it.
    pub tool_version: String,
    pub name: String,
    /// False while running and after an interrupt; `--resume` finishes it.
    pub complete: bool,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub method: Method,
    pub configurations: Vec<Configuration>,
    /// Every run in plan order (workload, then configuration, then sweep point, then
    /// repetition), planned ones included (status `pending`).
    pub runs: Vec<RunRecord>,
    /// What the reader should know about how the figures were measured (no power source,
    /// runs that failed, ...).
    pub notes: Vec<String>,
    /// The plan's requirements, one line each (`oltp.opm >= 20000`, see
    /// `decision::requirement`); the report's first screen judges them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
}

/// How the evaluation was run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Method {
    pub repetitions: u32,
    /// Seconds of quiet before each run's idle window (dirty pages flushed, device idle).
    pub idle_settle_s: f64,
    /// Seconds over which idle power is averaged before each run (0: not measured).
    pub idle_power_s: f64,
    /// Passes of sequential 128 KiB writes over each target before its first run.
    pub precondition_passes: u32,
    /// `fixed`: each workload's own measured phase; `steady_state`: the SNIA rule below.
    pub window: String,
    /// With `window = steady_state`: the rule that ended each measured phase.
    pub steady_state: Option<SteadyStateRule>,
    /// The power source (`rapl`, `ipmi`, `file:...`), or None where the machine has none.
    pub power_source: Option<String>,
    pub seed: u64,
}

/// The SNIA PTS steady-state rule: the last `rounds` rounds' figures all lie within
/// `range_pct` of their mean, and a least-squares line through them changes by no more than
/// `slope_pct` of the mean over those rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateRule {
    pub round_s: f64,
    pub rounds: u32,
    pub range_pct: f64,
    pub slope_pct: f64,
    pub max_rounds: u32,
}

/// One storage configuration under test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Configuration {
    pub name: String,
    /// Where its I/O goes (directory, file or device).
    pub target: String,
    pub description: Option<String>,
    /// The workload values this configuration set for itself (`oltp: n_threads = 73`), so a
    /// comparison says where the configurations did not run the same options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_values: Vec<String>,
    /// The background streams its workloads ran beside (`io:rate=40MiB`), as the plan gave them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<String>,
    /// The state its storage was measured in: `normal`, or a label such as `rebuild` or
    /// `vol-rebuild` (002's "Normal", "Ctlr Rebuild", "Vol Rebuild"). None in files written
    /// before conditions existed: [`Configuration::condition`] reads it as `normal`.
    #[serde(default)]
    pub condition: Option<String>,
    /// The storage it measured: configurations with the same storage and different conditions
    /// are put side by side in the report. None in older files: its own name.
    #[serde(default)]
    pub storage: Option<String>,
    /// What it costs, in `currency`, for the decision's cost per unit of work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Its usable capacity as the plan gives it; else the decision reads the size of the
    /// device under its target from the disclosure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_bytes: Option<u64>,
    /// How many drives it is made of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<u32>,
    /// Its own power meter, where it had one (`none` where it had none): its runs' watts came
    /// from it, not from the method's `power_source`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_source: Option<String>,
}

/// The condition of a configuration that names none and has no background stream.
pub const NORMAL: &str = "normal";

impl Configuration {
    /// Its condition, `normal` where the file gives none.
    pub fn condition(&self) -> &str {
        self.condition.as_deref().unwrap_or(NORMAL)
    }

    /// The storage it measured, its own name where the file gives none.
    pub fn storage(&self) -> &str {
        self.storage.as_deref().unwrap_or(&self.name)
    }
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    #[default]
    Pending,
    Done,
    /// The workload's own check failed (exit 1: mailbox thresholds, data verification); its
    /// figures are still measured and kept.
    CheckFailed,
    Failed,
    Interrupted,
}

impl std::fmt::Display for RunStatus {
    /// The status as the terminal, the report and a search's steps say it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunStatus::Pending => "pending",
            RunStatus::Done => "done",
            RunStatus::CheckFailed => "check failed",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        })
    }
}

/// One run: one workload on one configuration at one sweep point, one repetition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Unique and stable across a resume: `<workload>.<configuration>[.<param>-<value>].r<N>`.
    pub id: String,
    /// The workload's label from the plan (`sqlio-8k-randread-qd4`, `oltp`, `mailbox`).
    pub workload: String,
    /// `io`, `oltp` or `mailbox`.
    pub kind: String,
    pub configuration: String,
    /// The swept parameter and its value at this point, if the workload has a sweep.
    pub sweep: Option<SweepPoint>,
    /// 1-based.
    pub repetition: u32,
    pub status: RunStatus,
    /// The run's bundle, relative to the evaluation directory.
    pub bundle: Option<String>,
    pub headline: Option<Headline>,
    /// Average power over the idle window before the run, watts.
    pub idle_watts: Option<f64>,
    /// Average power over the run's measured phase, watts.
    pub active_watts: Option<f64>,
    /// Headline per active watt (OPM/W, IOPS/W).
    pub per_watt: Option<f64>,
    /// Whether this run is its group's reported (median) run.
    pub reported: bool,
    pub error: Option<String>,
    /// The run's own warnings (steady state not reached, an engine fallback, ...), except the
    /// missing power source, which the evaluation's notes say once.
    #[serde(default)]
    pub warnings: Vec<String>,
    pub started_at: Option<String>,
    pub seconds: Option<f64>,
}

/// A point of a parameter sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The plan key swept (`iodepth`, `n_threads`, `threads`, `targets`).
    pub param: String,
    /// Its value as the plan gives it.
    pub value: serde_json::Value,
}

/// The figure a run is judged by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    /// `IOPS`, `OPM`, `transactional IOPS`, `backup MB/s`, `seconds per log`.
    pub metric: String,
    pub value: f64,
    pub higher_is_better: bool,
    /// When I/Os failed (a run told to continue on errors): the run's error rate, which goes
    /// beside the figure wherever it is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate_pct: Option<f64>,
}

impl Headline {
    /// A figure without an error rate beside it.
    pub fn new(metric: &str, value: f64, higher_is_better: bool) -> Headline {
        Headline { metric: metric.into(), value, higher_is_better, error_rate_pct: None }
    }

    /// What goes beside the figure: " (99.3 % of I/Os failed)" when any failed, else "".
    pub fn errors_note(&self) -> String {
        self.error_rate_pct.map(|r| format!(" ({} of I/Os failed)", crate::rate_text(r))).unwrap_or_default()
    }
}

/// The figure a run is judged by, from its summary (its workload's own: IOPS for io and
/// integrity, orders per minute for oltp, and for mailbox its test's figure), with the run's
/// error rate when any of its I/Os failed.
pub fn headline(s: &Summary) -> Option<Headline> {
    let error_rate_pct = s.io_errors().filter(|e| e.failed > 0).and_then(|e| e.rate_pct());
    Some(Headline { error_rate_pct, ..s.results.workload().headline()? })
}

/// The one status of the run whose summary is `s`, which every reader of a run goes by (the
/// command's exit, a search's steps, the evaluation's record, medians, requirements): failed
/// when its I/Os failed and it was not told to go on, else as its workload judges it
/// (interrupted when it did not complete, check failed when one of its own checks did not
/// hold, else done).
pub fn status(s: &Summary) -> RunStatus {
    if s.complete && s.failed_ios().is_some() {
        return RunStatus::Failed;
    }
    s.results.workload().status(s.complete)
}

/// Why the run `s` has the status it has, where it is not done: its failed I/Os, or each own
/// check that did not hold.
pub fn status_reason(s: &Summary) -> Option<String> {
    match status(s) {
        RunStatus::Failed => s.failed_ios().map(|e| e.to_string()),
        RunStatus::CheckFailed => s.results.workload().failure(),
        _ => None,
    }
}

/// Performance per watt (e.g. NOPM/W, IOPS/W); `None` unless both are finite and watts > 0.
///
/// The figure and the watts must be averaged over the same window (oltp-power-metrics.md §3.8).
pub fn perf_per_watt(figure: f64, watts: f64) -> Option<f64> {
    (figure.is_finite() && watts.is_finite() && watts > 0.0).then(|| figure / watts)
}

/// The repetitions of one workload on one configuration at one sweep point.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'a> {
    pub workload: &'a str,
    pub configuration: &'a str,
    pub sweep: Option<&'a SweepPoint>,
    /// In repetition order.
    pub runs: Vec<&'a RunRecord>,
}

/// The spread of a group's headline over the runs that have one.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// (max − min) / median, percent.
    pub range_pct: f64,
}

impl Evaluation {
    /// The runs grouped by workload, configuration and sweep point, in plan order.
    pub fn groups(&self) -> Vec<Group<'_>> {
        let mut groups: Vec<Group<'_>> = Vec::new();
        for run in &self.runs {
            let same = |g: &Group<'_>| {
                g.workload == run.workload
                    && g.configuration == run.configuration
                    && g.sweep == run.sweep.as_ref()
            };
            match groups.iter_mut().find(|g| same(g)) {
                Some(g) => g.runs.push(run),
                None => groups.push(Group {
                    workload: &run.workload,
                    configuration: &run.configuration,
                    sweep: run.sweep.as_ref(),
                    runs: vec![run],
                }),
            }
        }
        groups
    }

    /// Marks each group's reported run (see the module doc) and clears the mark elsewhere.
    pub fn mark_reported(&mut self) {
        let chosen: Vec<String> =
            self.groups().iter().filter_map(|g| g.reported().map(|r| r.id.clone())).collect();
        for run in &mut self.runs {
            run.reported = chosen.contains(&run.id);
        }
    }
}

impl Group<'_> {
    /// Runs with a headline figure that counts: done. A run that failed its own check
    /// (Jetstress's thresholds, data verification, damage found) is measured but, as in
    /// Jetstress, not a result: never the median, never compared.
    fn measured(&self) -> Vec<&RunRecord> {
        self.runs.iter().copied().filter(|r| r.status == RunStatus::Done && r.headline.is_some()).collect()
    }

    /// The median run by headline; for an even count the less favourable middle one.
    pub fn reported(&self) -> Option<&RunRecord> {
        let mut runs = self.measured();
        let better = runs.first()?.headline.as_ref()?.higher_is_better;
        runs.sort_by(|a, b| {
            let (x, y) = (value(a), value(b));
            if better { x.total_cmp(&y) } else { y.total_cmp(&x) }
        });
        Some(runs[(runs.len() - 1) / 2])
    }

    /// The run that stands for the group where one is shown (charts, a workload's table): its
    /// reported run, else, where every measured run failed its check, the first of those.
    pub fn shown(&self) -> Option<&RunRecord> {
        self.reported().or_else(|| self.runs.iter().copied().find(|r| r.status == RunStatus::CheckFailed))
    }

    /// Beside the group's figures: its reported run's error rate, when any of its I/Os failed.
    pub fn errors_note(&self) -> String {
        self.reported().and_then(|r| r.headline.as_ref()).map(Headline::errors_note).unwrap_or_default()
    }

    pub fn spread(&self) -> Option<Spread> {
        let values: Vec<f64> = self.measured().iter().map(|r| value(r)).collect();
        let median = value(self.reported()?);
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range_pct = if median != 0.0 { 100.0 * (max - min) / median.abs() } else { 0.0 };
        Some(Spread { n: values.len(), median, min, max, range_pct })
    }
}

fn value(r: &RunRecord) -> f64 {
    r.headline.as_ref().map_or(f64::NAN, |h| h.value)
}

/// How configuration A's median compares with B's on the same workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// 100 × (A − B) / B.
    pub pct: f64,
    /// Whether A is better (by the metric's direction).
    pub a_better: bool,
    /// The repetitions' ranges overlap: the difference lies within the run-to-run spread and
    /// should not be claimed.
    pub within_spread: bool,
    /// Fewer than [`CLAIMED_FROM`] runs stand behind a side: ranges that do not overlap may
    /// still be chance, so the difference is said but not claimed.
    pub few: bool,
}

/// Runs each side needs before a difference outside the spread is claimed: ranges of one or
/// two runs fail to overlap by chance too often (1 in 3 for two runs of one distribution).
pub const CLAIMED_FROM: usize = 3;

impl Difference {
    /// Whether the difference is real as far as the runs can tell: outside the spread, with
    /// enough runs on each side.
    pub fn claimed(&self) -> bool {
        !self.within_spread && !self.few
    }
}

pub fn difference(a: &Spread, b: &Spread, higher_is_better: bool) -> Option<Difference> {
    if b.median == 0.0 {
        return None;
    }
    let pct = 100.0 * (a.median - b.median) / b.median.abs();
    let a_better = if higher_is_better { a.median > b.median } else { a.median < b.median };
    let within_spread = a.min <= b.max && b.min <= a.max;
    let few = a.n < CLAIMED_FROM || b.n < CLAIMED_FROM;
    Some(Difference { pct, a_better, within_spread, few })
}

/// The workload labels in plan order.
pub(crate) fn workloads(e: &Evaluation) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for r in &e.runs {
        if !seen.contains(&r.workload.as_str()) {
            seen.push(&r.workload);
        }
    }
    seen
}

/// " at iodepth = 4" for a sweep point, "" otherwise.
pub(crate) fn at(sweep: Option<&SweepPoint>) -> String {
    sweep.map(|p| format!(" at {} = {}", p.param, sweep_value(p))).unwrap_or_default()
}

pub(crate) fn sweep_value(p: &SweepPoint) -> String {
    match &p.value {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// One workload at one sweep point, with its configurations' groups in plan order.
pub(crate) struct Point<'a> {
    pub workload: &'a str,
    pub sweep: Option<&'a SweepPoint>,
    pub groups: Vec<Group<'a>>,
}

pub(crate) fn points(e: &Evaluation) -> Vec<Point<'_>> {
    let mut points: Vec<Point<'_>> = Vec::new();
    for g in e.groups() {
        match points.iter_mut().find(|p| p.workload == g.workload && p.sweep == g.sweep) {
            Some(p) => p.groups.push(g),
            None => points.push(Point { workload: g.workload, sweep: g.sweep, groups: vec![g] }),
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, config: &str, rep: u32, v: Option<f64>, status: RunStatus) -> RunRecord {
        RunRecord {
            id: id.into(),
            workload: "oltp".into(),
            kind: "oltp".into(),
            configuration: config.into(),
            repetition: rep,
            status,
            headline: v.map(|value| Headline {
                metric: "OPM".into(),
                value,
                higher_is_better: true,
                error_rate_pct: None,
            }),
            ..RunRecord::default()
        }
    }

    #[test]
    fn the_median_run_is_reported_and_failed_runs_do_not_count() {
        let mut e = Evaluation {
            runs: vec![
                run("a1", "a", 1, Some(300.0), RunStatus::Done),
                run("a2", "a", 2, Some(100.0), RunStatus::Done),
                run("a3", "a", 3, Some(200.0), RunStatus::Done),
                run("b1", "b", 1, Some(900.0), RunStatus::Failed),
                run("b2", "b", 2, Some(50.0), RunStatus::Done),
                run("b3", "b", 3, Some(70.0), RunStatus::Done),
            ],
            ..Evaluation::default()
        };
        e.mark_reported();
        let reported: Vec<&str> = e.runs.iter().filter(|r| r.reported).map(|r| r.id.as_str()).collect();
        // b: two measured runs, the lower middle one is reported.
        assert_eq!(reported, ["a3", "b2"]);
        let groups = e.groups();
        assert_eq!(groups.len(), 2);
        let s = groups[0].spread().unwrap();
        assert_eq!((s.n, s.median, s.min, s.max, s.range_pct), (3, 200.0, 100.0, 300.0, 100.0));
    }

    #[test]
    fn a_run_that_failed_its_own_check_is_never_the_median_nor_in_the_spread() {
        // As in Jetstress: a run over its latency thresholds is not a result, however fast.
        let mut e = Evaluation {
            runs: vec![
                run("a1", "a", 1, Some(100.0), RunStatus::Done),
                run("a2", "a", 2, Some(5000.0), RunStatus::CheckFailed),
                run("a3", "a", 3, Some(120.0), RunStatus::Done),
                run("b1", "b", 1, Some(900.0), RunStatus::CheckFailed),
            ],
            ..Evaluation::default()
        };
        e.mark_reported();
        let groups = e.groups();
        let s = groups[0].spread().unwrap();
        assert_eq!((s.n, s.median, s.max), (2, 100.0, 120.0));
        // A group of failed runs has no result, but its first failed run is shown.
        assert_eq!((groups[1].reported(), groups[1].spread()), (None, None));
        assert_eq!(groups[1].shown().unwrap().id, "b1");
    }

    #[test]
    fn lower_is_better_metrics_report_the_median_the_other_way() {
        let mut runs: Vec<RunRecord> = [4.0, 1.0]
            .iter()
            .enumerate()
            .map(|(i, v)| run(&format!("r{i}"), "a", 1, Some(*v), RunStatus::Done))
            .collect();
        for r in &mut runs {
            r.headline.as_mut().unwrap().higher_is_better = false;
        }
        let e = Evaluation { runs, ..Evaluation::default() };
        // Of two, the less favourable (slower) one is reported.
        assert_eq!(e.groups()[0].reported().unwrap().id, "r0");
    }

    #[test]
    fn a_configuration_from_before_conditions_reads_as_normal_on_its_own_storage() {
        let old: Configuration = serde_json::from_str(r#"{"name": "ssd", "target": "/mnt/ssd"}"#).unwrap();
        assert_eq!((old.condition(), old.storage()), ("normal", "ssd"));
        let new: Configuration = serde_json::from_str(
            r#"{"name": "ssd-rb", "target": "/mnt/ssd", "condition": "rebuild", "storage": "ssd"}"#,
        )
        .unwrap();
        assert_eq!((new.condition(), new.storage()), ("rebuild", "ssd"));
    }

    #[test]
    fn perf_per_watt_needs_positive_watts() {
        // Spec §3.8's example: +35% NOPM at 48% of the power is +184% NOPM/W.
        let b = perf_per_watt(100_000.0, 500.0).unwrap();
        let a = perf_per_watt(135_000.0, 500.0 * 1.35 / 2.84).unwrap();
        assert!((a / b - 2.84).abs() < 1e-9);
        assert_eq!(perf_per_watt(1000.0, 0.0), None);
        assert_eq!(perf_per_watt(f64::NAN, 200.0), None);
    }

    #[test]
    fn a_difference_inside_the_spread_is_flagged() {
        let s = |median, min, max| Spread { n: 3, median, min, max, range_pct: 0.0 };
        let d = difference(&s(135.0, 130.0, 140.0), &s(100.0, 95.0, 104.0), true).unwrap();
        assert!((d.pct - 35.0).abs() < 1e-9 && d.a_better && !d.within_spread);
        let d = difference(&s(102.0, 97.0, 106.0), &s(100.0, 95.0, 104.0), true).unwrap();
        assert!(d.within_spread);
        let d = difference(&s(2.0, 2.0, 2.0), &s(4.0, 4.0, 4.0), false).unwrap();
        assert!(d.a_better && (d.pct + 50.0).abs() < 1e-9);
    }
}
