//! The full-disclosure inventory of the system under test (`disclosure.json`), schema version 1.
//!
//! What a published result must say about the machine it came from so another person can
//! judge it or rebuild it: processors, memory, every block device under the targets with its
//! layers, the filesystem and mount, kernel, distribution, storbench's version and the
//! database's non-default settings.
//!
//! Wire format (fields may be added, never renamed or removed). Every value the host could
//! not tell is `null` (or an empty list), never a guess:
//!
//! - `schema_version`, `storbench_version`, `distribution` (os-release `PRETTY_NAME`),
//!   `kernel` {`release`, `version`}.
//! - `cpu` {`model`, `sockets`, `cores`, `threads`, `mhz_current`, `mhz_max`, `governor`,
//!   `caches` [{`level`, `kind`, `size_bytes`, `instances`}]}.
//! - `memory` {`total_bytes`, `dimms` [{`label`, `size_bytes`, `mem_type`}]}: the DIMMs only
//!   where the kernel's EDAC driver lists them to every user; absent otherwise.
//! - `targets` [{`path`, `mount_point`, `fstype`, `source`, `mount_options`, `super_options`,
//!   `device`, `devices`, `block_size`, `fragment_size`}]: from each target path to the top
//!   block device under it, and every device its filesystem spans (each member of a
//!   multi-device btrfs); the filesystem's block and fragment sizes as statvfs gives them.
//! - `devices` [the fields of a summary's `device` (`name`, `kind`, `dev`, `parent`,
//!   `members`, sector sizes, `rotational`, `raid_level`), and `size_bytes`, `read_only`,
//!   `model`, `vendor`, `firmware`, `serial_sha256`, `scheduler`, `nr_requests`,
//!   `write_cache`, `discard_granularity`, `discard_max_bytes`, `minimum_io_size`,
//!   `optimal_io_size`, `built_from`, `partitions` [{`name`, `start_sector`, `size_bytes`,
//!   `aligned_4k`, `aligned_1m`}], `dm` {`name`, `subsystem`}, `md` {`chunk_size_bytes`,
//!   `raid_disks`}]: every device from each top one (each btrfs member) down to the whole
//!   disks, each once.
//! - `database` {`kind`, `version`, `non_default_settings`}: filled by the database backend
//!   for `oltp run` (the first target's); empty (`null`s and `{}`) for workloads without one.
//!
//! A serial number identifies one physical drive, so it is stored only as the lowercase hex
//! SHA-256 of its text: two reports can show the same drive was used without publishing it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::DeviceInfo;

/// Version of the `disclosure.json` layout; bump on any change that is not an addition.
pub const DISCLOSURE_SCHEMA_VERSION: u32 = 1;

/// The system under test, as far as an unprivileged process can see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disclosure {
    pub schema_version: u32,
    pub storbench_version: String,
    pub cpu: CpuInventory,
    pub memory: MemoryInventory,
    pub targets: Vec<TargetPath>,
    pub devices: Vec<BlockDevice>,
    pub kernel: KernelInfo,
    /// `PRETTY_NAME` from os-release (`Debian GNU/Linux 12 (bookworm)`).
    pub distribution: Option<String>,
    pub database: DatabaseInfo,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuInventory {
    pub model: Option<String>,
    /// Distinct physical packages.
    pub sockets: Option<u32>,
    /// Distinct physical cores over all sockets.
    pub cores: Option<u32>,
    /// Logical CPUs (hardware threads).
    pub threads: Option<u32>,
    /// Clock of the first CPU when gathered; under a frequency governor it moves with load.
    pub mhz_current: Option<f64>,
    /// The highest clock the frequency driver allows (absent without cpufreq, as in most VMs).
    pub mhz_max: Option<f64>,
    /// cpufreq's scaling governor (`performance`, `powersave`, `schedutil`, ...).
    pub governor: Option<String>,
    pub caches: Vec<CpuCache>,
}

/// One kind of cache: all caches of the same level and kind are alike.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuCache {
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size of one instance.
    pub size_bytes: u64,
    /// How many separate caches of this kind the machine has (one per core for a private L1).
    pub instances: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryInventory {
    pub total_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dimms: Vec<Dimm>,
}

/// A memory module as the EDAC driver names it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dimm {
    pub label: Option<String>,
    pub size_bytes: Option<u64>,
    /// `Registered-DDR4`, `Unbuffered-DDR5`, ...
    pub mem_type: Option<String>,
}

