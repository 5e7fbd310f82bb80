//! `storbench report BUNDLE`: reads a bundle (an evaluation, one run, or a profile set's
//! directory of runs) into the report model's `ReportInput` and writes report.html,
//! report.md and the latency pictures (`latency-<workload>[-<type>].svg`). The reading lives
//! here (the runs' latency spectra in `spectrum`); what the reports say is
//! `storbench_report::render`.

pub mod spectrum;

use crate::args::report::ReportArgs;
use anyhow::{Context, Result, bail};
use serde::de::DeserializeOwned;
use std::fs;
use std::path::{Path, PathBuf};
use storbench_bench::input::{DATA_LIMIT, read_text};
use storbench_bench::monitor::disclosure::sha256_hex;
use storbench_bench::run::Ending;
use storbench_bench::run::record::summary::rebuild_over;
use storbench_report::evaluation::{EVALUATION_VERSION, Evaluation};
use storbench_report::render::{self, ReportInput, RunData, Series};
use storbench_report::{Disclosure, SCHEMA_VERSION, Summary};

pub fn run(args: &ReportArgs) -> Result<Ending> {
    let out = args.out.out.as_deref().unwrap_or(&args.bundle);
    for path in write_report_over(&args.bundle, out, args.window.window)? {
        tell!("{}", path.display());
    }
    Ok(Ending::Ok)
}

/// Reads `bundle` and writes report.html, report.md and the latency pictures into `out`;
/// returns the paths of report.html and report.md, which show the pictures.
/// `storbench run` calls it with its evaluation directory as both when the evaluation ends.
pub fn write_report(bundle: &Path, out: &Path) -> Result<Vec<PathBuf>> {
    let mut written = write_report_over(bundle, out, None)?;
    written.truncate(2);
    Ok(written)
}

/// As `write_report`, every run's figures over `window` where one is given; every file's
/// path, report.html and report.md first.
fn write_report_over(bundle: &Path, out: &Path, window: Option<(f64, f64)>) -> Result<Vec<PathBuf>> {
    let mut input = read_bundle(bundle)?;
    if let Some(w) = window {
        narrow(&mut input, bundle, w)?;
    }
    spectrum::add(&mut input, bundle, window);
    let mut files = vec![
        ("report.html".into(), render::report_html(&input)),
        ("report.md".into(), render::report_markdown(&input)),
    ];
    files.extend(render::spectrum::report_pictures(&input));
    write_reports(out, &files)
}

/// A bundle directory read into a report's input: `evaluation.json` with each run's own
/// bundle, or a single run's `summary.json` wrapped as a one-run evaluation.
pub fn read_bundle(dir: &Path) -> Result<ReportInput> {
    const FIX: &str = "give the directory `storbench run` wrote (with evaluation.json), one run's \
                       bundle (with summary.json) or a profile set's directory, such as \
                       ./storbench-results/<time>-<name>";
    if !dir.exists() {
        bail!("{}: no such bundle; {FIX}", dir.display());
    }
    if !dir.is_dir() {
        bail!("{} is a file, not a bundle directory; {FIX}", dir.display());
    }
    if dir.join("evaluation.json").exists() {
        read_evaluation(dir)
    } else if dir.join("summary.json").exists() {
        let data = read_run(dir)?;
        let mut input = ReportInput::single_run(&name_of(dir), data, read_disclosure(dir));
        input.shards = read_json(&dir.join(storbench_bench::merge::SHARDS_FILE)).ok();
        Ok(input)
    } else if let Some(members) = run_bundles_in(dir)? {
        read_set(dir, &members)
    } else {
        bail!(
            "{} holds neither evaluation.json nor summary.json nor run bundles, so it is not a bundle; {FIX}",
            dir.display()
        )
    }
}

fn name_of(dir: &Path) -> String {
    dir.file_name().map_or("run".into(), |n| n.to_string_lossy().into_owned())
}

/// The run bundles directly inside `dir` (each with a summary.json), or None if it has none.
fn run_bundles_in(dir: &Path) -> Result<Option<Vec<PathBuf>>> {
    let entries = fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut members: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("summary.json").is_file())
        .collect();
    members.sort();
    Ok((!members.is_empty()).then_some(members))
}

