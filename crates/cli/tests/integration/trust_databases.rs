//! Issue 12 on the OLTP databases: nothing of the user's is touched (a database holding a
//! user's objects is refused before the first write, and they survive), one writer per
//! database (a second process exits 2 naming the holder), a half-loaded database is reported
//! as such, and a password with `@` and `;` works and never shows. Each test uses its own
//! databases and drops them; without servers they skip (see `server_url`).

use crate::support::{ServerDb, disk_tempdir, refused, stderr_text, storbench};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use storbench_bench::db::BackendKind;
use storbench_bench::testing::wait_until;

fn load(url: &str, size: &str) -> assert_cmd::Command {
    let mut cmd = storbench();
    cmd.args(["oltp", "load", "--db-size", size, "--url", url]);
    cmd
}

/// `oltp run` of 1 s at 1MB on `target`, its bundle under `results`, as a command to assert on.
fn short_run(target: &[&str], results: &std::path::Path, extra: &[&str]) -> assert_cmd::Command {
    let run = ["--warmup-time", "1s", "--run-time", "1s"];
    assert_cmd::Command::from_std(crate::support::oltp_run(target, results, &[&run[..], extra].concat()))
}

/// Tables named like storbench's in the test database: none means nothing was written.
pub(crate) fn storbench_tables(db: &ServerDb) -> String {
    let sql = match db.kind {
        BackendKind::Postgres => {
            "SELECT count(*) FROM pg_tables WHERE tablename IN ('customers', 'storbench_meta')"
        }
        _ => {
            "SELECT count(*) FROM information_schema.TABLES WHERE table_schema = DATABASE() \
              AND table_name IN ('customers', 'storbench_meta')"
        }
    };
    db.sql_in(sql).trim().to_owned()
}

#[test]
fn a_postgres_load_over_a_users_function_type_and_extension_is_refused_before_any_write() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpgobj") else { return };
    db.sql(&format!("CREATE DATABASE \"{}\"", db.name));
    db.sql_in("CREATE FUNCTION sb_login(p int) RETURNS int LANGUAGE sql AS 'SELECT 42'");
    db.sql_in("CREATE TYPE mood AS ENUM ('calm')");
    db.sql_in("CREATE EXTENSION IF NOT EXISTS hstore");
    let err = refused(&mut load(&db.url(), "1MB"), "holds 3 objects storbench did not create");
    for named in ["extension hstore", "function public.sb_login(integer)", "type public.mood"] {
        assert!(err.contains(named), "{named} is not named:\n{err}");
    }
    assert_eq!(storbench_tables(&db), "0", "the load wrote before refusing");
    assert_eq!(db.sql_in("SELECT sb_login(1)").trim(), "42");
    assert_eq!(db.sql_in("SELECT 'calm'::mood").trim(), "calm");
}

#[test]
fn a_mariadb_load_over_a_users_procedure_named_like_storbenchs_is_refused_and_it_survives() {
    let Some(db) = ServerDb::new(BackendKind::Mysql, "trustmyobj") else { return };
    db.sql(&format!("CREATE DATABASE `{}`", db.name));
    db.sql_in("CREATE PROCEDURE ds3_login() SELECT 'mine'");
    db.sql_in("CREATE EVENT nightly ON SCHEDULE EVERY 1 DAY DO SELECT 1");
    let err = refused(&mut load(&db.url(), "1MB"), "holds 2 objects storbench did not create");
    assert!(err.contains(&format!("procedure {}.ds3_login", db.name)) && err.contains("event"), "{err}");
    assert_eq!(storbench_tables(&db), "0", "the load wrote before refusing");
    assert_eq!(db.sql_in("CALL ds3_login()").trim(), "mine", "the user's procedure was replaced");
}

/// Loads 1MB, adds a user's view and function to storbench's database, and checks that a
/// load at another size and a run's reset both refuse, naming them, and leave them in place.
fn objects_added_to_storbenchs_database_are_kept(kind: BackendKind, tag: &str, view: &str, function: &str) {
    let Some(db) = ServerDb::new(kind, tag) else { return };
    load(&db.url(), "1MB").assert().success();
    db.sql_in("CREATE VIEW my_report AS SELECT count(*) AS n FROM customers");
    db.sql_in(function);
    let err = refused(&mut load(&db.url(), "2MB"), "holds 2 objects storbench did not create");
    assert!(err.contains(view) && err.contains("my_report"), "{err}");
    let dir = disk_tempdir();
    let mut run = short_run(&["--url", &db.url()], dir.path(), &[]);
    if kind == BackendKind::Postgres {
        // PostgreSQL's reset drops and re-creates the database; MariaDB's only deletes rows.
        refused(&mut run, "storbench did not create");
    }
    assert!(!db.sql_in("SELECT n FROM my_report").trim().is_empty(), "the user's view is gone");
}

