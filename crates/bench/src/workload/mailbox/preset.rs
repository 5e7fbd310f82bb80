//! Presets: the database engine's parameters and the pass/fail thresholds of each Jetstress
//! generation (spec: mailbox.md §1-§3). Every figure here can be overridden from the command
//! line; the preset only supplies the defaults.

use serde::Serialize;

/// A Jetstress generation whose engine behaviour and thresholds are reproduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Preset {
    #[serde(rename = "2007")]
    V2007,
    #[serde(rename = "2010")]
    V2010,
    #[serde(rename = "2013")]
    V2013,
}

/// The kinds of test Jetstress runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestType {
    /// The transactional workload under the strict thresholds.
    Performance,
    /// The same workload judged by the lenient thresholds (long runs).
    Stress,
    /// Sequential read of every database file: MB/s per database.
    Backup,
    /// Replay of log files after an unclean stop: seconds per log file.
    #[serde(alias = "soft-recovery")]
    SoftRecovery,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::V2007, Preset::V2010, Preset::V2013];

    pub fn name(self) -> &'static str {
        match self {
            Preset::V2007 => "2007",
            Preset::V2010 => "2010",
            Preset::V2013 => "2013",
        }
    }

    pub fn parse(s: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The engine parameters this generation used.
    pub fn profile(self) -> Profile {
        let base = Profile {
            page_size: 32 * 1024,
            log_file_size: 1024 * 1024,
            cache_min: 32 << 20,
            cache_max: 256 << 20,
            checkpoint_depth: 20 << 20,
            mix: OpMix { insert: 40, delete: 20, replace: 5, read: 35 },
            lazy_commit_pct: 70,
            bdm_bytes_per_sec: 0,
            record_bytes: 1000,
            long_value_bytes: 2000,
            short_pad_bytes: 200,
        };
        match self {
            // Jetstress 2007 (003's report): 8 KB pages, 32-256 MB cache, 40/30/5/25, 55 % lazy.
            Preset::V2007 => Profile {
                page_size: 8 * 1024,
                mix: OpMix { insert: 40, delete: 30, replace: 5, read: 25 },
                lazy_commit_pct: 55,
                ..base
            },
            // 2010: 32 KB pages and background maintenance at about 5 MB/s per database.
            Preset::V2010 => Profile { bdm_bytes_per_sec: 5 << 20, ..base },
            // 2013: the JetstressConfig defaults, maintenance throttled to 1-2 MB/s per copy,
            // checkpoint depth of a replicated database (100 MB).
            Preset::V2013 => Profile { bdm_bytes_per_sec: 3 << 19, checkpoint_depth: 100 << 20, ..base },
        }
    }

    /// Latency limits of `test`: strict for a performance run, lenient for stress.
    pub fn thresholds(self, test: TestType) -> Thresholds {
        let max_ms = match (self, test) {
            (_, TestType::Stress) => 200.0,
            (Preset::V2007, _) => 50.0,
            _ => 100.0,
        };
        Thresholds {
            db_read_avg_ms: 20.0,
            db_read_max_ms: max_ms,
            log_write_avg_ms: 10.0,
            log_write_max_ms: max_ms,
            page_fault_stalls_per_sec: 1.0,
        }
    }
}

/// Shares of the four operations, in percent; they add up to 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OpMix {
    pub insert: u32,
    pub delete: u32,
    pub replace: u32,
    pub read: u32,
}

impl OpMix {
    pub fn total(&self) -> u32 {
        self.insert + self.delete + self.replace + self.read
    }
}

/// What shapes the engine's I/O (mailbox.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// Database page: the unit of every random read and the granule of writes.
    pub page_size: u32,
    /// Each log generation is one file of this size, created ahead of use.
    pub log_file_size: u32,
    /// The cache starts at `cache_min` and grows to `cache_max` (bytes, per database).
    pub cache_min: u64,
    pub cache_max: u64,
    /// Dirty pages whose first change is older than this much log are written (bytes).
    pub checkpoint_depth: u64,
    pub mix: OpMix,
    /// Share of commits that return without waiting for the log write.
    pub lazy_commit_pct: u32,
    /// Background database maintenance read rate per database; 0 = off.
    pub bdm_bytes_per_sec: u64,
    /// Logged bytes of a record, of its long value, and of a replace's short column.
    pub record_bytes: u32,
    pub long_value_bytes: u32,
    pub short_pad_bytes: u32,
}

/// Pass/fail limits; a run fails when any one is exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    pub db_read_avg_ms: f64,
    pub db_read_max_ms: f64,
    pub log_write_avg_ms: f64,
    pub log_write_max_ms: f64,
    /// Average operations per second that waited for a free cache buffer.
    pub page_fault_stalls_per_sec: f64,
}
