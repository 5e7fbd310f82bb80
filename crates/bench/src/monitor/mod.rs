//! Host monitoring while a benchmark runs: per-second samples of the run's block devices,
//! the CPUs, memory, storbench's own CPU time and power, and finding the block device under a
//! path.
//!
//! Everything here measures and returns data in `storbench_report`'s types; nothing prints,
//! and odd input (a missing procfs file, an unknown device, a counter that went backwards)
//! gives `None` or zeros rather than a panic.
//!
//! - [`diskstats`]: `/proc/diskstats` counters and iostat's formulas.
//! - [`disks`]: the devices a run uses (a multi-device btrfs's members, data and log
//!   volumes), each counted on its own and all together.
//! - [`cpu`]: `/proc/stat` CPU shares and our own `getrusage` time.
//! - [`memory`]: `MemAvailable` from `/proc/meminfo`.
//! - [`device`]: path → block device, with partition, device-mapper and md layers, and a
//!   multi-device btrfs's members.
//! - [`disclosure`]: the full-disclosure inventory of CPUs, memory, devices, mounts and OS.
//! - [`rebuild`]: md resync/recovery/check and btrfs replace/balance/scrub under a run's
//!   devices, and a btrfs filesystem's member devices.
//! - [`host`]: host name, kernel and CPU count for every summary.
//! - [`sampler`]: [`SystemSampler`], one reading per interval and the rates between two.
//! - [`power`]: watts from RAPL, IPMI, Redfish, PTDaemon or any meter, idle/active and perf/W;
//!   a configured source that fails is an error naming the fix, not a silent `None`.

pub mod clock;
pub mod cpu;
pub mod device;
pub mod disclosure;
pub mod disks;
pub mod diskstats;
pub mod host;
pub mod memory;
pub mod power;
pub mod rebuild;
pub mod sampler;
pub mod tls;

pub use device::{filesystem_devices, resolve_device};
pub use host::host;
pub use sampler::SystemSampler;
