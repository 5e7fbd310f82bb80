//! `storbench mailbox`'s options → what it will do (the library's `workload::mailbox::validate`),
//! once the results folder is known to be one.

use crate::args::mailbox::MailboxJob;
use anyhow::Result;
pub use storbench_bench::workload::mailbox::validate::MailboxSetup;

/// The job's options as a plan of the run, every value checked.
pub fn validate(job: &MailboxJob) -> Result<MailboxSetup> {
    crate::preflight::results_root(job.out.output_dir.as_deref())?;
    storbench_bench::workload::mailbox::validate::validate(&job.options).map_err(anyhow::Error::msg)
}
