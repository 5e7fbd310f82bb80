//! What in a MariaDB/MySQL database is storbench's, the one-writer lock, and what identifies a
//! database whichever URL reaches it.
//!
//! The rule. A schema-scoped object of MariaDB/MySQL is a table (base table, view, sequence,
//! system-versioned table), a stored routine (function, procedure, package, package body), a
//! trigger or an event; `information_schema`'s TABLES, ROUTINES, TRIGGERS and EVENTS list every
//! one of them ([`INVENTORY`]; indexes, constraints, partitions and column statistics belong
//! to a table). A load goes into a database only when it holds none of them, or when it holds
//! storbench's earlier load, proven by that load's marker: 128 random bits written in two
//! places, `storbench_meta`'s `marker` and the comment of `storbench_inventory0`, the copy
//! `reset` restores stock from. Both must be there and agree; then every other object must
//! be one storbench's SQL creates (by kind and name), and a load drops only those names, a
//! reset only deletes rows a run added to storbench's tables. storbench never drops a
//! MariaDB database, and never sets a database's comment.
//!
//! The marker is made by the first load and kept by later ones. The first load creates
//! `storbench_inventory0` (with the marker in its comment) just before `storbench_meta`: a
//! process killed between the two leaves a database holding that one table, which the next
//! load names and refuses.

use super::{Ctx, META_TABLE, Mysql};
use crate::db::ownership::{DbObject, SERVER_ELSEWHERE, not_ours, refusal};
use crate::db::writer_lock::{Holder, WriterLock, no_local_connection, take_waiting};
use crate::db::{ConnectionRoom, DbError, DbErrorKind, DbResult, is_marker, new_marker};
use mysql::Conn;
use mysql::prelude::Queryable;

/// Every object of the current database: (kind, name).
const INVENTORY: &str = "\
    SELECT CASE table_type WHEN 'VIEW' THEN 'view' WHEN 'SEQUENCE' THEN 'sequence' ELSE 'table' END, table_name \
      FROM information_schema.TABLES WHERE table_schema = DATABASE() \
    UNION ALL \
    SELECT LOWER(routine_type), routine_name FROM information_schema.ROUTINES WHERE routine_schema = DATABASE() \
    UNION ALL \
    SELECT 'trigger', trigger_name FROM information_schema.TRIGGERS WHERE trigger_schema = DATABASE() \
    UNION ALL \
    SELECT 'event', event_name FROM information_schema.EVENTS WHERE event_schema = DATABASE() \
    ORDER BY 1, 2";

/// The copy of a loaded table whose comment carries the load's marker, the marker's second
/// place (a load keeps in it the stock `reset` restores).
pub(crate) const INVENTORY_COPY: &str = "storbench_inventory0";

/// The comment of `storbench_inventory0`, which carries the load's marker.
pub(crate) fn copy_comment(marker: &str) -> String {
    format!("storbench reset copy, marker {marker}")
}

/// The marker a database's earlier load of storbench's left, proven by both places; None for
/// a database without `storbench_meta`. Refuses one whose `storbench_meta` is not proven.
fn proven_marker(db: &Mysql, conn: &mut Conn) -> DbResult<Option<String>> {
    let meta: Option<String> = conn
        .query_first(format!(
            "SELECT table_name FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = '{META_TABLE}'"
        ))
        .ctx("look for storbench_meta")?;
    if meta.is_none() {
        return Ok(None);
    }
    let marker: Option<Option<String>> =
        match conn.query_first(format!("SELECT marker FROM {META_TABLE} WHERE id = 1")) {
            Ok(m) => m,
            Err(mysql::Error::MySqlError(e)) if e.code == 1054 => None,
            Err(e) => return Err(e).ctx("read storbench_meta"),
        };
    let record: Option<String> = conn
        .exec_first(
            "SELECT table_comment FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = ?",
            (INVENTORY_COPY,),
        )
        .ctx("read the reset copy's comment")?;
    match (marker.flatten().filter(|m| is_marker(m)), record) {
        (Some(m), Some(comment)) if comment == copy_comment(&m) => Ok(Some(m)),
        (Some(_), _) => {
            Err(unproven(db, &format!("table {INVENTORY_COPY} does not carry storbench_meta's marker")))
        }
        (None, _) => Err(unproven(db, "its table storbench_meta holds no marker storbench wrote")),
    }
}

