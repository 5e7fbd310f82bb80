//! Issue 21, item 2: a database is loaded only when it holds nothing at all (the whole
//! catalogue, not a list of known kinds) or storbench's own earlier load, proven by its
//! marker; what is refused survives, the database is never dropped (its OID stays), and a
//! comment storbench did not set stays. Each test uses its own databases and drops them.

use crate::support::{ServerDb, disk_tempdir, refused, storbench};
use crate::trust_databases::storbench_tables;
use storbench_bench::db::BackendKind;

fn load(db: &ServerDb) -> assert_cmd::Command {
    let mut cmd = storbench();
    cmd.args(["oltp", "load", "--db-size", "1MB", "--url", &db.url()]);
    cmd
}

/// A 1 s `oltp run` on `db` (which resets it first).
fn run(db: &ServerDb, results: &std::path::Path) -> assert_cmd::Command {
    let timing = ["--warmup-time", "0", "--run-time", "1s"];
    assert_cmd::Command::from_std(crate::support::oltp_run(&["--url", &db.url()], results, &timing))
}

/// The PostgreSQL database's OID and comment: what changes when it is dropped or re-commented.
fn pg_identity(db: &ServerDb) -> String {
    let sql = format!(
        "SELECT oid || ' ' || coalesce(shobj_description(oid, 'pg_database'), '-') FROM pg_database \
          WHERE datname = '{}'",
        db.name
    );
    let found = db.sql(&sql).trim().to_owned();
    assert!(!found.is_empty(), "database {} is gone", db.name);
    found
}

/// Objects PostgreSQL keeps that a list of known kinds missed: (SQL making it, how the refusal
/// names it, SQL that shows it is still there, printing 1).
const PG_OBJECTS: [(&str, &str, &str); 11] = [
    (
        "SELECT lo_create(424242)",
        "large object 424242",
        "SELECT count(*) FROM pg_largeobject_metadata WHERE oid = 424242",
    ),
    (
        "CREATE FUNCTION my_eq(int, int) RETURNS bool LANGUAGE sql AS 'SELECT $1 = $2'; \
         CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, FUNCTION = my_eq)",
        "operator public.===(integer,integer)",
        "SELECT (1 === 1)::int",
    ),
    (
        "CREATE COLLATION my_coll (provider = libc, locale = 'C')",
        "collation public.my_coll",
        "SELECT count(*) FROM pg_collation WHERE collname = 'my_coll'",
    ),
    (
        "CREATE TEXT SEARCH CONFIGURATION my_ts (COPY = simple)",
        "text search configuration public.my_ts",
        "SELECT length(to_tsvector('my_ts', 'kept')::text) / 8",
    ),
    ("CREATE PUBLICATION my_pub", "publication my_pub", "SELECT count(*) FROM pg_publication"),
    (
        "CREATE CAST (point AS text) WITH INOUT",
        "cast (pg_catalog.point AS pg_catalog.text)",
        "SELECT count(*) FROM pg_cast WHERE oid >= 16384",
    ),
    (
        "CREATE FOREIGN DATA WRAPPER my_fdw; CREATE SERVER my_server FOREIGN DATA WRAPPER my_fdw",
        "server my_server",
        "SELECT count(*) FROM pg_foreign_server",
    ),
    (
        "CREATE TABLE my_t (a int, b int); CREATE STATISTICS my_stats (dependencies) ON a, b FROM my_t",
        "statistics object public.my_stats",
        "SELECT count(*) FROM pg_statistic_ext",
    ),
    (
        "CREATE FUNCTION my_evt() RETURNS event_trigger LANGUAGE plpgsql AS 'BEGIN END'; \
         CREATE EVENT TRIGGER my_evt ON ddl_command_start EXECUTE FUNCTION my_evt()",
        "event trigger my_evt",
        "SELECT count(*) FROM pg_event_trigger",
    ),
    (
        "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO public",
        "default acl for role",
        "SELECT count(*) FROM pg_default_acl",
    ),
    (
        "CREATE SUBSCRIPTION my_sub CONNECTION 'dbname=nowhere' PUBLICATION p \
         WITH (connect = false, slot_name = NONE)",
        "subscription my_sub",
        "SELECT count(*) FROM pg_subscription WHERE subname = 'my_sub'",
    ),
];

