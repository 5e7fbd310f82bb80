//! Everything a PostgreSQL database holds that was not there when initdb made its template:
//! the catalogue as a whole, not a list of the kinds storbench knows.
//!
//! The method. Every object of a database (a table, a function, a large object, an operator,
//! a collation, a text-search object, a publication, a cast, a foreign server, a statistics
//! object, a policy, default privileges, an event trigger, ...) is a row of one of the
//! database's own catalogues in `pg_catalog`, and every catalogue that holds objects has an
//! `oid` column. initdb gives the objects it makes OIDs below `FirstNormalObjectId` (16384);
//! every object made afterwards, by anyone, gets an OID at or above it (the OID counter never
//! goes below it, even when it wraps). So [`objects`] lists, from the catalogue itself, every
//! local catalogue with an `oid` column (a catalogue a later PostgreSQL adds is covered
//! without a change here) and every row in it with an OID of 16384 or more, plus:
//! - every large object, whatever its OID (`lo_create(100)` may choose one below 16384);
//! - the subscriptions of this database (they live in the shared `pg_subscription`);
//! - user mappings through the `pg_user_mappings` view where `pg_user_mapping` itself is
//!   closed to the user (it holds passwords).
//!
//! Left out, with why: `pg_enum` (an enum's labels; the enum type is itself a row of
//! `pg_type`); the schemas `pg_temp_N` / `pg_toast_temp_N`, which PostgreSQL makes for any
//! session's temporary objects and keeps (the temporary objects in them are listed); and
//! catalogues without an `oid` column, whose rows describe objects listed elsewhere
//! (attributes, dependencies, comments, statistics, inheritance). A change to one of initdb's
//! objects (a grant on schema `public`, its comment) is not an object and is kept: storbench
//! never drops a database holding anything, and its own loads only add objects.
//!
//! A message names objects the way `pg_identify_object` does ("large object 18877",
//! "operator public.===(integer,integer)"); an object that only exists as an internal part of
//! another one (a table's row type and TOAST table, an array type, a view's rule, an
//! extension's members) is left out of the message, since the other one is named.

use super::err;
use crate::db::DbResult;
use crate::db::ownership::DbObject;
use postgres::GenericClient;

/// PostgreSQL's `FirstNormalObjectId`: the first OID of an object made after initdb.
const FIRST_NORMAL_OID: u32 = 16384;

/// The catalogues of the database (not the shared ones) that have an `oid` column, and
/// whether this user may read it.
const CATALOGUES: &str = "\
    SELECT c.relname::text, has_column_privilege(c.oid, 'oid', 'SELECT') \
      FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'oid' AND a.attnum > 0 \
     WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind = 'r' AND NOT c.relisshared \
       AND c.relname <> 'pg_enum' \
     ORDER BY 1";

/// One object found in the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Its catalogue and OID: what identifies it while the database lives (a clone made
    /// with CREATE DATABASE ... TEMPLATE keeps both).
    pub id: (u32, u32),
    /// Made by the transaction that asked (its catalogue row's xmin is that transaction's).
    pub by_this_transaction: bool,
    /// An internal part of another object found (row type, TOAST, array type, view rule,
    /// extension member): not named in messages.
    pub internal: bool,
    /// Depends automatically on another object found (an index, constraint, trigger, policy or
    /// statistics object of a table): named after the objects that stand on their own.
    pub dependent: bool,
    pub object: DbObject,
}

