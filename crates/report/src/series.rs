//! One row per second of the time series: the workload's own counters beside the host's.
//!
//! Workloads contribute their columns (`SeriesRow::workload`), background streams theirs
//! under their names (`SeriesRow::streams`, `bg1.write_iops` in the file); the system part has
//! a fixed set of columns so that every bundle's `timeseries.csv` can be read the same way.
//! Every column is defined once, in `columns`.

use crate::columns::{Column, device as dev, meter, rebuild as rb, system as col};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Phase of a run a row belongs to; only `Measure` rows count towards the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Warm-up (`--ramp`): running, but excluded from the results.
    Ramp,
    /// The measured phase.
    Measure,
    /// Read-back of written blocks after the measured phase (`--verify`).
    Verify,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Ramp => "ramp",
            Phase::Measure => "measure",
            Phase::Verify => "verify",
        }
    }
}

/// Counters of the block device behind the target over one interval, computed as iostat does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskSample {
    pub reads_per_sec: f64,
    pub writes_per_sec: f64,
    pub read_bytes_per_sec: f64,
    pub write_bytes_per_sec: f64,
    /// Mean time a completed read spent queued and in service (iostat r_await), ms.
    pub read_await_ms: Option<f64>,
    /// Mean time a completed write spent queued and in service (iostat w_await), ms.
    pub write_await_ms: Option<f64>,
    /// Average number of requests in the queue (iostat aqu-sz).
    pub queue_size: f64,
    /// Share of the interval with at least one request in flight (io_ticks), percent.
    pub busy_pct: f64,
}

/// Host CPU over one interval, as a percentage of all CPUs (100 = every core busy).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSample {
    pub user_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
}

/// One device's counters over an interval, when a run uses several.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceSample {
    /// Kernel name, as in /proc/diskstats (`loop1`, `dm-0`).
    pub device: String,
    /// Absent in an interval the device could not be read (detached).
    pub disk: Option<DiskSample>,
}

/// What one md array or btrfs filesystem under the run's targets was doing at an interval's
/// end (`columns::rebuild`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RebuildSample {
    /// The md array's kernel name (`md0`) or the btrfs filesystem's mount point.
    pub stack: String,
    /// A word of `columns::rebuild::ACTIONS`; absent when the stack could not be read.
    pub action: Option<String>,
    #[serde(default)]
    pub paused: bool,
    pub pct_done: Option<f64>,
    pub bytes_done: Option<u64>,
    pub bytes_total: Option<u64>,
    pub speed_bytes_per_sec: Option<u64>,
    /// md: devices missing from the array.
    pub degraded_devices: Option<u32>,
}

impl RebuildSample {
    /// Whether the stack was doing anything but serving I/O, or missing a device.
    pub fn is_abnormal(&self) -> bool {
        self.action.as_deref().is_some_and(|a| a != "idle") || self.degraded_devices.is_some_and(|d| d > 0)
    }

    fn values(&self) -> [(Column, Option<f64>); 6] {
        let number = |v: Option<u64>| v.map(|v| v as f64);
        [
            (rb::ACTION, self.action.as_deref().and_then(rb::code).map(|c| c as f64)),
            (rb::PAUSED, self.action.as_ref().map(|_| f64::from(u8::from(self.paused)))),
            (rb::PCT_DONE, self.pct_done),
            (rb::BYTES_DONE, number(self.bytes_done)),
            (rb::SPEED_BYTES_PER_SEC, number(self.speed_bytes_per_sec)),
            (rb::DEGRADED_DEVICES, self.degraded_devices.map(f64::from)),
        ]
    }
}

/// What the host did during one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemSample {
    /// Every device the run uses together (rates added up, awaits over all completions, the
    /// busiest device's busy share); absent when the target has no block device behind it
    /// (tmpfs, for example).
    pub disk: Option<DiskSample>,
    /// Each device on its own, in a fixed order for the run, when the run uses more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceSample>,
    /// Each md array or btrfs filesystem under the run's targets, in a fixed order for the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rebuild: Vec<RebuildSample>,
    pub cpu: CpuSample,
    pub mem_available_bytes: u64,
    /// storbench's own CPU time over the interval, percent of one core.
    pub self_cpu_pct: f64,
    /// Power from the run's power source (`--power`), watts; absent without one. With named
    /// meters, their sum, each less its baseline.
    #[serde(default)]
    pub power_watts: Option<f64>,
    /// Each named meter's watts less its baseline (`--power 'server=ipmi; enclosure=...'`),
    /// in the file as `power.<meter>.watts`; empty with a single meter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub meters: Vec<(String, Option<f64>)>,
}

