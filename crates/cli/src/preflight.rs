//! The checks a command makes before it writes anything: where its results go.

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
