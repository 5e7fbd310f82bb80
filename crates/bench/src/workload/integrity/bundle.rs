//! An integrity run into its bundle: its summary as it starts (what was asked), the stress run
//! with each second recorded, the errors found written to `errors.jsonl` as they are found, the
//! damaged pages to `suspect_pages.csv`, and its finished summary, for [`crate::run::measure`].

use super::{ErrorRecord, IntegrityInterval, IntegritySpec, PAGE, SuspectPage, entry, run::Created};
use crate::run::StopFlag;
use crate::run::measure::{Finished, Recording, started_summary};
use crate::run::record::{End, Recordable};
use crate::workload::integrity::summary::IntegrityFacts;
use std::io::Write;
use storbench_report::{CrashResult, DeviceInfo, IntegrityResults, Results, Summary, TargetInfo};

/// What the caller shows of the run as it goes: each second, and the final audit's progress.
pub trait Watch {
    fn interval(&mut self, closed: &IntegrityInterval);
    fn audit(&mut self, done: u64, total: u64);
}

/// The summary of a run of `spec` as it starts; crash cycles' (`crash`) have a `crash` result
/// from the start (what tells their record from a run's).
pub fn started(
    spec: &IntegritySpec,
    name: &str,
    device: Option<DeviceInfo>,
    started_at: &str,
    crash: bool,
) -> Summary {
    Summary {
        name: name.into(),
        seed: spec.seed,
        parameters: parameters(spec),
        target: TargetInfo {
            path: spec.dir.display().to_string(),
            kind: "files".into(),
            size_bytes: spec.sizes.max_bytes(),
            direct: spec.direct,
            device,
        },
        engine: spec.engine.name().into(),
        ..started_summary(
            entry::WORKLOAD.name,
            started_at,
            Results::Integrity(IntegrityResults {
                delay_threshold_s: spec.delay_threshold.as_secs_f64(),
                target_io_ms: spec.target_io.as_secs_f64() * 1e3,
                data_initial_bytes: spec.sizes.data_pages * PAGE as u64,
                data_max_bytes: spec.sizes.data_max_pages * PAGE as u64,
                log_bytes: spec.sizes.log_pages * PAGE as u64,
                crash: crash.then(CrashResult::default),
                ..Default::default()
            }),
        )
    }
}

fn parameters(spec: &IntegritySpec) -> serde_json::Value {
    let page = PAGE as u64;
    serde_json::json!({
        "target": spec.dir.display().to_string(),
        "data_size": spec.sizes.data_pages * page,
        "data_max": spec.sizes.data_max_pages * page,
        "data_growth": spec.sizes.growth_pages * page,
        "log_size": spec.sizes.log_pages * page,
        "duration": spec.duration.as_secs_f64(),
        "users": spec.users,
        "target_io_ms": spec.target_io.as_secs_f64() * 1e3,
        "delay_threshold": spec.delay_threshold.as_secs_f64(),
        "buffered": !spec.direct,
        "write_through": spec.write_through,
        "seed": spec.seed,
        "engine": spec.engine.name(),
        "page_size": page,
    })
}

/// `errors.jsonl`: one JSON object per error found (class, file, offset, page, expected,
/// found), written as the run finds them, so a killed run keeps them.
pub type ErrorFile = BundleFile;

/// A file of the bundle written as the run goes, appended to; a write that fails is said once
/// in the summary's warnings (`failure`), and the run goes on.
pub struct BundleFile {
    path: std::path::PathBuf,
    file: Option<std::fs::File>,
    /// Why the file could not be written, where it could not.
    pub failure: Option<String>,
}

impl BundleFile {
    pub fn new(path: std::path::PathBuf) -> BundleFile {
        BundleFile { path, file: None, failure: None }
    }

    /// Appends one line per error record (errors.jsonl).
    pub fn write(&mut self, records: &[ErrorRecord]) {
        let mut text = String::new();
        for r in records {
            text.push_str(&serde_json::to_string(r).expect("an error record serializes"));
            text.push('\n');
        }
        self.append(&text);
    }