/// A profile set's directory (`storbench io --profile`), a bundle per job: read as an
/// evaluation of its jobs, one run each, in the order they ran.
fn read_set(dir: &Path, members: &[PathBuf]) -> Result<ReportInput> {
    let mut runs = Vec::new();
    for m in members {
        let data = read_run(m).with_context(|| format!("reading the set {}", dir.display()))?;
        runs.push((name_of(m), data, read_disclosure(m)));
    }
    runs.sort_by(|a, b| a.1.summary.started_at.cmp(&b.1.summary.started_at));
    let mut set: Option<ReportInput> = None;
    for (id, data, disclosure) in runs {
        let mut one = ReportInput::single_run(&id, data, disclosure);
        for r in &mut one.evaluation.runs {
            r.bundle = Some(id.clone());
        }
        let Some(set) = set.as_mut() else {
            one.evaluation.name = name_of(dir);
            set = Some(one);
            continue;
        };
        add_to_set(set, one);
    }
    set.context("the set has no runs")
}

/// Adds a one-run evaluation to a set's: its run, its configuration where new, its notes.
fn add_to_set(set: &mut ReportInput, one: ReportInput) {
    let (e, o) = (&mut set.evaluation, one.evaluation);
    e.complete &= o.complete;
    e.ended_at = o.ended_at;
    for c in o.configurations {
        if !e.configurations.iter().any(|x| x.name == c.name) {
            e.configurations.push(c);
        }
    }
    for n in o.notes {
        if !e.notes.contains(&n) {
            e.notes.push(n);
        }
    }
    if e.method.power_source.is_none() {
        e.method.power_source = o.method.power_source;
    }
    e.runs.extend(o.runs);
    set.runs.extend(one.runs);
}

/// The evaluation's disclosure is gathered before any database runs; the database part comes
/// from the first run that recorded one (its version and settings), whatever its workload.
fn fill_database(input: &mut ReportInput, evaluation: &Evaluation, dir: &Path) {
    let Some(disclosure) = input.disclosure.as_mut().filter(|d| d.database.kind.is_none()) else { return };
    let from_runs = evaluation.runs.iter().filter_map(|r| r.bundle.as_ref());
    if let Some(db) =
        from_runs.filter_map(|b| read_disclosure(&dir.join(b))).map(|d| d.database).find(|d| d.kind.is_some())
    {
        disclosure.database = db;
    }
}

fn read_evaluation(dir: &Path) -> Result<ReportInput> {
    let evaluation: Evaluation = read_json(&dir.join("evaluation.json"))?;
    if evaluation.evaluation_version > EVALUATION_VERSION {
        bail!(
            "{}: evaluation_version {} is newer than this storbench reads ({EVALUATION_VERSION}); \
             report it with the storbench that ran it",
            dir.join("evaluation.json").display(),
            evaluation.evaluation_version
        );
    }
    let mut input = ReportInput { disclosure: read_disclosure(dir), ..ReportInput::default() };
    for run in &evaluation.runs {
        let Some(bundle) = &run.bundle else { continue };
        match read_run(&dir.join(bundle)) {
            Ok(data) => {
                input.runs.insert(run.id.clone(), data);
            }
            Err(e) => input.problems.push(format!(
                "run {}: {}; its row shows evaluation.json's figures only",
                run.id,
                crate::output::reason(&e)
            )),
        }
    }
    fill_database(&mut input, &evaluation, dir);
    input.evaluation = evaluation;
    Ok(input)
}

/// Every run of `input` (read from `dir`) with its figures over `window`, rebuilt from its
/// record: its summary, its series cut to the window, and its row of the evaluation.
pub fn narrow(input: &mut ReportInput, dir: &Path, window: (f64, f64)) -> Result<()> {
    input.window = Some(window);
    for run in &mut input.evaluation.runs {
        let Some(bundle) = &run.bundle else { continue };
        let Some(data) = input.runs.get_mut(&run.id) else { continue };
        let at = dir.join(bundle);
        data.summary = rebuild_over(&at, Some(window), storbench_bench::workload::registry::rebuild_of)
            .with_context(|| format!("rebuilding {} over the window from its record", at.display()))?;
        if let Some(series) = &mut data.series {
            series.keep_between(window);
        }
        let s = &data.summary;
        run.headline = storbench_report::evaluation::headline(s);
        run.active_watts = data.series.as_ref().and_then(|x| x.active_watts(s));
        run.per_watt = run
            .headline
            .as_ref()
            .zip(run.active_watts)
            .and_then(|(h, w)| storbench_report::evaluation::perf_per_watt(h.value, w));
        run.seconds = Some(s.phases.measured_s);
    }
    Ok(())
}

