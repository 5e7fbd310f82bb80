//! Every column of `timeseries.csv`, defined once: its name in the file, its unit and what quantity
//! of figure it is. The workloads fill them, the CLI's progress lines read them and the
//! report's charts draw them, all through these constants, so that renaming a column is a
//! compile error rather than a chart that silently goes empty. A renamed column keeps its old
//! names in `old_names`, so that bundles written before the rename still render. How a
//! column's values of several shards add up into one run's (`storbench merge`) is declared on
//! the column too ([`Merge`]), and [`resolve`] finds the column a header cell names, in
//! whichever namespace (a background stream's, a device's, a meter's, a rebuilding stack's).

/// What a column's numbers are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    PerSecond,
    PerMinute,
    BytesPerSecond,
    Bytes,
    Microseconds,
    Milliseconds,
    Percent,
    /// Events within the interval.
    Count,
    Watts,
}

impl Unit {
    /// How a chart's axis names the unit.
    pub fn label(self) -> &'static str {
        match self {
            Unit::PerSecond => "per s",
            Unit::PerMinute => "per min",
            Unit::BytesPerSecond => "B/s",
            Unit::Bytes => "B",
            Unit::Microseconds => "µs",
            Unit::Milliseconds => "ms",
            Unit::Percent => "%",
            Unit::Count => "count",
            Unit::Watts => "W",
        }
    }
}

/// How a column's value relates to the interval it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Work done in the interval divided by its length.
    Rate,
    /// A latency statistic of the operations completed in the interval.
    Latency,
    /// Events counted in the interval.
    Count,
    /// A level at the interval's end or over the phase so far (a fill, a queue, a cumulative
    /// rate, a power reading).
    Level,
}

/// How one second's values of a column from several shards make the run's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Each shard's value (its own work, latency or level), combined over the shards.
    Shards(Combine),
    /// A reading of the host, the same for every shard on it (its disks, CPU, memory, power):
    /// each host once (the mean of its shards' readings), combined over the hosts.
    EachHost(Combine),
}

/// How several values of one second make one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Work that adds up: rates and counts.
    Sum,
    /// The worst: latencies (percentiles do not add).
    Max,
    /// Levels: a fill, a queue, a percentage.
    Mean,
}

impl Combine {
    /// `values` (at least one) made one.
    pub fn of(self, values: &[f64]) -> f64 {
        match self {
            Combine::Sum => values.iter().sum(),
            Combine::Max => values.iter().copied().fold(f64::MIN, f64::max),
            Combine::Mean => values.iter().sum::<f64>() / values.len() as f64,
        }
    }
}

/// One column of `timeseries.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub unit: Unit,
    pub quantity: Quantity,
    /// How shards' values add up; by its quantity unless the column says otherwise.
    pub merge: Merge,
    /// Names the column had in older bundles.
    pub old_names: &'static [&'static str],
}

impl Column {
    pub const fn new(name: &'static str, unit: Unit, quantity: Quantity) -> Column {
        let merge = Merge::Shards(match quantity {
            Quantity::Rate | Quantity::Count => Combine::Sum,
            Quantity::Latency => Combine::Max,
            Quantity::Level => Combine::Mean,
        });
        Column { name, unit, quantity, merge, old_names: &[] }
    }

    /// The column, its shards' values added up as `merge` says.
    pub const fn merged(self, merge: Merge) -> Column {
        Column { merge, ..self }
    }

    /// Whether a file's header cell names this column (under its name or an old one).
    pub fn answers_to(&self, header: &str) -> bool {
        self.name == header || self.old_names.contains(&header)
    }
}

