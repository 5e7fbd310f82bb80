//! An io job into its bundle: where it ran and its summary as it starts (what was asked), then
//! the job run with each second recorded and its finished summary, for [`crate::run::measure`].
//! A trace replay (`replay-trace`) is an io job with its own facts added.

use super::{Distribution, IoInterval, IoOutcome, IoSpec, Pattern, entry};
use crate::run::StopFlag;
use crate::run::measure::{Finished, Recording, started_summary};
use crate::run::record::{End, Recordable};
use crate::workload::io::summary::IoFacts;
use storbench_report::{DeviceInfo, IoResults, ONLY_COMPLETED, Results, Summary, TargetInfo};

/// Where the job ran, as the summary records it.
pub struct IoPlace {
    pub path: String,
    /// `file`, `device`, or `none` for the null engine.
    pub kind: &'static str,
    pub size: u64,
    pub direct: bool,
    pub device: Option<DeviceInfo>,
}

/// A summary with no results yet, written when the run starts.
pub fn started(spec: &IoSpec, place: &IoPlace, continue_on_error: bool, started_at: &str) -> Summary {
    let mut parameters = parameters(spec);
    parameters["continue_on_error"] = continue_on_error.into();
    Summary {
        name: spec.name.clone(),
        seed: spec.seed,
        parameters,
        target: TargetInfo {
            path: place.path.clone(),
            kind: place.kind.into(),
            size_bytes: place.size,
            direct: place.direct,
            device: place.device.clone(),
        },
        engine: spec.engine.name().into(),
        ..started_summary(entry::WORKLOAD.name, started_at, Results::Io(IoResults::default()))
    }
}

/// The job's parameters, with the plan-file keys.
fn parameters(spec: &IoSpec) -> serde_json::Value {
    let (rw, distribution) = match spec.pattern {
        Pattern::Sequential => ("sequential", None),
        Pattern::Random(d) => ("random", Some(d)),
    };
    let distribution = distribution.map(|d| match d {
        Distribution::Uniform => "uniform".to_string(),
        Distribution::Zipf { theta } => format!("zipf:{theta}"),
        Distribution::HotSpot { io_pct, space_pct } => format!("hotspot:{io_pct}/{space_pct}"),
        Distribution::Zoned(z) => {
            let pct = |h: u16| super::Share::of_fraction(f64::from(h) / 10_000.0);
            let zones: Vec<String> =
                z.zones().iter().map(|&(io, space)| format!("{}/{}", pct(io), pct(space))).collect();
            format!("zoned:{}", zones.join(":"))
        }
    });
    let bs: Vec<serde_json::Value> = spec
        .block_sizes
        .entries()
        .iter()
        .map(|(b, w)| serde_json::json!({"bytes": b, "weight": w}))
        .collect();
    let (runtime_s, io_size) = match spec.end {
        super::End::Time(d) => (Some(d.as_secs_f64()), None),
        super::End::Bytes(b) => (None, Some(b)),
        super::End::BytesWithin(b, d) => (Some(d.as_secs_f64()), Some(b)),
        super::End::Trace => (None, None),
    };
    serde_json::json!({
        "pattern": rw,
        "random_distribution": distribution,
        "rwmix_read": spec.reads.json(),
        "percentage_random": spec.random.json(),
        "fdatasync": spec.writes_per_flush.filter(|_| !spec.fsync).map(|n| f64::from(n) / 100.0),
        "fsync": spec.writes_per_flush.filter(|_| spec.fsync).map(|n| f64::from(n) / 100.0),
        "bs": bs,
        "iodepth": spec.iodepth,
        "workers": spec.workers,
        "ramp_s": spec.ramp.as_secs_f64(),
        "runtime_s": runtime_s,
        "io_size": io_size,
        "size": spec.region.len,
        "offset": spec.region.start,
        "rate_iops": spec.rate_iops,
        "rate_profile": spec.rate_profile.as_deref(),
        "seed": spec.seed,
        "verify": spec.verify,
        "engine": spec.engine.name(),
        "steady_state_s": spec.steady_state.map(|r| r.as_secs_f64()),
    })
}

/// Runs the job, each second into the bundle; its finished summary. `progress` sees each
/// second; `more` adds what the caller knows of the run once it ended (a trace replay's
/// check) to what is recorded.
pub fn record(
    rec: &mut Recording,
    first: Summary,
    spec: &IoSpec,
    file: Option<&std::fs::File>,
    stop: &StopFlag,
    progress: &mut dyn FnMut(&IoInterval),
    more: impl FnOnce(&Recording, &IoOutcome, &mut IoFacts),
) -> crate::Result<Finished> {
    // The record's stream is the workload's (io, replay-trace): its summary is rebuilt from it.
    let stream = first.workload.clone();
    let outcome = super::run(spec, file, &mut rec.sampler, stop, &mut |rep| {
        progress(rep);
        rec.bundle.recorded(rep, &stream, &rep.interval.data.tally());
    })?;
    let hists = [("read", &outcome.totals.read.latency), ("write", &outcome.totals.write.latency)];
    rec.bundle.totals(outcome.counted_from_s(), outcome.measured_s, &hists);
    let ended_at = jiff::Timestamp::now().to_string();
    let mut facts = IoFacts::of(&outcome);
    more(rec, &outcome, &mut facts);
    let end = End::of(&ended_at, &outcome, &facts);
    let outcome = outcome.with(facts);
    let summary = crate::workload::io::summary::summary(first, &outcome, &ended_at);
    // A run kept as a measurement despite failed I/Os says so to the reader of its report
    // (the terminal has it under the table; a failed run says it in its error instead).
    let kept_errors = summary
        .io_errors()
        .filter(|e| e.any() && summary.continues_on_error())
        .map(|e| format!("{e}; {ONLY_COMPLETED}"));
    let unsaid = kept_errors.into_iter().collect();
    let failure = outcome.failures.first().map(|why| format!("the run failed: {why}"));
    Ok(Finished { summary, end: Some(end), unsaid, failure })
}
