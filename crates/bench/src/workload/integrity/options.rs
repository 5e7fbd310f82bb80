//! `integrity`'s options as a user gives them, in a plan's workload table or as `storbench
//! integrity`'s flags (the command line converts its flags into this type; its crash-cycle
//! flags are the command line's alone). [`IntegrityOptions::spec`] validates them into the
//! run's `IntegritySpec` with the defaults (004's small file set, 5 minutes, SQLIOSim's
//! thresholds); every refusal names the option and what to give instead.

use super::{IntegritySpec, Sizes};
use crate::engine::EngineKind;
use crate::units::{ByteSize, Seconds};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The file sets of the reference evaluation (004): data initial, maximum, growth; log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntegrityPreset {
    /// Data 500 MB growing to 1,000 MB by 50 MB; log 50 MB.
    Small,
    /// Data 5,000 MB growing to 10,000 MB by 500 MB; log 50 MB.
    Big,
}

impl IntegrityPreset {
    /// (data, data max, growth, log) in bytes.
    pub fn sizes(self) -> (u64, u64, u64, u64) {
        const MB: u64 = 1 << 20;
        match self {
            IntegrityPreset::Small => (500 * MB, 1000 * MB, 50 * MB, 50 * MB),
            IntegrityPreset::Big => (5000 * MB, 10_000 * MB, 500 * MB, 50 * MB),
        }
    }
}

impl std::str::FromStr for IntegrityPreset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "small" => Ok(IntegrityPreset::Small),
            "big" => Ok(IntegrityPreset::Big),
            _ => Err(format!("'{s}' is no file set; give small or big")),
        }
    }
}

/// The keys of an integrity workload. Their help is `storbench integrity --help`'s, one flag
/// per key (target, allow_device, force and journal_dir are a plan configuration's).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntegrityOptions {
    /// The files' directory, or a block device (default: the current directory).
    pub target: Option<PathBuf>,
    pub allow_device: bool,
    pub force: bool,
    /// With a device target: the journal's and the manifest's directory.
    pub journal_dir: Option<PathBuf>,
    /// 004's file set (default small).
    pub preset: Option<IntegrityPreset>,
    pub data_size: Option<ByteSize>,
    pub data_max: Option<ByteSize>,
    pub data_growth: Option<ByteSize>,
    pub log_size: Option<ByteSize>,
    /// How long the activities run (default 5 minutes).
    pub duration: Option<Seconds>,
    /// Refused: integrity has no figure per round.
    pub steady_state: Option<Seconds>,
    pub users: Option<u32>,
    pub target_io_ms: Option<u64>,
    pub shrink_every: Option<Seconds>,
    pub delay_threshold: Option<Seconds>,
    pub buffered: bool,
    pub write_through: bool,
    /// Keep the files for `integrity verify`.
    pub keep: bool,
    pub engine: Option<EngineKind>,
    pub seed: Option<u64>,
}

/// Why integrity refuses a steady state.
const STEADY_REFUSED: &str = "--steady-state: integrity has no figure per round for the SNIA \
     steady-state rule to judge (its result is a pass or fail over the whole run and its final \
     audit of every page); drop --steady-state, or use it with io, oltp, mailbox or replay";

impl IntegrityOptions {
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

    /// How long the activities run.
    pub fn duration(&self) -> Duration {
        self.duration.map_or(Self::DURATION, |d| d.0)
    }

