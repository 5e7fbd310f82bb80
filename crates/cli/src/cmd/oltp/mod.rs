//! `storbench oltp`: gen (DS3's CSV files), load, run and check, on SQLite, PostgreSQL or
//! MariaDB/MySQL.

mod ds3;
mod run;
mod summary;

use super::Ending;
use crate::args::{BackendArg, DbArgs, OltpCommand, OltpGenArgs, OltpLoadArgs, OltpRunArgs};
use crate::output;
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::sync::Arc;
use storbench_bench::db::{Database, DbErrorKind, LoadProgress, sqlite::Sqlite};
use storbench_bench::run::StopFlag;
use storbench_bench::workload::oltp::DbSize;
use storbench_bench::workload::oltp::datagen::DataSet;

pub fn run(cmd: OltpCommand, stop: &StopFlag) -> Result<Ending> {
    match cmd {
        OltpCommand::Gen(a) => gen_csv(&a, stop),
        OltpCommand::Load(a) => load(&a, stop),
        OltpCommand::Run(a) => run::run(&a, stop),
        OltpCommand::Check(a) => check(&a),
    }
}

/// `oltp run --db-size` when it is not given.
const DEFAULT_DB_SIZE: &str = "10MB";

/// The options as `oltp run` checks them, without touching a database.
pub fn check_run_args(a: &OltpRunArgs) -> Result<()> {
    run::checked(a).map(drop)
}

/// Loads each database `a` names unless it already holds a data set of `a`'s size: an
/// evaluation's first oltp run on a configuration loads it, later ones reset to it.
pub fn ensure_loaded(a: &OltpRunArgs, stop: &StopFlag) -> Result<()> {
    let size = a.db_size.clone().unwrap_or_else(|| DEFAULT_DB_SIZE.to_string());
    db_size(&size)?;
    for (i, db) in open_databases(&a.db)?.iter().enumerate() {
        // Only an absent data set is loaded; one of another size was refused by the plan check.
        match db.shape() {
            Err(e) if e.kind == DbErrorKind::Missing => {}
            _ => continue,
        }
        let one = DbArgs {
            backend: a.db.backend,
            path: a.db.path.clone(),
            url: a.db.url.get(i).cloned().into_iter().collect(),
        };
        let load_args = OltpLoadArgs { db: one, db_size: size.clone(), ds2: false, seed: 1 };
        if !matches!(load(&load_args, stop)?, Ending::Ok) {
            break;
        }
    }
    Ok(())
}

/// What an evaluation's oltp runs will find, checked before anything runs: each database is
/// reachable and either not loaded yet (the first run loads it) or loaded at the plan's size;
/// a data set of another size is never replaced unasked.
pub fn check_loadable(a: &OltpRunArgs) -> Result<()> {
    let size = a.db_size.clone().unwrap_or_else(|| DEFAULT_DB_SIZE.to_string());
    let counts = db_size(&size)?.counts();
    for db in open_databases(&a.db)? {
        match db.shape() {
            Ok(s) if s.customers != counts.customers || s.products != counts.products => bail!(
                "{} holds a DVD Store data set of {} customers, not the {size} the plan asks for ({} customers); \
                 set db_size to the size it was loaded at, or remove it to have it loaded at {size}",
                db.describe(),
                s.customers,
                counts.customers
            ),
            Ok(_) => {}
            Err(e) if e.kind == DbErrorKind::Missing => {}
            Err(e) => {
                return Err(anyhow::anyhow!("{e}")).with_context(|| format!("reaching {}", db.describe()));
            }
        }
    }
    Ok(())
}

/// `--db-size` as DS3 spells it.
fn db_size(text: &str) -> Result<DbSize> {
    text.parse::<DbSize>().map_err(|e| anyhow::anyhow!("--db-size: {e}"))
}

/// The databases the options name: one SQLite file, or one or more server URLs.
fn open_databases(a: &DbArgs) -> Result<Vec<Arc<dyn Database>>> {
    let backend = match (a.backend, a.url.first()) {
        (Some(b), _) => b,
        (None, Some(url)) => backend_of_url(url)?,
        (None, None) => BackendArg::Sqlite,
    };
    match backend {
        BackendArg::Sqlite => {
            if !a.url.is_empty() {
                bail!(
                    "--url is for database servers; SQLite takes --path FILE (or pick --backend postgres or mysql)"
                );
            }
            let path = a.path.clone().unwrap_or_else(|| PathBuf::from("storbench-ds3.db"));
            Ok(vec![Arc::new(Sqlite::new(path))])
        }
        server => {
            if a.path.is_some() {
                bail!("--path is for SQLite; a {} server takes --url", backend_name(server));
            }
            if a.url.is_empty() {
                bail!(
                    "--backend {} needs --url, such as {}",
                    backend_name(server),
                    match server {
                        BackendArg::Postgres => "postgres://postgres@127.0.0.1:5432/ds3",
                        _ => "mysql://root@127.0.0.1:3306/ds3",
                    }
                );
            }
            a.url.iter().map(|u| open_server(server, u)).collect()
        }
    }
}