#[test]
fn a_postgres_database_holding_any_kind_of_object_is_refused_named_and_never_dropped() {
    for (i, (make, named, still_there)) in PG_OBJECTS.iter().enumerate() {
        let Some(db) = ServerDb::new(BackendKind::Postgres, &format!("trustpgkind{i}")) else { return };
        db.sql(&format!("CREATE DATABASE \"{}\"", db.name));
        db.sql_in(make);
        let before = pg_identity(&db);
        for attempt in ["first", "second"] {
            let err = refused(&mut load(&db), "storbench did not create");
            assert!(err.contains(named), "{attempt} load: {named} is not named:\n{err}");
            assert_eq!(storbench_tables(&db), "0", "{named}: the {attempt} load wrote before refusing");
            assert_eq!(pg_identity(&db), before, "{named}: the database was dropped or re-commented");
        }
        assert_eq!(db.sql_in(still_there).trim(), "1", "{named} is gone");
        if make.contains("SUBSCRIPTION") {
            // A database with a subscription cannot be dropped: the test's clean-up needs this.
            db.sql_in("DROP SUBSCRIPTION my_sub");
        }
    }
}

#[test]
fn a_postgres_database_commented_like_storbenchs_with_a_customers_table_is_refused_and_kept() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpgforged") else { return };
    db.sql(&format!("CREATE DATABASE \"{}\"", db.name));
    db.sql(&format!("COMMENT ON DATABASE \"{}\" IS 'storbench OLTP results of March: keep'", db.name));
    db.sql_in("CREATE TABLE customers (customerid int); INSERT INTO customers VALUES (7)");
    let before = pg_identity(&db);
    let err = refused(&mut load(&db), "holds 1 object storbench did not create: table public.customers");
    assert!(err.contains(&db.name), "{err}");
    let dir = disk_tempdir();
    refused(&mut run(&db, dir.path()), "nothing is loaded");
    assert_eq!(pg_identity(&db), before, "the database was dropped or re-commented");
    assert_eq!(db.sql_in("SELECT customerid FROM customers").trim(), "7");
}

#[test]
fn a_postgres_load_whose_marker_is_wrong_or_whose_record_is_gone_is_refused_not_dropped() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpgmark") else { return };
    load(&db).assert().success();
    let before = pg_identity(&db);
    let marker = db.sql_in("SELECT marker FROM storbench_meta").trim().to_owned();
    db.sql_in("UPDATE storbench_meta SET marker = '0123456789abcdef0123456789abcdef'");
    let err = refused(&mut load(&db), "no proof that storbench's load made them");
    assert!(err.contains(&format!("{}_pristine", db.name)), "the copy whose record differs is named: {err}");
    let dir = disk_tempdir();
    refused(&mut run(&db, &dir.path().join("a")), "only what its marker proves");
    assert_eq!(pg_identity(&db), before, "the database was dropped");
    // The marker back, but the pristine copy's record gone: refused the same way.
    db.sql_in(&format!("UPDATE storbench_meta SET marker = '{marker}'"));
    db.sql(&format!("COMMENT ON DATABASE \"{}_pristine\" IS NULL", db.name));
    refused(&mut load(&db), "was not created by storbench");
    refused(&mut run(&db, &dir.path().join("b")), "was not created by storbench");
    assert_eq!(pg_identity(&db), before, "the database was dropped");
    assert!(db.sql_in("SELECT count(*) FROM customers").trim().parse::<u64>().unwrap() > 0);
}

#[test]
fn a_postgres_database_a_user_made_keeps_its_comment_and_oid_through_loads_and_runs() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpgcomment") else { return };
    db.sql(&format!("CREATE DATABASE \"{}\"", db.name));
    db.sql(&format!("COMMENT ON DATABASE \"{}\" IS 'benchmark database of team A'", db.name));
    let made = pg_identity(&db);
    assert!(made.ends_with("benchmark database of team A"), "{made}");
    load(&db).assert().success();
    assert_eq!(pg_identity(&db), made, "the first load changed the database or its comment");
    load(&db).assert().success();
    assert_eq!(pg_identity(&db), made, "a second load dropped the database or changed its comment");
    let dir = disk_tempdir();
    run(&db, dir.path()).assert().success();
    // A run's reset clones the database from its pristine copy: a new OID, the same comment.
    let after = pg_identity(&db);
    assert!(after.ends_with(" benchmark database of team A"), "the reset lost the comment: {after}");
}

