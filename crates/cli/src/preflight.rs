//! The checks a command makes before it writes anything: where its results go, and whether the
//! machine has the memory its options ask for.

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