fn backend_name(b: BackendArg) -> &'static str {
    match b {
        BackendArg::Sqlite => "sqlite",
        BackendArg::Postgres => "postgres",
        BackendArg::Mysql => "mysql",
    }
}

fn backend_of_url(url: &str) -> Result<BackendArg> {
    match url.split_once("://").map(|(scheme, _)| scheme) {
        Some("postgres" | "postgresql") => Ok(BackendArg::Postgres),
        Some("mysql" | "mariadb") => Ok(BackendArg::Mysql),
        _ => bail!(
            "--url {}: not a database URL; write postgres://user@host:port/db or mysql://user@host:port/db",
            redact(url)
        ),
    }
}

fn open_server(kind: BackendArg, url: &str) -> Result<Arc<dyn Database>> {
    use storbench_bench::db::{mysql::Mysql, postgres::Postgres};
    let db: Arc<dyn Database> = match kind {
        BackendArg::Postgres => Arc::new(Postgres::new(url)?),
        _ => Arc::new(Mysql::new(url)?),
    };
    Ok(db)
}

/// A URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let userinfo = &url[s + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}{}", &url[..s + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

fn gen_csv(a: &OltpGenArgs, stop: &StopFlag) -> Result<Ending> {
    if a.format != "csv" {
        bail!(
            "--format {}: the one format is csv (DS3's files); `oltp load` streams rows without files",
            a.format
        );
    }
    let data = DataSet::new(db_size(&a.db_size)?, a.seed, a.ds2);
    let threads =
        a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let bar = output::count_bar(&format!("generating {} into {}", data.size, a.out.display()), "rows");
    let started = std::time::Instant::now();
    let report = data.write_ds3_files(&a.out, threads, a.crlf, &mut |_, rows| bar.set_position(rows), stop);
    bar.finish_and_clear();
    let report = report.with_context(|| format!("writing the data set into {}", a.out.display()))?;
    if stop.is_stopped() {
        say!("interrupted: the files in {} are incomplete", a.out.display());
        return Ok(Ending::InterruptedBeforeRun);
    }
    let secs = started.elapsed().as_secs_f64();
    tell!("{}", output::gen_table(&report.files));
    tell!(
        "{} rows, {} in {:.1} s ({:.2} M rows/s) with {threads} thread(s)",
        report.rows,
        crate::units::human_bytes(report.bytes),
        secs,
        report.rows as f64 / secs.max(1e-9) / 1e6
    );
    Ok(Ending::Ok)
}

fn load(a: &OltpLoadArgs, stop: &StopFlag) -> Result<Ending> {
    let data = DataSet::new(db_size(&a.db_size)?, a.seed, a.ds2);
    let dbs = open_databases(&a.db)?;
    if dbs.len() > 1 {
        bail!("oltp load takes one database; give one --url");
    }
    let db = &dbs[0];
    let total: u64 = data.tables().iter().map(|&t| data.rows(t)).sum();
    let bar = output::count_bar(&format!("loading {} into {}", data.size, db.describe()), "rows");
    bar.set_length(total);
    let mut before = 0;
    let mut table_done = 0;
    let mut last_table = None;
    let report = db.load(
        &data,
        &mut |p: LoadProgress| {
            if last_table != Some(p.table) {
                before += table_done;
                last_table = Some(p.table);
            }
            table_done = p.rows_done;
            bar.set_position(before + p.rows_done);
            bar.set_message(format!("{} {}", p.step, p.table.sql_name()));
        },
        stop,
    );
    bar.finish_and_clear();
    if stop.is_stopped() {
        say!("interrupted: the load was abandoned; nothing was left half-loaded");
        return Ok(Ending::InterruptedBeforeRun);
    }
    let report = report.with_context(|| format!("loading {}", db.describe()))?;
    let rows: u64 = report.rows.iter().map(|r| r.1).sum();
    tell!(
        "loaded {} ({rows} rows) into {} in {:.2} s (rows {:.2} s, indexes and statistics {:.2} s){}",
        data.size,
        db.describe(),
        report.load_s + report.index_s,
        report.load_s,
        report.index_s,
        report.size_bytes.map(|b| format!("; {} on disk", crate::units::human_bytes(b))).unwrap_or_default()
    );
    Ok(Ending::Ok)
}

fn check(a: &DbArgs) -> Result<Ending> {
    let mut ending = Ending::Ok;
    for db in open_databases(a)? {
        let r = db.check().with_context(|| format!("checking {}", db.describe()))?;
        if r.mismatch_count == 0 && r.orphans == 0 {
            tell!(
                "{}: {} products checked: sales agree with the order lines",
                db.describe(),
                r.products_checked
            );
            continue;
        }
        ending = Ending::CheckFailed;
        tell!(
            "{}: {} of {} products have sales that differ from their order lines; {} orphan orders or lines",
            db.describe(),
            r.mismatch_count,
            r.products_checked,
            r.orphans
        );
        for (prod, sales, lines) in r.mismatches.iter().take(20) {
            tell!("  product {prod}: inventory sales {sales}, order lines {lines}");
        }
    }
    Ok(ending)
}
