//! `mailbox --tune`: trials that move the thread count (and the mailboxes) until the most
//! threads that pass are found, then three full runs of that setting.

use super::databases::{prepare, remove_databases};
use super::test::{measure_test, spec};
use super::validate::MailboxSetup;
use crate::args::mailbox::MailboxJob;
use crate::measure::{Measured, Ran};
use anyhow::{Context, Result, bail};
use std::path::Path;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::mailbox::{self as mbx, Manifest, TestType};
use storbench_report::evaluation::{RunStatus, status};

/// `--tune`: trials (short, no verification, each warmed until latency is steady) move the
/// thread count (and, when one thread fails, the mailboxes); then three full runs of the best
/// setting, of which the median by transactional IOPS is reported. Each has its own bundle,
/// in `given` when a caller gives a directory.
pub(super) fn tune(a: &MailboxJob, plan: MailboxSetup, given: Option<&Path>, stop: &StopFlag) -> Result<Ran> {
    if !matches!(plan.test, TestType::Performance | TestType::Stress) {
        bail!("--tune finds the thread count of a performance or stress test, not of --test {:?}", plan.test);
    }
    let mut a = a.clone();
    if let Some(dir) = given {
        a.out.output_dir = Some(dir.to_path_buf());
    }
    let mut tuner = mbx::Tuner::new(plan.threads, plan.mailboxes, 4096);
    let mut current: Option<(MailboxSetup, Manifest, bool)> = None;
    let mut finals: Vec<Measured> = Vec::new();
    let mut trials = Vec::new();
    loop {
        let (threads, mailboxes, full, suffix) = match tuner.step() {
            mbx::TuneStep::Trial { threads, mailboxes } => {
                (threads, mailboxes, false, format!("-trial-{threads}t-{mailboxes}mbx"))
            }
            mbx::TuneStep::Repeat { threads, mailboxes, n } => {
                (threads, mailboxes, true, format!("-tuned-{threads}t-run{n}"))
            }
            mbx::TuneStep::Done { .. } => break,
            mbx::TuneStep::Impossible => {
                cleanup(current);
                bail!(
                    "even one thread fails the thresholds with {} mailboxes: this storage cannot hold the profile",
                    tuner.history.last().map_or(0, |h| h.1)
                );
            }
        };
        if current.as_ref().is_none_or(|(p, _, _)| p.mailboxes != mailboxes) {
            cleanup(current.take());
            let p = resized(&plan, mailboxes);
            let (m, created) = prepare(&p, stop)?;
            current = Some((p, m, created));
        }
        let (base, manifest, _) = current.as_mut().expect("prepared above");
        let mut p = base.clone();
        p.threads = threads;
        p.duration = if full { plan.duration } else { plan.trial_duration };
        p.verify = full && plan.verify;
        let mut s = spec(&p);
        s.steady_latency = !full;
        let measured = measure_test(&a, &p, s, manifest, None, &suffix, stop)?;
        let storbench_report::Results::Mailbox(r) = &measured.summary.results else {
            unreachable!("a mailbox summary")
        };
        // Passed: its one status is done (every threshold held, no I/O failed, it completed).
        let pass = status(&measured.summary) == RunStatus::Done;
        say!(
            "{}: {threads} threads, {mailboxes} mailboxes: {} ({:.0} transactional IOPS)",
            if full { "run" } else { "trial" },
            if pass { "pass" } else { "fail" },
            r.transactional_iops
        );
        if stop.is_stopped() {
            cleanup(current);
            return Ok(Ran { ending: Ending::Interrupted, measured: None });
        }
        trials.push((threads, mailboxes, pass, r.transactional_iops, full));
        tuner.record(pass);
        if full {
            finals.push(measured);
        }
    }
    let keep = plan.keep;
    if !keep {
        cleanup(current);
    }
    // The setting holds only where each of its full runs passed.
    let all_passed = finals.iter().all(|m| status(&m.summary) == RunStatus::Done);
    let iops: Vec<f64> = finals
        .iter()
        .map(|m| match &m.summary.results {
            storbench_report::Results::Mailbox(r) => r.transactional_iops,
            _ => 0.0,
        })
        .collect();
    let median = mbx::median_index(&iops).map(|i| finals.swap_remove(i)).context("no final run")?;
    say!("{}", crate::subcommand::mailbox::table::tune_table(&trials));
    say!("reported: the median of the three runs at the best setting ({})", median.summary.name);
    let ending = if all_passed { Ending::of(&median.summary, stop) } else { Ending::CheckFailed };
    Ok(Ran { ending, measured: Some(median) })
}

/// `plan` with `mailboxes` mailboxes (database pages follow).
fn resized(plan: &MailboxSetup, mailboxes: u64) -> MailboxSetup {
    let mut p = plan.clone();
    p.mailboxes = mailboxes;
    p.pages = (mailboxes * p.mailbox_bytes / u64::from(p.databases) / u64::from(p.profile.page_size)).max(64);
    p.target_iops = plan.target_iops.map(|t| t / plan.mailboxes as f64 * mailboxes as f64);
    p
}

/// Removes databases a tuning step created.
fn cleanup(current: Option<(MailboxSetup, Manifest, bool)>) {
    if let Some((p, m, true)) = current {
        remove_databases(&p, &m);
    }
}
