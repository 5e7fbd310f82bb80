//! One module per subcommand: validate the parsed options, run, show the result. A workload's
//! module is listed here twice: as a module, and its entry in [`KINDS`], through which its
//! subcommand, its plan kind and its rebuilt summary are found (`registry`).

pub mod compare;
pub mod decide;
pub mod evaluation;
pub mod integrity;
pub mod io;
pub mod mailbox;
pub mod merge;
pub mod oltp;
pub mod plan;
pub mod replay;
pub mod report;
pub mod summarize;
pub mod trace;
pub mod wal;

/// Every workload kind, in the order `--help`, `plan init` and messages list them.
pub static KINDS: &[&crate::registry::Kind] = &[
    &io::entry::KIND,
    &oltp::entry::KIND,
    &mailbox::entry::KIND,
    &integrity::entry::KIND,
    &replay::entry::KIND,
    &trace::entry::KIND,
    &wal::entry::KIND,
];

/// Refuses options that would need more memory than the machine has available: `what` names
/// the option and its value, `fix` says what to give instead.
pub fn check_memory(what: &str, needed: Option<u64>, fix: &str) -> anyhow::Result<()> {
    let Some(limit) = storbench_bench::monitor::memory::memory_limit() else { return Ok(()) };
    let h = storbench_bench::units::human_bytes;
    match needed {
        Some(n) if n <= limit => Ok(()),
        Some(n) => anyhow::bail!(
            "{what} needs {} of memory but this machine has {} available; {fix}",
            h(n),
            h(limit)
        ),
        None => anyhow::bail!(
            "{what} needs more memory than any machine has ({} available here); {fix}",
            h(limit)
        ),
    }
}

/// Where result bundles go (--output-dir, default ./storbench-results), checked before
/// anything is written: the path, or the nearest part of it that exists, must be a directory.
pub fn results_root(output_dir: Option<&std::path::Path>) -> anyhow::Result<std::path::PathBuf> {
    let root = output_dir.map_or_else(|| "storbench-results".into(), std::path::Path::to_path_buf);
    let existing = root.ancestors().find(|p| !p.as_os_str().is_empty() && p.exists());
    if let Some(p) = existing
        && !p.is_dir()
    {
        anyhow::bail!(
            "--output-dir {}: {} is a file, not a directory; pick a directory for the results (it is created if missing)",
            root.display(),
            p.display()
        );
    }
    Ok(storbench_bench::files::resolve(&root)?)
}

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
