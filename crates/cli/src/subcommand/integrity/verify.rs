//! `storbench integrity verify`: the kept files against their journal, with the same error
//! classes as a run (a run's damaged pages were left as found, so verify finds them again);
//! exit 1 on any error, 2 when the files and the journal do not belong together or the
//! journal is damaged (cut short, a bad record, pages holding writes it never reserved), which
//! is never blamed on the data.

use crate::args::integrity::IntegrityVerifyArgs;
use crate::output;
use anyhow::{Context, Result, bail};
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::target::lock::lock_place;
use storbench_bench::workload::integrity::{AuditReport, Journal, Layout, audit};

pub(super) fn verify_command(a: &IntegrityVerifyArgs, stop: &StopFlag) -> Result<Ending> {
    let mut layout = Layout::new(&a.target);
    // A verify beside a running stress would read pages mid-write.
    let _lock = lock_place(&a.target, "target")?;
    let manifest = layout.load().map_err(|e| {
        anyhow::anyhow!(
            "{e}; give the --target of a run made with --keep (it holds storbench-integrity.json)"
        )
    })?;
    layout.device = manifest.device.clone();
    let expected = Journal::load(&layout.journal()).context("reading the journal")?;
    if expected.run_id != Some(manifest.run_id) {
        bail!(
            "{} does not belong to the files in {} (another run's journal); verify each set with its own journal",
            layout.journal().display(),
            a.target.display()
        );
    }
    if !manifest.clean {
        say!(
            "the run that wrote these files did not end cleanly: writes in flight when it stopped may hold either generation, and are no error"
        );
    }
    let bar = output::fill_bar(0, "auditing every page");
    let started = std::time::Instant::now();
    let report = audit(&layout.regions(&manifest.sizes), &expected, stop, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let report = report.context("auditing the files")?;
    let seconds = started.elapsed().as_secs_f64();
    if a.json {
        output::print_result(|| json(&report, expected.acknowledgements, seconds))?;
    } else {
        say_report(&report, expected.acknowledgements, seconds);
    }
    Ok(if !report.complete {
        Ending::InterruptedKeeping("the audit above covers only the files read until then".into())
    } else if report.ok() {
        Ending::Ok
    } else {
        Ending::CheckFailed
    })
}

fn json(r: &AuditReport, acknowledged: u64, seconds: f64) -> String {
    let value = serde_json::json!({
        "pass": r.ok(),
        "complete": r.complete,
        "pages_checked": r.pages_checked,
        "writes_acknowledged": acknowledged,
        "seconds": seconds,
        "errors": storbench_bench::workload::integrity::summary::errors_of_audit(r),
        "first_errors": r.first_errors,
    });
    serde_json::to_string_pretty(&value).expect("serializes") + "\n"
}

fn say_report(r: &AuditReport, acknowledged: u64, seconds: f64) {
    say!(
        "audited {} pages against {} acknowledged writes in {:.1} s: {}",
        r.pages_checked,
        acknowledged,
        seconds,
        if r.ok() { "no error".to_string() } else { format!("{} errors", r.errors()) }
    );
    for (class, n) in &r.errors_by_class {
        say!(
            "  {}: {n}",
            serde_json::to_value(class).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
        );
    }
    for e in r.first_errors.iter().take(20) {
        say!(
            "  {:?} file {} page {} (offset {}): expected {}, found {}",
            e.class,
            e.file,
            e.page,
            e.offset,
            e.expected,
            e.found
        );
    }
}
