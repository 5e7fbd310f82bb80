//! Puts a finished io job into the report model.

use storbench_bench::metrics::DirectionCounters;
use storbench_bench::workload::io::{Distribution, IoOutcome, IoSpec, Pattern};
use storbench_report::{
    CpuUsage, DeviceInfo, DirectionResult, ErrorCounts, IoResults, Phases, Results, Summary, TargetInfo,
    error_rate_pct,
};

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
        ..crate::measure::started_summary("io", started_at, Results::Io(IoResults::default()))
    }
}

/// The summary of a finished (or interrupted) run.
pub fn finished(mut s: Summary, out: &IoOutcome, ended_at: &str) -> Summary {
    let secs = out.measured_s;
    let t = &out.totals;
    s.complete = out.complete;
    s.ended_at = Some(ended_at.into());
    s.engine = out.detail.engine.name().into();
    s.phases = Phases { ramp_s: out.warmup_s, measured_s: secs };
    s.results = Results::Io(IoResults {
        read: direction(&t.read, secs),
        write: direction(&t.write, secs),
        errors: ErrorCounts {
            total: t.errors.total(),
            by_kind: t.errors.by_kind.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        },
        error_rate_pct: error_rate_pct(t.errors.total(), t.ios()),
        errors_outside_window: out.detail.errors_outside_window,
        verify: out.detail.verify.clone(),
    });
    let cpu_s = out.cpu.total().as_secs_f64();
    let ios = t.ios();
    s.cpu = CpuUsage {
        user_s: out.cpu.user.as_secs_f64(),
        sys_s: out.cpu.sys.as_secs_f64(),
        ns_per_io: (ios > 0).then(|| cpu_s * 1e9 / ios as f64),
    };
    s.warnings = out.warnings.clone();
    s.steady_state = out.steady.clone();
    s
}

fn direction(c: &DirectionCounters, secs: f64) -> DirectionResult {
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    DirectionResult {
        ios: c.ios,
        bytes: c.bytes,
        iops: per_sec(c.ios),
        bytes_per_sec: per_sec(c.bytes),
        lat_ns: c.latency.summary(),
        service_lat_ns: c.service.summary(),
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
    };
    serde_json::json!({
        "pattern": rw,
        "random_distribution": distribution,
        "rwmix_read": spec.read_pct,
        "bs": bs,
        "iodepth": spec.iodepth,
        "workers": spec.workers,
        "ramp_s": spec.ramp.as_secs_f64(),
        "runtime_s": runtime_s,
        "io_size": io_size,
        "size": spec.region.len,
        "rate_iops": spec.rate_iops,
        "seed": spec.seed,
        "verify": spec.verify,
        "engine": spec.engine.name(),
        "steady_state_s": spec.steady_state.map(|r| r.as_secs_f64()),
    })
}