#[test]
fn a_later_postgres_load_or_reset_keeps_what_a_user_added_to_storbenchs_database() {
    let function = "CREATE FUNCTION my_total() RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint'";
    objects_added_to_storbenchs_database_are_kept(
        BackendKind::Postgres,
        "trustpgadd",
        "view public.my_report",
        function,
    );
}

#[test]
fn a_later_mariadb_load_keeps_what_a_user_added_to_storbenchs_database() {
    let function = "CREATE FUNCTION my_total() RETURNS INT DETERMINISTIC RETURN 1";
    objects_added_to_storbenchs_database_are_kept(BackendKind::Mysql, "trustmyadd", "view ", function);
}

#[test]
fn a_sqlite_file_a_user_added_a_table_to_is_neither_reloaded_nor_reset() {
    let dir = disk_tempdir();
    let path = dir.path().join("ds3.db");
    let path_arg = path.to_str().unwrap();
    storbench().args(["oltp", "load", "--db-size", "1MB", "--path", path_arg]).assert().success();
    let sqlite = |sql: &str| {
        let out = std::process::Command::new("sqlite3").args([path_arg, sql]).output().expect("sqlite3 runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    sqlite("CREATE TABLE my_notes (t TEXT); INSERT INTO my_notes VALUES ('keep me')");
    let mut again = storbench();
    again.args(["oltp", "load", "--db-size", "2MB", "--path", path_arg]);
    let err = refused(&mut again, "holds 1 object storbench did not create: table my_notes");
    assert!(err.contains(path_arg), "{err}");
    let mut run = short_run(&["--path", path_arg], &dir.path().join("results"), &[]);
    refused(&mut run, "table my_notes");
    assert_eq!(sqlite("SELECT t FROM my_notes"), "keep me");
}

/// Waits for `ready` for up to two minutes, failing if `child` ends first.
fn wait_for(child: &mut Child, what: &str, ready: &dyn Fn() -> bool) {
    wait_until(what, Duration::from_secs(120), || {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the first storbench ended ({status}) before {what}");
        }
        ready()
    });
}

/// A run of 9 s on `target` in the background.
fn spawn_run(target: &[&str], results: &std::path::Path) -> Child {
    crate::support::oltp_run(
        target,
        results,
        &["--warmup-time", "1s", "--run-time", "8s", "--n-threads", "2"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("storbench starts")
}

/// With a run going on `target` (its lock seen by `locked`), a second run and a load exit 2
/// naming the holder (`holder`, given the first process's pid); then the first ends well.
fn a_second_writer_is_refused(target: &[&str], locked: &dyn Fn() -> bool, holder: &dyn Fn(u32) -> String) {
    let dir = disk_tempdir();
    let mut first = spawn_run(target, &dir.path().join("first"));
    wait_for(&mut first, "the first run's lock", locked);
    let named = holder(first.id());
    let mut second = short_run(target, &dir.path().join("second"), &[]);
    let err = refused(&mut second, "is in use by another storbench");
    assert!(err.contains(&named), "the holder ({named}) is not named:\n{err}");
    let mut reload = storbench();
    reload.args(["oltp", "load", "--db-size", "1MB"]).args(target);
    refused(&mut reload, &named);
    let out = first.wait_with_output().unwrap();
    assert!(out.status.success(), "the first run failed: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_second_postgres_run_or_load_while_one_runs_exits_2_naming_the_holder() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpglock") else { return };
    let url = db.url();
    load(&url, "1MB").assert().success();
    let held = format!(
        "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = hashtext('{}')::oid",
        db.name
    );
    let lock_seen = || !db.sql(&held).trim().is_empty();
    a_second_writer_is_refused(&["--url", &url], &lock_seen, &|pid| format!("storbench pid {pid} on "));
}

#[test]
fn a_second_mariadb_run_or_load_while_one_runs_exits_2_naming_the_holder() {
    let Some(db) = ServerDb::new(BackendKind::Mysql, "trustmylock") else { return };
    let url = db.url();
    load(&url, "1MB").assert().success();
    let lock_seen = || db.sql(&format!("SELECT IS_USED_LOCK('storbench:{}')", db.name)).trim() != "NULL";
    a_second_writer_is_refused(&["--url", &url], &lock_seen, &|_| "connection ".to_owned());
}

#[test]
fn a_second_sqlite_run_or_load_while_one_runs_exits_2_naming_the_holder() {
    let dir = disk_tempdir();
    let path = dir.path().join("ds3.db");
    let path_arg = path.to_str().unwrap().to_owned();
    storbench().args(["oltp", "load", "--db-size", "1MB", "--path", &path_arg]).assert().success();
    let lock = dir.path().join("ds3.db.lock");
    // The load's lock file stays, naming its (ended) writer; the run's rewrites it.
    let loader = std::fs::read_to_string(&lock).unwrap_or_default();
    let lock_seen =
        || std::fs::read_to_string(&lock).is_ok_and(|t| t != loader && t.contains("storbench pid"));
    // The holder's pid and command line, as for a target.
    let holder = |pid| format!("pid {pid}: {}", env!("CARGO_BIN_EXE_storbench"));
    a_second_writer_is_refused(&["--path", &path_arg], &lock_seen, &holder);
}

/// Starts a 30MB load, SIGKILLs it once `busy` (SQL on the server) finds its bulk load
/// running, and checks that `oltp check` says the load did not finish rather than reporting
/// lost sales.
fn a_killed_load_is_reported_unfinished(kind: BackendKind, tag: &str, busy: &str) {
    let Some(db) = ServerDb::new(kind, tag) else { return };
    let mut child = std::process::Command::new(storbench().get_program())
        .args(["oltp", "load", "--db-size", "30MB", "--url", &db.url()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let busy = busy.replace("{db}", &db.name);
    wait_for(&mut child, "rows going in", &|| !db.sql(&busy).trim().is_empty());
    child.kill().unwrap();
    child.wait().unwrap();
    let a = storbench().args(["oltp", "check", "--url", &db.url()]).assert().code(2);
    let err = stderr_text(&a);
    assert!(err.contains("the load of 30MB") && err.contains("did not finish"), "{err}");
    assert!(!String::from_utf8_lossy(&a.get_output().stdout).contains("differ"), "lost sales reported");
}

#[test]
fn checking_a_half_loaded_postgres_database_says_the_load_did_not_finish() {
    let busy = "SELECT 1 FROM pg_stat_activity WHERE datname = '{db}' AND query LIKE 'COPY%'";
    a_killed_load_is_reported_unfinished(BackendKind::Postgres, "trustpghalf", busy);
}

#[test]
fn checking_a_half_loaded_mariadb_database_says_the_load_did_not_finish() {
    let busy = "SELECT 1 FROM information_schema.PROCESSLIST WHERE db = '{db}' AND info LIKE 'LOAD DATA%'";
    a_killed_load_is_reported_unfinished(BackendKind::Mysql, "trustmyhalf", busy);
}

/// A password holding `@`, `;`, `/` and `:`, and pieces of it no output may hold.
const PASSWORD: &str = "Zq7@x;Kv/9:pW";
const PIECES: [&str; 4] = ["Zq7", "x;Kv", "Kv/9", "9:pW"];

/// Runs `cmd` and asserts no piece of the password is in anything it printed.
fn prints_no_password(cmd: &mut assert_cmd::Command) -> assert_cmd::assert::Assert {
    let a = cmd.assert();
    let out = a.get_output();
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    for piece in PIECES {
        assert!(!all.contains(piece), "output holds {piece:?} of the password:\n{all}");
    }
    a
}

#[test]
fn a_password_with_at_and_semicolon_works_and_never_appears_in_any_output() {
    let Some(db) = ServerDb::new(BackendKind::Mysql, "trustmypw") else { return };
    let user = db.name.clone();
    db.sql(&format!("CREATE DATABASE `{}`", db.name));
    db.sql(&format!("CREATE USER '{user}'@'%' IDENTIFIED BY '{PASSWORD}'"));
    db.sql(&format!("GRANT ALL ON `{}`.* TO '{user}'@'%'", db.name));
    let with_password = format!("mysql://{user}:{PASSWORD}@127.0.0.1:3306/{}", db.name);
    let wrong = format!("mysql://{user}:{PASSWORD}x@127.0.0.1:3306/{}", db.name);
    let dir = disk_tempdir();
    let password_file = dir.path().join("pw");
    std::fs::write(&password_file, format!("{PASSWORD}\n")).unwrap();
    let bare = format!("mysql://{user}@127.0.0.1:3306/{}", db.name);
    prints_no_password(load(&with_password, "1MB").env_remove("MYSQL_PWD")).success();
    prints_no_password(
        storbench().args(["oltp", "check", "--url", &bare, "--password-file"]).arg(&password_file),
    )
    .success();
    let denied = prints_no_password(storbench().args(["oltp", "check", "--url", &wrong])).code(2);
    assert!(stderr_text(&denied).contains("Access denied"), "{}", stderr_text(&denied));
    prints_no_password(storbench().args(["oltp", "check", "--url"]).arg(wrong.replace(":3306", ":1")))
        .code(2);
    if let Some(pg) = ServerDb::new(BackendKind::Postgres, "trustpgpw") {
        let pg_url = pg.url().replacen("postgres@", &format!("postgres:{PASSWORD}@"), 1);
        prints_no_password(storbench().args(["oltp", "check", "--url", &pg_url])).code(2);
        prints_no_password(load(&pg_url, "1MB").env_remove("PGPASSWORD")).success();
        prints_no_password(storbench().args(["oltp", "check", "--url", &pg_url])).success();
    }
    db.sql(&format!("DROP USER '{user}'@'%'"));
}

/// 300 threads on a server that takes 100 (PostgreSQL) or 151 (MariaDB) connections: refused
/// before the reset, naming max_connections and the fix, not "is the server running?".
fn three_hundred_threads_are_refused(kind: BackendKind, tag: &str) {
    let Some(db) = ServerDb::new(kind, tag) else { return };
    load(&db.url(), "1MB").assert().success();
    let dir = disk_tempdir();
    let mut run = short_run(&["--url", &db.url()], dir.path(), &["--n-threads", "300"]);
    let err = refused(&mut run, "max_connections");
    assert!(err.contains("--n-threads 300 needs") && err.contains("or fewer"), "{err}");
    assert!(!err.contains("server running"), "{err}");
}

#[test]
fn a_postgres_run_with_more_threads_than_the_server_takes_is_refused_naming_max_connections() {
    three_hundred_threads_are_refused(BackendKind::Postgres, "trustpgconn");
}

#[test]
fn a_mariadb_run_with_more_threads_than_the_server_takes_is_refused_naming_max_connections() {
    three_hundred_threads_are_refused(BackendKind::Mysql, "trustmyconn");
}

#[test]
fn a_password_from_pgpassfile_never_appears_in_any_output_whatever_the_files_mode() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpgpass") else { return };
    let dir = disk_tempdir();
    let pgpass = dir.path().join("pgpass");
    let escaped = PASSWORD.replace(':', "\\:");
    std::fs::write(&pgpass, format!("# storbench test\n*:*:*:*:{escaped}\n")).unwrap();
    for mode in [0o600, 0o644] {
        std::fs::set_permissions(&pgpass, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
        let mut check = storbench();
        check.args(["oltp", "check", "--url", &db.url()]).env("PGPASSFILE", &pgpass).env_remove("PGPASSWORD");
        let a = prints_no_password(&mut check).code(2);
        assert!(stderr_text(&a).contains("does not exist"), "{}", stderr_text(&a));
        let mut load = load(&db.url(), "1MB");
        prints_no_password(load.env("PGPASSFILE", &pgpass).env_remove("PGPASSWORD")).success();
        db.sql(&format!("DROP DATABASE IF EXISTS \"{}\"", db.name));
        db.sql(&format!("DROP DATABASE IF EXISTS \"{}_pristine\"", db.name));
    }
}

/// `oltp run` on two URLs that spell one database differently (or the same URL twice).
fn two_urls_are_one_database(kind: BackendKind, tag: &str, other_host: &str) {
    let Some(db) = ServerDb::new(kind, tag) else { return };
    load(&db.url(), "1MB").assert().success();
    let other = db.url().replacen("127.0.0.1", other_host, 1);
    let dir = disk_tempdir();
    for (i, pair) in
        [format!("{};{other}", db.url()), format!("{};{}", db.url(), db.url())].iter().enumerate()
    {
        let mut run = short_run(&["--url", pair], &dir.path().join(i.to_string()), &[]);
        let err = refused(&mut run, "are the same database");
        assert!(err.contains(&format!("database '{}'", db.name)) && !err.contains("in use"), "{err}");
        assert!(!dir.path().join(i.to_string()).exists(), "a bundle was made before the refusal");
    }
}

#[test]
fn two_urls_naming_one_postgres_database_are_refused_as_the_same_database() {
    two_urls_are_one_database(BackendKind::Postgres, "trustpgsame", "localhost");
}

#[test]
fn two_urls_naming_one_mariadb_database_are_refused_as_the_same_database() {
    two_urls_are_one_database(BackendKind::Mysql, "trustmysame", "localhost");
}

#[test]
fn a_plan_whose_two_configurations_name_one_database_is_refused_before_anything_runs() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpgplan") else { return };
    let dir = disk_tempdir();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let plan = format!(
        "name = \"same\"\n[method]\nrepetitions = 1\nidle_settle = 0\nidle_power = 0\n\
         [[configuration]]\nname = \"a\"\ntarget = \"{}\"\nurl = [\"{}\"]\n\
         [[configuration]]\nname = \"b\"\ntarget = \"{}\"\nurl = [\"{}\"]\n\
         [[workload]]\nkind = \"oltp\"\ndb_size = \"1MB\"\nrun_time = \"1s\"\nwarmup_time = \"0s\"\nsettle_time = 0\n",
        a.display(),
        db.url(),
        b.display(),
        db.url().replacen("127.0.0.1", "localhost", 1)
    );
    let plan_path = dir.path().join("plan.toml");
    std::fs::write(&plan_path, plan).unwrap();
    let mut cmd = storbench();
    cmd.arg("run").arg(&plan_path).arg("--output-dir").arg(dir.path().join("results"));
    let err = refused(&mut cmd, "are the same database");
    assert!(err.contains("configuration a") && err.contains("configuration b"), "{err}");
    let listed = db.sql(&format!("SELECT count(*) FROM pg_database WHERE datname = '{}'", db.name));
    assert_eq!(listed.trim(), "0", "the plan loaded the database before refusing");
}

/// A script's `oltp load` and then at once `oltp run`, three times over: never refused
/// because the previous command's session is still closing on the server.
fn load_then_run_at_once(kind: BackendKind, tag: &str) {
    let Some(db) = ServerDb::new(kind, tag) else { return };
    let dir = disk_tempdir();
    for i in 0..3 {
        load(&db.url(), "1MB").assert().success();
        let run = short_run(&["--url", &db.url()], &dir.path().join(i.to_string()), &[]).assert();
        assert!(run.get_output().status.success(), "run {i} after the load: {}", stderr_text(&run));
    }
}

#[test]
fn a_postgres_run_right_after_a_load_is_not_refused_for_the_loads_ending_session() {
    load_then_run_at_once(BackendKind::Postgres, "trustpgnext");
}

#[test]
fn a_mariadb_run_right_after_a_load_is_not_refused_for_the_loads_ending_session() {
    load_then_run_at_once(BackendKind::Mysql, "trustmynext");
}

/// Holds the database's writer lock from a psql session that names itself as a storbench
/// process of this machine that no longer exists (a session the server has not yet closed),
/// for `secs` seconds; returns once the server shows the lock.
fn hold_lock_as_an_ended_storbench(db: &ServerDb, secs: u32) -> Child {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_owned();
    let sql = format!(
        "SELECT pg_advisory_lock(hashtext('storbench'), hashtext('{}')); SELECT pg_sleep({secs})",
        db.name
    );
    // Advisory locks belong to a database: storbench takes its lock on `postgres`.
    let maintenance = format!("{}/postgres", db.base.rsplit_once('/').unwrap().0);
    let mut holder = std::process::Command::new("psql")
        .args([&maintenance, "-XAtqc", &sql])
        .env("PGAPPNAME", format!("storbench pid 999999999 on {host}"))
        .stdout(Stdio::null())
        .spawn()
        .expect("psql runs");
    let held = format!(
        "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = hashtext('{}')::oid",
        db.name
    );
    wait_for(&mut holder, "the ended holder's lock", &|| !db.sql(&held).trim().is_empty());
    holder
}

#[test]
fn a_postgres_run_waits_for_an_ended_holders_session_and_gives_up_after_5_s() {
    let Some(db) = ServerDb::new(BackendKind::Postgres, "trustpgended") else { return };
    load(&db.url(), "1MB").assert().success();
    let dir = disk_tempdir();
    let mut holder = hold_lock_as_an_ended_storbench(&db, 2);
    short_run(&["--url", &db.url()], &dir.path().join("a"), &[]).assert().success();
    holder.wait().unwrap();
    let mut holder = hold_lock_as_an_ended_storbench(&db, 12);
    let began = Instant::now();
    let err =
        refused(&mut short_run(&["--url", &db.url()], &dir.path().join("b"), &[]), "storbench pid 999999999");
    let waited = began.elapsed();
    assert!(err.contains("still not closed after 5 s"), "{err}");
    assert!(waited >= Duration::from_secs(5) && waited < Duration::from_secs(11), "gave up after {waited:?}");
    holder.kill().unwrap();
    holder.wait().unwrap();
}
