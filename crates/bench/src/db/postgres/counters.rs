//! The server's counters for the per-second series: `pg_stat_database` for this database and
//! the checkpointer / background writer for the whole server.
//!
//! The sampler has its own connection to the maintenance database (so a `reset`, which drops
//! the working database, does not cut it off), falling back to the working database, and
//! reconnects when the server closed it (that interval is then None). A
//! counter that went backwards (statistics reset, database re-created) gives None for that
//! interval. The statistics views are updated by each backend at most about once a second,
//! so one interval can hold part of the next one's work.

use super::{MAINTENANCE_DB, Postgres};
use crate::db::CounterSampler;
use postgres::{Client, Config, NoTls};
use std::time::Instant;

/// PostgreSQL ≤ 16: checkpoints and written blocks are all in pg_stat_bgwriter.
const QUERY_BGWRITER: &str = "\
    SELECT d.blks_hit, d.blks_read, d.xact_commit, d.xact_rollback, d.deadlocks, \
           b.checkpoints_timed + b.checkpoints_req, \
           b.buffers_checkpoint + b.buffers_clean + b.buffers_backend \
      FROM pg_stat_database d, pg_stat_bgwriter b WHERE d.datname = $1";

/// PostgreSQL 17 and later: checkpoints moved to pg_stat_checkpointer and backend writes to
/// pg_stat_io.
const QUERY_CHECKPOINTER: &str = "\
    SELECT d.blks_hit, d.blks_read, d.xact_commit, d.xact_rollback, d.deadlocks, \
           c.num_timed + c.num_requested, \
           c.buffers_written + b.buffers_clean \
             + (SELECT coalesce(sum(writes), 0)::bigint FROM pg_stat_io \
                 WHERE backend_type = 'client backend' AND object = 'relation') \
      FROM pg_stat_database d, pg_stat_bgwriter b, pg_stat_checkpointer c WHERE d.datname = $1";

/// Counter values: hit, read, commit, rollback, deadlocks, checkpoints, blocks written.
type Raw = [i64; 7];

pub(super) struct PgCounters {
    /// Where the sampler's connection goes, to reconnect after the server closed it.
    config: Config,
    client: Option<Client>,
    query: &'static str,
    dbname: String,
    last: Option<(Instant, Raw)>,
}

impl PgCounters {
    pub(super) fn new(pg: &Postgres) -> crate::db::DbResult<PgCounters> {
        let mut config = pg.config.clone();
        config.dbname(MAINTENANCE_DB);
        let mut client = match config.connect(NoTls) {
            Ok(client) => client,
            Err(_) => {
                config.dbname(&pg.dbname);
                pg.connect_db()?
            }
        };
        let version: String = client
            .query_one("SHOW server_version_num", &[])
            .map_err(super::err("reading the server version"))?
            .get(0);
        let query =
            if version.parse::<u32>().unwrap_or(0) >= 170_000 { QUERY_CHECKPOINTER } else { QUERY_BGWRITER };
        let mut counters =
            PgCounters { config, client: Some(client), query, dbname: pg.dbname.clone(), last: None };
        counters.last = counters.read().map(|raw| (Instant::now(), raw));
        Ok(counters)
    }

    /// The counters now; None when the server cannot be asked (one reconnect is tried).
    fn read(&mut self) -> Option<Raw> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            self.client = self.config.connect(NoTls).ok();
        }
        let row = match self.client.as_mut()?.query_opt(self.query, &[&self.dbname]) {
            Ok(row) => row?,
            Err(_) => {
                self.client = None;
                return None;
            }
        };
        let mut raw = [0; 7];
        for (i, v) in raw.iter_mut().enumerate() {
            *v = row.try_get(i).ok()?;
        }
        Some(raw)
    }
}

impl CounterSampler for PgCounters {
    fn sample(&mut self) -> [Option<f64>; 7] {
        let Some(now) = self.read() else { return [None; 7] };
        let at = Instant::now();
        let Some((then, before)) = self.last.replace((at, now)) else { return [None; 7] };
        let secs = at.duration_since(then).as_secs_f64();
        let delta = |i: usize| (now[i] >= before[i]).then(|| (now[i] - before[i]) as f64);
        let rate = |i: usize| delta(i).filter(|_| secs > 0.0).map(|d| d / secs);
        let hit_pct = match (delta(0), delta(1)) {
            (Some(hit), Some(read)) if hit + read > 0.0 => Some(100.0 * hit / (hit + read)),
            _ => None,
        };
        [hit_pct, rate(1), rate(6), delta(5), rate(2), rate(3), delta(4)]
    }
}
