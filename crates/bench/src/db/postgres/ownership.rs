//! The one-writer lock, the server's connection room, and what identifies a database
//! whichever URL reaches it. (What storbench may load into, drop or replace is [`claim`]'s.)
//!
//! [`claim`]: super::claim

use super::{Postgres, err};
use crate::db::writer_lock::{Holder, WriterLock, storbench_process_ended, take_waiting};
use crate::db::{ConnectionRoom, DbResult};
use crate::target::lock::this_process;
use postgres::{Client, NoTls};

/// The advisory lock's key: storbench's class and the database's name, hashed by the server.
const LOCK_KEY: &str = "hashtext('storbench'), hashtext($1)";

/// `pg_try_advisory_lock` on a connection to the maintenance database (the working one is
/// dropped and re-created under the lock), named after this process in `pg_stat_activity`;
/// waits, bounded, for a holder whose process has ended (see `writer_lock`).
pub(super) fn lock_writer(pg: &Postgres) -> DbResult<WriterLock> {
    let mut config = pg.config.clone();
    config.dbname(super::MAINTENANCE_DB).application_name(&this_process());
    let mut client = config.connect(NoTls).map_err(|e| pg.connect_error(&e, super::MAINTENANCE_DB))?;
    let place = format!("database '{}' at {}", pg.dbname, pg.describe_server());
    take_waiting(&place, || try_lock(&mut client, &pg.dbname))?;
    Ok(WriterLock::new(client))
}

/// None when the lock was taken, else who holds it.
fn try_lock(client: &mut Client, dbname: &str) -> DbResult<Option<Holder>> {
    let taken: bool = client
        .query_one(&format!("SELECT pg_try_advisory_lock({LOCK_KEY})"), &[&dbname])
        .map_err(err("taking the writer's lock"))?
        .get(0);
    if taken {
        return Ok(None);
    }
    let holder = client
        .query_opt(
            "SELECT a.application_name, a.pid, coalesce(host(a.client_addr), 'a local socket'), \
                    to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ') \
               FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
              WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 \
                AND l.classid = hashtext('storbench')::oid AND l.objid = hashtext($1)::oid",
            &[&dbname],
        )
        .map_err(err("looking up the writer's lock"))?;
    Ok(Some(holder.map_or_else(
        || Holder { shown: "a session that has just ended".to_owned(), ended: true },
        |r| {
            let (app, pid, from, since): (String, i32, String, String) =
                (r.get(0), r.get(1), r.get(2), r.get(3));
            Holder {
                ended: storbench_process_ended(&app),
                shown: format!("{app}; PostgreSQL backend pid {pid} from {from}, connected since {since}"),
            }
        },
    )))
}

/// The server's connection limit (less the superusers' reserve) and the client connections open.
pub(super) fn connection_room(pg: &Postgres) -> DbResult<ConnectionRoom> {
    let mut client = pg.connect_admin()?;
    let row = client
        .query_one(
            "SELECT current_setting('max_connections')::bigint \
                    - current_setting('superuser_reserved_connections')::bigint, \
                    (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')",
            &[],
        )
        .map_err(err("reading max_connections"))?;
    let (max, in_use): (i64, i64) = (row.get(0), row.get(1));
    Ok(ConnectionRoom { max: u64::try_from(max).unwrap_or(0), in_use: u64::try_from(in_use).unwrap_or(0) })
}

/// The cluster's system identifier (made by initdb, the same however the server is reached),
/// its port, whether it is a standby (which shares its primary's identifier), and the
/// database's name.
pub(super) fn identity(pg: &Postgres) -> DbResult<String> {
    let row = pg
        .connect_admin()?
        .query_one(
            "SELECT system_identifier::text, current_setting('port'), pg_is_in_recovery() FROM pg_control_system()",
            &[],
        )
        .map_err(err("reading the server's identifier"))?;
    let (system, port, standby): (String, String, bool) = (row.get(0), row.get(1), row.get(2));
    let role = if standby { ", a standby" } else { "" };
    Ok(format!("PostgreSQL cluster {system} on port {port}{role}, database '{}'", pg.dbname))
}