/// One line of `timeseries.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesRow {
    /// Seconds since the run started (end of the interval).
    pub t_s: f64,
    pub phase: Phase,
    /// The workload's own columns, in a fixed order for a given workload.
    pub workload: Vec<(Column, Option<f64>)>,
    /// Each background stream's columns, by the stream's name, in the run's fixed order.
    pub streams: Vec<StreamValues>,
    pub system: SystemSample,
}

/// One background stream's columns in a row: in the file as `<stream>.<column>`.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamValues {
    pub stream: String,
    pub values: Vec<(Column, Option<f64>)>,
}

impl SeriesRow {
    /// The workload's value in `column` (None when the workload has no such column or the
    /// interval had no value).
    pub fn value(&self, column: Column) -> Option<f64> {
        self.workload.iter().find(|(c, _)| *c == column).and_then(|(_, v)| *v)
    }

    /// Background stream `stream`'s value in `column` (None when there is no such stream or
    /// column, or the interval had no value).
    pub fn stream_value(&self, stream: &str, column: Column) -> Option<f64> {
        let s = self.streams.iter().find(|s| s.stream == stream)?;
        s.values.iter().find(|(c, _)| *c == column).and_then(|(_, v)| *v)
    }

    /// Every cell after `t_s` and `phase` in the file's order, each with its header name: the
    /// workload's columns, each stream's under its name, then the system's.
    pub fn cells(&self) -> Vec<(Cow<'static, str>, Option<f64>)> {
        let own = self.workload.iter().map(|(c, v)| (Cow::Borrowed(c.name), *v));
        let streams = self.streams.iter().flat_map(|s| {
            s.values.iter().map(move |(c, v)| (Cow::Owned(format!("{}.{}", s.stream, c.name)), *v))
        });
        own.chain(streams).chain(self.system.cells()).collect()
    }
}

/// A disk sample's eight figures in the columns' order; empty without a sample.
fn disk_values(disk: Option<&DiskSample>) -> [Option<f64>; 8] {
    match disk {
        Some(d) => [
            Some(d.reads_per_sec),
            Some(d.writes_per_sec),
            Some(d.read_bytes_per_sec),
            Some(d.write_bytes_per_sec),
            d.read_await_ms,
            d.write_await_ms,
            Some(d.queue_size),
            Some(d.busy_pct),
        ],
        None => [None; 8],
    }
}

impl SystemSample {
    /// The system's fixed columns in their order; disk columns are empty without a device.
    pub fn columns(&self) -> Vec<(Column, Option<f64>)> {
        let mut cols: Vec<(Column, Option<f64>)> =
            dev::ALL.iter().copied().zip(disk_values(self.disk.as_ref())).collect();
        cols.extend([
            (col::CPU_USER_PCT, Some(self.cpu.user_pct)),
            (col::CPU_SYSTEM_PCT, Some(self.cpu.system_pct)),
            (col::CPU_IOWAIT_PCT, Some(self.cpu.iowait_pct)),
            (col::MEM_AVAILABLE_BYTES, Some(self.mem_available_bytes as f64)),
            (col::STORBENCH_CPU_PCT, Some(self.self_cpu_pct)),
            (col::POWER_WATTS, self.power_watts),
        ]);
        cols
    }

    /// Every cell of the host's part of a row with its header name: the fixed columns, then
    /// each device's (`disk.<device>.<column>`) and each rebuilding stack's
    /// (`rebuild.<stack>.<column>`).
    pub fn cells(&self) -> Vec<(Cow<'static, str>, Option<f64>)> {
        let fixed = self.columns().into_iter().map(|(c, v)| (Cow::Borrowed(c.name), v));
        let devices = self.devices.iter().flat_map(|d| {
            let values = dev::ALL.iter().zip(disk_values(d.disk.as_ref()));
            values.map(move |(c, v)| {
                (Cow::Owned(format!("{}.{}.{}", dev::PREFIX, d.device, dev::short(*c))), v)
            })
        });
        let rebuild = self.rebuild.iter().flat_map(|r| {
            let stack = r.stack.replace([',', '\n', '\r'], "_");
            let values = r.values().into_iter();
            values.map(move |(c, v)| (Cow::Owned(format!("{}.{stack}.{}", rb::PREFIX, c.name)), v))
        });
        let meters = self.meters.iter().map(|(name, w)| {
            let name = name.replace([',', '\n', '\r'], "_");
            (Cow::Owned(format!("{}.{name}.{}", meter::PREFIX, meter::WATTS.name)), *w)
        });
        fixed.chain(devices).chain(rebuild).chain(meters).collect()
    }
}
