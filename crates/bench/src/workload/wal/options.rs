//! `wal`'s options as a user gives them, in a plan's workload table or as `storbench wal`'s
//! flags (the command line converts its flags into this type): each absent one takes the
//! default `WalSpec::default` states. [`WalOptions::spec`] validates them into the run's
//! `WalSpec`; every refusal names the key and what to give instead.

use super::method::SyncMethod;
use super::spec::{Layout, WalSpec};
use crate::units::{ByteSize, Seconds};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The keys of a wal workload. Their help is `storbench wal --help`'s, one flag per key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WalOptions {
    /// The log files' directory (default: the current one).
    pub target: Option<PathBuf>,
    /// A sync method by PostgreSQL's name, or `all` (the default).
    pub sync_method: Option<String>,
    /// Bytes each commit writes (default 8k).
    pub bs: Option<ByteSize>,
    /// Writers committing at once (default 1).
    pub writers: Option<u32>,
    /// `preallocated` (the default) or `growing`.
    pub layout: Option<String>,
    /// The log file's size (default 16MiB).
    pub file_size: Option<ByteSize>,
    /// Warm-up, not counted (default 1s).
    pub ramp: Option<Seconds>,
    /// Measured time (default 5s).
    pub runtime: Option<Seconds>,
    /// Seed of the bytes written.
    pub seed: Option<u64>,
}

/// A commit's size when none is given: PostgreSQL's WAL block.
pub const DEFAULT_BS: u64 = 8 << 10;

impl WalOptions {
    /// The run these options ask for: one point per sync method where `all` (or none) is
    /// given. The log files' directory must exist: storbench makes none there.
    pub fn spec(&self) -> Result<WalSpec, String> {
        let d = WalSpec::default();
        let methods = match self.sync_method.as_deref() {
            None | Some("all") => SyncMethod::ALL.to_vec(),
            Some(name) => vec![SyncMethod::parse(name).map_err(|e| format!("--sync-method: {e}, or all"))?],
        };
        let layout = match self.layout.as_deref() {
            None | Some("preallocated") => Layout::Preallocated,
            Some("growing") => Layout::Growing,
            Some(other) => return Err(format!("--layout {other}: give preallocated or growing")),
        };
        let spec = WalSpec {
            dir: self.target.clone().unwrap_or_else(|| ".".into()),
            methods,
            layouts: vec![layout],
            sizes: vec![u32::try_from(self.bs.map_or(DEFAULT_BS, |b| b.0)).unwrap_or(u32::MAX)],
            writers: vec![self.writers.unwrap_or(1)],
            file_bytes: self.file_size.map_or(d.file_bytes, |b| b.0),
            warmup: self.ramp.map_or(d.warmup, |s| s.0),
            seconds: self.runtime.map_or(d.seconds, |s| s.0),
            seed: self.seed.unwrap_or(d.seed),
        };
        spec.validate()?;
        check_dir(&spec.dir)?;
        Ok(spec)
    }

    /// How long the run takes (`WalSpec::duration`); one point's warm-up and measured time
    /// where the options do not validate.
    pub fn expected(&self) -> std::time::Duration {
        let d = WalSpec::default();
        let one = || self.ramp.map_or(d.warmup, |s| s.0) + self.runtime.map_or(d.seconds, |s| s.0);
        self.spec().map_or_else(|_| one(), |s| s.duration())
    }
}

/// The log files' directory must exist and be one.
fn check_dir(dir: &Path) -> Result<(), String> {
    let entry = crate::files::entry(dir).map_err(|e| e.to_string())?;
    match entry {
        Some(e) if e.kind == crate::files::FileKind::Dir => Ok(()),
        Some(e) => Err(format!(
            "--target {}: it is {}, not a directory; give a directory on the storage to test",
            dir.display(),
            e.kind.describe()
        )),
        None => Err(format!(
            "--target {}: no such directory; give a directory on the storage to test",
            dir.display()
        )),
    }
}
