//! What a PostgreSQL database holds besides storbench's objects, and the one-writer lock.
//!
//! [`refuse_foreign_objects`] lists every object of the working database (relations, indexes,
//! functions, procedures, aggregates, types, domains, extensions besides plpgsql, schemas
//! besides public, triggers, event triggers) and refuses the database when one of them is not
//! storbench's: all of them count in a database without storbench's mark, and in a marked one
//! all but the names storbench's SQL files create. Objects an extension brings are named by
//! their extension; types PostgreSQL makes for a table or as an array are the table's.

use super::load::{FOREIGN_KEYS, FUNCTIONS, INDEXES, SCHEMA, SCHEMA_DS3, SERIALS};
use super::{Postgres, err};
use crate::db::ownership::{DbObject, created_names, not_ours, refusal};
use crate::db::writer_lock::{WriterLock, held_by};
use crate::db::{ConnectionRoom, DbResult};
use crate::target::lock::this_process;
use postgres::{Client, NoTls};

/// Every object outside the system schemas: (kind, name when it is in the current schema,
/// as a message shows it). Extension members are left out (their extension is listed).
const INVENTORY: &str = "\
    WITH ns AS (SELECT oid, nspname FROM pg_namespace \
                 WHERE nspname NOT IN ('pg_catalog', 'information_schema') \
                   AND nspname NOT LIKE 'pg\\_toast%' AND nspname NOT LIKE 'pg\\_temp%'), \
         ext AS (SELECT classid, objid FROM pg_depend WHERE deptype = 'e') \
    SELECT CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view' \
                WHEN 'm' THEN 'materialized view' WHEN 'S' THEN 'sequence' WHEN 'f' THEN 'foreign table' \
                WHEN 'c' THEN 'type' ELSE 'index' END, \
           CASE WHEN ns.nspname = current_schema() THEN c.relname::text ELSE '' END, \
           ns.nspname || '.' || c.relname \
      FROM pg_class c JOIN ns ON ns.oid = c.relnamespace \
     WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f', 'c', 'i', 'I') \
       AND (c.relkind NOT IN ('i', 'I') OR NOT EXISTS (SELECT 1 FROM pg_depend d \
            WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'i')) \
       AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_class'::regclass AND ext.objid = c.oid) \
    UNION ALL \
    SELECT CASE p.prokind WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate' ELSE 'function' END, \
           CASE WHEN ns.nspname = current_schema() \
                THEN p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' ELSE '' END, \
           ns.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' \
      FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace \
     WHERE NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_proc'::regclass AND ext.objid = p.oid) \
    UNION ALL \
    SELECT CASE t.typtype WHEN 'd' THEN 'domain' ELSE 'type' END, '', ns.nspname || '.' || t.typname \
      FROM pg_type t JOIN ns ON ns.oid = t.typnamespace \
     WHERE t.typrelid = 0 AND t.typcategory <> 'A' AND t.typtype <> 'm' \
       AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_type'::regclass AND ext.objid = t.oid) \
    UNION ALL \
    SELECT 'extension', '', extname FROM pg_extension WHERE extname <> 'plpgsql' \
    UNION ALL \
    SELECT 'schema', '', nspname FROM ns WHERE nspname <> 'public' \
    UNION ALL \
    SELECT 'trigger', CASE WHEN ns.nspname = current_schema() THEN t.tgname ELSE '' END, \
           t.tgname || ' on ' || ns.nspname || '.' || c.relname \
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN ns ON ns.oid = c.relnamespace \
     WHERE NOT t.tgisinternal \
    UNION ALL \
    SELECT 'event trigger', '', evtname FROM pg_event_trigger \
    ORDER BY 1, 3";