    /// The run these options ask for, its files in `target` as given (or the current
    /// directory) and on no device: where they go is the caller's to resolve, since a device
    /// needs its permission and its checks.
    pub fn spec(&self) -> Result<IntegritySpec, String> {
        if self.steady_state.is_some() {
            return Err(STEADY_REFUSED.into());
        }
        let duration = self.duration();
        if duration < Duration::from_secs(1) {
            return Err(format!("--duration {duration:?}: the activities need at least 1s"));
        }
        let users = self.users.unwrap_or_else(default_users);
        if !(1..=64).contains(&users) {
            return Err(format!("--users {users}: use 1 to 64 user threads"));
        }
        let target_io_ms = self.target_io_ms.unwrap_or(Self::TARGET_IO_MS);
        if !(1..=Self::MAX_TARGET_IO_MS).contains(&target_io_ms) {
            return Err(format!(
                "--target-io-ms {target_io_ms}: the target I/O duration is 1 ms to {} ms (an hour)",
                Self::MAX_TARGET_IO_MS
            ));
        }
        let engine = match self.engine.unwrap_or(EngineKind::IoUring) {
            EngineKind::Null => {
                return Err(
                    "--engine null: the integrity stress checks real data; use io_uring or psync".into()
                );
            }
            real => real,
        };
        Ok(IntegritySpec {
            dir: self.target.clone().unwrap_or_else(|| ".".into()),
            device: None,
            sizes: self.sizes()?,
            duration,
            seed: self.seed.unwrap_or(crate::rng::DEFAULT_SEED),
            engine,
            direct: !self.buffered,
            write_through: self.write_through,
            users,
            target_io: Duration::from_millis(target_io_ms),
            delay_threshold: self.delay_threshold.map_or(Self::DELAY_THRESHOLD, |d| d.0),
            sync_every: Duration::from_secs(1),
            shrink_every: self.shrink_every.map_or(Self::SHRINK_EVERY, |d| d.0),
            faults: None,
        })
    }

    /// The preset's sizes with each one given in its place; a data size given alone sets the
    /// maximum too, unless the maximum is given.
    fn sizes(&self) -> Result<Sizes, String> {
        let (data, max, growth, log) = self.preset.unwrap_or(IntegrityPreset::Small).sizes();
        let pick = |v: Option<ByteSize>, d: u64| v.map_or(d, |s| s.0);
        let data = pick(self.data_size, data);
        let max = self.data_max.map_or(if self.data_size.is_some() { data.max(max) } else { max }, |s| s.0);
        let sizes = Sizes::from_bytes(data, max, pick(self.data_growth, growth), pick(self.log_size, log));
        match sizes.problem() {
            Some(problem) => Err(format!(
                "{problem}; give --data-size, --data-max, --data-growth and --log-size that fit together"
            )),
            None => Ok(sizes),
        }
    }
}

/// SQLIOSim's user threads: twice the CPUs, at most 8.
fn default_users() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get() as u32 * 2).min(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_004s_small_set_for_5_minutes_and_each_refusal_names_its_option() {
        let spec = IntegrityOptions { users: Some(4), ..Default::default() }.spec().unwrap();
        assert_eq!(
            (spec.duration, spec.users, spec.engine),
            (IntegrityOptions::DURATION, 4, EngineKind::IoUring)
        );
        assert_eq!(spec.sizes.max_bytes(), 1050 << 20, "data at its 1,000 MB maximum and the 50 MB log");
        assert!(spec.direct && !spec.write_through);
        let data_alone = IntegrityOptions { data_size: Some(ByteSize(2000 << 20)), ..Default::default() };
        assert_eq!(data_alone.spec().unwrap().sizes.max_bytes(), 2050 << 20, "the maximum follows the data");
        let refused = |o: IntegrityOptions| o.spec().unwrap_err();
        assert!(
            refused(IntegrityOptions {
                steady_state: Some(Seconds(Duration::from_secs(5))),
                ..Default::default()
            })
            .starts_with("--steady-state: integrity has no figure per round")
        );
        assert_eq!(
            refused(IntegrityOptions { users: Some(0), ..Default::default() }),
            "--users 0: use 1 to 64 user threads"
        );
        assert!(
            refused(IntegrityOptions { engine: Some(EngineKind::Null), ..Default::default() })
                .starts_with("--engine null")
        );
        assert!(
            refused(IntegrityOptions { target_io_ms: Some(0), ..Default::default() })
                .starts_with("--target-io-ms 0")
        );
        assert_eq!("big".parse(), Ok(IntegrityPreset::Big));
        assert!("huge".parse::<IntegrityPreset>().unwrap_err().contains("give small or big"));
    }
}
