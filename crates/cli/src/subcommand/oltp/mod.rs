//! `storbench oltp`: gen (DS3's CSV files), load, run, check and fidelity, on SQLite, PostgreSQL or
//! MariaDB/MySQL.

pub mod entry;
mod fidelity;
mod run;
mod search;
pub mod table;

pub use run::measure;

use crate::args::oltp::{DbArgs, OltpCommand, OltpGenArgs, OltpJob, OltpLoadArgs};
use crate::output;
use anyhow::{Context, Result, bail};
use std::sync::Arc;
use storbench_bench::db::DbErrorKind;
use storbench_bench::db::options::DbOptions;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::oltp::DbSize;
use storbench_bench::workload::oltp::datagen::DataSet;
use storbench_bench::workload::oltp::ds3::{Ds3Database, LoadProgress, open};
use storbench_bench::workload::oltp::options::OltpOptions;

pub fn run(cmd: OltpCommand, stop: &StopFlag) -> Result<Ending> {
    match cmd {
        OltpCommand::Gen(a) => gen_csv(&a, stop),
        OltpCommand::Load(a) => load(&a, stop),
        OltpCommand::Run(a) if a.search.search.is_some() => crate::search::run(&a.run.job(), &a.search, stop),
        OltpCommand::Run(a) => run::run(&a.run.job(), stop),
        OltpCommand::Check(a) => check(&a),
        OltpCommand::Fidelity(a) => fidelity::fidelity(&a),
    }
}

/// The options as `oltp run` checks them, without touching a database.
pub fn check_run_args(a: &OltpJob) -> Result<()> {
    run::checked(a).map(drop)
}

/// Loads each database `a` names unless it already holds a data set of `a`'s size: an
/// evaluation's first oltp run on a configuration loads it, later ones reset to it.
pub fn ensure_loaded(a: &OltpJob, stop: &StopFlag) -> Result<()> {
    let size = db_size(a.options.db_size.as_deref().unwrap_or(OltpOptions::DB_SIZE))?;
    for db in open_databases(&a.options.db())? {
        // Only an absent data set is loaded; one of another size was refused by the plan check.
        match db.shape() {
            Err(e) if e.kind == DbErrorKind::Missing => {}
            _ => continue,
        }
        let data = DataSet::new(size, storbench_bench::rng::DEFAULT_SEED, false);
        if !matches!(load_into(&*db, &data, stop)?, Ending::Ok) {
            break;
        }
    }
    Ok(())
}

