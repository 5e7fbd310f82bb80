//! The options of `storbench integrity` into the library's `IntegritySpec`: sizes that fit
//! together and in the free space, a target that holds none of the workload's files, and the
//! defaults (004's small set, 5 minutes, SQLIOSim's thresholds). Nothing is written here.

use crate::args::{EngineArg, IntegrityArgs, IntegrityPreset};
use anyhow::{Result, bail};
use std::path::PathBuf;
use std::time::Duration;
use storbench_bench::engine::EngineKind;
use storbench_bench::target::{Refusal, free_space};
use storbench_bench::workload::integrity::{IntegritySpec, Sizes};

impl IntegrityArgs {
    /// SQLIOSim's TestCycleDuration.
    pub const DURATION: Duration = Duration::from_secs(300);
    /// SQLIOSim's TargetIODuration.
    pub const TARGET_IO_MS: u64 = 100;
    /// SQLIOSim's shortest shrink-and-grow period.
    pub const SHRINK_EVERY: Duration = Duration::from_secs(120);
    /// SQL Server's message 833.
    pub const DELAY_THRESHOLD: Duration = Duration::from_secs(15);
    /// The longest target I/O duration: an hour, past anything a storage takes for one I/O.
    pub const MAX_TARGET_IO_MS: u64 = 3_600_000;
}

/// Why integrity refuses --steady-state.
const STEADY_REFUSED: &str = "--steady-state: integrity has no figure per round for the SNIA \
     steady-state rule to judge (its result is a pass or fail over the whole run and its final \
     audit of every page); drop --steady-state, or use it with io, oltp, mailbox or replay";

/// The run the options describe.
pub fn validate(a: &IntegrityArgs) -> Result<IntegritySpec> {
    if a.steady_state.is_some() {
        bail!(STEADY_REFUSED);
    }
    crate::subcommand::results_root(a.out.output_dir.as_deref())?;
    let (data, max, growth, log) = a.preset.unwrap_or(IntegrityPreset::Small).sizes();
    let pick = |v: Option<storbench_bench::units::ByteSize>, d: u64| v.map_or(d, |s| s.0);
    let data = pick(a.data_size, data);
    // A data size given alone sets the maximum too, unless the maximum is given.
    let max = a.data_max.map_or(if a.data_size.is_some() { data.max(max) } else { max }, |s| s.0);
    let sizes = Sizes::from_bytes(data, max, pick(a.data_growth, growth), pick(a.log_size, log));
    if let Some(problem) = sizes.problem() {
        bail!("{problem}; give --data-size, --data-max, --data-growth and --log-size that fit together");
    }
    let duration = a.duration.map_or(IntegrityArgs::DURATION, |d| d.0);
    if duration < Duration::from_secs(1) {
        bail!("--duration {:?}: the activities need at least 1s", duration);
    }
    let users = a.users.unwrap_or_else(default_users);
    if !(1..=64).contains(&users) {
        bail!("--users {users}: use 1 to 64 user threads");
    }
    let target_io_ms = a.target_io_ms.unwrap_or(IntegrityArgs::TARGET_IO_MS);
    if !(1..=IntegrityArgs::MAX_TARGET_IO_MS).contains(&target_io_ms) {
        bail!(
            "--target-io-ms {target_io_ms}: the target I/O duration is 1 ms to {} ms (an hour)",
            IntegrityArgs::MAX_TARGET_IO_MS
        );
    }
    let engine = match a.engine.unwrap_or(EngineArg::IoUring) {
        EngineArg::IoUring => EngineKind::IoUring,
        EngineArg::Psync => EngineKind::Psync,
        EngineArg::Null => {
            bail!("--engine null: the integrity stress checks real data; use io_uring or psync")
        }
    };
    let (dir, device) = place(a)?;
    Ok(IntegritySpec {
        dir,
        device,
        sizes,
        duration,
        seed: a.seed.unwrap_or(storbench_bench::rng::DEFAULT_SEED),
        engine,
        direct: !a.buffered,
        write_through: a.write_through,
        users,
        target_io: Duration::from_millis(target_io_ms),
        delay_threshold: a.delay_threshold.map_or(IntegrityArgs::DELAY_THRESHOLD, |d| d.0),
        sync_every: Duration::from_secs(1),
        shrink_every: a.shrink_every.map_or(IntegrityArgs::SHRINK_EVERY, |d| d.0),
        faults: None,
    })
}

/// Where the files go, and the device for the data and the log if the target is one.
fn place(a: &IntegrityArgs) -> Result<(PathBuf, Option<PathBuf>)> {
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

/// SQLIOSim's user threads: twice the CPUs, at most 8.
fn default_users() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get() as u32 * 2).min(8)
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