/// The objects storbench's SQL creates, as (kind, name); with the primary keys' indexes and
/// the serials' sequences, which PostgreSQL names itself. A function is named with its
/// arguments, so a user's overload of one of storbench's names is not taken for storbench's.
fn ours() -> Vec<(&'static str, String)> {
    let mut names: Vec<_> = [SCHEMA, SCHEMA_DS3, INDEXES, FOREIGN_KEYS, FUNCTIONS]
        .into_iter()
        .flat_map(created_names)
        .filter(|(kind, _)| *kind != "function")
        .collect();
    names.extend(function_signatures(FUNCTIONS).into_iter().map(|f| ("function", f)));
    let tables: Vec<String> = names.iter().filter(|(k, _)| *k == "table").map(|(_, n)| n.clone()).collect();
    names.extend(tables.iter().map(|t| ("index", format!("{t}_pkey"))));
    names.extend(SERIALS.iter().map(|(t, col)| ("sequence", format!("{}_{col}_seq", t.sql_name()))));
    names
}

/// `name(arguments)` of every `CREATE FUNCTION` in `sql`, white space collapsed, as
/// `pg_get_function_identity_arguments` writes them (the SQL spells types as PostgreSQL does).
fn function_signatures(sql: &str) -> Vec<String> {
    sql.split("CREATE FUNCTION ")
        .skip(1)
        .filter_map(|rest| {
            let (name, rest) = rest.split_once('(')?;
            let (args, _) = rest.split_once(')')?;
            Some(format!("{}({})", name.trim(), args.split_whitespace().collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// Refuses the working database, before anything is written, when it holds an object that
/// is not storbench's (`marked`: it carries storbench's mark, so storbench's names are its own).
pub(super) fn refuse_foreign_objects(pg: &Postgres, client: &mut Client, marked: bool) -> DbResult<()> {
    let rows = client.query(INVENTORY, &[]).map_err(err("listing what the database holds"))?;
    let found = rows.iter().map(|r| DbObject { kind: r.get(0), name: r.get(1), shown: r.get(2) }).collect();
    let theirs = not_ours(found, marked, &ours());
    if theirs.is_empty() {
        return Ok(());
    }
    Err(refusal(
        &format!("database '{}' at {}", pg.dbname, pg.describe_server()),
        &theirs,
        crate::db::ownership::SERVER_ELSEWHERE,
    ))
}

/// The advisory lock's key: storbench's class and the database's name, hashed by the server.
const LOCK_KEY: &str = "hashtext('storbench'), hashtext($1)";

/// `pg_try_advisory_lock` on a connection to the maintenance database (the working one is
/// dropped and re-created under the lock), named after this process in `pg_stat_activity`.
pub(super) fn lock_writer(pg: &Postgres) -> DbResult<WriterLock> {
    let mut config = pg.config.clone();
    config.dbname(super::MAINTENANCE_DB).application_name(&this_process());
    let mut client = config.connect(NoTls).map_err(|e| pg.connect_error(&e, super::MAINTENANCE_DB))?;
    let taken: bool = client
        .query_one(&format!("SELECT pg_try_advisory_lock({LOCK_KEY})"), &[&pg.dbname])
        .map_err(err("taking the writer's lock"))?
        .get(0);
    if taken {
        return Ok(WriterLock::new(client));
    }
    let holder = client
        .query_opt(
            "SELECT a.application_name, a.pid, coalesce(host(a.client_addr), 'a local socket'), \
                    to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ') \
               FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
              WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 \
                AND l.classid = hashtext('storbench')::oid AND l.objid = hashtext($1)::oid",
            &[&pg.dbname],
        )
        .map_err(err("looking up the writer's lock"))?
        .map_or_else(
            || "a session that has just ended".to_owned(),
            |r| {
                let (app, pid, from, since): (String, i32, String, String) =
                    (r.get(0), r.get(1), r.get(2), r.get(3));
                format!("{app}; PostgreSQL backend pid {pid} from {from}, connected since {since}")
            },
        );
    Err(held_by(&format!("database '{}' at {}", pg.dbname, pg.describe_server()), &holder))
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

#[cfg(test)]
mod tests {
    #[test]
    fn storbench_functions_are_named_with_their_arguments() {
        let signatures = super::function_signatures(super::FUNCTIONS);
        assert!(
            signatures.contains(&"sb_login(p_username text, p_password text)".to_owned()),
            "{signatures:?}"
        );
        assert!(signatures.contains(&"sb_restock()".to_owned()), "{signatures:?}");
        assert_eq!(signatures.len(), super::FUNCTIONS.matches("CREATE FUNCTION ").count());
    }
}