/// What an evaluation's oltp runs will find, checked before anything runs: each database is
/// reachable, its own (no two URLs name one database), and either not loaded yet (the first
/// run loads it) or loaded at the plan's size; a data set of another size is never replaced
/// unasked.
pub fn check_loadable(a: &OltpJob) -> Result<()> {
    let size = a.options.db_size.clone().unwrap_or_else(|| OltpOptions::DB_SIZE.to_string());
    let counts = db_size(&size)?.counts();
    let dbs = open_databases(&a.options.db())?;
    check_apart(&dbs.iter().map(|db| ("--url", db.clone())).collect::<Vec<_>>())?;
    for db in dbs {
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

/// Refuses two of `dbs` that are one database however their URLs spell it
/// (`postgres://127.0.0.1/x` and `postgres://localhost:5432/x`, or one URL given twice), by
/// what their servers say identifies them; each is named with where it was given (`--url`, a
/// plan's configuration). Nothing is written before this check.
pub(crate) fn check_apart(dbs: &[(&str, Arc<dyn Ds3Database>)]) -> Result<()> {
    if dbs.len() < 2 {
        return Ok(());
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    for (given, db) in dbs {
        let Some(identity) =
            db.identity().with_context(|| format!("finding out which database {} is", db.describe()))?
        else {
            continue;
        };
        let here = format!("{given} {}", db.describe());
        if let Some((first, _)) = seen.iter().find(|(_, known)| *known == identity) {
            bail!(
                "{first} and {here} are the same database ({identity}): each target must be a database of \
                 its own, or one would reset and load under the other and both would count its work; give \
                 one of them another database name"
            );
        }
        seen.push((here, identity));
    }
    Ok(())
}

/// Refuses configurations of a plan whose oltp workloads name one database (`runs`: each run's
/// configuration and options; a configuration counts once, with its most URLs), before
/// anything runs.
pub fn check_databases_apart<'a>(runs: impl IntoIterator<Item = (String, &'a OltpJob)>) -> Result<()> {
    let mut places: Vec<(String, &OltpJob)> = Vec::new();
    for (configuration, a) in runs {
        match places.iter_mut().find(|(c, _)| *c == configuration) {
            Some(known) if known.1.options.url.len() < a.options.url.len() => known.1 = a,
            Some(_) => {}
            None => places.push((configuration, a)),
        }
    }
    let mut dbs = Vec::new();
    for (configuration, a) in &places {
        for db in open_databases(&a.options.db())? {
            dbs.push((configuration.as_str(), db));
        }
    }
    let named: Vec<(String, Arc<dyn Ds3Database>)> =
        dbs.into_iter().map(|(c, db)| (format!("configuration {c}'s"), db)).collect();
    check_apart(&named.iter().map(|(c, db)| (c.as_str(), db.clone())).collect::<Vec<_>>())
}

/// `--db-size` as DS3 spells it.
fn db_size(text: &str) -> Result<DbSize> {
    text.parse::<DbSize>().map_err(|e| anyhow::anyhow!("--db-size: {e}"))
}

/// The databases the options name (the library's `ds3::open`), a shard's share of the URLs.
pub(crate) fn open_databases(a: &DbOptions) -> Result<Vec<Arc<dyn Ds3Database>>> {
    let urls = crate::shard::share(open::urls(&a.url));
    open::open(a, &urls).map_err(anyhow::Error::msg)
}

/// The most generator threads: far more than any machine's cores, and few enough that
/// each one's share of the rows is never empty.
const MAX_GEN_THREADS: usize = 1024;

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
    if threads > MAX_GEN_THREADS {
        bail!("--threads {threads}: use 1 to {MAX_GEN_THREADS} generator threads");
    }
    let out = storbench_bench::files::resolve(&a.out)?;
    storbench_bench::files::create_dirs(&out).with_context(|| format!("creating {}", a.out.display()))?;
    let bar = output::count_bar(&format!("generating {} into {}", data.size, a.out.display()), "rows");
    let started = std::time::Instant::now();
    let report = data.write_ds3_files(&out, threads, a.crlf, &mut |_, rows| bar.set_position(rows), stop);
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
        storbench_bench::units::human_bytes(report.bytes),
        secs,
        report.rows as f64 / secs.max(1e-9) / 1e6
    );
    Ok(Ending::Ok)
}

fn load(a: &OltpLoadArgs, stop: &StopFlag) -> Result<Ending> {
    let data = DataSet::new(db_size(&a.db_size)?, a.seed, a.ds2);
    let dbs = open_databases(&a.db.options())?;
    if dbs.len() > 1 {
        bail!("oltp load takes one database; give one --url");
    }
    load_into(&*dbs[0], &data, stop)
}

/// Loads `data` into `db`, holding its writer lock, with a progress bar.
fn load_into(db: &dyn Ds3Database, data: &DataSet, stop: &StopFlag) -> Result<Ending> {
    let _writer = db.lock_writer()?;
    let total: u64 = data.tables().iter().map(|&t| data.rows(t)).sum();
    let bar = output::count_bar(&format!("loading {} into {}", data.size, db.describe()), "rows");
    bar.set_length(total);
    let mut before = 0;
    let mut table_done = 0;
    let mut last_table = None;
    let report = db.load(
        data,
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
        say!(
            "interrupted: the load was abandoned; {} holds no usable data set until it is loaded again",
            db.describe()
        );
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
        report
            .size_bytes
            .map(|b| format!("; {} on disk", storbench_bench::units::human_bytes(b)))
            .unwrap_or_default()
    );
    Ok(Ending::Ok)
}

fn check(a: &DbArgs) -> Result<Ending> {
    let mut ending = Ending::Ok;
    for db in open_databases(&a.options())? {
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