macro_rules! columns {
    ($($(#[$doc:meta])* $id:ident = $name:literal, $unit:ident, $kind:ident $(, $merge:expr)?;)*) => {
        $($(#[$doc])* pub const $id: Column = Column::new($name, Unit::$unit, Quantity::$kind)$(.merged($merge))?;)*
        /// Every column of this group, in the file's order.
        pub const ALL: &[Column] = &[$($id),*];
    };
}
pub(crate) use columns;

/// The synthetic I/O workload (`storbench io`).
pub mod io {
    use super::{Column, Quantity, Unit};
    columns! {
        READ_IOPS = "read_iops", PerSecond, Rate;
        WRITE_IOPS = "write_iops", PerSecond, Rate;
        READ_BYTES_PER_SEC = "read_bytes_per_sec", BytesPerSecond, Rate;
        WRITE_BYTES_PER_SEC = "write_bytes_per_sec", BytesPerSecond, Rate;
        READ_LAT_MEAN_US = "read_lat_mean_us", Microseconds, Latency;
        READ_LAT_P50_US = "read_lat_p50_us", Microseconds, Latency;
        READ_LAT_P99_US = "read_lat_p99_us", Microseconds, Latency;
        READ_LAT_MAX_US = "read_lat_max_us", Microseconds, Latency;
        WRITE_LAT_MEAN_US = "write_lat_mean_us", Microseconds, Latency;
        WRITE_LAT_P50_US = "write_lat_p50_us", Microseconds, Latency;
        WRITE_LAT_P99_US = "write_lat_p99_us", Microseconds, Latency;
        WRITE_LAT_MAX_US = "write_lat_max_us", Microseconds, Latency;
        /// Failed I/Os completed in the interval.
        ERRORS = "errors", Count, Count;
    }
}

/// Schedule lag, in the series of a workload that can be paced (io under a rate cap, the
/// mailbox under a target): how late paced starts were against their intended times, over
/// the interval; empty in an unpaced run. Replay's `lateness_*` columns are the same figure.
pub mod pace {
    use super::{Column, Quantity, Unit};
    columns! {
        SCHEDULE_LAG_P99_MS = "schedule_lag_p99_ms", Milliseconds, Latency;
        SCHEDULE_LAG_MAX_MS = "schedule_lag_max_ms", Milliseconds, Latency;
    }
}

/// The DVD Store workload (`storbench oltp run`); the transaction types' own columns are in
/// `TXN`, the databases' counters in `db`.
pub mod oltp {
    use super::{Column, Quantity, Unit};
    columns! {
        ORDERS = "orders", Count, Count;
        OPM = "opm", PerMinute, Rate;
        /// Orders per minute since the phase began, as DS3's own lines report it.
        OPM_CUMULATIVE = "opm_cumulative", PerMinute, Level;
        ROLLBACKS = "rollbacks", Count, Count;
        FAILED_ORDERS = "failed_orders", Count, Count;
        ERRORS = "errors", Count, Count;
        RECONNECTS = "reconnects", Count, Count;
        ORDER_RT_MEAN_MS = "order_rt_mean_ms", Milliseconds, Latency;
        ORDER_RT_P50_MS = "order_rt_p50_ms", Milliseconds, Latency;
        ORDER_RT_P99_MS = "order_rt_p99_ms", Milliseconds, Latency;
        ORDER_RT_MAX_MS = "order_rt_max_ms", Milliseconds, Latency;
    }

    const fn txn(calls: &'static str, mean: &'static str, p99: &'static str) -> [Column; 3] {
        [
            Column::new(calls, Unit::Count, Quantity::Count),
            Column::new(mean, Unit::Milliseconds, Quantity::Latency),
            Column::new(p99, Unit::Milliseconds, Quantity::Latency),
        ]
    }

    /// Calls, mean and p99 response time of each transaction type, in DS3's order of types
    /// (login, new customer, new member, browse, review browse, get reviews, new review, new
    /// helpfulness, purchase, price query).
    pub const TXN: [[Column; 3]; 10] = [
        txn("login_calls", "login_mean_ms", "login_p99_ms"),
        txn("new_customer_calls", "new_customer_mean_ms", "new_customer_p99_ms"),
        txn("new_member_calls", "new_member_mean_ms", "new_member_p99_ms"),
        txn("browse_calls", "browse_mean_ms", "browse_p99_ms"),
        txn("review_browse_calls", "review_browse_mean_ms", "review_browse_p99_ms"),
        txn("get_reviews_calls", "get_reviews_mean_ms", "get_reviews_p99_ms"),
        txn("new_review_calls", "new_review_mean_ms", "new_review_p99_ms"),
        txn("new_helpfulness_calls", "new_helpfulness_mean_ms", "new_helpfulness_p99_ms"),
        txn("purchase_calls", "purchase_mean_ms", "purchase_p99_ms"),
        txn("price_query_calls", "price_query_mean_ms", "price_query_p99_ms"),
    ];
}

/// A database server's own counters, the same columns for every backend (a counter a backend
/// lacks stays empty).
pub mod db {
    use super::{Column, Quantity, Unit};
    columns! {
        CACHE_HIT_PCT = "db_cache_hit_pct", Percent, Level;
        BLOCKS_READ_PER_SEC = "db_blocks_read_per_sec", PerSecond, Rate;
        BLOCKS_WRITTEN_PER_SEC = "db_blocks_written_per_sec", PerSecond, Rate;
        CHECKPOINTS = "db_checkpoints", Count, Count;
        COMMITS_PER_SEC = "db_commits_per_sec", PerSecond, Rate;
        ROLLBACKS_PER_SEC = "db_rollbacks_per_sec", PerSecond, Rate;
        DEADLOCKS = "db_deadlocks", Count, Count;
    }
}

/// The mailbox workload (`storbench mailbox`).
pub mod mailbox {
    use super::{Column, Quantity, Unit};
    columns! {
        TRANSACTIONAL_IOPS = "transactional_iops", PerSecond, Rate;
        DB_READS_PER_SEC = "db_reads_per_sec", PerSecond, Rate;
        DB_WRITES_PER_SEC = "db_writes_per_sec", PerSecond, Rate;
        LOG_WRITES_PER_SEC = "log_writes_per_sec", PerSecond, Rate;
        BDM_READS_PER_SEC = "bdm_reads_per_sec", PerSecond, Rate;
        DB_READ_AVG_MS = "db_read_avg_ms", Milliseconds, Latency;
        DB_READ_MAX_MS = "db_read_max_ms", Milliseconds, Latency;
        DB_WRITE_AVG_MS = "db_write_avg_ms", Milliseconds, Latency;
        LOG_WRITE_AVG_MS = "log_write_avg_ms", Milliseconds, Latency;
        LOG_WRITE_MAX_MS = "log_write_max_ms", Milliseconds, Latency;
        DB_WRITE_BYTES_AVG = "db_write_bytes_avg", Bytes, Level;
        LOG_BYTES_PER_WRITE = "log_bytes_per_write", Bytes, Level;
        OPERATIONS_PER_SEC = "operations_per_sec", PerSecond, Rate;
        PAGE_FAULT_STALLS = "page_fault_stalls", Count, Count;
        LOG_STALLS = "log_stalls", Count, Count;
        ERRORS = "errors", Count, Count;
        CHECKSUM_ERRORS = "checksum_errors", Count, Count;
        /// The least-filled database cache, percent of its warm-up target.
        CACHE_FILL_PCT = "cache_fill_pct", Percent, Level;
    }
}

/// The replay workload (`storbench replay`): every request type together; the per-type and
/// per-source figures are in the summary.
pub mod replay {
    use super::{Column, Quantity, Unit};
    columns! {
        CALLS = "calls", Count, Count;
        CALLS_PER_SEC = "calls_per_sec", PerSecond, Rate;
        /// Requests that failed in the interval.
        ERRORS = "errors", Count, Count;
        LAT_MEAN_MS = "lat_mean_ms", Milliseconds, Latency;
        LAT_P50_MS = "lat_p50_ms", Milliseconds, Latency;
        LAT_P99_MS = "lat_p99_ms", Milliseconds, Latency;
        LAT_MAX_MS = "lat_max_ms", Milliseconds, Latency;
        /// Requests running at the interval's end.
        IN_FLIGHT = "in_flight", Count, Level;
        /// How late requests started against the log's own times (time-sync).
        LATENESS_P99_MS = "lateness_p99_ms", Milliseconds, Latency;
        LATENESS_MAX_MS = "lateness_max_ms", Milliseconds, Latency;
    }
}

/// The integrity workload (`storbench integrity`): every activity's IOPS and mean latency,
/// the data file's size, errors, throttling and I/Os outstanding past the delay threshold.
pub mod integrity {
    use super::{Column, Quantity, Unit};
    columns! {
        IOPS = "iops", PerSecond, Rate;
        AVG_MS = "avg_ms", Milliseconds, Latency;
        RANDOM_IOPS = "random_iops", PerSecond, Rate;
        RANDOM_AVG_MS = "random_avg_ms", Milliseconds, Latency;
        READ_AHEAD_IOPS = "read_ahead_iops", PerSecond, Rate;
        READ_AHEAD_AVG_MS = "read_ahead_avg_ms", Milliseconds, Latency;
        BULK_IOPS = "bulk_iops", PerSecond, Rate;
        BULK_AVG_MS = "bulk_avg_ms", Milliseconds, Latency;
        LAZY_WRITER_IOPS = "lazy_writer_iops", PerSecond, Rate;
        LAZY_WRITER_AVG_MS = "lazy_writer_avg_ms", Milliseconds, Latency;
        LOG_IOPS = "log_iops", PerSecond, Rate;
        LOG_AVG_MS = "log_avg_ms", Milliseconds, Latency;
        DATA_FILE_BYTES = "data_file_bytes", Bytes, Level;
        ERRORS = "errors", Count, Count;
        THROTTLED = "throttled_ios", Count, Count;
        DELAYED = "delayed_ios", Count, Count;
        OUTSTANDING = "outstanding_ios", Count, Level;
    }
}

/// The mailbox backup test (`storbench mailbox --test backup`): read rate in all and of the
/// first eight databases.
pub mod backup {
    use super::{Column, Quantity, Unit};
    columns! {
        MB_PER_SEC = "backup_mb_per_sec", PerSecond, Rate;
    }

    const fn db(name: &'static str) -> Column {
        Column::new(name, Unit::PerSecond, Quantity::Rate)
    }

    /// MB read per second from databases 1 to 8.
    pub const DB_MB_PER_SEC: [Column; 8] = [
        db("db1_mb_per_sec"),
        db("db2_mb_per_sec"),
        db("db3_mb_per_sec"),
        db("db4_mb_per_sec"),
        db("db5_mb_per_sec"),
        db("db6_mb_per_sec"),
        db("db7_mb_per_sec"),
        db("db8_mb_per_sec"),
    ];
}

/// The host's columns, the same in every bundle (`SystemSample`): readings of the host, so a
/// merge counts each host once.
pub mod system {
    use super::Combine::{Max, Mean, Sum};
    use super::Merge::EachHost;
    use super::{Column, Quantity, Unit};
    columns! {
        DISK_READS_PER_SEC = "disk_reads_per_sec", PerSecond, Rate, EachHost(Sum);
        DISK_WRITES_PER_SEC = "disk_writes_per_sec", PerSecond, Rate, EachHost(Sum);
        DISK_READ_BYTES_PER_SEC = "disk_read_bytes_per_sec", BytesPerSecond, Rate, EachHost(Sum);
        DISK_WRITE_BYTES_PER_SEC = "disk_write_bytes_per_sec", BytesPerSecond, Rate, EachHost(Sum);
        DISK_READ_AWAIT_MS = "disk_read_await_ms", Milliseconds, Latency, EachHost(Max);
        DISK_WRITE_AWAIT_MS = "disk_write_await_ms", Milliseconds, Latency, EachHost(Max);
        DISK_QUEUE_SIZE = "disk_queue_size", Count, Level, EachHost(Sum);
        DISK_BUSY_PCT = "disk_busy_pct", Percent, Level, EachHost(Mean);
        CPU_USER_PCT = "cpu_user_pct", Percent, Level, EachHost(Mean);
        CPU_SYSTEM_PCT = "cpu_system_pct", Percent, Level, EachHost(Mean);
        CPU_IOWAIT_PCT = "cpu_iowait_pct", Percent, Level, EachHost(Mean);
        MEM_AVAILABLE_BYTES = "mem_available_bytes", Bytes, Level, EachHost(Sum);
        /// storbench's own CPU time, percent of one core: each shard's own process.
        STORBENCH_CPU_PCT = "storbench_cpu_pct", Percent, Level;
        POWER_WATTS = "power_watts", Watts, Level, EachHost(Sum);
    }
}

/// One device's counters when a run uses several devices (a multi-device btrfs's members,
/// data and log on different volumes): in the file as `disk.<device>.<column>`
/// (`disk.loop1.write_bytes_per_sec`), the devices known when the run started, each counted
/// on its own. The `disk_*` columns are every device of the run together.
pub mod device {
    use super::{Column, system};
    /// The namespace of these columns in the file.
    pub const PREFIX: &str = "disk";
    /// The host's disk columns, each of which a device has under its short name.
    pub const ALL: &[Column] = system::ALL.split_at(8).0;

    /// A disk column's name under a device's namespace: `read_bytes_per_sec` for
    /// `disk_read_bytes_per_sec`.
    pub fn short(column: Column) -> &'static str {
        column.name.strip_prefix("disk_").unwrap_or(column.name)
    }
}

/// Each named power meter's watts, less its baseline, when a run reads several (`--power
/// 'server=ipmi; enclosure=file:/run/enclosure-watts; enclosure.baseline=108.2'`): in the file
/// as `power.<meter>.watts` (`power.enclosure.watts`); `power_watts` is their sum.
pub mod meter {
    use super::{Column, Quantity, Unit};
    /// The namespace of these columns in the file.
    pub const PREFIX: &str = "power";
    columns! {
        WATTS = "watts", Watts, Level, super::Merge::EachHost(super::Combine::Sum);
    }
}

/// What each md array or btrfs filesystem under a run's targets was doing that second, in the
/// file as `rebuild.<stack>.<column>` (`rebuild.md0.pct_done`, `rebuild./srv/db.action`): the
/// md array's kernel name or the btrfs mount point. Empty cells where the stack did not say
/// (a btrfs replace gives no bytes, an idle array no percent) or could not be read.
pub mod rebuild {
    use super::{Column, Quantity, Unit};
    /// The namespace of these columns in the file.
    pub const PREFIX: &str = "rebuild";
    use super::Combine::{Max, Mean, Sum};
    use super::Merge::EachHost;
    columns! {
        /// The action's code: its index in [`ACTIONS`] (0 idle).
        ACTION = "action", Count, Level, EachHost(Max);
        /// 1 while the action waits (a delayed md resync, a paused balance), else 0.
        PAUSED = "paused", Count, Level, EachHost(Max);
        PCT_DONE = "pct_done", Percent, Level, EachHost(Mean);
        /// How far it got, as the stack counts it (md: the sync position per member; btrfs
        /// scrub: bytes read).
        BYTES_DONE = "bytes_done", Bytes, Level, EachHost(Sum);
        SPEED_BYTES_PER_SEC = "speed_bytes_per_sec", BytesPerSecond, Level, EachHost(Sum);
        /// md: devices missing from the array.
        DEGRADED_DEVICES = "degraded_devices", Count, Level, EachHost(Sum);
    }

    /// The actions by code: `rebuild.<stack>.action` holds the index.
    pub const ACTIONS: &[&str] =
        &["idle", "resync", "recovery", "check", "repair", "reshape", "replace", "balance", "scrub"];

    /// The code of `action` (a word of [`ACTIONS`]).
    pub fn code(action: &str) -> Option<usize> {
        ACTIONS.iter().position(|a| *a == action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_column_still_answers_to_its_old_name() {
        let renamed = Column { old_names: &["opm_total"], ..oltp::OPM };
        assert!(renamed.answers_to("opm") && renamed.answers_to("opm_total"));
        assert!(!renamed.answers_to("orders"));
    }
}
