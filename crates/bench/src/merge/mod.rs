//! One bundle from the bundles of one run's shards (`storbench merge`, and a run on a cluster
//! engine). Checks that they are shards of one job (refusing the same bundle twice, bundles
//! of different workloads or jobs, and shards of different launches),
//! and checks each shard as `summarize --check` does (its summary.json rebuilt field for field
//! from its record, its per-second series there) before anything is summed; merges their records exactly
//! (`run::record::merge`), builds the summary from the merged record by the workload's own
//! rebuild and sums the per-second series (`series`): the merged bundle's files, with
//! `shards.json`, for the caller to write.

pub mod header;
mod series;

use crate::Result;
use crate::error::Doing;
use crate::input::{DATA_LIMIT, read_text};
use crate::run::record::merge::{Shard, claimed, identity, merge};
use crate::run::record::summary::{first_difference, rebuild, rebuild_record};
use crate::run::record::{HLOG_FILE, RECORD_FILE, StoredRecord};
use std::path::{Path, PathBuf};
use storbench_report::{ShardsFile, Summary, export};

/// The name of the file that says what each shard of a merged bundle did.
pub const SHARDS_FILE: &str = "shards.json";

/// The merged bundle: its summary, what each shard did, its files by name, and the columns
/// of the shards' series it leaves out (names this storbench does not know how to add up).
pub struct Merged {
    pub summary: Summary,
    pub shards: ShardsFile,
    pub files: Vec<(String, String)>,
    pub unknown_columns: Vec<String>,
}

/// Merges the shards' `bundles` into one bundle's files (nothing is written).
pub fn merge_bundles(bundles: &[PathBuf]) -> Result<Merged> {
    keep_freed_memory();
    let shards = read_shards(bundles)?;
    check_one_job(&shards)?;
    check_shards(&shards)?;
    let workload = crate::workload::registry::workload(&shards[0].record.start.workload);
    let per_shard = workload.map_or(&[][..], |w| w.per_shard);
    let merged = merge(&shards, per_shard).doing("merging the shards' records")?;
    let record = StoredRecord::from_text(&merged.record, &merged.hlog).doing("the merged record")?;
    // The summary and the series at once, one a core.
    let (summary, series) = std::thread::scope(|scope| {
        let series = scope.spawn(|| series::merged(&shards, record.start.epoch_ns));
        let summary = rebuild_record(&record, None, crate::workload::registry::rebuild_of)
            .doing("building the merged summary from the merged record");
        (summary, series.join().expect("the series' thread"))
    });
    let (summary, series) = (summary?, series?);
    let shards_file = with_headlines(merged.shards, bundles);
    let shards_json = serde_json::to_string_pretty(&shards_file).doing("writing shards.json")? + "\n";
    let files = vec![
        ("summary.json".to_string(), export::summary_json(&summary)),
        (RECORD_FILE.to_string(), merged.record),
        (HLOG_FILE.to_string(), merged.hlog),
        ("timeseries.csv".to_string(), series.csv),
        (SHARDS_FILE.to_string(), shards_json),
    ];
    Ok(Merged { summary, shards: shards_file, files, unknown_columns: series.unknown })
}

/// Asks the C allocator to keep the memory the merge frees for its next use. Each shard's
/// check rebuilds its summary: a few MB of histograms and its log, made and freed shard after
/// shard. By default glibc hands such blocks back to the system (a fresh mapping each, or the
/// heap's top trimmed) and the next shard faults them in again, zeroed: 100 shards spent half
/// a second of system time there. A merge's peak memory is its records and the merged log,
/// not these blocks; the process is a merge's (or a cluster run's coordinator, which runs no
/// workload).
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt changes two of the allocator's thresholds; it takes no pointer and
    // leaves every allocation valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// Each bundle's record, named by its shard's identity, refusing one given twice (by its
