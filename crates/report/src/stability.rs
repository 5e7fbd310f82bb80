//! Results whose runs disagree widely: a group whose repetitions range over more than
//! [`UNSTABLE_RANGE_PCT`] of their median is not a figure to decide on. For each, the likely
//! cause as the runs measured it (storbench's own CPU near the machine's limit, other load on
//! the host, steady state not reached) and what to do, or that none was measured.

use crate::columns::system::{CPU_SYSTEM_PCT, CPU_USER_PCT};
use crate::evaluation::{Group, RunRecord};
use crate::format::{num, pct};
use crate::input::ReportInput;

/// A range of the runs above this share of their median makes a result unstable. Runs of one
/// configuration on quiet storage differ by a few percent; a range of a fifth is noise the
/// decision cannot stand on.
pub const UNSTABLE_RANGE_PCT: f64 = 20.0;

/// storbench's own CPU, as a share of the machine's, from which it may set the pace itself.
const OWN_CPU_BUSY_PCT: f64 = 70.0;

/// CPU used by others than storbench, as a share of the machine's, that competes with the run.
const OTHER_LOAD_PCT: f64 = 20.0;

/// One unstable result.
#[derive(Debug, Clone, PartialEq)]
pub struct Unstable {
    pub configuration: String,
    /// `randread`, `oltp at n_threads = 8`.
    pub place: String,
    /// The sentence: the range, the likely causes, what to do.
    pub text: String,
}

/// Every group of `input` with at least two counted runs whose range is above the limit.
pub fn unstable(input: &ReportInput) -> Vec<Unstable> {
    let e = &input.evaluation;
    let mut out = Vec::new();
    for g in e.groups() {
        let Some(s) = g.spread() else { continue };
        if s.n < 2 || s.range_pct <= UNSTABLE_RANGE_PCT {
            continue;
        }
        let place = format!("{}{}", g.workload, crate::evaluation::at(g.sweep));
        let metric = g.reported().and_then(|r| r.headline.as_ref()).map_or("", |h| h.metric.as_str());
        let causes = causes(input, &g);
        let why = if causes.is_empty() {
            "no cause was measured (storbench's CPU, other load and steady state were in order): \
             repeat with more or longer runs, or look for what else the storage serves"
                .to_string()
        } else {
            format!("likely {}", causes.join("; "))
        };
        let text = format!(
            "{} on {place} is unstable: its {} runs range {}–{} {metric}, {} of their median, so its \
             median is not a figure to decide on; {why}.",
            g.configuration,
            s.n,
            num(s.min),
            num(s.max),
            pct(s.range_pct)
        );
        out.push(Unstable { configuration: g.configuration.to_string(), place, text });
    }
    out
}

/// What the group's runs measured that makes runs disagree, each with what to do.
fn causes(input: &ReportInput, g: &Group<'_>) -> Vec<String> {
    let runs: Vec<&RunRecord> = g.runs.iter().copied().filter(|r| r.headline.is_some()).collect();
    let most = |f: &dyn Fn(&RunRecord) -> Option<f64>| runs.iter().filter_map(|r| f(r)).reduce(f64::max);
    let mut out = Vec::new();
    let own = most(&|r| own_cpu_pct(input, r));
    if let Some(own) = own.filter(|c| *c >= OWN_CPU_BUSY_PCT) {
        out.push(format!(
            "storbench itself used up to {} of the machine's CPU, so the load generator, not the \
             storage, may set the pace: give fewer threads or a lower rate, or run on a machine \
             with more cores",
            pct(own)
        ));
    }
    let other = most(&|r| Some(host_cpu_pct(input, r)? - own_cpu_pct(input, r)?));
    if let Some(other) = other.filter(|c| *c >= OTHER_LOAD_PCT) {
        out.push(format!(
            "other processes used up to {} of the machine's CPU during a run: run on a quiet host",
            pct(other)
        ));
    }
    let unsteady = runs.iter().filter(|r| steady(input, r) == Some(false)).count();
    if unsteady > 0 {
        out.push(format!(
            "{unsteady} of its runs did not reach steady state (a cache filling, a device still \
             settling): precondition the storage, or run longer with steady_state"
        ));
    }
    out
}

/// storbench's CPU over the measured phase as a share of the machine's, percent.
fn own_cpu_pct(input: &ReportInput, r: &RunRecord) -> Option<f64> {
    let s = &input.runs.get(&r.id)?.summary;
    let capacity = s.phases.measured_s * f64::from(s.host.cpus);
    (capacity > 0.0).then(|| 100.0 * (s.cpu.user_s + s.cpu.sys_s) / capacity)
}

/// The whole machine's CPU over the measured phase, percent, from the run's series.
fn host_cpu_pct(input: &ReportInput, r: &RunRecord) -> Option<f64> {
    let series = input.runs.get(&r.id)?.series.as_ref()?;
    Some(series.measured_mean(CPU_USER_PCT)? + series.measured_mean(CPU_SYSTEM_PCT)?)
}

/// Whether the run reached steady state, where it asked for it.
fn steady(input: &ReportInput, r: &RunRecord) -> Option<bool> {
    Some(input.runs.get(&r.id)?.summary.steady_state.as_ref()?.reached)
}
