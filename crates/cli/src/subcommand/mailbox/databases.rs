//! The test's databases on the terminal: created with a bar of the bytes written, or reused,
//! and said which (`workload::mailbox::databases`).

use super::validate::MailboxSetup;
use crate::output;
use anyhow::Result;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::mailbox::Manifest;
pub(super) use storbench_bench::workload::mailbox::databases::{check_space, remove_databases};

/// The databases, reused or created; whether this run created them.
pub(super) fn prepare(plan: &MailboxSetup, stop: &StopFlag) -> Result<(Manifest, bool)> {
    let total = plan.db_bytes() * u64::from(plan.databases);
    let bar = output::fill_bar(total, &format!("creating {} database(s)", plan.databases));
    let prepared = storbench_bench::workload::mailbox::databases::prepare(
        plan,
        &mut |done| bar.set_position(done),
        stop,
    );
    bar.finish_and_clear();
    let prepared = prepared?;
    say!("{}", prepared.said);
    Ok((prepared.manifest, prepared.created))
}
