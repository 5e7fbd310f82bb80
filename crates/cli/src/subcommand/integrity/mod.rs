//! `storbench integrity`: validate, create the files (with a fill bar), run the activities into
//! a bundle (per-second lines, errors.jsonl, delayed I/Os named as they happen), audit every
//! page, write the suspect pages (suspect_pages.csv), show the result; keep the files when
//! they hold damage (as evidence) or the run failed; `integrity verify` checks kept files
//! against their journal.
//!
//! - `validate`: options into the library's `IntegritySpec`, every refusal before a write.
//! - `verify`: `integrity verify`.
//! - `crash`: crash cycles (`--crash-after`), each cycle's writer a process of its own that
//!   hands its intervals to the run (`handover`).

mod crash;
use storbench_bench::workload::integrity::crash::handover::Sink;
pub mod entry;
pub mod table;
pub mod validate;
mod verify;

use crate::args::integrity::{IntegrityCommand, IntegrityJob, IntegritySub};
use crate::measure::{self, BundleDir, Finished, Measured, Ran, Start};
use crate::output;
use anyhow::{Context, Result};
use std::path::Path;
use storbench_bench::monitor::resolve_device;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::run::record::End;
use storbench_bench::target::lock::lock_place;
use storbench_bench::workload::integrity::{self as integ, IntegritySpec, place};
use storbench_report::columns::integrity as col;
use storbench_report::{DatabaseInfo, Results, Summary, export};

pub fn run(c: IntegrityCommand, stop: &StopFlag) -> Result<Ending> {
    match c.sub {
        Some(IntegritySub::Verify(v)) => verify::verify_command(&v, stop),
        None => {
            let job = c.run.job();
            let ran = measure(&job, None, stop)?;
            if let Some(m) = &ran.measured {
                show(&m.summary, &job.out)?;
            }
            Ok(ran.ending)
        }
    }
}

/// The run the options describe into the bundle directory `given`, or a new one under
/// --output-dir. `storbench run` calls this.
pub fn measure(a: &IntegrityJob, given: Option<&Path>, stop: &StopFlag) -> Result<Ran> {
    if let (true, Some(spec)) = (a.cli.crash_writer, &a.cli.writer_spec) {
        // The crash cycle's parent validated the spec and holds the target's lock for its writer.
        let w = serde_json::from_str(spec).context("reading the crash writer's spec")?;
        crash::writer(&w, stop)?;
        return Ok(Ran { ending: Ending::Ok, measured: None });
    }
    let spec = validate::validate(a)?;
    let made_dir = !spec.dir.exists();
    let _lock = lock_place(&spec.dir, "target")?;
    let _device_lock = spec.device.as_deref().map(|d| lock_place(d, "target")).transpose()?;
    let ran = measure_locked(a, &spec, given, stop);
    // A directory this run made for its files goes with them.
    if made_dir {
        let _ = storbench_bench::files::remove_own_dir(&spec.dir);
    }
    ran
}

