//! The per-second counters from SHOW GLOBAL STATUS, and `server_info`.
//!
//! Counters, in the order of `storbench_report::columns::db::ALL`:
//! - cache hit %: 100 × (1 − Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests) over
//!   the interval (None when nothing was read);
//! - blocks read/s: Innodb_buffer_pool_reads (pages the buffer pool had to read from disk);
//! - blocks written/s: Innodb_buffer_pool_pages_flushed;
//! - checkpoints: 1 when the last checkpoint LSN moved in the interval, else 0 (MariaDB's
//!   Innodb_lsn_last_checkpoint, MySQL 8's Innodb_redo_log_checkpoint_lsn; neither server
//!   counts checkpoints, so this is "at least one"; None when the server has neither);
//! - commits/s: Handler_commit, which counts every transaction InnoDB commits, autocommit
//!   statements included (Com_commit counts only COMMIT statements, so it misses the
//!   autocommit inserts of NEW_CUSTOMER, NEW_MEMBER and the reviews). Handler_commit also counts
//!   autocommit reads, so it is statements-that-committed per second;
//! - rollbacks/s: Handler_rollback (likewise, every rollback, the PURCHASE out-of-stock ones
//!   and those after deadlocks included);
//! - deadlocks: Innodb_deadlocks in the interval (MariaDB has it; None elsewhere).

use super::Ctx;
use crate::db::{BackendKind, CounterSampler, DbResult, database_info};
use mysql::Conn;
use mysql::prelude::Queryable;
use std::collections::HashMap;
use std::time::Instant;
use storbench_report::DatabaseInfo;

const STATUS: [&str; 9] = [
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_lsn_last_checkpoint",
    "Innodb_redo_log_checkpoint_lsn",
    "Handler_commit",
    "Handler_rollback",
    "Innodb_deadlocks",
    "Uptime",
];

pub(crate) struct StatusSampler {
    conn: Conn,
    sql: String,
    last: HashMap<String, f64>,
    at: Instant,
}

/// SHOW GLOBAL STATUS of just these variables.
pub(crate) fn status_query(names: &[&str]) -> String {
    let list: Vec<String> = names.iter().map(|s| format!("'{s}'")).collect();
    format!("SHOW GLOBAL STATUS WHERE Variable_name IN ({})", list.join(", "))
}

impl StatusSampler {
    pub(crate) fn new(conn: Conn) -> DbResult<Self> {
        let sql = status_query(&STATUS);
        let mut s = StatusSampler { conn, sql, last: HashMap::new(), at: Instant::now() };
        s.last = s.read()?;
        Ok(s)
    }

    fn read(&mut self) -> DbResult<HashMap<String, f64>> {
        let rows: Vec<(String, String)> = self.conn.query(&self.sql).ctx("SHOW GLOBAL STATUS")?;
        Ok(rows.into_iter().filter_map(|(k, v)| Some((k, v.parse().ok()?))).collect())
    }
}

impl CounterSampler for StatusSampler {
    fn sample(&mut self) -> [Option<f64>; 7] {
        let Ok(now) = self.read() else { return [None; 7] };
        let secs = self.at.elapsed().as_secs_f64().max(1e-3);
        self.at = Instant::now();
        let delta = |k: &str| Some((now.get(k)? - self.last.get(k)?).max(0.0));
        let rate = |k: &str| delta(k).map(|d| d / secs);
        let hit = match (delta("Innodb_buffer_pool_read_requests"), delta("Innodb_buffer_pool_reads")) {
            (Some(req), Some(miss)) if req > 0.0 => Some(100.0 * (1.0 - (miss / req).min(1.0))),
            _ => None,
        };
        let checkpoint = delta("Innodb_lsn_last_checkpoint")
            .or_else(|| delta("Innodb_redo_log_checkpoint_lsn"))
            .map(|d| if d > 0.0 { 1.0 } else { 0.0 });
        let out = [
            hit,
            rate("Innodb_buffer_pool_reads"),
            rate("Innodb_buffer_pool_pages_flushed"),
            checkpoint,
            rate("Handler_commit"),
            rate("Handler_rollback"),
            delta("Innodb_deadlocks"),
        ];
        self.last = now;
        out
    }
}

/// The variables every disclosure names, whatever their origin.
const ALWAYS: [&str; 5] = [
    "innodb_buffer_pool_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_log_file_size",
    "sync_binlog",
    "innodb_flush_method",
];

/// The version, the variables the configuration or a SET changed (MariaDB's
/// `information_schema.SYSTEM_VARIABLES` origin, MySQL 8's `performance_schema.variables_info`
/// source), and the five that matter most for storage in every case.
pub(crate) fn server_info(conn: &mut Conn) -> DbResult<DatabaseInfo> {
    let version: String = conn.query_first("SELECT VERSION()").ctx("version")?.unwrap_or_default();
    let mut out = Vec::new();
    let changed: Vec<(String, Option<String>)> = conn
        .query(
            "SELECT LOWER(variable_name), global_value FROM information_schema.SYSTEM_VARIABLES \
             WHERE global_value_origin IN ('CONFIG', 'COMMAND-LINE', 'SQL') ORDER BY variable_name",
        )
        .or_else(|_| {
            conn.query(
                "SELECT LOWER(g.variable_name), g.variable_value FROM performance_schema.variables_info i \
                 JOIN performance_schema.global_variables g ON g.variable_name = i.variable_name \
                 WHERE i.variable_source <> 'COMPILED' ORDER BY g.variable_name",
            )
        })
        .unwrap_or_default();
    out.extend(changed.into_iter().map(|(k, v)| (k, v.unwrap_or_default())));
    for name in ALWAYS {
        if !out.iter().any(|(k, _)| k == name) {
            let v: Option<Option<String>> =
                conn.query_first(format!("SELECT @@GLOBAL.{name}")).unwrap_or(None);
            out.push((name.to_owned(), v.flatten().unwrap_or_else(|| "(not on this server)".to_owned())));
        }
    }
    Ok(database_info(BackendKind::Mysql, version, out))
}