/// Every object of the database `client` is connected to that initdb did not make (see the
/// module's documentation), ordered by catalogue and OID.
pub(crate) fn objects(client: &mut impl GenericClient) -> DbResult<Vec<Found>> {
    let catalogues = client.query(CATALOGUES, &[]).map_err(err("listing the catalogues"))?;
    let mut parts = Vec::new();
    for row in &catalogues {
        let (name, readable): (String, bool) = (row.get(0), row.get(1));
        parts.push(rows_of(&name, readable)?);
    }
    parts.push(
        "SELECT 'pg_subscription'::regclass::oid, oid, false FROM pg_catalog.pg_subscription \
          WHERE subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            .to_owned(),
    );
    let sql = format!(
        "WITH found (classid, objid, mine) AS ({}) \
         SELECT f.classid, f.objid, f.mine, o.type, o.identity, \
                EXISTS (SELECT 1 FROM pg_depend d JOIN found p ON p.classid = d.refclassid AND p.objid = d.refobjid \
                         WHERE d.classid = f.classid AND d.objid = f.objid AND d.deptype IN ('i', 'e')), \
                ARRAY(SELECT p.classid::text || '/' || p.objid::text FROM pg_depend d \
                        JOIN found p ON p.classid = d.refclassid AND p.objid = d.refobjid \
                       WHERE d.classid = f.classid AND d.objid = f.objid AND d.deptype = 'a') \
           FROM found f, LATERAL pg_identify_object(f.classid, f.objid, 0) o \
          WHERE NOT (f.classid = 'pg_namespace'::regclass AND (SELECT nspname FROM pg_namespace WHERE oid = f.objid) \
                     ~ '^pg_(toast_)?temp_[0-9]+$') \
          ORDER BY 1, 2",
        parts.join(" UNION ALL ")
    );
    let rows = client.query(&sql, &[]).map_err(err("listing what the database holds"))?;
    let mut found: Vec<Found> = rows
        .iter()
        .map(|r| Found {
            id: (r.get(0), r.get(1)),
            by_this_transaction: r.get(2),
            internal: r.get(5),
            dependent: false,
            object: DbObject { kind: r.get(3), name: String::new(), shown: r.get(4) },
        })
        .collect();
    let owners: Vec<Vec<(u32, u32)>> = rows.iter().map(|r| r.get::<_, Vec<String>>(6)).map(ids).collect();
    sort_out_dependents(&mut found, &owners);
    Ok(found)
}

/// `classid/objid` pairs as numbers.
fn ids(pairs: Vec<String>) -> Vec<(u32, u32)> {
    pairs
        .iter()
        .filter_map(|p| p.split_once('/').and_then(|(c, o)| Some((c.parse().ok()?, o.parse().ok()?))))
        .collect()
}

/// Marks as dependent each object that depends automatically on others found (`owners`, in
/// `found`'s order), and as internal each one whose owner is internal (an operator of an
/// extension's operator family goes with the extension), until nothing changes.
fn sort_out_dependents(found: &mut [Found], owners: &[Vec<(u32, u32)>]) {
    for (f, o) in found.iter_mut().zip(owners) {
        f.dependent = !o.is_empty();
    }
    loop {
        let internal: Vec<(u32, u32)> = found.iter().filter(|f| f.internal).map(|f| f.id).collect();
        let mut changed = false;
        for (f, o) in found.iter_mut().zip(owners) {
            if !f.internal && o.iter().any(|id| internal.contains(id)) {
                f.internal = true;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// The part of the query that lists catalogue `name`'s objects: (catalogue, OID, made by this
/// transaction). Large objects are known by `pg_largeobject`, as `pg_identify_object` names
/// them.
fn rows_of(name: &str, readable: bool) -> DbResult<String> {
    let mine = "coalesce(xmin::text::bigint = txid_current_if_assigned() % 4294967296, false)";
    Ok(match (name, readable) {
        ("pg_largeobject_metadata", true) => {
            format!(
                "SELECT 'pg_largeobject'::regclass::oid, oid, {mine} FROM pg_catalog.pg_largeobject_metadata"
            )
        }
        ("pg_user_mapping", false) => format!(
            "SELECT 'pg_user_mapping'::regclass::oid, umid, false FROM pg_catalog.pg_user_mappings \
              WHERE umid >= {FIRST_NORMAL_OID}"
        ),
        (_, true) => format!(
            "SELECT '{name}'::regclass::oid, oid, {mine} FROM pg_catalog.{name} WHERE oid >= {FIRST_NORMAL_OID}"
        ),
        (_, false) => {
            return Err(crate::db::DbError::new(
                crate::db::DbErrorKind::Auth,
                format!(
                    "cannot read the catalogue {name} to check that the database holds nothing of anyone \
                     else's; load as a user who can read it (the database's owner or a superuser)"
                ),
            ));
        }
    })
}

/// The objects of `found` a message names: those standing on their own first, then those
/// that depend on them (indexes, constraints, policies, statistics objects).
pub(crate) fn named(found: Vec<Found>) -> Vec<DbObject> {
    let (own, dependent): (Vec<Found>, Vec<Found>) =
        found.into_iter().filter(|f| !f.internal).partition(|f| !f.dependent);
    own.into_iter().chain(dependent).map(|f| f.object).collect()
}
