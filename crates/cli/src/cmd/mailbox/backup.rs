//! The backup test: every database read sequentially, all at once, each page's checksum
//! checked; MB/s per database.

use super::summary;
use super::test::{Figures, TestRows};
use super::validate::MailboxPlan;
use crate::output;
use anyhow::{Context, Result};
use storbench_bench::run::StopFlag;
use storbench_bench::workload::mailbox::{self as mbx, Manifest};
use storbench_report::Phases;
use storbench_report::columns::backup as backup_col;

/// Reads every database sequentially, all at once; MB/s per database.
pub(super) fn backup(
    run: &mut TestRows<'_>,
    plan: &MailboxPlan,
    manifest: &Manifest,
    stop: &StopFlag,
) -> Result<Figures> {
    let total = plan.db_bytes() * manifest.databases.len() as u64;
    let bar = output::fill_bar(total, "backup: reading the databases");
    let t0 = std::time::Instant::now();
    let mut prev = vec![0u64; manifest.databases.len()];
    // Each second's row is written when it comes, so a backup killed midway keeps its seconds.
    let out = mbx::backup(&plan.db_dir, manifest, plan.engine, stop, &mut |done| {
        bar.set_position(done.iter().sum());
        let mut cols = vec![(
            backup_col::MB_PER_SEC,
            Some((done.iter().sum::<u64>() - prev.iter().sum::<u64>()) as f64 / 1e6),
        )];
        cols.extend(
            done.iter()
                .zip(&prev)
                .take(8)
                .enumerate()
                .map(|(i, (d, p))| (backup_col::DB_MB_PER_SEC[i], Some((d - p) as f64 / 1e6))),
        );
        prev = done.to_vec();
        let row = storbench_report::SeriesRow {
            t_s: t0.elapsed().as_secs_f64().round(),
            phase: storbench_report::series::Phase::Measure,
            workload: cols,
            streams: Vec::new(),
            system: run.sampler.host.sample(),
        };
        run.row(&row, &[]);
    });
    bar.finish_and_clear();
    let out = out.context("reading the databases")?;
    let mut r = summary::base_results(plan);
    r.backup_mb_per_sec = out.mb_per_sec();
    r.backup_total_mb_per_sec = Some(out.total_mb_per_sec());
    r.checksum_ok = Some(out.corruptions == 0 && out.complete);
    r.pages_verified = out.pages_checked;
    r.pass = out.corruptions == 0 && out.complete;
    summary::corrupt(&mut r, &out.first);
    say!(
        "backup read {} pages in {:.1} s: {:.1} MB/s in all",
        out.pages_checked,
        out.elapsed_s,
        out.total_mb_per_sec()
    );
    let phases = Phases { ramp_s: 0.0, measured_s: out.elapsed_s };
    Ok((r, phases, Default::default(), out.complete, Vec::new()))
}