fn measure_locked(
    a: &IntegrityJob,
    spec: &IntegritySpec,
    given: Option<&Path>,
    stop: &StopFlag,
) -> Result<Ran> {
    if let Some(after) = a.cli.crash_after {
        place::check_target(&IntegritySpec { duration: after.0, ..spec.clone() }, a.options.force)?;
        let measured = measure_crashes(a, spec, after.0, given, stop)?;
        return Ok(Ran { ending: Ending::of(&measured.summary, stop), measured: Some(measured) });
    }
    place::check_target(spec, a.options.force)?;
    let bar = output::fill_bar(spec.sizes.data_pages * 8192, "creating the data file");
    let created = integ::create(spec, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let layout = spec.layout();
    let created = match created {
        Ok(c) => c,
        Err(e) => {
            layout.remove();
            return Err(e).context("creating the integrity files");
        }
    };
    if stop.is_stopped() {
        layout.remove();
        return Ok(Ran { ending: Ending::InterruptedBeforeRun, measured: None });
    }
    let result = measure_run(a, spec, created, given, stop);
    let keep = result.as_ref().is_ok_and(|m| keeps_files(a, given, stop, &m.summary));
    if keep {
        say!(
            "files kept in {} (check them with `storbench integrity verify --target {}`)",
            spec.dir.display(),
            spec.dir.display()
        );
    } else {
        layout.remove();
    }
    let measured = result?;
    Ok(Ran { ending: Ending::of(&measured.summary, stop), measured: Some(measured) })
}

fn passed(s: &Summary) -> bool {
    s.complete && matches!(&s.results, Results::Integrity(r) if r.pass)
}

/// Whether the run's files stay: when asked (--keep), or in a run of its own when they hold
/// damage (evidence, kept even when the run was interrupted) or the run failed (for
/// inspection). In an evaluation the bundle's suspect_pages.csv and errors.jsonl say what was
/// wrong, and the next repetition needs the place.
fn keeps_files(a: &IntegrityJob, given: Option<&Path>, stop: &StopFlag, s: &Summary) -> bool {
    let damaged = matches!(&s.results, Results::Integrity(r) if r.errors.total() > 0);
    a.options.keep || (given.is_none() && (damaged || (!passed(s) && !stop.is_stopped())))
}

/// What the summary says of the damaged pages: that they were left as found, where the list
/// is, and whether `integrity verify` can still find them.
fn damage_note(r: &storbench_report::IntegrityResults, kept: bool, target: &Path) -> Option<String> {
    let pages = r.errors.total();
    if pages == 0 {
        return None;
    }
    let head = format!(
        "{pages} damaged page(s), found {} time(s), were taken out of use and left as found; \
         suspect_pages.csv in the bundle lists each with its class, count and when it was first and last seen",
        r.occurrences.total()
    );
    let verify = format!("`storbench integrity verify --target {}`", target.display());
    let tail = match (kept, r.audit_found) {
        (false, _) => {
            "; the files were removed for the next run (keep = true keeps them for `integrity verify`)"
                .to_string()
        }
        (true, None) => format!("; the final audit did not run: {verify} checks the kept files"),
        (true, Some(found)) if found == pages => {
            format!("; the final audit found every one again, and {verify} finds them in the kept files")
        }
        (true, Some(found)) => format!(
            "; the final audit found {found} of them again, and {verify} finds those in the kept files \
             (the other {} read back intact: damage seen in flight, not on the medium)",
            pages - found
        ),
    };
    Some(head + &tail)
}

fn measure_run(
    a: &IntegrityJob,
    spec: &IntegritySpec,
    created: integ::run::Created,
    given: Option<&Path>,
    stop: &StopFlag,
) -> Result<Measured> {
    into_bundle(a, spec, entry::KIND.name, (given, stop), |rec, first, errors| {
        let mut lines = Lines { run: output::run_line(entry::KIND.name), audit: None, spec };
        let finished = integ::bundle::record(rec, first, (spec, created), errors, stop, &mut lines);
        lines.run.finish_and_clear();
        if let Some(bar) = lines.audit.take() {
            bar.finish_and_clear();
        }
        let mut done = finished.context("running the integrity stress")?;
        let kept = keeps_files(a, given, stop, &done.summary);
        let note = match &done.summary.results {
            Results::Integrity(r) => damage_note(r, kept, &spec.dir),
            _ => None,
        };
        done.summary.warnings.extend(note.clone());
        done.end.iter_mut().for_each(|end| end.added_warnings.extend(note.clone()));
        Ok(done)
    })
}

/// The run's line as it goes, then the audit's bar in its place.
struct Lines<'a> {
    run: output::StatusLine,
    audit: Option<indicatif::ProgressBar>,
    spec: &'a IntegritySpec,
}

impl integ::bundle::Watch for Lines<'_> {
    fn interval(&mut self, iv: &integ::IntegrityInterval) {
        self.run.set_message(output::with_streams(progress(iv, self.spec), &iv.row));
        for notice in &iv.interval.data.notices {
            alert!("{notice}");
        }
    }

    fn audit(&mut self, done: u64, total: u64) {
        let run = &self.run;
        let bar = self.audit.get_or_insert_with(|| {
            run.finish_and_clear();
            output::fill_bar(total, "auditing every page")
        });
        bar.set_position(done);
    }
}

