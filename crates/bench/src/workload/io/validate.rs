//! io's options → its typed jobs (`IoSpec`), the target they share and what to say before they
//! run. Every message names the option (as its flag, `--bs`; a plan's reader says it as the
//! key), what was wrong and what to write instead; nothing is written before all of it passes.

use super::options::{BlockSizes, IoOptions, Rw};
use super::{BlockSizeMix, Distribution, End, IoSpec, Pattern, Region, SQLIO_PROFILES, Share, Zones};
use crate::engine::EngineKind;
use crate::rng::DEFAULT_SEED;
use crate::run::Rule;
use crate::target::TargetRequest;
use std::path::PathBuf;
use std::time::Duration;

type Result<T> = std::result::Result<T, String>;

pub const DEFAULT_SIZE: u64 = 1 << 30;

/// A validated job and how to present it.
pub struct Job {
    pub spec: IoSpec,
    /// What the SQLIO study called it, for profile runs.
    pub title: Option<&'static str>,
}

/// The validated command: its jobs and the target they share (None for the null engine).
pub struct Validated {
    pub jobs: Vec<Job>,
    pub target: Option<TargetRequest>,
    pub profile: Option<String>,
    /// What to tell the user before it starts (a paced run that lasts hours).
    pub notes: Vec<String>,
}

/// The options as jobs: one, or a profile set's; `name` is the run's where one was given.
/// `like` is the caller's to fill in first (it reads a trace).
pub fn validate(args: &IoOptions, name: Option<&str>) -> Result<Validated> {
    if args.fio_job.is_some() {
        return fio_jobs(args);
    }
    let template = template_spec(args, name)?;
    let notes: Vec<String> =
        long_run(template.rate_iops, &template.end, template.block_sizes.mean()).into_iter().collect();
    let jobs = match args.profile.as_deref() {
        None => vec![Job { spec: template, title: None }],
        Some("sqlio") => sqlio_jobs(args, &template)?,
        Some(other) => refuse!("unknown --profile '{other}'; the profile sets are: sqlio"),
    };
    let writes = jobs.iter().any(|j| j.spec.reads.writes());
    let target = target_of(args, writes);
    Ok(Validated { jobs, target, profile: args.profile.clone(), notes })
}

/// The target the jobs of `args` share (None for the null engine).
fn target_of(args: &IoOptions, writes: bool) -> Option<TargetRequest> {
    // A new file holds the part before --offset too.
    let offset = args.offset.map_or(0, |o| o.0);
    (template_engine(args) != EngineKind::Null).then(|| TargetRequest {
        path: args.target.clone().unwrap_or_else(|| PathBuf::from(".")),
        size: args.size.map(|s| s.0 + offset),
        default_size: DEFAULT_SIZE + offset,
        direct: !args.buffered,
        allow_device: args.allow_device,
        force: args.force,
        writes,
    })
}

/// A fio job file's jobs, each validated as a single job under its own name; a file of several
/// is a set named after the file. They share one target, as a profile set's jobs do.
fn fio_jobs(args: &IoOptions) -> Result<Validated> {
    if args.profile.is_some() || args.like.is_some() {
        refuse!("a fio job file gives the jobs; drop --profile and --like");
    }
    let file = super::fio_job::jobs(args, &super::fio_job::Expand::here()).map_err(|e| e.to_string())?;
    let (first, path) = (&file[0], args.fio_job.as_deref().unwrap_or(std::path::Path::new("")));
    let mut jobs = Vec::new();
    let mut notes = Vec::new();
    for job in &file {
        let place = |o: &IoOptions| (o.target.clone(), o.size, o.buffered, template_engine(o));
        if place(&job.options) != place(&first.options) {
            refuse!(
                "{}: job [{}] runs on another target, size, engine or direct setting than [{}]; \
                 storbench io runs a job file's jobs on one target: give --target (and --size) \
                 for all, or run each job in a plan workload of its own",
                job.at,
                job.name,
                first.name
            );
        }
        let spec = template_spec(&job.options, Some(&job.name))
            .map_err(|e| format!("{}: job [{}]: {e}", job.at, job.name))?;
        notes.extend(job.notes.iter().cloned());
        notes.extend(long_run(spec.rate_iops, &spec.end, spec.block_sizes.mean()));
        jobs.push(Job { spec, title: None });
    }
    let writes = jobs.iter().any(|j| j.spec.reads.writes());
    let target = target_of(&first.options, writes);
    let set = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "fio".into());
    Ok(Validated { jobs, target, profile: (file.len() > 1).then_some(set), notes })
}