    pub fn append(&mut self, text: &str) {
        if text.is_empty() || self.failure.is_some() {
            return;
        }
        let result = (|| -> std::io::Result<()> {
            if self.file.is_none() {
                let how = crate::files::How::WRITE.append();
                self.file = Some(crate::files::create(&self.path, how)?);
            }
            self.file.as_mut().expect("opened").write_all(text.as_bytes())
        })();
        if let Err(e) = result {
            let name = self.path.file_name().unwrap_or_default().to_string_lossy();
            self.failure =
                Some(format!("{name} could not be written ({e}); the counts in the summary are complete"));
        }
    }
}

/// The bundle's list of damaged pages.
pub const SUSPECT_PAGES: &str = "suspect_pages.csv";

/// `suspect_pages.csv`: a header, then one row per damaged page (as SQL Server's
/// msdb.dbo.suspect_pages): `file` (0 data, 1 log), `page`, `offset` (bytes into its file),
/// `class` (as the summary's `errors`), `count` (times found), `first_seen_s` and
/// `last_seen_s` (seconds since the activities started; the audit's findings at its end),
/// `audit` (`found` again, read back `intact`, or `not_audited`).
fn suspect_csv(pages: &[SuspectPage]) -> String {
    let name = |v: serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let mut text = String::from("file,page,offset,class,count,first_seen_s,last_seen_s,audit\n");
    for p in pages {
        let class = name(serde_json::to_value(p.class).expect("a class serializes"));
        let audit = name(serde_json::to_value(p.audit).expect("a finding serializes"));
        text.push_str(&format!(
            "{},{},{},{class},{},{:.3},{:.3},{audit}\n",
            p.file, p.page, p.offset, p.count, p.first_seen_s, p.last_seen_s
        ));
    }
    text
}

/// Runs the stress on the `created` files, each second into the bundle and its errors into
/// `errors`; its finished summary, with a warning where suspect_pages.csv could not be written.
pub fn record(
    rec: &mut Recording,
    first: Summary,
    (spec, created): (&IntegritySpec, Created),
    errors: &mut ErrorFile,
    stop: &StopFlag,
    watch: &mut dyn Watch,
) -> crate::Result<Finished> {
    let bundle = &mut rec.bundle;
    let watch = std::cell::RefCell::new(watch);
    let outcome = super::run(
        spec,
        created,
        &mut rec.sampler,
        stop,
        &mut |iv| {
            watch.borrow_mut().interval(iv);
            errors.write(&iv.interval.data.records);
            bundle.recorded(iv, entry::WORKLOAD.name, &iv.interval.data.tally());
        },
        &mut |done, total| watch.borrow_mut().audit(done, total),
    )?;
    errors.write(&outcome.detail.late_records);
    rec.bundle.recorded_tail(entry::WORKLOAD.name, &outcome.detail.tail.tally());
    if let Some(audit) = &outcome.detail.audit {
        errors.write(&audit.first_errors);
    }
    let mut suspects = BundleFile::new(rec.bundle.dir().join(SUSPECT_PAGES));
    suspects.append(&suspect_csv(&outcome.detail.suspects));
    let t = outcome.totals.total();
    rec.bundle.totals(
        outcome.warmup_s,
        outcome.measured_s,
        &[("io", &t.reads.latency), ("io_write", &t.writes.latency)],
    );
    let ended_at = jiff::Timestamp::now().to_string();
    let facts = IntegrityFacts::of(&outcome, stop.is_stopped());
    let mut end = End::of(&ended_at, &outcome, &facts);
    let mut summary = crate::workload::integrity::summary::summary(first, &outcome.with(facts), &ended_at);
    summary.warnings.extend(suspects.failure.clone());
    end.added_warnings.extend(suspects.failure);
    Ok(Finished { end: Some(end), ..Finished::new(summary) })
}
