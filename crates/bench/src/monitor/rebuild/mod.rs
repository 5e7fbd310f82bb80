//! Rebuild activity under a run's storage: what a Linux md array or a btrfs filesystem is doing
//! besides serving the run (a resync, a recovery onto a new disk, a check, a reshape; a device
//! replace, a balance, a scrub), as one [`RebuildActivity`] value per device and reading.
//!
//! A run that measures while its mirror rebuilds measures a degraded system; these readings let
//! it say so ([`active`], [`describe`]) and put the rebuild's progress beside its own figures.
//!
//! - [`md`]: `/proc/mdstat` and `/sys/block/mdX/md/*`, read under a root directory so the
//!   tests run on recorded files (tests/data/rebuild/md/), and the kernel's rebuild throttles.
//! - [`btrfs`]: the status commands of btrfs-progs, run through [`crate::command`], and a
//!   filesystem's member devices from `/sys/fs/btrfs/UUID/devices`.
//! - [`follow`]: [`RebuildSampler`], every stack's reading once a second for the run's series,
//!   without making the host sampler wait for btrfs's commands; [`during`], what the series
//!   says happened, for the run's warnings.
//! - [`watch`]: [`Watched`], what to read for a run, found from the paths it uses (md arrays
//!   anywhere in their device stacks, btrfs mounts), one reading of it all, and what is
//!   abnormal when a run starts.
//!
//! Readers never panic on odd input: a torn or unknown file gives `None` (not md, nothing
//! known), an unparsable command output gives an error.

pub mod btrfs;
pub mod follow;
pub mod md;
pub mod watch;

pub use follow::{RebuildSampler, during};
use storbench_report::RebuildSample;
pub use watch::Watched;

/// What kind of storage stack reported the activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackKind {
    Md,
    Btrfs,
}

/// What the array or filesystem is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing beyond serving I/O (md `idle` or `frozen`; no btrfs operation running).
    Idle,
    /// md: making the copies or the parity agree (a new array, after an unclean shutdown).
    Resync,
    /// md: rebuilding onto a device added to a degraded array.
    Recovery,
    /// md: reading everything and counting mismatches (`check`).
    Check,
    /// md: reading everything and rewriting mismatches (`repair`).
    Repair,
    /// md: changing the layout or the number of devices.
    Reshape,
    /// btrfs: `btrfs replace` copying one device onto another.
    Replace,
    /// btrfs: `btrfs balance` relocating chunks.
    Balance,
    /// btrfs: `btrfs scrub` reading and verifying every copy.
    Scrub,
}

impl Action {
    /// The word used in the series and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Idle => "idle",
            Action::Resync => "resync",
            Action::Recovery => "recovery",
            Action::Check => "check",
            Action::Repair => "repair",
            Action::Reshape => "reshape",
            Action::Replace => "replace",
            Action::Balance => "balance",
            Action::Scrub => "scrub",
        }
    }
}

/// One reading of one array or filesystem.
#[derive(Debug, Clone, PartialEq)]
pub struct RebuildActivity {
    /// The md device's kernel name (`md0`) or the btrfs filesystem's mount point.
    pub device: String,
    pub kind: StackKind,
    pub action: Action,
    /// The action is waiting rather than moving data: an md resync `DELAYED`/`PENDING` behind
    /// another array on the same disks, a paused btrfs balance or a suspended replace.
    pub paused: bool,
    /// Progress in percent, as the kernel or btrfs-progs reports it.
    pub done_pct: Option<f64>,
    /// The action's own speed, bytes per second.
    pub speed_bytes_per_s: Option<u64>,
    /// How far it got and how far it goes, in bytes as the stack counts them: md counts the
    /// sync position per member device (array size for raid10), btrfs scrub the bytes to read.
    pub bytes_done: Option<u64>,
    pub bytes_total: Option<u64>,
    /// md: devices missing from the array (`degraded`); a degraded array that is not
    /// recovering runs without redundancy, which a reader of the figures wants to know.
    pub degraded_devices: Option<u32>,
}

impl RebuildActivity {
    /// A reading of `device` with nothing known yet but what it is.
    pub fn new(device: impl Into<String>, kind: StackKind, action: Action) -> RebuildActivity {
        RebuildActivity {
            device: device.into(),
            kind,
            action,
            paused: false,
            done_pct: None,
            speed_bytes_per_s: None,
            bytes_done: None,
            bytes_total: None,
            degraded_devices: None,
        }
    }

    /// Whether this reading shows a rebuild, scrub or degraded array that makes the run's
    /// figures other than normal ones: any action but idle (paused ones too: they resume on
    /// their own), or missing devices.
    pub fn is_abnormal(&self) -> bool {
        self.action != Action::Idle || self.degraded_devices.is_some_and(|d| d > 0)
    }

    /// This reading as a row of the series holds it (`columns::rebuild`).
    pub fn to_sample(&self) -> RebuildSample {
        RebuildSample {
            stack: self.device.clone(),
            action: Some(self.action.as_str().to_owned()),
            paused: self.paused,
            pct_done: self.done_pct,
            bytes_done: self.bytes_done,
            bytes_total: self.bytes_total,
            speed_bytes_per_sec: self.speed_bytes_per_s,
            degraded_devices: self.degraded_devices,
        }
    }
}

/// The readings that show a rebuild or a degraded array: what a run starting now warns about.
pub fn active(readings: &[RebuildActivity]) -> Vec<&RebuildActivity> {
    readings.iter().filter(|r| r.is_abnormal()).collect()
}

/// One reading in words, for a run's warnings: "md0: recovery 12.6 % done at 215.5 MiB/s,
/// 1 device missing".
pub fn describe(reading: &RebuildActivity) -> String {
    let mut text = format!("{}: {}", reading.device, reading.action.as_str());
    if reading.paused {
        text.push_str(" (paused)");
    }
    if let Some(pct) = reading.done_pct {
        text.push_str(&format!(" {pct:.1} % done"));
    }
    if let Some(speed) = reading.speed_bytes_per_s {
        text.push_str(&format!(" at {:.1} MiB/s", speed as f64 / (1u64 << 20) as f64));
    }
    match reading.degraded_devices {
        Some(1) => text.push_str(", 1 device missing"),
        Some(n) if n > 1 => text.push_str(&format!(", {n} devices missing")),
        _ => {}
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_and_healthy_is_normal_and_anything_else_is_not() {
        let idle = RebuildActivity::new("md0", StackKind::Md, Action::Idle);
        assert!(!idle.is_abnormal());
        let degraded = RebuildActivity { degraded_devices: Some(1), ..idle.clone() };
        let scrub = RebuildActivity::new("/mnt", StackKind::Btrfs, Action::Scrub);
        let readings = [idle.clone(), degraded.clone(), scrub.clone()];
        assert_eq!(active(&readings), vec![&degraded, &scrub]);
        assert!(active(&[idle]).is_empty());
    }

    #[test]
    fn a_description_names_device_action_progress_speed_and_missing_devices() {
        let reading = RebuildActivity {
            done_pct: Some(12.6),
            speed_bytes_per_s: Some(220_629 * 1024),
            degraded_devices: Some(1),
            ..RebuildActivity::new("md0", StackKind::Md, Action::Recovery)
        };
        assert_eq!(describe(&reading), "md0: recovery 12.6 % done at 215.5 MiB/s, 1 device missing");
        let paused =
            RebuildActivity { paused: true, ..RebuildActivity::new("/m", StackKind::Btrfs, Action::Balance) };
        assert_eq!(describe(&paused), "/m: balance (paused)");
    }
}
