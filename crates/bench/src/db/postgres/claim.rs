//! Which databases storbench may write, drop or replace: proven by its marker, never guessed.
//!
//! The rule. A load goes into database W only when W does not exist (storbench creates it),
//! when W holds no object at all (checked against the whole catalogue, see [`catalogue`]), or
//! when W holds exactly what an earlier load of storbench's left there, proven by that load's
//! marker. The marker is 128 random bits written in two places: W's `storbench_meta`, beside
//! the catalogue ids of every object storbench's loads created there (recorded in the
//! transaction that created them, so an object made by anyone else is never among them), and
//! the comment of `W_pristine`, the copy `reset` clones, a database storbench always creates
//! itself. A later load or a reset goes ahead only when both are there and agree and W holds
//! no object besides the recorded ones; otherwise it refuses, naming what it found, before
//! anything is written. Nothing else counts as proof: not a comment on W, not the names of
//! W's tables.
//!
//! What storbench drops. A later load drops the recorded objects inside W, in the transaction
//! that creates the new schema and writes the marker again, and never W itself: W's OID, owner,
//! settings and comment stay. `reset` drops W and clones it from `W_pristine` (PostgreSQL
//! cannot copy a database's contents in place), putting W's comment back on the clone.
//! `W_pristine` and `W_pristnew`, the name a new copy is made under before it replaces the
//! old one, are dropped only when their record carries W's marker. storbench sets a comment
//! only on a database it creates.
//!
//! A process killed between two statements leaves a state the next load or reset recognises:
//! W always carries its marker once it holds anything of storbench's, and a copy is renamed
//! over the old one only once it carries the record. One gap remains: a first load writes
//! `W_pristine`'s record just before W's marker, and a kill between the two leaves a record
//! with no database to match; storbench then refuses and names the copy to drop by hand.
//!
//! [`catalogue`]: super::catalogue

use super::catalogue::{self, Found};
use super::{Postgres, db_error, err, ident, literal};
use crate::db::ownership::{SERVER_ELSEWHERE, refusal};
use crate::db::{DbError, DbErrorKind, DbResult, is_marker, new_marker};
use postgres::{Client, GenericClient, Transaction};
use std::time::Duration;

/// The suffix of the name a new pristine copy is made under before it replaces the old one;
/// as long as `_pristine`, so the length check of the URL's database name covers it.
pub(crate) const SWAP_SUFFIX: &str = "_pristnew";

/// The comment storbench sets on a database it creates for a load.
const MARK_WORKING: &str = "storbench OLTP database, created by storbench's load: storbench may reload and \
                            re-create it (table storbench_meta says what it holds)";

/// A pristine copy's record: the marker of the load it belongs to, and whether it holds the
/// finished load (or stands in for it while the load runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub marker: String,
    pub ready: bool,
}

impl Record {
    fn comment(&self, db: &str) -> String {
        format!(
            "storbench pristine copy of database \"{db}\", marker {}, {}: the template storbench's reset clones; \
             storbench may drop it",
            self.marker,
            if self.ready { "ready" } else { "loading" }
        )
    }

    fn parse(comment: &str) -> Option<Record> {
        let rest = comment.strip_prefix("storbench pristine copy of database \"")?;
        let (_, rest) = rest.split_once("\", marker ")?;
        let (marker, rest) = rest.split_at_checked(32)?;
        let ready = match rest.split(':').next()? {
            ", ready" => true,
            ", loading" => false,
            _ => return None,
        };
        is_marker(marker).then(|| Record { marker: marker.to_owned(), ready })
    }
}

/// A copy's name as the server has it: absent, storbench's with its record, or someone else's.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Copy {
    Absent,
    Ours(Record),
    Foreign,
}

/// What W's `storbench_meta` says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mark {
    /// No `storbench_meta`.
    None,
    Marked {
        marker: String,
        recorded: Vec<(u32, u32)>,
    },
    /// A `storbench_meta` without a marker storbench could read: why.
    Unproven(String),
}

/// What a load will do with W, decided before anything is written.
#[derive(Debug)]
pub(crate) enum Claim {
    /// W does not exist: create it.
    Create,
    /// W holds nothing: load into it as it is.
    Adopt,
    /// W holds storbench's earlier load: drop these recorded objects and load in place.
    Reload(Vec<Found>),
}

/// A claim and the marker the load writes.
#[derive(Debug)]
pub(crate) struct Claimed {
    pub claim: Claim,
    pub marker: String,
}

