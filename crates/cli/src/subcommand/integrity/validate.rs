//! The options of `storbench integrity` into the library's `IntegritySpec` (which checks the
//! options themselves and fills in the defaults): a place for the files, sizes that fit in
//! its free space, a target that holds none of the workload's files. Nothing is written here.

use crate::args::integrity::IntegrityJob;
use anyhow::{Result, bail};
use std::path::PathBuf;
use storbench_bench::target::{Refusal, free_space};
use storbench_bench::workload::integrity::{IntegrityOptions, IntegritySpec};

/// The run the options describe: the library's checks of them, then where the files go.
pub fn validate(a: &IntegrityJob) -> Result<IntegritySpec> {
    let spec = a.options.spec().map_err(anyhow::Error::msg)?;
    crate::preflight::results_root(a.out.output_dir.as_deref())?;
    let (dir, device) = place(&a.options)?;
    Ok(IntegritySpec { dir, device, ..spec })
}

/// Where the files go, and the device for the data and the log if the target is one.
fn place(a: &IntegrityOptions) -> Result<(PathBuf, Option<PathBuf>)> {
    use std::os::unix::fs::FileTypeExt;
    let target = storbench_bench::files::resolve(a.target.as_deref().unwrap_or(std::path::Path::new(".")))?;
    let kind = std::fs::metadata(&target).map(|m| m.file_type()).ok();
    if kind.is_some_and(|k| k.is_block_device()) {
        if !a.allow_device {
            return Err(storbench_bench::Error::from(Refusal::DeviceNotAllowed { path: target }).into());
        }
        let dir =
            storbench_bench::files::resolve(a.journal_dir.as_deref().unwrap_or(std::path::Path::new(".")))?;
        return Ok((dir, Some(target)));
    }
    if a.journal_dir.is_some() {
        bail!("--journal-dir is for a device target; in a directory the journal goes beside the files");
    }
    if kind.is_some_and(|k| !k.is_dir()) {
        bail!(
            "--target {}: not a directory or a block device; give the directory the files go in",
            target.display()
        );
    }
    Ok((target, None))
}

/// The target must exist (or be creatable), hold none of the workload's files, and have room
/// for the files at their largest plus the journal. A missing target directory is made last,
/// once every check passed.
pub fn check_target(spec: &IntegritySpec, force: bool) -> Result<()> {
    refuse_found(spec)?;
    if let Some(dev) = &spec.device {
        check_device(dev, spec, force)?;
    }
    let on_disk = if spec.device.is_some() { 0 } else { spec.sizes.max_bytes() };
    let need = on_disk.saturating_add(journal_room(spec));
    let free = free_space(existing_ancestor(&spec.dir)).unwrap_or(u64::MAX);
    if need > free {
        let h = storbench_bench::units::human_bytes;
        bail!(
            "the files need up to {} (data at its maximum, log and journal) but {} has {} free; \
             give a smaller --data-max or --log-size, or another --target",
            h(need),
            spec.dir.display(),
            h(free)
        );
    }
    make_dir(spec)
}

/// The target must exist (or be creatable) and hold none of the workload's files; it is
/// made when missing.
pub fn refuse_existing(spec: &IntegritySpec) -> Result<()> {
    refuse_found(spec)?;
    make_dir(spec)
}

/// The nearest directory at or above `dir` that exists (where a missing target would go).
fn existing_ancestor(dir: &std::path::Path) -> &std::path::Path {
    dir.ancestors().find(|p| p.is_dir()).unwrap_or(std::path::Path::new("/"))
}

fn make_dir(spec: &IntegritySpec) -> Result<()> {
    storbench_bench::files::create_dirs(&spec.dir)
        .map(drop)
        .map_err(|e| anyhow::anyhow!("--target {}: cannot create the directory: {e}", spec.dir.display()))
}

/// None of the workload's files may be in the target (a link or a FIFO at their names
/// included: anything there is not this run's).
fn refuse_found(spec: &IntegritySpec) -> Result<()> {
    let layout = spec.layout();
    if let Some(found) = layout.existing().first() {
        bail!(
            "{} already exists: storbench never writes over files it finds; check kept files with \
             `storbench integrity verify --target {}`, then remove them, or give another --target",
            found.display(),
            spec.dir.display()
        );
    }
    Ok(())
}

/// A device may be written (io's rules: never mounted or in use; partitions, a partition
/// table or a signature need force) and holds the data at its largest and the log.
fn check_device(dev: &std::path::Path, spec: &IntegritySpec, force: bool) -> Result<()> {
    storbench_bench::target::device::check_writable(dev, force)
        .map_err(|r| storbench_bench::Error::from(Refusal::from(r)))?;
    let size = storbench_bench::target::device::geometry(dev)
        .map_err(|e| anyhow::anyhow!("{}: cannot read its size: {e}", dev.display()))?
        .size_bytes;
    if spec.sizes.max_bytes() > size {
        let h = storbench_bench::units::human_bytes;
        bail!(
            "{} holds {} but the data at its maximum and the log need {}; give a smaller --data-max or --log-size",
            dev.display(),
            h(size),
            h(spec.sizes.max_bytes())
        );
    }
    Ok(())
}

/// Room for the journal: a record per write request, at a generous 20,000 requests a second.
fn journal_room(spec: &IntegritySpec) -> u64 {
    24 * 20_000 * spec.duration.as_secs().max(1)
}