/// Crash cycles into their bundle: the writers' intervals as the cycles' streams, the summary
/// with their figures and what the audits found, built from what the record keeps.
fn measure_crashes(
    a: &IntegrityJob,
    spec: &IntegritySpec,
    after: std::time::Duration,
    given: Option<&Path>,
    stop: &StopFlag,
) -> Result<Measured> {
    into_bundle(a, spec, "integrity-crash", (given, stop), |rec, first, errors| {
        let plan = crash::crash_spec(&a.cli, after);
        // The record's epoch: the run's start, which the started summary gives to the nanosecond.
        let epoch: jiff::Timestamp = first.started_at.parse().context("the run's start")?;
        let mut sink = Sink::new(&mut rec.bundle, epoch.as_nanosecond());
        let cycles = crash::run_cycles(spec, &plan, (errors, &mut sink), stop)?;
        let out = cycles.outcome(sink);
        let ended_at = jiff::Timestamp::now().to_string();
        let end = End::of(&ended_at, &out, &out.detail);
        let s = storbench_bench::workload::integrity::summary::crash::summary(first, &out, &ended_at);
        Ok(Finished { end: Some(end), ..Finished::new(s) })
    })
}

/// A run into its bundle (`given`, or a new one named after the run): `work` gets the
/// recording, the started summary and the bundle's errors.jsonl, and returns the finished
/// summary (with the record's end, where the figures are recorded).
fn into_bundle(
    a: &IntegrityJob,
    spec: &IntegritySpec,
    default_name: &str,
    (given, stop): (Option<&Path>, &StopFlag),
    work: impl FnOnce(&mut measure::Recording, Summary, &mut integ::bundle::ErrorFile) -> Result<Finished>,
) -> Result<Measured> {
    let name = a.out.name.clone().unwrap_or_else(|| default_name.into());
    let dir = BundleDir::choose(given, &a.out, &name)?;
    let device = resolve_device(&spec.dir).ok().flatten();
    let at = jiff::Timestamp::now();
    let start = Start {
        run: storbench_bench::run::measure::Start {
            at,
            summary: integ::bundle::started(
                spec,
                &name,
                device.clone(),
                &at.to_string(),
                a.cli.crash_after.is_some(),
            ),
            targets: vec![spec.dir.as_path()],
            database: DatabaseInfo::default(),
            device: device.as_ref().map(|d| d.name.as_str()),
        },
        table: table::integrity_table,
        background: &a.out.streams(),
        background_dir: Some(spec.dir.as_path()),
        background_wait: a.out.background_wait,
    };
    measure::measure(&dir, start, stop, |rec, first| {
        let mut errors = integ::bundle::ErrorFile::new(rec.bundle.dir().join("errors.jsonl"));
        let mut done = work(rec, first, &mut errors)?;
        if let Some(end) = &mut done.end {
            end.added_warnings.extend(errors.failure.clone());
        }
        done.summary.warnings.extend(errors.failure);
        Ok(done)
    })
}

/// The status line: rates, latency, the data file, errors.
fn progress(iv: &integ::IntegrityInterval, spec: &IntegritySpec) -> String {
    let value = |c| iv.row.value(c).unwrap_or(0.0);
    format!(
        "{:.0} s of {:.0} s: {:.0} IOPS (random {:.0}, read-ahead {:.0}, bulk {:.0}, lazy writer {:.0}, log {:.0}), {:.1} ms avg, data file {:.0} MB, {} errors",
        iv.row.t_s,
        spec.duration.as_secs_f64(),
        value(col::IOPS),
        value(col::RANDOM_IOPS),
        value(col::READ_AHEAD_IOPS),
        value(col::BULK_IOPS),
        value(col::LAZY_WRITER_IOPS),
        value(col::LOG_IOPS),
        value(col::AVG_MS),
        value(col::DATA_FILE_BYTES) / 1e6,
        iv.interval.phase_total.errors_total(),
    )
}

fn show(summary: &Summary, out: &crate::args::OutputArgs) -> Result<()> {
    output::print_result(|| {
        if out.json { export::summary_json(summary) } else { table::integrity_table(summary) + "\n" }
    })
}