fn template_engine(args: &IoOptions) -> EngineKind {
    args.engine.unwrap_or(EngineKind::IoUring)
}

fn template_spec(args: &IoOptions, name: Option<&str>) -> Result<IoSpec> {
    let (pattern, reads) = parse_rw(args)?;
    let block_sizes = match &args.bs {
        Some(b) => b.mix.clone(),
        None => IoOptions::BS.parse::<BlockSizes>()?.mix,
    };
    if args.verify && !block_sizes.is_single() {
        refuse!("--verify needs a single --bs (it checks whole blocks); drop the mix or --verify");
    }
    let header = super::verify::HEADER_LEN as u32;
    if args.verify && block_sizes.max() < header {
        refuse!(
            "--verify writes a {header}-byte header into every block, so --bs {} is too small; use --bs {header} or more (4k is usual)",
            block_sizes.max()
        );
    }
    let iodepth = bounded("--iodepth", args.iodepth.unwrap_or(IoOptions::IODEPTH), 1, 4096)?;
    let workers = bounded("--workers", args.workers.unwrap_or(1), 1, 1024)?;
    // Every worker holds a buffer of the largest block for each request in flight.
    let buffers = u64::from(block_sizes.max()) * u64::from(iodepth) * u64::from(workers);
    crate::monitor::memory::check_memory(
        &format!("--bs {} with --iodepth {iodepth} and --workers {workers}", block_sizes.max()),
        Some(buffers),
        "give a smaller --bs, --iodepth or --workers",
    )?;
    let size = args.size.map_or(DEFAULT_SIZE, |s| s.0);
    let (rate_iops, end) = (rate(args, &block_sizes)?, parse_end(args)?);
    enough_to_measure(rate_iops, &end)?;
    ends_in_time(rate_iops, &end, block_sizes.mean())?;
    Ok(IoSpec {
        name: name.map_or_else(|| default_name(args, &block_sizes, iodepth), str::to_string),
        random: random_share(args, pattern)?,
        writes_per_flush: writes_per_flush(args, reads)?,
        fsync: args.fsync.is_some(),
        pattern,
        reads,
        rate_iops,
        rate_profile: args.rate_profile.as_ref().map(|p| p.0.as_slice().into()),
        block_sizes,
        iodepth,
        workers,
        ramp: args.ramp_or_default(),
        end,
        seed: args.seed.unwrap_or(DEFAULT_SEED),
        verify: args.verify,
        engine: template_engine(args),
        region: Region { start: args.offset.map_or(0, |o| o.0), len: size },
        interval: Duration::from_secs(1),
        trace: None,
        steady_state: steady_round(args)?,
    })
}

fn parse_rw(args: &IoOptions) -> Result<(Pattern, Share)> {
    let mix = args.rwmix_read.unwrap_or(Share::percent(50));
    let random =
        Pattern::Random(parse_distribution(args.random_distribution.as_deref().unwrap_or("uniform"))?);
    Ok(match args.rw.unwrap_or(IoOptions::RW) {
        Rw::Read => (Pattern::Sequential, Share::READS),
        Rw::Write => (Pattern::Sequential, Share::WRITES),
        Rw::Mixed => (Pattern::Sequential, mix),
        Rw::Randread => (random, Share::READS),
        Rw::Randwrite => (random, Share::WRITES),
        Rw::RandMixed => (random, mix),
    })
}

/// `--percentage-random`: random patterns only.
fn random_share(args: &IoOptions, pattern: Pattern) -> Result<Share> {
    match (args.percentage_random, pattern) {
        (None, _) => Ok(Share::ALL),
        (Some(share), Pattern::Random(_)) => Ok(share),
        (Some(_), Pattern::Sequential) => refuse!(
            "--percentage-random needs a random pattern (--rw randread, randwrite or randrw); a sequential job has no random requests to share"
        ),
    }
}