impl Postgres {
    fn swap_name(&self) -> String {
        format!("{}{SWAP_SUFFIX}", self.dbname)
    }

    fn place(&self, name: &str) -> String {
        format!("database '{name}' at {}", self.describe_server())
    }
}

/// Decides what a load may do with W (see the module's rule); refuses, naming what is there,
/// when W or a copy of it is not provably storbench's.
pub(crate) fn for_load(pg: &Postgres, admin: &mut Client) -> DbResult<Claimed> {
    if !exists(admin, &pg.dbname)? {
        no_copies(pg, admin)?;
        return Ok(Claimed { claim: Claim::Create, marker: new_marker()? });
    }
    let mut client = pg.connect_db()?;
    let found = catalogue::objects(&mut client)?;
    match mark(&mut client)? {
        Mark::None if found.is_empty() => {
            no_copies(pg, admin)?;
            Ok(Claimed { claim: Claim::Adopt, marker: new_marker()? })
        }
        Mark::None => Err(holds(pg, found)),
        Mark::Unproven(why) => Err(unproven(pg, &why)),
        Mark::Marked { marker, recorded } => {
            let (ours, extra): (Vec<Found>, Vec<Found>) =
                found.into_iter().partition(|f| recorded.contains(&f.id));
            if !extra.is_empty() {
                return Err(holds(pg, extra));
            }
            settle_copies(pg, admin, &marker)?;
            Ok(Claimed { claim: Claim::Reload(ours), marker })
        }
    }
}

/// Puts W back to the state its pristine copy holds: checks the proof, drops W and clones it
/// from the copy, with W's comment. Returns nothing to do as an error of kind `Missing`.
pub(crate) fn reset(pg: &Postgres, admin: &mut Client) -> DbResult<()> {
    let pristine = pg.pristine_name();
    if !exists(admin, &pg.dbname)? {
        return match copy(admin, &pristine)? {
            Copy::Ours(r) if r.ready => clone_working(pg, admin, Some(MARK_WORKING)),
            Copy::Foreign => Err(foreign(pg, &pristine, "so it is not storbench's pristine copy")),
            _ => Err(nothing_to_reset(pg)),
        };
    }
    let mut client = pg.connect_db()?;
    let (marker, recorded) = match mark(&mut client)? {
        Mark::None => return Err(nothing_to_reset(pg)),
        Mark::Unproven(why) => return Err(unproven(pg, &why)),
        Mark::Marked { marker, recorded } => (marker, recorded),
    };
    let extra: Vec<Found> =
        catalogue::objects(&mut client)?.into_iter().filter(|f| !recorded.contains(&f.id)).collect();
    if !extra.is_empty() {
        return Err(holds(pg, extra));
    }
    if !settle_copies(pg, admin, &marker)?.ready {
        return Err(crate::db::load_unfinished(&pg.place(&pg.dbname), "the data set"));
    }
    drop(client);
    let comment = comment_of(admin, &pg.dbname)?;
    drop_database(admin, &pg.dbname)?;
    clone_working(pg, admin, comment.as_deref())
}

/// Creates W from its pristine copy, with `comment`.
fn clone_working(pg: &Postgres, admin: &mut Client, comment: Option<&str>) -> DbResult<()> {
    create_database(admin, &pg.dbname, &pg.pristine_name())?;
    match comment {
        Some(text) => set_comment(admin, &pg.dbname, text),
        None => Ok(()),
    }
}

/// Creates W for a load (`Claim::Create`), with storbench's comment.
pub(crate) fn create_working(pg: &Postgres, admin: &mut Client) -> DbResult<()> {
    create_database(admin, &pg.dbname, "template0")?;
    set_comment(admin, &pg.dbname, MARK_WORKING)
}

/// Makes `W_pristine` a copy of `template` carrying `record`: made as `W_pristnew`, marked,
/// closed to connections, then renamed over the old copy (which the caller proved is
/// storbench's or absent).
pub(crate) fn replace_copy(
    pg: &Postgres,
    admin: &mut Client,
    template: &str,
    record: &Record,
) -> DbResult<()> {
    let (pristine, swap) = (pg.pristine_name(), pg.swap_name());
    create_database(admin, &swap, template)?;
    set_comment(admin, &swap, &record.comment(&pg.dbname))?;
    let close = format!("ALTER DATABASE {} ALLOW_CONNECTIONS false", ident(&swap));
    execute(admin, &close, "closing the pristine copy to connections")?;
    drop_database(admin, &pristine)?;
    let rename = format!("ALTER DATABASE {} RENAME TO {}", ident(&swap), ident(&pristine));
    execute(admin, &rename, "naming the pristine copy")
}