/// What a load may do with the database `conn` is connected to: its marker (a new one for a
/// database holding nothing, the earlier load's for one storbench loaded), or a refusal,
/// before anything is written, naming what is there. `ours` is every object (kind, name) the
/// load's SQL creates (see `crate::db::ownership::created_names`).
pub(crate) fn claim_marker(db: &Mysql, conn: &mut Conn, ours: &[(&str, String)]) -> DbResult<String> {
    let rows: Vec<(String, String)> = conn.query(INVENTORY).ctx("list what the database holds")?;
    let found: Vec<DbObject> = rows
        .into_iter()
        .map(|(kind, name)| DbObject { shown: format!("{}.{name}", db.db_name()), kind, name })
        .collect();
    let marker = proven_marker(db, conn)?;
    let theirs = not_ours(found, marker.is_some(), ours);
    if !theirs.is_empty() {
        return Err(refusal(&db.place(), &theirs, SERVER_ELSEWHERE));
    }
    marker.map_or_else(new_marker, Ok)
}

/// Refuses a reset of a database whose load is not proven storbench's.
pub(crate) fn check_marker(db: &Mysql, conn: &mut Conn) -> DbResult<()> {
    match proven_marker(db, conn)? {
        Some(_) => Ok(()),
        None => Err(DbError::new(
            DbErrorKind::Missing,
            format!("{} holds no storbench OLTP data set; run the OLTP load first", db.place()),
        )),
    }
}

fn unproven(db: &Mysql, why: &str) -> DbError {
    DbError::new(
        DbErrorKind::Query,
        format!(
            "{} holds tables like storbench's, but no proof that storbench's load made them: {why}; storbench \
             drops or replaces only what its marker proves: use {SERVER_ELSEWHERE}, or drop them yourself",
            db.place()
        ),
    )
}

/// `GET_LOCK('storbench:<db>', 0)` on a connection to the server, held in the guard; waits,
/// bounded, for a holder whose connection this machine has already closed (see `writer_lock`).
pub(super) fn lock_writer(db: &Mysql) -> DbResult<WriterLock> {
    let mut conn = db.conn(false)?;
    let key = format!("storbench:{}", db.db_name());
    take_waiting(&db.place(), || try_lock(db, &mut conn, &key))?;
    Ok(WriterLock::new(conn))
}

/// None when the lock was taken, else who holds it.
fn try_lock(db: &Mysql, conn: &mut Conn, key: &str) -> DbResult<Option<Holder>> {
    let taken: Option<i64> =
        conn.exec_first("SELECT GET_LOCK(?, 0)", (key,)).ctx("take the writer's lock")?.flatten();
    if taken == Some(1) {
        return Ok(None);
    }
    let holder: Option<(u64, String, String, u64)> = conn
        .exec_first(
            "SELECT p.id, p.user, p.host, p.time FROM information_schema.PROCESSLIST p WHERE p.id = IS_USED_LOCK(?)",
            (key,),
        )
        .ctx("look up the writer's lock")?;
    Ok(Some(holder.map_or_else(
        || Holder { shown: "a session that has just ended".to_owned(), ended: true },
        |(id, user, host, secs)| {
            let client_port = host.rsplit_once(':').and_then(|(_, p)| p.parse().ok());
            Holder {
                ended: client_port.is_some_and(|p| no_local_connection(p, db.port)),
                shown: format!("connection {id} of {user} from {host}, open {secs} s"),
            }
        },
    )))
}

/// The server's `max_connections` and the connections open now.
pub(super) fn connection_room(db: &Mysql) -> DbResult<ConnectionRoom> {
    let mut conn = db.conn(false)?;
    let max: Option<u64> = conn.query_first("SELECT @@GLOBAL.max_connections").ctx("read max_connections")?;
    let in_use: Option<(String, u64)> =
        conn.query_first("SHOW GLOBAL STATUS LIKE 'Threads_connected'").ctx("read Threads_connected")?;
    Ok(ConnectionRoom { max: max.unwrap_or(0), in_use: in_use.map_or(0, |(_, n)| n) })
}

/// The server's host name, port and data directory (the same however it is reached) and the
/// database's name (in lower case where the server compares names so).
pub(super) fn identity(db: &Mysql) -> DbResult<String> {
    let row: Option<(String, u64, String, u64)> = db
        .conn(false)?
        .query_first("SELECT @@hostname, @@port, @@datadir, @@lower_case_table_names")
        .ctx("read the server's identity")?;
    let (host, port, datadir, lower) = row.unwrap_or_default();
    let name = if lower == 0 { db.db_name().to_owned() } else { db.db_name().to_lowercase() };
    Ok(format!("MariaDB/MySQL server {host}:{port} with data in {datadir}, database '{name}'"))
}
