//! Checking every page and log block of the databases against its checksum: after a test,
//! and on demand (`mailbox verify`).

use super::recovery::say_dirty_shutdown;
use crate::args::mailbox::MailboxVerifyArgs;
use crate::output;
use anyhow::{Context, Result, bail};
use std::path::Path;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::target::lock::lock_place;
use storbench_bench::workload::mailbox::{self as mbx, Manifest, VerifyReport, layout};

pub(super) fn verify_with_bar(db_dir: &Path, manifest: &Manifest, stop: &StopFlag) -> Result<VerifyReport> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
    let bar = output::fill_bar(0, "verifying checksums");
    let v = mbx::verify(db_dir, manifest, threads, stop, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let v = v.context("verifying the databases")?;
    // After a dirty shutdown, pages that only the logs hold are expected not to match: they
    // say nothing about the storage until soft recovery has replayed the logs.
    let (bad, label) =
        if manifest.clean { ("corrupt", "corrupt") } else { ("not matching yet", "not matching") };
    say!(
        "verified {} pages and {} log blocks in {:.1} s: {}",
        v.pages_checked,
        v.log_blocks_checked,
        v.seconds,
        if v.ok() { "all checksums match".to_string() } else { format!("{} {bad}", v.corruptions) }
    );
    for c in &v.first {
        say!("  {label}: {} at offset {}: {}", c.file, c.offset, c.what);
    }
    Ok(v)
}

/// The manifest of the databases kept in `db_dir`; an error when there is none.
pub(super) fn kept_databases(db_dir: &Path) -> Result<Manifest> {
    Manifest::load(db_dir)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{} holds no storbench mailbox databases (no {}); give the --target of a run made with --keep",
            db_dir.display(),
            layout::MANIFEST
        )
    })
}

pub(super) fn verify_command(a: &MailboxVerifyArgs, stop: &StopFlag) -> Result<Ending> {
    // A verify beside a running test would read pages mid-write and call them corrupt.
    let _lock = lock_place(&a.target, "target")?;
    let m = kept_databases(&a.target)?;
    if !m.clean {
        say_dirty_shutdown(&a.target, &m);
    }
    let v = match a.threads {
        Some(0) => bail!("--threads 0: at least one thread reads"),
        Some(t) => mbx::verify(&a.target, &m, t, stop, &mut |_, _| {}).context("verifying the databases")?,
        None => verify_with_bar(&a.target, &m, stop)?,
    };
    if a.json {
        let json = serde_json::json!({
            "ok": v.ok() && m.clean, "clean_shutdown": m.clean, "complete": v.complete, "pages_checked": v.pages_checked,
            "log_blocks_checked": v.log_blocks_checked, "log_files": v.log_files, "bytes": v.bytes,
            "corruptions": v.corruptions, "seconds": v.seconds,
            "first": v.first.iter().map(|c| serde_json::json!({"file": c.file, "offset": c.offset, "what": c.what})).collect::<Vec<_>>(),
        });
        tell!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(if stop.is_stopped() {
        Ending::InterruptedKeeping("the check above covers only the pages read until then".into())
    } else if v.ok() && m.clean {
        Ending::Ok
    } else {
        Ending::CheckFailed
    })
}