/// The record W's marker is proven by, once any copy left by a process killed midway through
/// [`replace_copy`] is sorted out (both copies carry W's marker: the finished one is kept).
/// Refuses when a copy is someone else's, belongs to another load, or is missing.
fn settle_copies(pg: &Postgres, admin: &mut Client, marker: &str) -> DbResult<Record> {
    let (pristine, swap) = (pg.pristine_name(), pg.swap_name());
    let matching = |name: &str, copy: Copy| -> DbResult<Option<Record>> {
        match copy {
            Copy::Absent => Ok(None),
            Copy::Ours(r) if r.marker == marker => Ok(Some(r)),
            Copy::Ours(_) => {
                Err(unproven(pg, &format!("its marker is not the one {} records", pg.place(name))))
            }
            Copy::Foreign => Err(foreign(pg, name, "so storbench cannot tell which load it belongs to")),
        }
    };
    let p = matching(&pristine, copy(admin, &pristine)?)?;
    let s = matching(&swap, copy(admin, &swap)?)?;
    let rename = format!("ALTER DATABASE {} RENAME TO {}", ident(&swap), ident(&pristine));
    match (p, s) {
        (None, None) => Err(unproven(pg, &format!("there is no {} holding its marker", pg.place(&pristine)))),
        (Some(p), None) => Ok(p),
        (Some(p), Some(s)) if !s.ready || p.ready => {
            drop_database(admin, &swap)?;
            Ok(p)
        }
        (p, Some(s)) => {
            if p.is_some() {
                drop_database(admin, &pristine)?;
            }
            execute(admin, &rename, "naming the pristine copy")?;
            Ok(s)
        }
    }
}

/// Refuses a load into a W without a marker when a copy of W's name exists.
fn no_copies(pg: &Postgres, admin: &mut Client) -> DbResult<()> {
    for name in [pg.pristine_name(), pg.swap_name()] {
        match copy(admin, &name)? {
            Copy::Absent => {}
            Copy::Foreign => {
                return Err(foreign(
                    pg,
                    &name,
                    &format!("storbench needs that name for the pristine copy of '{}'", pg.dbname),
                ));
            }
            Copy::Ours(_) => return Err(unmatched(pg, &name)),
        }
    }
    Ok(())
}

fn exists(admin: &mut Client, name: &str) -> DbResult<bool> {
    let row = admin
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .map_err(err("looking up the database"))?;
    Ok(row.is_some())
}

fn comment_of(admin: &mut Client, name: &str) -> DbResult<Option<String>> {
    let row = admin
        .query_opt(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
            &[&name],
        )
        .map_err(err("reading the database's comment"))?;
    Ok(row.and_then(|r| r.get(0)))
}

fn copy(admin: &mut Client, name: &str) -> DbResult<Copy> {
    if !exists(admin, name)? {
        return Ok(Copy::Absent);
    }
    Ok(comment_of(admin, name)?.as_deref().and_then(Record::parse).map_or(Copy::Foreign, Copy::Ours))
}

/// W's marker and recorded objects, from `storbench_meta`.
fn mark(client: &mut Client) -> DbResult<Mark> {
    let there: bool = client
        .query_one("SELECT to_regclass('storbench_meta') IS NOT NULL", &[])
        .map_err(err("looking for storbench_meta"))?
        .get(0);
    if !there {
        return Ok(Mark::None);
    }
    let read = client.query("SELECT marker, object_classes, object_ids FROM storbench_meta", &[]);
    let rows = match read {
        Ok(rows) => rows,
        Err(e) => {
            return Ok(Mark::Unproven(format!(
                "its table storbench_meta has no marker ({})",
                super::describe(&e)
            )));
        }
    };
    let [row] = rows.as_slice() else {
        return Ok(Mark::Unproven(format!("its table storbench_meta has {} rows, not one", rows.len())));
    };
    let marker: Option<String> = row.get(0);
    let (classes, ids): (Vec<u32>, Vec<u32>) = (row.get(1), row.get(2));
    match marker.filter(|m| is_marker(m)) {
        Some(marker) if classes.len() == ids.len() => {
            Ok(Mark::Marked { marker, recorded: classes.into_iter().zip(ids).collect() })
        }
        _ => Ok(Mark::Unproven("its table storbench_meta holds no marker storbench wrote".into())),
    }
}

