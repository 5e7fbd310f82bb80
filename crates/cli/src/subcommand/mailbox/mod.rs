//! `storbench mailbox`: validate, create or reuse the databases, run the test into a bundle,
//! verify every page and log block, judge, show the result; `mailbox verify` checks on demand
//! and `mailbox recover` replays the logs of databases left after a dirty shutdown.
//!
//! - `databases`: creating, reusing and removing the test's databases.
//! - `run`: one test into its bundle, and the transactional workload.
//! - `backup`, `recovery`: the backup and soft recovery tests; `recovery` also `mailbox recover`.
//! - `verify`: checking every page and log block, and `mailbox verify`.
//! - `tune`: `--tune`, the search for the most threads that pass.

mod backup;
mod databases;
pub mod entry;
mod recovery;
mod search;
mod summary;
pub mod table;
mod test;
mod tune;
pub mod validate;
mod verify;

use crate::args::mailbox::{MailboxCommand, MailboxJob, MailboxSub};
use crate::measure::Ran;
use crate::output;
use anyhow::Result;
use databases::{prepare, remove_databases};
use std::path::Path;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::target::lock::lock_place;
use storbench_report::{Summary, export};

pub fn run(c: MailboxCommand, stop: &StopFlag) -> Result<Ending> {
    match c.sub {
        Some(MailboxSub::Verify(v)) => verify::verify_command(&v, stop),
        Some(MailboxSub::Recover(r)) => recovery::recover_command(&r.target, stop),
        None if c.search.search.is_some() => crate::search::run(&c.run.job(), &c.search, stop),
        None => test(&c.run.job(), stop),
    }
}

/// Whether --target holds databases already (a manifest).
pub fn has_databases(a: &MailboxJob) -> bool {
    let plan = validate::validate(a);
    plan.is_ok_and(|p| matches!(storbench_bench::workload::mailbox::Manifest::load(&p.db_dir), Ok(Some(_))))
}

/// Removes storbench's databases from --target (those a search's steps kept for one another).
pub fn remove_kept_databases(a: &MailboxJob) {
    let Ok(plan) = validate::validate(a) else { return };
    if let Ok(Some(m)) = storbench_bench::workload::mailbox::Manifest::load(&plan.db_dir) {
        databases::remove_databases(&plan, &m);
    }
}

/// The options and the room they need, checked before anything is written (an evaluation
/// checks every run this way before the first one).
pub fn check(a: &MailboxJob) -> Result<()> {
    Ok(databases::check_space(&validate::validate(a)?)?)
}

fn test(a: &MailboxJob, stop: &StopFlag) -> Result<Ending> {
    let ran = measure(a, None, stop)?;
    if let Some(m) = &ran.measured {
        show(&m.summary, &a.out)?;
    }
    Ok(ran.ending)
}

/// The test the options describe (or, with --tune, the median of its final runs) into the
/// bundle directory `given`, or a new one under --output-dir: its ending, summary and bundle.
/// `storbench run` calls this.
pub fn measure(a: &MailboxJob, given: Option<&Path>, stop: &StopFlag) -> Result<Ran> {
    let plan = validate::validate(a)?;
    let _locks = [&plan.db_dir, &plan.log_dir].map(|d| lock_place(d, "target"));
    let _locks = _locks.into_iter().collect::<Result<Vec<_>, _>>()?;
    if plan.tune {
        return tune::tune(a, plan, given, stop);
    }
    let before_run = Ran { ending: Ending::InterruptedBeforeRun, measured: None };
    let (mut manifest, created) = match prepare(&plan, stop) {
        Ok((m, created)) if stop.is_stopped() => {
            // Stopped just as creation finished: what this run made goes, as it would after a run.
            if created && !plan.keep {
                remove_databases(&plan, &m);
            }
            return Ok(before_run);
        }
        Err(_) if stop.is_stopped() => return Ok(before_run),
        other => other?,
    };
    let result = test::run_and_verify(a, &plan, &mut manifest, given, stop);
    if created && !plan.keep {
        remove_databases(&plan, &manifest);
    } else {
        say!("databases kept in {} (reused by the next run of the same shape)", plan.db_dir.display());
    }
    let measured = result?;
    Ok(Ran { ending: Ending::of(&measured.summary, stop), measured: Some(measured) })
}

fn show(summary: &Summary, out: &crate::args::OutputArgs) -> Result<()> {
    output::print_result(|| {
        if out.json {
            export::summary_json(summary)
        } else {
            crate::subcommand::mailbox::table::mailbox_table(summary) + "\n"
        }
    })
}
