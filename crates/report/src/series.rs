//! One row per second of the time series: the workload's own counters beside the host's.
//!
//! Workloads contribute their columns (`SeriesRow::workload`), background streams theirs
//! under their names (`SeriesRow::streams`, `bg1.write_iops` in the file); the system part has
//! a fixed set of columns so that every bundle's `timeseries.csv` can be read the same way.
//! Every column is defined once, in `columns`.

use crate::columns::{Column, system as col};
use serde::{Deserialize, Serialize};

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

/// What the host did during one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemSample {
    /// Absent when the target has no block device behind it (tmpfs, for example).
    pub disk: Option<DiskSample>,
    pub cpu: CpuSample,
    pub mem_available_bytes: u64,
    /// storbench's own CPU time over the interval, percent of one core.
    pub self_cpu_pct: f64,
    /// Power from the run's power source (`--power`), watts; absent without one.
    #[serde(default)]
    pub power_watts: Option<f64>,
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
    pub fn cells(&self) -> Vec<(std::borrow::Cow<'static, str>, Option<f64>)> {
        use std::borrow::Cow;
        let own = self.workload.iter().map(|(c, v)| (Cow::Borrowed(c.name), *v));
        let streams = self.streams.iter().flat_map(|s| {
            s.values.iter().map(move |(c, v)| (Cow::Owned(format!("{}.{}", s.stream, c.name)), *v))
        });
        let system = self.system.columns().into_iter().map(|(c, v)| (Cow::Borrowed(c.name), v));
        own.chain(streams).chain(system).collect()
    }
}

impl SystemSample {
    /// The system's columns in their fixed order; disk columns are empty without a device.
    pub fn columns(&self) -> Vec<(Column, Option<f64>)> {
        let disk: [Option<f64>; 8] = match &self.disk {
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
        };
        let disk_columns = [
            col::DISK_READS_PER_SEC,
            col::DISK_WRITES_PER_SEC,
            col::DISK_READ_BYTES_PER_SEC,
            col::DISK_WRITE_BYTES_PER_SEC,
            col::DISK_READ_AWAIT_MS,
            col::DISK_WRITE_AWAIT_MS,
            col::DISK_QUEUE_SIZE,
            col::DISK_BUSY_PCT,
        ];
        let mut cols: Vec<(Column, Option<f64>)> = disk_columns.into_iter().zip(disk).collect();
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
}