/// How a target path reaches its block device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetPath {
    pub path: String,
    pub mount_point: Option<String>,
    pub fstype: Option<String>,
    /// What was mounted (`/dev/mapper/vg0-data`, `tmpfs`).
    pub source: Option<String>,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: Option<String>,
    /// The filesystem's own options (`rw,discard,stripe=128`).
    pub super_options: Option<String>,
    /// Kernel name of the top block device; absent on a memory or network filesystem.
    pub device: Option<String>,
    /// Every block device the filesystem spans: a multi-device btrfs's members (`device` is
    /// the one its mount names), else `device` alone; each is in `devices` with its layers.
    #[serde(default)]
    pub devices: Vec<String>,
    /// The filesystem's block size (statvfs `f_bsize`): the unit it allocates and writes in.
    #[serde(default)]
    pub block_size: Option<u64>,
    /// statvfs `f_frsize`, where a filesystem allocates in smaller fragments than its blocks.
    #[serde(default)]
    pub fragment_size: Option<u64>,
}

/// One block device under a target, whole disk or layer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockDevice {
    #[serde(flatten)]
    pub layer: DeviceInfo,
    pub size_bytes: Option<u64>,
    pub read_only: Option<bool>,
    pub model: Option<String>,
    pub vendor: Option<String>,
    /// Firmware revision.
    pub firmware: Option<String>,
    /// Lowercase hex SHA-256 of the serial number; the serial itself is never stored.
    pub serial_sha256: Option<String>,
    /// The active I/O scheduler (`none`, `mq-deadline`, `bfq`, `kyber`).
    pub scheduler: Option<String>,
    /// Requests the block layer queues per hardware queue.
    pub nr_requests: Option<u32>,
    /// `write back` or `write through`, as the kernel treats the device's cache.
    pub write_cache: Option<String>,
    /// The unit the device discards (TRIMs) in; 0 where it cannot discard.
    #[serde(default)]
    pub discard_granularity: Option<u64>,
    /// The largest discard the device takes at once; 0 where it cannot discard.
    #[serde(default)]
    pub discard_max_bytes: Option<u64>,
    /// The smallest I/O the device takes without a read-modify-write (a RAID's chunk).
    #[serde(default)]
    pub minimum_io_size: Option<u64>,
    /// The I/O size the device prefers (a RAID's full stripe width); 0 where it states none.
    #[serde(default)]
    pub optimal_io_size: Option<u64>,
    /// The devices this one is built from directly (dm and md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub built_from: Vec<String>,
    /// A whole disk's partitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<Partition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm: Option<DmInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md: Option<MdInfo>,
}

/// A partition's place on its disk; misaligned partitions split I/Os across physical sectors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    pub name: String,
    /// In 512-byte sectors, whatever the disk's sector size.
    pub start_sector: Option<u64>,
    pub size_bytes: Option<u64>,
    pub aligned_4k: Option<bool>,
    pub aligned_1m: Option<bool>,
}

/// A device-mapper device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DmInfo {
    /// The name under /dev/mapper (`vg0-data`).
    pub name: Option<String>,
    /// Who made it, from its UUID's prefix: `LVM`, `CRYPT`, `mpath`, `part1`, ...
    pub subsystem: Option<String>,
}

/// An md (software RAID) device; its level is the device's `raid_level`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MdInfo {
    pub chunk_size_bytes: Option<u64>,
    pub raid_disks: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelInfo {
    /// `6.1.0-18-amd64`, as `uname -r`.
    pub release: Option<String>,
    /// The build string, as `uname -v`.
    pub version: Option<String>,
}

/// The database a workload ran against; empty for workloads without one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DatabaseInfo {
    /// `sqlite`, `postgres`, `mysql`.
    pub kind: Option<String>,
    /// As the database states it: PostgreSQL's `server_version`, MySQL's `VERSION()`
    /// (`10.11.6-MariaDB-...`), `sqlite_version()`.
    pub version: Option<String>,
    /// Name to value, as the database prints it. PostgreSQL: every `pg_settings` entry set by
    /// the configuration files (`ALTER SYSTEM` included), the command line, the environment,
    /// or for the database or user (not built-in or computed defaults, nor what the
    /// connection itself set), and `shared_buffers` always. MariaDB: every variable whose
    /// origin is the configuration, the command line or SQL; MySQL 8: every variable not at its
    /// compiled value; for both also the five storage variables (buffer pool and redo log size,
    /// flush settings, `sync_binlog`) even at their defaults. SQLite, which has no server: the
    /// pragmas a run's connections use (`journal_mode`, `synchronous`, `cache_size`,
    /// `page_size`, `busy_timeout`). Names that look like they hold a secret (password, key,
    /// token, connection string) are never written.
    pub non_default_settings: BTreeMap<String, String>,
}