/// directory or by its run: the same start on the same host, a copy) and two that claim one
/// shard of a run.
fn read_shards(bundles: &[PathBuf]) -> Result<Vec<Shard>> {
    let mut shards: Vec<Shard> = Vec::new();
    let mut seen: Vec<(PathBuf, String)> = Vec::new();
    for (given, read) in bundles.iter().zip(read_records(bundles)) {
        let (dir, record) = read?;
        // Shards that waited for one --start-at may start in the same nanosecond on one host:
        // their shard index tells them apart, and a copy of one has the same.
        let index = record.start.summary.shard.as_ref().map_or(0, |s| s.index);
        let run = format!("{}@{}#{index}", record.start.epoch_ns, record.start.summary.host.hostname);
        if let Some((other, _)) = seen.iter().find(|(d, id)| *d == dir || *id == run) {
            refuse!(
                "{} and {} are the same run's bundle (the same directory, or a copy: the same start \
                 on the same host); give each shard's bundle once",
                other.display(),
                given.display()
            );
        }
        seen.push((dir.clone(), run));
        let dir_name =
            dir.file_name().map_or_else(|| given.display().to_string(), |n| n.to_string_lossy().into());
        let shard = Shard { name: identity(&record, &dir_name), bundle: given.display().to_string(), record };
        if let Some(other) = shards.iter().find(|s| same_shard(s, &shard)) {
            refuse!(
                "{} and {} both claim to be shard {} of one run; give each shard's bundle once (a \
                 shard run twice: keep the run you mean)",
                other.bundle,
                shard.bundle,
                shard.name
            );
        }
        shards.push(shard);
    }
    Ok(shards)
}

/// Each bundle's directory and record, read a few at once (one a core).
fn read_records(bundles: &[PathBuf]) -> Vec<Result<(PathBuf, StoredRecord)>> {
    let read = |given: &PathBuf| -> Result<(PathBuf, StoredRecord)> {
        let dir = crate::files::resolve(given).map_err(|e| e.to_string())?;
        // Each shard's log stays on disk: the merge reads them forward, slot by slot.
        let record =
            StoredRecord::read_without_log(&dir).doing(&format!("reading the shard {}", given.display()))?;
        Ok((dir, record))
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let per_core = bundles.len().div_ceil(cores).max(1);
    std::thread::scope(|scope| {
        let reading: Vec<_> = bundles
            .chunks(per_core)
            .map(|part| scope.spawn(move || part.iter().map(read).collect::<Vec<_>>()))
            .collect();
        reading.into_iter().flat_map(|r| r.join().expect("a reading thread")).collect()
    })
}

/// Every shard checked (a few at once, one a core) before anything is summed.
fn check_shards(shards: &[Shard]) -> Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let per_core = shards.len().div_ceil(cores).max(1);
    std::thread::scope(|scope| {
        let checking: Vec<_> = shards
            .chunks(per_core)
            .map(|part| scope.spawn(move || part.iter().try_for_each(check_shard)))
            .collect();
        checking.into_iter().try_for_each(|c| c.join().expect("a checking thread"))
    })
}

/// A shard's bundle as `summarize --check` holds one: its summary.json is what its record
/// rebuilds, field for field (a shard killed before its end has no final summary to hold: the
/// merge names it incomplete), and its per-second series is there to be summed.
fn check_shard(shard: &Shard) -> Result<()> {
    let dir = Path::new(&shard.bundle);
    let named = || format!("the shard {}", shard.bundle);
    let series = dir.join("timeseries.csv");
    read_text(&series, DATA_LIMIT).doing(&format!(
        "{}: its per-second series {}",
        named(),
        series.display()
    ))?;
    if shard.record.end.is_none() {
        return Ok(());
    }
    let path = dir.join("summary.json");
    let reading = format!("{}: reading {}", named(), path.display());
    let text = read_text(&path, DATA_LIMIT).doing(&reading)?;
    let stored: serde_json::Value = serde_json::from_str(&text).doing(&reading)?;
    let rebuilt = rebuild(dir, crate::workload::registry::rebuild_of)
        .doing(&format!("{}: rebuilding its summary from its record", named()))?;
    let rebuilt: serde_json::Value =
        serde_json::from_str(&export::summary_json(&rebuilt)).doing("reading the rebuilt summary")?;
    if let Some((field, was, now)) = first_difference(&stored, &rebuilt) {
        refuse!(
            "{}: its summary.json does not match its record ({field}: {was} in summary.json, {now} from \
             the record): an edited or damaged bundle is not summed (storbench summarize --check says \
             the same)",
            named()
        );
    }
    Ok(())
}