#[test]
fn a_large_object_or_publication_added_to_storbenchs_postgres_database_stops_load_and_reset() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpgadded") else { return };
    load(&db).assert().success();
    db.sql_in("SELECT lo_create(434343); CREATE PUBLICATION my_added_pub");
    let before = pg_identity(&db);
    let err = refused(&mut load(&db), "holds 2 objects storbench did not create");
    assert!(err.contains("large object 434343") && err.contains("publication my_added_pub"), "{err}");
    let dir = disk_tempdir();
    refused(&mut run(&db, dir.path()), "large object 434343");
    assert_eq!(pg_identity(&db), before, "the database was dropped");
    assert_eq!(db.sql_in("SELECT count(*) FROM pg_largeobject_metadata WHERE oid = 434343").trim(), "1");
}

/// MariaDB's kinds of schema objects: (SQL making it, how the refusal names it, SQL showing
/// it survived, printing 1).
const MY_OBJECTS: [(&str, &str, &str); 5] = [
    ("CREATE SEQUENCE my_seq", "sequence {db}.my_seq", "SELECT NEXTVAL(my_seq)"),
    (
        "CREATE EVENT my_event ON SCHEDULE EVERY 1 DAY DO SELECT 1",
        "event {db}.my_event",
        "SELECT COUNT(*) FROM information_schema.EVENTS WHERE event_name = 'my_event'",
    ),
    (
        "SET sql_mode = ORACLE;\nDELIMITER //\nCREATE PACKAGE my_pkg AS PROCEDURE p; END;\n//",
        "package {db}.my_pkg",
        "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE routine_name = 'my_pkg'",
    ),
    ("CREATE VIEW my_view AS SELECT 1 AS one", "view {db}.my_view", "SELECT one FROM my_view"),
    ("CREATE FUNCTION my_fn() RETURNS INT DETERMINISTIC RETURN 1", "function {db}.my_fn", "SELECT my_fn()"),
];

#[test]
fn a_mariadb_database_holding_any_kind_of_object_is_refused_named_and_kept() {
    for (i, (make, named, still_there)) in MY_OBJECTS.iter().enumerate() {
        let Some(db) = ServerDb::new(BackendKind::Mysql, &format!("trustmykind{i}")) else { return };
        db.sql(&format!("CREATE DATABASE `{}`", db.name));
        db.sql_in(make);
        let named = named.replace("{db}", &db.name);
        for attempt in ["first", "second"] {
            let err = refused(&mut load(&db), "holds 1 object storbench did not create");
            assert!(err.contains(&named), "{attempt} load: {named} is not named:\n{err}");
            assert_eq!(storbench_tables(&db), "0", "{named}: the {attempt} load wrote before refusing");
        }
        assert_eq!(db.sql_in(still_there).trim(), "1", "{named} is gone");
    }
}

#[test]
fn a_mariadb_database_with_a_storbench_meta_table_of_its_own_is_refused_and_kept() {
    let Some(db) = ServerDb::new(BackendKind::Mysql, "trustmyforged") else { return };
    db.sql(&format!("CREATE DATABASE `{}` COMMENT 'team B'", db.name));
    db.sql_in("CREATE TABLE storbench_meta (id INT); CREATE TABLE customers (customerid INT)");
    db.sql_in("INSERT INTO customers VALUES (7)");
    let err = refused(&mut load(&db), "no proof that storbench's load made them");
    assert!(err.contains(&db.name), "{err}");
    let dir = disk_tempdir();
    refused(&mut run(&db, dir.path()), &db.name);
    assert_eq!(db.sql_in("SELECT customerid FROM customers").trim(), "7", "the user's table was replaced");
    let comment =
        format!("SELECT schema_comment FROM information_schema.SCHEMATA WHERE schema_name = '{}'", db.name);
    assert_eq!(db.sql(&comment).trim(), "team B");
}

#[test]
fn a_mariadb_load_whose_marker_is_wrong_is_refused_and_its_rows_are_kept() {
    let Some(db) = ServerDb::new(BackendKind::Mysql, "trustmymark") else { return };
    load(&db).assert().success();
    db.sql_in("UPDATE customers SET username = 'mine' WHERE customerid = 1");
    db.sql_in("UPDATE storbench_meta SET marker = '0123456789abcdef0123456789abcdef'");
    refused(&mut load(&db), "does not carry storbench_meta's marker");
    let dir = disk_tempdir();
    refused(&mut run(&db, dir.path()), "does not carry storbench_meta's marker");
    assert_eq!(db.sql_in("SELECT username FROM customers WHERE customerid = 1").trim(), "mine");
}
