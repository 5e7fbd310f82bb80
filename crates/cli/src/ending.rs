//! How a command ended, for the exit code: what every command returns to `main`.

/// How a command ended, for the exit code.
pub enum Ending {
    Ok,
    /// A check failed: data verification found mismatches, I/Os failed (io without
    /// --continue-on-error, mailbox), or sales disagree with orders.
    CheckFailed,
    /// Stopped while running: the bundles keep what was measured.
    Interrupted,
    /// Stopped while running a command that writes no bundle: what it kept, said as the
    /// sentence's end ("the trace x.sbtrace holds ...").
    InterruptedKeeping(String),
    /// Stopped before anything was measured (while preparing a target or loading).
    InterruptedBeforeRun,
}

impl Ending {
    /// The exit of a run that ended with summary `s`, from its one status
    /// (`evaluation::status`): done is 0, interrupted 130 when it was stopped; a run that
    /// failed, failed its check, or ended early with nobody stopping it is 1.
    pub fn of(s: &storbench_report::Summary, stop: &storbench_bench::run::StopFlag) -> Ending {
        use storbench_report::evaluation::{RunStatus, status};
        match status(s) {
            RunStatus::Done => Ending::Ok,
            RunStatus::Interrupted if stop.is_stopped() => Ending::Interrupted,
            _ => Ending::CheckFailed,
        }
    }
}
