//! Where an integrity run's files go, checked before anything is written: a directory or a
//! block device (with its journal in a directory), a target that holds none of the
//! workload's files, and room for the files at their largest plus the journal. A missing
//! target directory is made last, once every check passed.

use super::{IntegrityOptions, IntegritySpec};
use crate::Result;
use crate::error::Doing;
use crate::target::{Refusal, free_space};
use std::path::PathBuf;

/// Where the files go, and the device for the data and the log if the target is one.
pub fn place(a: &IntegrityOptions) -> Result<(PathBuf, Option<PathBuf>)> {
    use std::os::unix::fs::FileTypeExt;
    let target = crate::files::resolve(a.target.as_deref().unwrap_or(std::path::Path::new(".")))
        .map_err(|e| e.to_string())?;
    let kind = std::fs::metadata(&target).map(|m| m.file_type()).ok();
    if kind.is_some_and(|k| k.is_block_device()) {
        if !a.allow_device {
            return Err(Refusal::DeviceNotAllowed { path: target }.into());
        }
        let dir = crate::files::resolve(a.journal_dir.as_deref().unwrap_or(std::path::Path::new(".")))
            .map_err(|e| e.to_string())?;
        return Ok((dir, Some(target)));
    }
    if a.journal_dir.is_some() {
        refuse!("--journal-dir is for a device target; in a directory the journal goes beside the files");
    }
    if kind.is_some_and(|k| !k.is_dir()) {
        refuse!(
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
    let free = free_space(crate::target::existing_ancestor(&spec.dir)).unwrap_or(u64::MAX);
    if need > free {
        let h = crate::units::human_bytes;
        refuse!(
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

fn make_dir(spec: &IntegritySpec) -> Result<()> {
    crate::files::create_dirs(&spec.dir)
        .map(drop)
        .doing(&format!("--target {}: cannot create the directory", spec.dir.display()))
}

/// None of the workload's files may be in the target (a link or a FIFO at their names
/// included: anything there is not this run's).
fn refuse_found(spec: &IntegritySpec) -> Result<()> {
    let layout = spec.layout();
    if let Some(found) = layout.existing().first() {
        refuse!(
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
    crate::target::device::check_writable(dev, force).map_err(Refusal::from)?;
    let size = crate::target::device::geometry(dev)
        .doing(&format!("{}: cannot read its size", dev.display()))?
        .size_bytes;
    if spec.sizes.max_bytes() > size {
        let h = crate::units::human_bytes;
        refuse!(
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