/// Adds to `storbench_meta` every object the transaction `tx` created, so that a later load
/// or reset knows them as storbench's. Call it last in the transaction.
pub(crate) fn record_created(tx: &mut impl GenericClient) -> DbResult<()> {
    let row = tx
        .query_one("SELECT object_classes, object_ids FROM storbench_meta", &[])
        .map_err(err("reading storbench_meta"))?;
    let (classes, ids): (Vec<u32>, Vec<u32>) = (row.get(0), row.get(1));
    let mut recorded: Vec<(u32, u32)> = classes.into_iter().zip(ids).collect();
    recorded.extend(catalogue::objects(tx)?.into_iter().filter(|f| f.by_this_transaction).map(|f| f.id));
    recorded.sort_unstable();
    recorded.dedup();
    let (classes, ids): (Vec<u32>, Vec<u32>) = recorded.into_iter().unzip();
    tx.execute("UPDATE storbench_meta SET object_classes = $1, object_ids = $2", &[&classes, &ids])
        .map(drop)
        .map_err(err("recording storbench's objects in storbench_meta"))
}

/// Drops the objects of an earlier load of storbench's (all recorded), those standing on their
/// own; what belongs to them (indexes, constraints, triggers, sequences) goes with them. No
/// CASCADE: anything else depending on them stops the drop. Objects that depend on each other
/// (functions returning a table's rows, a trigger calling a function) are dropped in the order
/// their dependencies allow, found by trying: each statement under a savepoint, a pass after
/// pass, until all are gone or a pass drops nothing.
pub(crate) fn drop_recorded(tx: &mut Transaction<'_>, recorded: &[Found]) -> DbResult<()> {
    let mut statements = drop_statements(recorded);
    while !statements.is_empty() {
        let mut last_error = None;
        let before = statements.len();
        statements.retain(|sql| match try_statement(tx, sql) {
            Ok(()) => false,
            Err(e) => {
                last_error = Some(e);
                true
            }
        });
        if let Some(e) = last_error.filter(|_| statements.len() == before) {
            return Err(db_error("dropping the objects of storbench's earlier load", &e));
        }
    }
    Ok(())
}

/// Runs `sql` under a savepoint, which is undone on an error and released either way, so that
/// what follows runs in the transaction itself (its objects then carry its transaction id).
fn try_statement(tx: &mut Transaction<'_>, sql: &str) -> Result<(), postgres::Error> {
    tx.batch_execute("SAVEPOINT storbench_try")?;
    let ran = tx.batch_execute(sql);
    if ran.is_err() {
        tx.batch_execute("ROLLBACK TO SAVEPOINT storbench_try")?;
    }
    tx.batch_execute("RELEASE SAVEPOINT storbench_try")?;
    ran
}

/// One DROP per kind of relation (tables that refer to each other go together), one per
/// other object.
fn drop_statements(recorded: &[Found]) -> Vec<String> {
    let relations = ["table", "view", "materialized view", "sequence", "foreign table"];
    let own: Vec<&Found> = recorded.iter().filter(|f| !f.internal && !f.dependent).collect();
    let mut statements: Vec<String> = relations
        .iter()
        .filter_map(|kind| {
            let of_kind: Vec<&str> =
                own.iter().filter(|f| f.object.kind == *kind).map(|f| f.object.shown.as_str()).collect();
            (!of_kind.is_empty()).then(|| format!("DROP {} {}", kind.to_uppercase(), of_kind.join(", ")))
        })
        .collect();
    statements.extend(
        own.iter()
            .filter(|f| !relations.contains(&f.object.kind.as_str()))
            .map(|f| format!("DROP {} {}", f.object.kind.to_uppercase(), f.object.shown)),
    );
    statements
}

fn execute(client: &mut Client, sql: &str, doing: &str) -> DbResult<()> {
    client.batch_execute(sql).map_err(err(doing))
}

fn set_comment(admin: &mut Client, name: &str, text: &str) -> DbResult<()> {
    let sql = format!("COMMENT ON DATABASE {} IS {}", ident(name), literal(text));
    execute(admin, &sql, &format!("setting the comment of database '{name}'"))
}

fn server_version(client: &mut Client) -> DbResult<u32> {
    let row = client.query_one("SHOW server_version_num", &[]).map_err(err("reading the server version"))?;
    Ok(row.get::<_, String>(0).parse().unwrap_or(0))
}

