//! btrfs: which block devices a filesystem spans (`/sys/fs/btrfs/UUID/devices`, under a sysfs
//! root given as an argument), and what it is doing besides serving I/O: a device replace, a
//! balance, a scrub, from `btrfs replace status -1`, `btrfs balance status` and
//! `btrfs scrub status --raw` (btrfs-progs), run through [`crate::command`].
//!
//! The kernel keeps replace and balance state behind ioctls only; the commands are the stable
//! interface. Their output was recorded from btrfs-progs 6.2 on kernel 6.18 (a RAID1 on loop
//! devices replaced, balanced and scrubbed) in tests/data/rebuild/btrfs/; the parsers also take
//! the older scrub wording ("running for") and sizes with units.

use std::io;
use std::path::Path;
use std::time::Duration;

use super::{Action, RebuildActivity, StackKind};
use crate::command::{self, Ending};
use crate::monitor::device::{entry_names, read_text};
use crate::run::StopFlag;

/// A status command answers at once; one that takes longer is stuck (a hung device).
const STATUS_TIME_LIMIT: Duration = Duration::from_secs(10);
const STATUS_OUTPUT_LIMIT: usize = 16 << 10;

/// The kernel names of the block devices of the btrfs filesystem `fsid` (its UUID), sorted;
/// empty when sysfs does not know it.
pub fn members(sys: &Path, fsid: &str) -> Vec<String> {
    entry_names(&sys.join("fs/btrfs").join(fsid).join("devices"))
}

/// The UUID of the btrfs filesystem that has the block device `name` (kernel name) among its
/// members; `None` when no mounted btrfs has it.
pub fn fsid_of_device(sys: &Path, name: &str) -> Option<String> {
    let filesystems = sys.join("fs/btrfs");
    entry_names(&filesystems)
        .into_iter()
        .filter(|id| id != "features")
        .find(|id| filesystems.join(id).join("devices").join(name).symlink_metadata().is_ok())
}

/// Reads one status command's stdout; `None` when it is none of the answers known.
type Parser = fn(&str) -> Option<Status>;

/// What one status command says about its operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    NotRunning,
    /// Running or paused: the reading, with `device` still empty.
    Running(RebuildActivity),
}

/// A status command that gave no answer storbench can read.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("`{command}` could not run: {source}")]
    Start { command: String, source: io::Error },
    #[error("`{command}` ended with {how}: {stderr}")]
    Failed { command: String, how: String, stderr: String },
    #[error("`{command}` printed something storbench cannot read: {output:?}")]
    Unreadable { command: String, output: String },
}

/// An operation a status command reports on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Replace,
    Balance,
    Scrub,
}

impl Operation {
    /// Every operation, in the order their readings come.
    pub const ALL: [Operation; 3] = [Operation::Replace, Operation::Balance, Operation::Scrub];

    fn query(self) -> (&'static [&'static str], Parser) {
        match self {
            Operation::Replace => (&["replace", "status", "-1"], parse_replace),
            Operation::Balance => (&["balance", "status"], parse_balance),
            Operation::Scrub => (&["scrub", "status", "--raw"], parse_scrub),
        }
    }
}

/// The readings of the btrfs filesystem mounted at `mount`: one per operation running (a
/// scrub can run beside a balance), or one idle reading.
pub fn sample(mount: &Path, stop: &StopFlag) -> Result<Vec<RebuildActivity>, StatusError> {
    sample_of(mount, &Operation::ALL, stop)
}

/// [`sample`] asking only about `operations`: those not asked are taken as not running.
pub fn sample_of(
    mount: &Path,
    operations: &[Operation],
    stop: &StopFlag,
) -> Result<Vec<RebuildActivity>, StatusError> {
    let point = mount.to_string_lossy().into_owned();
    let mut readings = Vec::new();
    for operation in operations {
        let (args, parse) = operation.query();
        if let Status::Running(mut reading) = query(args, &point, parse, stop)? {
            reading.device.clone_from(&point);
            readings.push(reading);
        }
    }
    if readings.is_empty() {
        readings.push(RebuildActivity::new(point, StackKind::Btrfs, Action::Idle));
    }
    Ok(readings)
}

/// The exclusive operation the filesystem `fsid` runs now, as sysfs names it (`none`,
/// `balance`, `balance paused`, `dev_replace`, `device add` ...); `None` where the kernel has no
/// such file (before 5.10). A replace or a balance runs only while it is not `none`; a scrub
/// is not an exclusive operation and never shows here.
pub fn exclusive_operation(sys: &Path, fsid: &str) -> Option<String> {
    read_text(&sys.join("fs/btrfs").join(fsid).join("exclusive_operation"))
}

