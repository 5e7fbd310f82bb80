//! What a `wal` run measures, as a plan states it and the library checks it: the directory its
//! log files are made in, the sync methods, the write sizes and writer counts (every
//! combination is a point), whether the log file is written over zeros laid down first
//! (PostgreSQL's preallocated segments) or grows with each commit, and each point's warm-up and
//! measured time. Validated once, before anything is created; every refusal names the key and
//! what to give instead.

use super::method::SyncMethod;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Where each commit's bytes go in the log file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// Over a file of zeros written and synced before the point (PostgreSQL's WAL segments):
    /// a sync carries the data only.
    Preallocated,
    /// Appended to a file that grows with each commit (SQLite's WAL, a binary log): each sync
    /// carries the file's new size too.
    Growing,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Preallocated => "preallocated",
            Layout::Growing => "growing",
        }
    }
}

/// The smallest write a commit makes, and the step of every size: a disk sector.
pub const SECTOR: u32 = 512;
/// The largest write a commit makes: above it a write is no longer a commit record.
pub const MAX_WRITE: u32 = 16 << 20;

/// A `wal` run: every combination of `methods`, `layouts`, `sizes` and `writers` is measured
/// as one point, in that order of nesting (methods outermost).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WalSpec {
    /// The directory the log files are made in: one new file per point, removed after it.
    pub dir: PathBuf,
    pub methods: Vec<SyncMethod>,
    pub layouts: Vec<Layout>,
    /// Bytes each commit writes, multiples of 512.
    pub sizes: Vec<u32>,
    /// Writers committing at once on the same log (group commit).
    pub writers: Vec<u32>,
    /// The log file's size: a preallocated file is written over from its start again when
    /// the commits reach its end; a growing one starts again empty.
    pub file_bytes: u64,
    /// Each point's warm-up, not counted.
    pub warmup: Duration,
    /// Each point's measured time.
    pub seconds: Duration,
    /// The bytes written (random, so no device compresses or dedups them).
    pub seed: u64,
}

impl Default for WalSpec {
    /// Every method on a preallocated 16 MiB file (a PostgreSQL segment), at 512 B, 8 KiB
    /// (PostgreSQL's WAL block) and 64 KiB, one writer, 1 s of warm-up and 5 s measured per
    /// point.
    fn default() -> Self {
        WalSpec {
            dir: PathBuf::from("."),
            methods: SyncMethod::ALL.to_vec(),
            layouts: vec![Layout::Preallocated],
            sizes: vec![512, 8 << 10, 64 << 10],
            writers: vec![1],
            file_bytes: 16 << 20,
            warmup: Duration::from_secs(1),
            seconds: Duration::from_secs(5),
            seed: 0x5741_4C00,
        }
    }
}

/// One point of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Point {
    pub method: SyncMethod,
    pub layout: Layout,
    pub size: u32,
    pub writers: u32,
}

impl std::fmt::Display for Point {
    /// `fdatasync 8192 B x1 (preallocated)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} B x{} ({})", self.method, self.size, self.writers, self.layout.name())
    }
}

impl WalSpec {
    /// Refuses what cannot be measured, naming the key and the fix.
    pub fn validate(&self) -> Result<(), String> {
        let empty = [
            ("methods", self.methods.is_empty()),
            ("layouts", self.layouts.is_empty()),
            ("sizes", self.sizes.is_empty()),
            ("writers", self.writers.is_empty()),
        ];
        if let Some((key, _)) = empty.iter().find(|(_, e)| *e) {
            return Err(format!("wal: `{key}` is empty; give at least one, or leave it out for the default"));
        }
        for &size in &self.sizes {
            if size == 0 || size % SECTOR != 0 || size > MAX_WRITE {
                return Err(format!(
                    "wal: size {size} B is not a whole number of 512-byte sectors from 512 B to 16 MiB; \
                     give sizes such as 512, 4k, 8k, 64k"
                ));
            }
        }
        if let Some(w) = self.writers.iter().find(|w| !(1..=1024).contains(*w)) {
            return Err(format!("wal: {w} writers; give from 1 to 1024"));
        }
        let largest = u64::from(self.sizes.iter().copied().max().unwrap_or(SECTOR));
        if self.file_bytes < 2 * largest || !self.file_bytes.is_multiple_of(4096) {
            return Err(format!(
                "wal: a log file of {} B cannot hold two commits of {largest} B on 4 KiB boundaries; \
                 give file_bytes a multiple of 4 KiB of at least {} B",
                self.file_bytes,
                (2 * largest).next_multiple_of(4096)
            ));
        }
        if self.seconds.is_zero() {
            return Err("wal: `seconds` is 0; give each point a measured time, as 5s".into());
        }
        Ok(())
    }

    /// Every point, methods outermost, then layouts, sizes and writers.
    pub fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for &method in &self.methods {
            for &layout in &self.layouts {
                for &size in &self.sizes {
                    for &writers in &self.writers {
                        out.push(Point { method, layout, size, writers });
                    }
                }
            }
        }
        out
    }

    /// How long the run takes at most: every point's warm-up and measured time.
    pub fn duration(&self) -> Duration {
        (self.warmup + self.seconds) * u32::try_from(self.points().len()).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_valid_and_its_points_nest_methods_outermost() {
        let spec = WalSpec::default();
        assert_eq!(spec.validate(), Ok(()));
        let points = spec.points();
        assert_eq!(points.len(), 5 * 3);
        assert_eq!(points[0].to_string(), "fdatasync 512 B x1 (preallocated)");
        assert_eq!(points[3].method, SyncMethod::Fsync);
        assert_eq!(spec.duration(), Duration::from_secs(6 * 15));
    }

    #[test]
    fn what_cannot_be_measured_is_refused_by_key_with_the_fix() {
        let refused = |change: fn(&mut WalSpec), says: &str| {
            let mut spec = WalSpec::default();
            change(&mut spec);
            let e = spec.validate().unwrap_err();
            assert!(e.contains(says), "{e}");
        };
        refused(|s| s.methods.clear(), "`methods` is empty");
        refused(|s| s.sizes = vec![1000], "size 1000 B is not a whole number of 512-byte sectors");
        refused(|s| s.sizes = vec![32 << 20], "from 512 B to 16 MiB");
        refused(|s| s.writers = vec![0], "0 writers; give from 1 to 1024");
        refused(|s| s.file_bytes = 64 << 10, "at least 131072 B");
        refused(|s| s.file_bytes = (1 << 20) + 512, "a multiple of 4 KiB");
        refused(|s| s.seconds = Duration::ZERO, "`seconds` is 0");
    }

    #[test]
    fn a_plan_states_the_spec_by_its_keys_and_an_unknown_key_is_refused() {
        let spec: WalSpec = serde_json::from_value(serde_json::json!({
            "dir": "/x", "methods": ["fdatasync", "open_datasync"], "layouts": ["growing"],
            "sizes": [8192], "writers": [1, 4], "file_bytes": 1048576,
            "warmup": {"secs": 0, "nanos": 0}, "seconds": {"secs": 1, "nanos": 0}, "seed": 1
        }))
        .unwrap();
        assert_eq!(spec.points().len(), 4);
        let e =
            serde_json::from_value::<WalSpec>(serde_json::json!({"dir": "/x", "fsync": true})).unwrap_err();
        assert!(e.to_string().contains("unknown field `fsync`"), "{e}");
    }
}