/// `--fdatasync N` (or `--fsync N`) in hundredths of writes per flush; it needs writes.
fn writes_per_flush(args: &IoOptions, reads: Share) -> Result<Option<u32>> {
    let (flag, n) = match (args.fdatasync, args.fsync) {
        (Some(_), Some(_)) => refuse!("--fdatasync and --fsync each set the flushes; give one of them"),
        (Some(n), None) => ("--fdatasync", n),
        (None, Some(n)) => ("--fsync", n),
        (None, None) => return Ok(None),
    };
    if !(1.0..=1_000_000.0).contains(&n) {
        refuse!("{flag} {n}: give the writes per flush, from 1 (a flush after every write) to 1000000");
    }
    if !reads.writes() {
        refuse!("{flag} flushes after writes, and this job only reads; give --rw with writes or drop {flag}");
    }
    Ok(Some((n * 100.0).round() as u32))
}

pub fn parse_distribution(s: &str) -> Result<Distribution> {
    let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
    match kind {
        "uniform" if arg.is_empty() => Ok(Distribution::Uniform),
        "zipf" => match arg.parse::<f64>() {
            Ok(theta) if theta > 0.0 && theta.is_finite() => Ok(Distribution::Zipf { theta }),
            _ => {
                refuse!("--random-distribution '{s}': zipf needs a positive exponent, as in zipf:1.2")
            }
        },
        "hotspot" => parse_hotspot(s, arg),
        "zoned" => parse_zoned(s, arg),
        _ => refuse!(
            "unknown --random-distribution '{s}'; use uniform, zipf:THETA, hotspot:IO/SPACE or zoned:IO/SPACE:..."
        ),
    }
}

fn parse_hotspot(s: &str, arg: &str) -> Result<Distribution> {
    let parsed = arg.split_once('/').and_then(|(a, b)| Some((a.parse::<u8>().ok()?, b.parse::<u8>().ok()?)));
    match parsed {
        Some((io, space)) if (1..=100).contains(&io) && (1..100).contains(&space) => {
            Ok(Distribution::HotSpot { io_pct: io, space_pct: space })
        }
        _ => refuse!(
            "--random-distribution '{s}': write hotspot:IO/SPACE with IO in 1..100 and SPACE in 1..99, as in hotspot:90/10"
        ),
    }
}