/// Both bundles say they are the same shard of the same run (its count and common start).
fn same_shard(a: &Shard, b: &Shard) -> bool {
    let of = |s: &Shard| claimed(&s.record).map(|i| (i.index, i.count, i.start_at.clone()));
    of(a).is_some() && of(a) == of(b)
}

/// The parameters' keys a shard may change: where its data goes (its slice of a shared
/// device too) and its seed.
const SHARD_OWN: &[&str] =
    &["target", "targets", "path", "paths", "url", "urls", "seed", "shard", "offset", "size"];

/// Refuses shards of different workloads or of different jobs (parameters apart from
/// `SHARD_OWN`), naming the bundles that differ from the first.
fn check_one_job(shards: &[Shard]) -> Result<()> {
    let first = &shards[0];
    let kind = |s: &Shard| s.record.start.workload.clone();
    let others: Vec<String> = shards
        .iter()
        .filter(|s| kind(s) != kind(first))
        .map(|s| format!("{} is {}", s.bundle, kind(s)))
        .collect();
    if !others.is_empty() {
        refuse!(
            "the bundles are of different workloads: {} is {}, {}; merge only the shards of one run",
            first.bundle,
            kind(first),
            others.join(", ")
        );
    }
    let launch = |s: &Shard| s.record.start.summary.shard.as_ref().map(|i| (i.count, i.start_at.clone()));
    if let Some(other) = shards.iter().find(|s| launch(s) != launch(first)) {
        let said = |s: &Shard| match launch(s) {
            Some((count, Some(at))) => format!("shard of {count} started at {at}"),
            Some((count, None)) => format!("shard of {count} with no common start"),
            None => "no shard".to_string(),
        };
        refuse!(
            "{} and {} are of different launches ({}; {}): merge only the shards started together",
            first.bundle,
            other.bundle,
            said(first),
            said(other)
        );
    }
    let job = |s: &Shard| job_of(&s.record.start.summary.parameters);
    let differ: Vec<&str> =
        shards.iter().filter(|s| job(s) != job(first)).map(|s| s.bundle.as_str()).collect();
    if !differ.is_empty() {
        refuse!(
            "{} ran a different job from {} (their parameters differ beyond targets and seeds); \
             merge only the shards of one run",
            differ.join(", "),
            first.bundle
        );
    }
    Ok(())
}

fn job_of(parameters: &serde_json::Value) -> serde_json::Value {
    let mut p = parameters.clone();
    if let Some(map) = p.as_object_mut() {
        map.retain(|k, _| !SHARD_OWN.contains(&k.as_str()));
    }
    p
}

/// `file` with each shard's headline figure from its own summary.json, where it has one.
fn with_headlines(mut file: ShardsFile, bundles: &[PathBuf]) -> ShardsFile {
    for (entry, dir) in file.shards.iter_mut().zip(bundles) {
        entry.headline = headline(dir);
    }
    file
}

fn headline(dir: &Path) -> Option<String> {
    let text = read_text(&dir.join("summary.json"), DATA_LIMIT).ok()?;
    let summary: Summary = serde_json::from_str(&text).ok()?;
    let h = storbench_report::evaluation::headline(&summary)?;
    Some(format!("{} {}{}", storbench_report::render::doc::num(h.value), h.metric, h.errors_note()))
}