/// Runs `btrfs ARGS MOUNT` and reads its stdout with `parse`. The exit status is not the
/// answer (`balance status` exits 1 while a balance runs): the output is, when it can be read.
fn query(
    args: &[&str],
    mount: &str,
    parse: fn(&str) -> Option<Status>,
    stop: &StopFlag,
) -> Result<Status, StatusError> {
    let spec = command::Spec::new("btrfs", args.iter().copied().chain([mount]), STATUS_TIME_LIMIT)
        .output_limit(STATUS_OUTPUT_LIMIT);
    let command = spec.describe();
    let finished = command::run(&spec, stop)
        .map_err(|source| StatusError::Start { command: command.clone(), source })?;
    let output = finished.stdout.text();
    match (finished.ending, parse(&output)) {
        (Ending::Exited, Some(status)) => Ok(status),
        (Ending::Exited, None) if finished.succeeded() => Err(StatusError::Unreadable { command, output }),
        _ => Err(StatusError::Failed {
            how: finished.describe(STATUS_TIME_LIMIT),
            stderr: finished.stderr.text().trim().to_owned(),
            command,
        }),
    }
}

fn running(action: Action) -> RebuildActivity {
    RebuildActivity::new(String::new(), StackKind::Btrfs, action)
}

/// `btrfs replace status -1`: `56.5% done, 0 write errs, 0 uncorr. read errs` while it runs;
/// `Never started`, `Started on …, finished on …`, `… canceled on … at 0.0%` or
/// `… suspended on … at 12.0%` otherwise.
pub fn parse_replace(text: &str) -> Option<Status> {
    let line = text.lines().find(|l| !l.trim().is_empty())?.trim();
    if line == "Never started" || (line.starts_with("Started on") && !line.contains("suspended on")) {
        return Some(Status::NotRunning);
    }
    let mut reading = running(Action::Replace);
    if line.starts_with("Started on") {
        reading.paused = true;
        reading.done_pct = line.split(" at ").nth(1).and_then(leading_percent);
    } else {
        reading.done_pct = Some(leading_percent(line.strip_suffix(" done").unwrap_or(line))?);
    }
    Some(Status::Running(reading))
}

/// `btrfs balance status`: `No balance found on 'M'`, or `Balance on 'M' is running` (or
/// `is paused`, `…, pause requested`) then `2 out of about 5 chunks balanced (3 considered),
/// 60% left`.
pub fn parse_balance(text: &str) -> Option<Status> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next()?;
    if first.starts_with("No balance found on") {
        return Some(Status::NotRunning);
    }
    if !first.starts_with("Balance on") {
        return None;
    }
    let mut reading = running(Action::Balance);
    reading.paused = first.contains("is paused");
    let left =
        lines.find(|l| l.ends_with("% left")).and_then(|l| l.rsplit(',').next()).and_then(leading_percent);
    reading.done_pct = left.map(|left| 100.0 - left);
    Some(Status::Running(reading))
}

/// `btrfs scrub status --raw`: `Status: running` with `Total to scrub:`, `Bytes scrubbed:
/// N (x%)` and `Rate: N/s`; `finished`, `aborted` or `interrupted`, or `no stats available`
/// (never scrubbed) otherwise. btrfs-progs before 5.x said `scrub started at …, running for …`.
pub fn parse_scrub(text: &str) -> Option<Status> {
    let field = |name: &str| text.lines().find_map(|l| l.trim().strip_prefix(name)).map(str::trim);
    // A scrub in its first seconds has no statistics yet but already counts its bytes; one
    // never run has neither.
    let state = match field("Status:") {
        Some(state) => state,
        None if text.contains(", running for ") || field("Bytes scrubbed:").is_some() => "running",
        None if text.contains("no stats available") || text.contains("scrub started at") => "",
        None => return None,
    };
    if state != "running" {
        return Some(Status::NotRunning);
    }
    let mut reading = running(Action::Scrub);
    reading.bytes_total = field("Total to scrub:").and_then(size);
    if let Some(scrubbed) = field("Bytes scrubbed:") {
        let mut words = scrubbed.split_whitespace();
        reading.bytes_done = words.next().and_then(size);
        reading.done_pct = words.next().and_then(|w| leading_percent(w.trim_start_matches('(')));
    }
    reading.speed_bytes_per_s = field("Rate:").and_then(|r| size(r.strip_suffix("/s")?));
    Some(Status::Running(reading))
}

/// The percent at the start of `text` (`56.5% done`, ` 60% left`), 0 to 100.
fn leading_percent(text: &str) -> Option<f64> {
    let (number, _) = text.trim_start().split_once('%')?;
    number.parse().ok().filter(|p: &f64| (0.0..=100.0).contains(p))
}

/// A size as btrfs-progs prints it: bytes (`--raw`, `1469857792`) or with a binary unit
/// (`1.37GiB`, `0.00B`).
fn size(text: &str) -> Option<u64> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    // Whole bytes exactly: a float would round those beyond 2^53.
    if let ("" | "B", Ok(bytes)) = (unit, number.parse()) {
        return Some(bytes);
    }
    let shift = match unit {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        "TiB" => 40,
        "PiB" => 50,
        "EiB" => 60,
        _ => return None,
    };
    let bytes = number.parse::<f64>().ok()? * (1u64 << shift) as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

#[cfg(test)]
pub(crate) mod tests;
