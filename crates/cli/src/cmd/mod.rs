//! One module per subcommand: validate the parsed options, run, show the result.

pub mod compare;
pub mod io;
pub mod mailbox;
pub mod oltp;
pub mod plan;
pub mod report;
pub mod run;

/// How a command ended, for the exit code.
pub enum Ending {
    Ok,
    /// A check failed: data verification found mismatches, I/Os failed (io without
    /// --continue-on-error, mailbox), or sales disagree with orders.
    CheckFailed,
    /// Stopped while running: the bundles keep what was measured.
    Interrupted,
    /// Stopped before anything was measured (while preparing a target or loading).
    InterruptedBeforeRun,
}
