//! An io job's summary as it starts: what was asked and where (the finished figures are built
//! in the library, `storbench_bench::run::record::summary::io`).

use storbench_bench::workload::io::{Distribution, IoSpec, Pattern};
use storbench_report::{DeviceInfo, IoResults, Results, Summary, TargetInfo};

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
        ..crate::measure::started_summary(
            super::entry::KIND.name,
            started_at,
            Results::Io(IoResults::default()),
        )
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
            let pct = |h: u16| storbench_bench::workload::io::Share::of_fraction(f64::from(h) / 10_000.0);
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
        storbench_bench::workload::io::End::Time(d) => (Some(d.as_secs_f64()), None),
        storbench_bench::workload::io::End::Bytes(b) => (None, Some(b)),
        storbench_bench::workload::io::End::Trace => (None, None),
    };
    serde_json::json!({
        "pattern": rw,
        "random_distribution": distribution,
        "rwmix_read": spec.reads.json(),
        "percentage_random": spec.random.json(),
        "fdatasync": spec.writes_per_flush.map(|n| f64::from(n) / 100.0),
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
