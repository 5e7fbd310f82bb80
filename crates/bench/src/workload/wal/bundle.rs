//! A `wal` point into its bundle: its name, its summary as it starts (what was asked and
//! where), then the point measured with each second recorded and its finished summary, for
//! [`crate::run::measure`].

use super::point::{self, Measured};
use super::spec::{Point, WalSpec};
use super::summary::{self as wal_summary, WalFacts};
use super::{Device, empty_outcome, entry};
use crate::run::measure::{Finished, Recording, started_summary};
use crate::run::record::{End, Recordable};
use crate::run::{Outcome, StopFlag};
use storbench_report::{DeviceInfo, Results, Summary, TargetInfo};

/// `wal-fdatasync-8192b-x1`.
pub fn name_of(p: &Point) -> String {
    format!("{}-{}-{}b-x{}", entry::WORKLOAD.name, p.method, p.size, p.writers)
}

/// The point's summary as it starts: what was asked and where.
pub fn started(spec: &WalSpec, p: &Point, device: Option<DeviceInfo>, at: &str) -> Summary {
    Summary {
        name: name_of(p),
        seed: spec.seed,
        parameters: serde_json::json!({
            "sync_method": p.method.name(),
            "layout": p.layout.name(),
            "bs": p.size,
            "writers": p.writers,
            "file_size": spec.file_bytes,
            "ramp_s": spec.warmup.as_secs_f64(),
            "runtime_s": spec.seconds.as_secs_f64(),
            "seed": spec.seed,
        }),
        target: TargetInfo {
            path: spec.dir.display().to_string(),
            kind: "file".into(),
            size_bytes: spec.file_bytes,
            direct: p.method.direct(),
            device,
        },
        engine: "psync".into(),
        ..started_summary(entry::WORKLOAD.name, at, Results::Wal(Default::default()))
    }
}

/// Measures point `p` (the `n`th of the run), each second into the bundle; its finished
/// summary. `progress` sees each second's commits a second.
pub fn record(
    rec: &mut Recording,
    first: Summary,
    spec: &WalSpec,
    (p, n): (&Point, usize),
    stop: &StopFlag,
    progress: &mut dyn FnMut(f64),
) -> Result<Finished, String> {
    let stream = first.workload.clone();
    let device = Device::of(&spec.dir);
    let measured = point::measure(spec, p, n, &mut rec.sampler, stop, &mut |c| {
        progress(c.interval.data.commits as f64 / (c.interval.end_s - c.interval.start_s).max(1e-9));
        rec.bundle.recorded(c, &stream, &c.interval.data.tally());
    });
    let (out, not_offered) = match measured? {
        Measured::Ran(out) => (*out, None),
        Measured::NotOffered(why) => (empty_outcome(), Some(why)),
    };
    rec.bundle.totals(out.counted_from_s(), out.measured_s, &[("commit", &out.totals.latency)]);
    let ended_at = jiff::Timestamp::now().to_string();
    let facts = WalFacts { not_offered, ..WalFacts::of(*p, &out, &device) };
    let end = End::of(&ended_at, &out, &facts);
    let outcome: Outcome<_, WalFacts> = out.with(facts);
    let summary = wal_summary::summary(first, &outcome, &ended_at);
    let failure = outcome.failures.first().map(|why| format!("the run failed: {why}"));
    Ok(Finished { summary, end: Some(end), unsaid: Vec::new(), failure })
}
