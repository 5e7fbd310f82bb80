//! The backup test: every database read sequentially, all at once, each page's checksum
//! checked; MB/s per database. Its seconds go into the bundle and its record (stream
//! `backup`) as they end, and its summary is built from the record's values.

use super::test::TestRows;
use super::validate::MailboxSetup;
use crate::measure::Finished;
use crate::output;
use anyhow::{Context, Result};
use storbench_bench::run::StopFlag;
use storbench_bench::run::record::{End, Recordable};
use storbench_bench::workload::mailbox::summary::{BACKUP_STREAM, BackupFacts, backup_summary};
use storbench_bench::workload::mailbox::{self as mbx, Manifest};
use storbench_report::Summary;

/// Reads every database sequentially, all at once; MB/s per database. `first` is the test's
/// started summary.
pub(super) fn backup(
    run: &mut TestRows<'_>,
    plan: &MailboxSetup,
    manifest: &Manifest,
    stop: &StopFlag,
    first: Summary,
) -> Result<Finished> {
    let total = plan.db_bytes() * manifest.databases.len() as u64;
    let bar = output::fill_bar(total, "backup: reading the databases");
    let TestRows { bundle, sampler, .. } = run;
    let mut read = 0;
    let out = mbx::backup(&plan.db_dir, manifest, plan.engine, &mut **sampler, stop, &mut |c| {
        read += c.interval.data.total.bytes;
        bar.set_position(read);
        // Each second is written when it ends, so a backup killed midway keeps its seconds.
        bundle.recorded(c, BACKUP_STREAM, &c.interval.data.tally());
    });
    bar.finish_and_clear();
    let out = out.context("reading the databases")?;
    let facts = BackupFacts::of(&out.detail);
    let out = out.with(facts);
    let t = &out.totals.total;
    say!("backup read {} pages in {:.1} s: {:.1} MB/s in all", t.pages, out.measured_s, {
        t.bytes as f64 / 1e6 / out.measured_s.max(1e-9)
    });
    let ended_at = jiff::Timestamp::now().to_string();
    let end = End::of(&ended_at, &out, &out.detail);
    Ok(Finished { end: Some(end), ..Finished::new(backup_summary(first, &out, &ended_at)) })
}