/// One run's summary and, where present and readable, its time series and the database its
/// disclosure states.
fn read_run(dir: &Path) -> Result<RunData> {
    let summary: Summary = read_json(&dir.join("summary.json"))?;
    if summary.schema_version > SCHEMA_VERSION {
        bail!(
            "{}: schema_version {} is newer than this storbench reads ({SCHEMA_VERSION}); report it \
             with the storbench that ran it",
            dir.join("summary.json").display(),
            summary.schema_version
        );
    }
    let path = dir.join("timeseries.csv");
    let series = match read_text(&path, DATA_LIMIT) {
        Ok(text) => Some(Series::parse(&text).with_context(|| format!("{} is malformed", path.display()))?),
        Err(_) => None,
    };
    let database = read_disclosure(dir).map(|d| d.database).filter(|d| d.kind.is_some());
    Ok(RunData { summary, series, database })
}

/// The disclosure, if the bundle has a readable one; a report without it says so.
fn read_disclosure(dir: &Path) -> Option<Disclosure> {
    read_json(&dir.join("disclosure.json")).ok()
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = read_text(path, DATA_LIMIT)?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not what storbench writes (truncated, edited, or not a storbench file); \
             restore it or run the measurement again",
            path.display()
        )
    })
}

/// Where a directory records what storbench last wrote into each report: `name sha256` lines.
const WRITTEN_RECORD: &str = ".storbench-reports";

/// Writes `files` into `dir`, secrets hidden, replacing only reports storbench wrote and nobody
/// edited since; returns their paths. Every existing file is checked before anything is written.
pub fn write_reports(dir: &Path, files: &[(String, String)]) -> Result<Vec<PathBuf>> {
    let dir = &storbench_bench::files::resolve(dir)?;
    storbench_bench::files::create_dirs(dir).with_context(|| format!("creating {}", dir.display()))?;
    let record = read_record(dir);
    let paths: Vec<PathBuf> = files.iter().map(|(name, _)| dir.join(name)).collect();
    for ((name, _), path) in files.iter().zip(&paths) {
        check_replaceable(path, record.as_ref().map(|r| r.get(name)))?;
    }
    for (path, (_, text)) in paths.iter().zip(files) {
        storbench_bench::run::bundle::write_atomic(path, text)?;
    }
    // The hash of what is on disk: `write_atomic` wrote the text with its secrets hidden.
    let written =
        |path: &Path, text: &str| sha256_hex(storbench_bench::run::bundle::as_written(path, text).as_bytes());
    let lines: String = files
        .iter()
        .zip(&paths)
        .map(|((name, text), path)| format!("{name} {}\n", written(path, text)))
        .collect();
    storbench_bench::run::bundle::write_atomic(&dir.join(WRITTEN_RECORD), &lines)?;
    Ok(paths)
}

/// The hashes of the reports storbench wrote into `dir`; None where it never recorded any
/// (no report yet, or reports of a storbench before the record existed).
fn read_record(dir: &Path) -> Option<std::collections::HashMap<String, String>> {
    let path = dir.join(WRITTEN_RECORD);
    let text = storbench_bench::input::read_own_text(&path, storbench_bench::input::TEXT_LIMIT).ok()?;
    storbench_bench::files::claim_at(&path);
    let pairs = text.lines().filter_map(|l| l.split_once(' ')).map(|(n, h)| (n.to_owned(), h.to_owned()));
    Some(pairs.collect())
}

/// A report at `path` may be replaced when there is none, or when it is what storbench wrote:
/// its hash is the recorded one (`recorded` is None without a record, where the generator
/// line is the only sign left). A link, an edited or a foreign file is refused.
fn check_replaceable(path: &Path, recorded: Option<Option<&String>>) -> Result<()> {
    if storbench_bench::files::entry(path)?.is_none() {
        return Ok(());
    }
    let text = storbench_bench::input::read_own(path, DATA_LIMIT).ok();
    let ours = match (&text, recorded) {
        (Some(t), Some(Some(hash))) => sha256_hex(t) == *hash,
        (Some(t), None) => render::is_own_report(&String::from_utf8_lossy(t)),
        _ => false,
    };
    if ours {
        // Proven storbench's by its hash: it may be replaced.
        storbench_bench::files::claim_at(path);
        return Ok(());
    }
    let what = if text.is_some() && recorded.is_some_and(|r| r.is_some()) {
        "was edited since storbench wrote it"
    } else {
        "exists and storbench did not write it"
    };
    bail!("{} {what}; move it away or give --out another directory", path.display())
}