/// `zoned:IO/SPACE:IO/SPACE...`, percents to a hundredth.
fn parse_zoned(s: &str, arg: &str) -> Result<Distribution> {
    let bad = |why: String| {
        format!(
            "--random-distribution '{s}': {why}; write zoned:IO/SPACE:..., each zone's share of the I/O and of the space in percent, as in zoned:60/10:30/20:10/70"
        )
    };
    let share = |t: &str| t.parse::<Share>().map(|s| s.hundredths()).map_err(bad);
    let zones = arg
        .split(':')
        .map(|zone| {
            let (io, space) = zone.split_once('/').ok_or_else(|| bad(format!("'{zone}' is not IO/SPACE")))?;
            Ok((share(io)?, share(space)?))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Distribution::Zoned(Zones::new(&zones).map_err(bad)?))
}

/// `4k` or `4k/60:64k/40`.
fn parse_end(args: &IoOptions) -> Result<End> {
    match (args.runtime, args.io_size) {
        (_, Some(b)) if b.0 == 0 => refuse!("--io-size must be more than 0"),
        (Some(r), _) if r.0.is_zero() => {
            refuse!("--runtime must be more than 0 (or use --io-size)")
        }
        (Some(r), Some(b)) => Ok(End::BytesWithin(b.0, r.0)),
        (None, Some(b)) => Ok(End::Bytes(b.0)),
        (Some(r), None) => Ok(End::Time(r.0)),
        (None, None) => {
            Ok(End::Time(Rule::measured_length(args.steady_state.map(|r| r.0), None, IoOptions::RUNTIME)))
        }
    }
}

/// --steady-state as every workload checks it (`Rule::checked_round`), capped by --runtime; a
/// job ended by bytes has no rounds.
fn steady_round(args: &IoOptions) -> Result<Option<Duration>> {
    if args.steady_state.is_some() && args.io_size.is_some() {
        refuse!("--steady-state ends the job by time, --io-size by bytes; drop one of them");
    }
    Rule::checked_round(args.steady_state.map(|r| r.0), args.runtime.map(|r| ("--runtime", r.0)))
}

/// The highest rate a run may be paced at: ten billion I/Os a second, past any device (and a
/// schedule's nanosecond arithmetic stays exact below it).
const MAX_RATE_IOPS: f64 = 1e10;

fn rate(args: &IoOptions, sizes: &BlockSizeMix) -> Result<Option<f64>> {
    if let Some(profile) = &args.rate_profile {
        return profile_mean(args, &profile.0).map(Some);
    }
    let rate = match (args.rate_iops, args.rate_bw) {
        (Some(r), _) if !(r > 0.0 && r.is_finite()) => {
            refuse!("--rate-iops {r} must be a positive number")
        }
        (Some(r), _) => r,
        (None, Some(b)) if b.0 == 0 => refuse!("--rate-bw must be more than 0"),
        (None, Some(b)) => b.0 as f64 / sizes.mean(),
        (None, None) => return Ok(None),
    };
    if rate > MAX_RATE_IOPS {
        let given = if args.rate_iops.is_some() { "--rate-iops" } else { "--rate-bw" };
        refuse!(
            "{given}: {rate:.0} I/Os a second is past what any device does (at most {MAX_RATE_IOPS:.0}); give a \
             lower rate, or leave it out to run as fast as the device goes"
        );
    }
    Ok(Some(rate))
}

/// The fewest I/Os a paced run may plan to start: below it no rate or percentile means
/// anything.
const FEWEST_PACED_IOS: f64 = 10.0;

/// Refuses a paced run that would measure nothing: fewer than [`FEWEST_PACED_IOS`] I/Os due in
/// its measured phase.
fn enough_to_measure(rate: Option<f64>, end: &End) -> Result<()> {
    let (Some(rate), End::Time(d)) = (rate, end) else { return Ok(()) };
    let due = rate * d.as_secs_f64();
    if due < FEWEST_PACED_IOS {
        refuse!(
            "a rate of {rate} I/Os a second over --runtime {:?} starts {due:.1} I/Os, too few to measure \
             (at least {FEWEST_PACED_IOS:.0}); give a higher rate or a longer --runtime",
            d
        );
    }
    Ok(())
}

/// The longest a run may last: a year, as every duration storbench takes.
const LONGEST: Duration = Duration::from_secs(365 * 24 * 3600);
/// A run planned longer than this says so before it starts.
const LONG: Duration = Duration::from_secs(3600);

/// How long a paced run ended by its bytes (`--io-size`) lasts: as long as its rate takes to
/// move them; None for a run ended by time or not paced.
fn lasts_s(rate: Option<f64>, end: &End, mean_bytes: f64) -> Option<(u64, f64, f64)> {
    let (Some(rate), End::Bytes(bytes)) = (rate, end) else { return None };
    Some((*bytes, rate, *bytes as f64 / mean_bytes.max(1.0) / rate))
}

/// Past a year a paced run is refused (it would never end).
fn ends_in_time(rate: Option<f64>, end: &End, mean_bytes: f64) -> Result<()> {
    match lasts_s(rate, end, mean_bytes) {
        Some((bytes, rate, s)) if s > LONGEST.as_secs_f64() => refuse!(
            "--io-size {bytes} at {rate} I/Os a second would take {:.0} days, more than the year a run may \
             last; give a higher rate, a smaller --io-size, or --runtime",
            s / 86_400.0
        ),
        _ => Ok(()),
    }
}

/// Past an hour it says so before it starts.
fn long_run(rate: Option<f64>, end: &End, mean_bytes: f64) -> Option<String> {
    let (bytes, rate, s) = lasts_s(rate, end, mean_bytes)?;
    (s > LONG.as_secs_f64()).then(|| {
        format!("this run moves --io-size {bytes} at {rate} I/Os a second: about {:.1} hours", s / 3600.0)
    })
}

fn profile_mean(args: &IoOptions, rates: &[f64]) -> Result<f64> {
    if args.rate_iops.is_some() || args.rate_bw.is_some() {
        refuse!("--rate-profile sets the rate second by second; drop --rate-iops and --rate-bw");
    }
    if rates.is_empty() || rates.len() > 1_000_000 {
        refuse!("--rate-profile: give 1 to 1000000 seconds' rates");
    }
    if let Some(bad) = rates.iter().find(|r| !(r.is_finite() && (0.0..=MAX_RATE_IOPS).contains(*r))) {
        refuse!("--rate-profile: {bad} is not a rate; give I/Os a second from 0 to {MAX_RATE_IOPS:.0}");
    }
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    if mean == 0.0 {
        refuse!("--rate-profile: every second is 0, so nothing would run; give some second a rate");
    }
    Ok(mean)
}

fn bounded(flag: &str, v: u32, lo: u32, hi: u32) -> Result<u32> {
    if v < lo || v > hi {
        refuse!("{flag} {v} is out of range; use {lo} to {hi}");
    }
    Ok(v)
}

fn default_name(args: &IoOptions, sizes: &BlockSizeMix, depth: u32) -> String {
    format!("{}-{}-qd{depth}", args.rw.unwrap_or(IoOptions::RW), size_in_name(sizes))
}

/// The block size as a name holds it: whole KiB as `4k`, anything else in bytes (`1536b`:
/// never rounded into another size's name), a mix as `mix`.
fn size_in_name(sizes: &BlockSizeMix) -> String {
    match sizes.max() {
        _ if !sizes.is_single() => "mix".into(),
        b if b >= 1024 && b % 1024 == 0 => format!("{}k", b / 1024),
        b => format!("{b}b"),
    }
}

fn sqlio_jobs(args: &IoOptions, template: &IoSpec) -> Result<Vec<Job>> {
    if args.rw.is_some() || args.bs.is_some() || args.iodepth.is_some() || args.rwmix_read.is_some() {
        refuse!(
            "--profile sqlio sets --rw, --bs, --iodepth and --rwmix-read for each of its jobs; drop those options"
        );
    }
    if args.verify {
        refuse!("--profile sqlio does not verify data; run a single job with --verify instead");
    }
    Ok(SQLIO_PROFILES
        .iter()
        .map(|p| Job {
            spec: IoSpec {
                name: p.name.to_string(),
                pattern: p.pattern,
                reads: Share::percent(p.read_pct),
                block_sizes: BlockSizeMix::single(p.block_size),
                iodepth: p.iodepth,
                rate_iops: args.rate_iops,
                ..template.clone()
            },
            title: Some(p.title),
        })
        .collect())
}

/// Checks that need the target: alignment for O_DIRECT, and room for every worker's blocks.
/// How the size used came about: the user's --size, or the target's own size.
fn sized(size: u64, given: bool) -> String {
    if given {
        format!("--size {size} bytes")
    } else {
        format!("the target holds {size} bytes (no --size was given), which")
    }
}

pub fn check_against_target(
    job: &IoSpec,
    size: u64,
    size_given: bool,
    direct: bool,
    align: u32,
) -> Result<()> {
    if direct {
        for (bs, _) in job.block_sizes.entries() {
            if bs % align != 0 {
                refuse!(
                    "--bs {bs} is not a multiple of the {align}-byte alignment O_DIRECT needs on this target; use a multiple of {align} or pass --buffered"
                );
            }
        }
    }
    let start = job.region.start;
    if direct && !start.is_multiple_of(u64::from(align)) {
        refuse!(
            "--offset {start} is not a multiple of the {align}-byte alignment O_DIRECT needs on this target; use a multiple of {align} or pass --buffered"
        );
    }
    if start >= size {
        refuse!(
            "--offset {start} is at or past the end of the target ({size} bytes); give a smaller --offset"
        );
    }
    let size = size - start;
    let mut spec = job.clone();
    spec.region.len = size;
    let max = spec.block_sizes.max() as u64;
    if spec.min_worker_region() < max {
        refuse!(
            "{} is smaller than one {max}-byte block per worker ({} workers); use a larger --size or fewer --workers",
            sized(size, size_given),
            spec.workers
        );
    }
    if let End::Bytes(b) | End::BytesWithin(b, _) = spec.end
        && b < max
    {
        refuse!("--io-size {b} bytes is smaller than one {max}-byte block");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_size_is_named_as_it_is_never_rounded_into_another() {
        let named = |b: u32| size_in_name(&BlockSizeMix::single(b));
        assert_eq!(
            (named(4096), named(1536), named(512), named(1 << 20)),
            ("4k".into(), "1536b".into(), "512b".into(), "1024k".into())
        );
    }
}
