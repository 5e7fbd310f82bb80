//! `storbench wal`: the commit path. Validates the options into the library's `WalSpec`, runs
//! each point (one sync method, write size, writer count and layout) into its own bundle, and
//! shows a line per point, the fastest method whose commits are plausible as durable, and
//! every point too fast to have been durable. Its flags are in `args`, its registry entry in
//! `entry`, what a search moves in `search`.

pub mod args;
pub mod entry;
mod search;

use crate::measure::{self, BundleDir, Finished, Measured, Ran, Recording, SetJob, Start};
use crate::output;
use anyhow::{Result, anyhow, bail};
use args::WalJob;
use std::path::Path;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::wal::{self, Point, WalSpec};
use storbench_report::{DatabaseInfo, Results, Summary};

/// The options as the library's spec: its points, every method where `all` is asked.
pub fn validate(a: &WalJob) -> Result<WalSpec> {
    a.options.spec().map_err(|e| anyhow!("{e}"))
}

pub fn run(args: &WalJob, stop: &StopFlag) -> Result<Ending> {
    let spec = validate(args)?;
    crate::preflight::results_root(args.out.output_dir.as_deref())?;
    let points = spec.points();
    let summaries = if let [only] = points.as_slice() {
        let dir = BundleDir::choose(None, &args.out, &wal::bundle::name_of(only))?;
        vec![measure_point(&spec, only, 0, &dir, &format!("[1/1] {only}"), args, stop)?.summary]
    } else {
        run_set(&spec, &points, args, stop)?
    };
    show(args, &summaries)?;
    let failed = summaries.iter().any(|s| matches!(Ending::of(s, stop), Ending::CheckFailed));
    Ok(if failed {
        Ending::CheckFailed
    } else if stop.is_stopped() {
        Ending::Interrupted
    } else {
        Ending::Ok
    })
}

/// One point into `given` (an evaluation's run): a plan names one sync method.
pub fn measure(args: &WalJob, given: Option<&Path>, stop: &StopFlag) -> Result<Ran> {
    let spec = validate(args)?;
    let [only] = spec.points()[..] else {
        bail!(
            "a wal workload in a plan measures one sync method: give sync_method, or sweep it with sweep = {{ sync_method = [...] }}"
        )
    };
    let dir = BundleDir::choose(given, &args.out, &wal::bundle::name_of(&only))?;
    let m = measure_point(&spec, &only, 0, &dir, &format!("[1/1] {only}"), args, stop)?;
    Ok(Ran { ending: Ending::of(&m.summary, stop), measured: Some(m) })
}

/// Several points: a directory `<time>-wal` with a numbered bundle per point, a line each.
fn run_set(spec: &WalSpec, points: &[Point], args: &WalJob, stop: &StopFlag) -> Result<Vec<Summary>> {
    let jobs: Vec<(SetJob, (usize, &Point))> = points
        .iter()
        .enumerate()
        .map(|(n, p)| (SetJob { name: wal::bundle::name_of(p), title: p.to_string() }, (n, p)))
        .collect();
    measure::run_set(&args.out, entry::KIND.name, &jobs, false, stop, |&(n, p), dir, label| {
        measure_point(spec, p, n, &dir, label, args, stop)
    })
}

/// One point into its bundle at `dir`.
fn measure_point(
    spec: &WalSpec,
    p: &Point,
    n: usize,
    dir: &BundleDir,
    label: &str,
    args: &WalJob,
    stop: &StopFlag,
) -> Result<Measured> {
    let at = jiff::Timestamp::now();
    let device = storbench_bench::monitor::resolve_device(&spec.dir).ok().flatten();
    let start = Start {
        run: storbench_bench::run::measure::Start {
            at,
            summary: wal::bundle::started(spec, p, device.clone(), &at.to_string()),
            targets: vec![spec.dir.as_path()],
            database: DatabaseInfo::default(),
            device: device.as_ref().map(|d| d.name.as_str()),
        },
        table,
        background: &args.out.streams(),
        background_dir: Some(spec.dir.as_path()),
        background_wait: args.out.background_wait,
    };
    measure::measure(dir, start, stop, |rec, first| record_point(rec, first, spec, (p, n), label, stop))
}

/// Runs the point, each second into the bundle, its commits a second on the run's line.
fn record_point(
    rec: &mut Recording,
    first: Summary,
    spec: &WalSpec,
    point: (&Point, usize),
    label: &str,
    stop: &StopFlag,
) -> Result<Finished> {
    let bar = output::run_line(label);
    let progress = &mut |cps| bar.set_message(format!("{} commits/s", output::si(cps)));
    let finished = wal::bundle::record(rec, first, spec, point, stop, progress);
    bar.finish_and_clear();
    finished.map_err(|e| anyhow!("{e}"))
}

/// A point's result as the terminal shows it.
pub fn table(s: &Summary) -> String {
    let Results::Wal(r) = &s.results else { return String::new() };
    if let Some(why) = &r.not_offered {
        return format!("{}: not offered: {why}", r.point());
    }
    let l = r.commit_lat_ns.as_ref();
    let lat =
        |f: fn(&storbench_report::LatencyNs) -> u64| l.map_or("-".into(), |l| output::latency(f(l) as f64));
    let mut text = format!(
        "{}: {} commits/s, {} MB/s, commit p50 {}, p99 {}, max {}",
        r.point(),
        output::si(r.commits_per_sec),
        format_args!("{:.1}", r.bytes_per_sec / 1e6),
        lat(|l| l.p50),
        lat(|l| l.p99),
        lat(|l| l.max),
    );
    if let Some(cpu) = s.cpu.ns_per_io {
        text.push_str(&format!(", {:.1} CPU-µs per commit", cpu / 1e3));
    }
    if let Some(w) = &r.implausible {
        text.push_str(&format!("\nwarning: {w}"));
    }
    text
}

fn show(args: &WalJob, summaries: &[Summary]) -> Result<()> {
    output::print_result(|| {
        if args.out.json {
            // One point: its summary, as any run's; several: {"profiles": [...]}, as io's set.
            return match summaries {
                [one] => storbench_report::export::summary_json(one),
                all => storbench_report::export::profiles_json(all),
            };
        }
        let mut out: Vec<String> = summaries.iter().map(table).collect();
        out.extend(fastest(summaries));
        out.join("\n") + "\n"
    })
}

/// The fastest method whose commits can be trusted as durable, among several measured; where
/// none can, the fastest measured, said as not proven.
fn fastest(summaries: &[Summary]) -> Option<String> {
    let results: Vec<&storbench_report::workloads::wal::results::WalResults> = summaries
        .iter()
        .filter_map(|s| if let Results::Wal(r) = &s.results { Some(r) } else { None })
        .collect();
    if results.len() < 2 {
        return None;
    }
    let measured = results
        .iter()
        .copied()
        .filter(|r| r.commits > 0)
        .max_by(|a, b| a.commits_per_sec.total_cmp(&b.commits_per_sec));
    Some(match (storbench_report::workloads::wal::render::fastest_safe(&results), measured) {
        (Some(b), _) => {
            format!("fastest safe method: {} ({} commits/s)", b.sync_method, output::si(b.commits_per_sec))
        }
        (None, Some(b)) => format!(
            "fastest safe method: none proven, every method was too fast to be durable here (see the warnings); \
             fastest measured: {} ({} commits/s)",
            b.sync_method,
            output::si(b.commits_per_sec)
        ),
        (None, None) => "fastest safe method: none; no method ran".into(),
    })
}