/// Drops database `name` (which the caller proved is storbench's), ending its sessions first.
pub(crate) fn drop_database(admin: &mut Client, name: &str) -> DbResult<()> {
    let doing = format!("dropping database '{name}'");
    if server_version(admin)? >= 130_000 {
        return execute(admin, &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", ident(name)), &doing);
    }
    terminate_sessions(admin, name)?;
    execute(admin, &format!("DROP DATABASE IF EXISTS {}", ident(name)), &doing)
}

fn terminate_sessions(admin: &mut Client, name: &str) -> DbResult<()> {
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&name],
        )
        .map(drop)
        .map_err(err("ending the database's sessions"))
}

/// Creates database `name` as a copy of `template`.
/// How long sessions on a template that were ended (or are ending) may take to leave before
/// copying it fails.
const SESSIONS_LEAVE_WITHIN: Duration = Duration::from_secs(10);

fn create_database(admin: &mut Client, name: &str, template: &str) -> DbResult<()> {
    // A data set is copied as files (one checkpoint before, one after) rather than block by
    // block through the WAL (PostgreSQL 15's default). WAL_LOG measured a little faster at S
    // (1.6-3.4 s against 2.9-4.3 s, two runs), but it puts the whole database into the WAL, whose
    // checkpoints would then fall into the measured run; after FILE_COPY a run starts clean.
    let cloning = template != "template0";
    let strategy = if cloning && server_version(admin)? >= 150_000 { " STRATEGY file_copy" } else { "" };
    let sql = format!("CREATE DATABASE {} TEMPLATE {}{strategy}", ident(name), ident(template));
    let doing = format!("creating database '{name}' from '{template}'");
    let until = std::time::Instant::now() + SESSIONS_LEAVE_WITHIN;
    loop {
        match admin.batch_execute(&sql) {
            Ok(()) => return Ok(()),
            // "source database is being accessed by other users": a session that was just
            // closed or ended may take a moment to leave (longer on a loaded machine).
            Err(e) if e.code().is_some_and(|c| c.code() == "55006") && std::time::Instant::now() < until => {
                terminate_sessions(admin, template)?;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(db_error(&doing, &e)),
        }
    }
}

/// The refusal of W because it holds `found`, none of it recorded as storbench's.
fn holds(pg: &Postgres, found: Vec<Found>) -> DbError {
    refusal(&pg.place(&pg.dbname), &catalogue::named(found), SERVER_ELSEWHERE)
}

fn unproven(pg: &Postgres, why: &str) -> DbError {
    DbError::new(
        DbErrorKind::Query,
        format!(
            "{} holds tables like storbench's, but no proof that storbench's load made them: {why}; storbench \
             drops or replaces only what its marker proves: use {SERVER_ELSEWHERE}, or drop the database \
             yourself",
            pg.place(&pg.dbname)
        ),
    )
}

fn unmatched(pg: &Postgres, name: &str) -> DbError {
    DbError::new(
        DbErrorKind::Query,
        format!(
            "{} holds storbench's record of a load whose marker database '{}' does not carry (a load killed \
             at its start, or another database's copy); storbench drops only what its marker proves: drop it \
             yourself (DROP DATABASE \"{name}\") and load again",
            pg.place(name),
            pg.dbname
        ),
    )
}

pub(crate) fn foreign(pg: &Postgres, name: &str, why: &str) -> DbError {
    DbError::new(
        DbErrorKind::Query,
        format!(
            "{} exists and was not created by storbench ({why}); storbench never overwrites data it did not \
             create: choose another database name in the URL (storbench creates it)",
            pg.place(name)
        ),
    )
}

fn nothing_to_reset(pg: &Postgres) -> DbError {
    DbError::new(
        DbErrorKind::Missing,
        format!(
            "nothing to reset to: {} holds no load of storbench's with its pristine copy '{}'; run the OLTP \
             load (it makes one)",
            pg.place(&pg.dbname),
            pg.pristine_name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::Record;

    #[test]
    fn a_record_reads_back_as_written_and_nothing_else_is_one() {
        let r = Record { marker: "0123456789abcdef0123456789abcdef".into(), ready: true };
        assert_eq!(Record::parse(&r.comment("ds3")), Some(r.clone()));
        let loading = Record { ready: false, ..r };
        assert_eq!(Record::parse(&loading.comment("a\"b")), Some(loading.clone()));
        let old = "storbench pristine copy of an OLTP database: the template storbench's reset clones";
        for comment in [old, "storbench pristine copy of database \"x\", marker 0123, ready: x", "mine"] {
            assert_eq!(Record::parse(comment), None, "{comment}");
        }
    }
}
