//! What a MariaDB/MySQL database holds besides storbench's objects, and the one-writer lock.
//!
//! A database holds tables, views, stored procedures and functions, triggers and events;
//! [`refuse_foreign_objects`] lists all of them and refuses the database when one is not
//! storbench's: every one counts in a database without `storbench_meta`, and in one with it,
//! all but the names storbench's SQL files create.

use super::load::{INDEXES_SQL, INVENTORY_COPY, MEMBERSHIP_COPY, PROCS_SQL, TABLES_SQL};
use super::{Ctx, META_TABLE, Mysql};
use crate::db::ownership::{DbObject, created_names, not_ours, refusal};
use crate::db::writer_lock::{WriterLock, held_by};
use crate::db::{ConnectionRoom, DbResult};
use mysql::Conn;
use mysql::prelude::Queryable;

/// Every object of the current database: (kind, name).
const INVENTORY: &str = "\
    SELECT IF(table_type = 'VIEW', 'view', 'table'), table_name FROM information_schema.TABLES \
     WHERE table_schema = DATABASE() \
    UNION ALL \
    SELECT LOWER(routine_type), routine_name FROM information_schema.ROUTINES WHERE routine_schema = DATABASE() \
    UNION ALL \
    SELECT 'trigger', trigger_name FROM information_schema.TRIGGERS WHERE trigger_schema = DATABASE() \
    UNION ALL \
    SELECT 'event', event_name FROM information_schema.EVENTS WHERE event_schema = DATABASE() \
    ORDER BY 1, 2";

/// The objects storbench creates, as (kind, name).
fn ours() -> Vec<(&'static str, String)> {
    let mut names: Vec<_> =
        [TABLES_SQL, INDEXES_SQL, PROCS_SQL].into_iter().flat_map(created_names).collect();
    names.extend([INVENTORY_COPY, MEMBERSHIP_COPY, META_TABLE].map(|t| ("table", t.to_owned())));
    names
}

/// Refuses the database `conn` is connected to, before anything is written, when it holds an
/// object that is not storbench's. Returns whether it carries storbench's mark.
pub(super) fn refuse_foreign_objects(db: &Mysql, conn: &mut Conn) -> DbResult<bool> {
    let rows: Vec<(String, String)> = conn.query(INVENTORY).ctx("list what the database holds")?;
    let marked = rows.iter().any(|(kind, name)| kind == "table" && name.eq_ignore_ascii_case(META_TABLE));
    let found = rows
        .into_iter()
        .map(|(kind, name)| DbObject { shown: format!("{}.{name}", db.db_name()), kind, name })
        .collect();
    let theirs = not_ours(found, marked, &ours());
    if theirs.is_empty() {
        return Ok(marked);
    }
    Err(refusal(
        &format!("database '{}' at {}", db.db_name(), db.server()),
        &theirs,
        crate::db::ownership::SERVER_ELSEWHERE,
    ))
}

/// `GET_LOCK('storbench:<db>', 0)` on a connection to the server, held in the guard.
pub(super) fn lock_writer(db: &Mysql) -> DbResult<WriterLock> {
    let mut conn = db.conn(false)?;
    let key = format!("storbench:{}", db.db_name());
    let taken: Option<i64> =
        conn.exec_first("SELECT GET_LOCK(?, 0)", (&key,)).ctx("take the writer's lock")?.flatten();
    if taken == Some(1) {
        return Ok(WriterLock::new(conn));
    }
    let holder: Option<(u64, String, String, u64)> = conn
        .exec_first(
            "SELECT p.id, p.user, p.host, p.time FROM information_schema.PROCESSLIST p WHERE p.id = IS_USED_LOCK(?)",
            (&key,),
        )
        .ctx("look up the writer's lock")?;
    let holder = holder.map_or_else(
        || "a session that has just ended".to_owned(),
        |(id, user, host, secs)| format!("connection {id} of {user} from {host}, open {secs} s"),
    );
    Err(held_by(&format!("database '{}' at {}", db.db_name(), db.server()), &holder))
}

/// The server's `max_connections` and the connections open now.
pub(super) fn connection_room(db: &Mysql) -> DbResult<ConnectionRoom> {
    let mut conn = db.conn(false)?;
    let max: Option<u64> = conn.query_first("SELECT @@GLOBAL.max_connections").ctx("read max_connections")?;
    let in_use: Option<(String, u64)> =
        conn.query_first("SHOW GLOBAL STATUS LIKE 'Threads_connected'").ctx("read Threads_connected")?;
    Ok(ConnectionRoom { max: max.unwrap_or(0), in_use: in_use.map_or(0, |(_, n)| n) })
}
