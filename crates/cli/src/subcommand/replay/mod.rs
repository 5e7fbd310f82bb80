//! `storbench replay LOG...`: validate (the logs readable and their format known, the database
//! named outright), count what the logs will send and say it, then replay them against the
//! database into a bundle (a line a second), and show the per-type and per-source tables.
//!
//! - `args`: the options.
//! - `entry`: the registry entry (its subcommand, its plan kind, its rebuilt summary).
//! - `table`: its tables on the terminal.

pub mod args;
pub mod entry;
mod search;
pub mod table;

use crate::measure::{self, BundleDir, Measured, Ran, Start};
use crate::output;
use anyhow::{Context, Result, bail};
use args::ReplayJob;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use storbench_bench::db::Database;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::oltp::ds3::Ds3Database;
use storbench_bench::workload::replay::log::web::{Mapping, WebLog};
use storbench_bench::workload::replay::log::{Format, mysql, postgres, storbench};
use storbench_bench::workload::replay::options::ReplayOptions;
use storbench_bench::workload::replay::{self as replay, Dialect, Preview, ReplaySpec, Source, Statements};
use storbench_report::{ReplayResults, Results, Summary, TargetInfo, export};

/// How much of a log's start is read to tell its format.
const HEAD_BYTES: u64 = 64 << 10;

/// The options, checked: the spec and each log with its format.
pub struct Checked {
    pub spec: ReplaySpec,
    pub logs: Vec<Log>,
    pub prefix: String,
    /// For web server logs.
    pub mapping: Option<Mapping>,
}

/// A log to replay, as it was when the replay was checked.
pub struct Log {
    pub path: PathBuf,
    pub format: Format,
    /// Its size then: the replay reads no further, so that a log the server is still writing
    /// (with the replay's own statements in it) ends.
    pub bytes: u64,
}

/// The largest mapping file read.
const MAPPING_BYTES: u64 = 1 << 20;

pub fn run(a: &ReplayJob, stop: &StopFlag) -> Result<Ending> {
    let ran = measure(a, None, stop)?;
    if let Some(m) = &ran.measured {
        output::print_result(|| {
            if a.out.json { export::summary_json(&m.summary) } else { table::replay_table(&m.summary) + "\n" }
        })?;
    }
    Ok(ran.ending)
}

/// Every check the command makes before it touches a database.
pub fn validate(a: &ReplayJob) -> Result<Checked> {
    if a.options.logs.is_empty() {
        bail!(
            "give the request logs to replay: storbench replay LOG... (a request log of `oltp run \
             --record`, a PostgreSQL csvlog or stderr log, a MySQL or MariaDB general or slow query log)"
        );
    }
    if a.options.path.is_none() && a.options.url.is_empty() {
        bail!(
            "name the database to replay against: --path FILE (SQLite) or --url postgres://... or \
             mysql://...; a replay never picks one itself"
        );
    }
    let prefix =
        a.options.log_line_prefix.clone().unwrap_or_else(|| ReplayOptions::LOG_LINE_PREFIX.to_string());
    let logs: Vec<Log> =
        a.options.logs.iter().map(|p| log(p, a.options.format, &prefix)).collect::<Result<_>>()?;
    let calls = |f: Format| matches!(f, Format::Storbench | Format::Combined);
    if let Some(log) = logs.iter().find(|l| calls(l.format))
        && a.options.database.is_some()
    {
        bail!("{}: a {} log names no database; leave out --database", log.path.display(), log.format.name());
    }
    if let Some(log) = logs.iter().find(|l| l.format == Format::Storbench)
        && a.options.user.is_some()
    {
        bail!("{}: a storbench request log names no user; leave out --user", log.path.display());
    }
    let web = logs.iter().find(|l| l.format == Format::Combined);
    let mapping = match (web, &a.options.mapping) {
        (Some(_), Some(path)) => Some(mapping(path)?),
        (Some(Log { path: log, .. }), None) => bail!(
            "{}: a web server's log needs --mapping FILE, the routes from its URLs to DVD Store calls \
             (examples/ds3-web.toml maps DVD Store's own web tier)",
            log.display()
        ),
        (None, Some(_)) => bail!("--mapping is for web server logs (--format combined); these logs are not"),
        (None, None) => None,
    };
    Ok(Checked { spec: a.options.spec().map_err(anyhow::Error::msg)?, logs, prefix, mapping })
}

/// The routes of mapping file `path`, checked.
fn mapping(path: &Path) -> Result<Mapping> {
    let text = storbench_bench::files::input::read_text(path, MAPPING_BYTES)
        .with_context(|| format!("--mapping {}", path.display()))?;
    let file = toml::from_str(&text).map_err(|e| anyhow::anyhow!("--mapping {}: {e}", path.display()))?;
    Mapping::new(file).map_err(|e| anyhow::anyhow!("--mapping {}: {e}", path.display()))
}

/// `log` as it is now: its size, and its format: `given`, or told from its first lines.
fn log(log: &Path, given: Option<Format>, prefix: &str) -> Result<Log> {
    let file =
        storbench_bench::files::input::open_input(log).with_context(|| format!("{}", log.display()))?;
    let size = file.metadata().with_context(|| format!("{}", log.display()))?.len();
    // Bytes, not text: the cut at HEAD_BYTES may split a character.
    let mut bytes = Vec::new();
    file.take(HEAD_BYTES).read_to_end(&mut bytes).with_context(|| format!("reading {}", log.display()))?;
    let head = String::from_utf8_lossy(&bytes);
    let format = match given {
        Some(f) => f,
        None => Format::detect(&head).with_context(|| {
            format!(
                "{}: cannot tell its format from its first lines; give --format storbench, combined, \
                 pg-csvlog, pg-stderr, mysql-general or mysql-slow",
                log.display()
            )
        })?,
    };
    if format == Format::PgStderr {
        postgres::StderrLog::new(head.as_bytes(), prefix)
            .map_err(|e| anyhow::anyhow!("--log-line-prefix: {e}"))?;
    }
    Ok(Log { path: log.to_path_buf(), format, bytes: size })
}

/// The logs, opened to be read as they replay.
fn sources(c: &Checked) -> Result<Vec<Source>> {
    c.logs.iter().map(|log| source(log, c)).collect()
}

/// `log` up to the size it had when checked.
fn source(log: &Log, c: &Checked) -> Result<Source> {
    let (path, format) = (&log.path, log.format);
    let file =
        storbench_bench::files::input::open_input(path).with_context(|| format!("{}", path.display()))?;
    let input: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1 << 20, file.take(log.bytes)));
    let name =
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    Ok(match format {
        Format::Storbench => Source::new(name, storbench::RequestLog::new(input)),
        Format::Combined => {
            let mapping = c.mapping.clone().context("a web server log's mapping")?;
            Source::new(name, WebLog::new(input, mapping))
        }
        Format::PgCsvlog => Source::new(name, postgres::CsvLog::new(input)),
        Format::PgStderr => {
            Source::new(name, postgres::StderrLog::new(input, &c.prefix).map_err(anyhow::Error::msg)?)
        }
        Format::MysqlGeneral => Source::new(name, mysql::GeneralLog::new(input)),
        Format::MysqlSlow => Source::new(name, mysql::SlowLog::new(input)),
    })
}

/// What the logs will send, counted before anything is sent; None when stopped first.
fn preview(c: &Checked, stop: &StopFlag) -> Result<Option<Preview>> {
    match replay::preview(&c.spec, sources(c)?, stop) {
        Ok(p) => Ok(Some(p)),
        Err(replay::ReplayError::Interrupted) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// "12,345 requests: 8,000 SELECT, 4,000 UPDATE, ..." (the most frequent types first).
fn will_send(p: &Preview) -> String {
    let mut types: Vec<(&String, &u64)> = p.by_type.iter().collect();
    types.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> = types.iter().take(8).map(|(t, n)| format!("{n} {t}")).collect();
    let more = types.len().saturating_sub(8);
    let more = if more > 0 { format!(" and {more} more type(s)") } else { String::new() };
    format!("{} requests: {}{more}", p.requests, shown.join(", "))
}

/// One replay into the bundle directory `given`, or a new one under --output-dir. `storbench
/// run` calls this.
pub fn measure(a: &ReplayJob, given: Option<&Path>, stop: &StopFlag) -> Result<Ran> {
    let mut checked = validate(a)?;
    let db = database(a)?;
    checked.spec.statements = statements(a, db.as_ref());
    let Some(preview) = preview(&checked, stop)? else {
        return Ok(Ran { ending: Ending::InterruptedBeforeRun, measured: None });
    };
    nothing_to_send(&checked, &preview)?;
    say!("replay: {} log(s): sends {} to {}", checked.logs.len(), will_send(&preview), db.describe());
    if let Some(withheld) = ReplayResults::not_sent_said(&preview.not_sent) {
        say!("replay: {withheld}");
    }
    if let Some(allowed) = ReplayResults::allowed_said(&checked.spec.statements.allowed_said()) {
        say!("replay: {allowed}");
    }
    let backwards = ReplayResults { backwards: preview.backwards, ..ReplayResults::default() };
    if let Some(said) = backwards.backwards_said() {
        say!("replay: {said}");
    }
    if let Some(paths) = ReplayResults::unmatched_said(&preview.unread.unmatched) {
        say!("replay: {paths}; they are skipped");
    }
    if preview.unread.count > 0 {
        say!(
            "replay: {} line(s) of the logs cannot be read as requests; they are skipped",
            preview.unread.count
        );
    }
    let _writer = db.lock_writer()?;
    let name = a.out.name.clone().unwrap_or_else(|| entry::KIND.name.into());
    let dir = BundleDir::choose(given, &a.out, &name)?;
    let measured = into_bundle(a, &checked, &db, &name, &dir, stop)?;
    let s = &measured.summary;
    let done = storbench_report::evaluation::status(s) == storbench_report::evaluation::RunStatus::Done;
    if !done && !stop.is_stopped() {
        say!("error: the replay failed: {}", s.warnings.join("; "));
    }
    Ok(Ran { ending: Ending::of(s, stop), measured: Some(measured) })
}

/// Refuses a replay that would send nothing, saying why: its logs held no request that could
/// be read (the format tried and the first line that could not), none applied, or every one
/// that applied is withheld.
fn nothing_to_send(c: &Checked, p: &Preview) -> Result<()> {
    if p.requests > 0 {
        return Ok(());
    }
    let formats: Vec<&str> = c.logs.iter().map(|l| l.format.name()).collect();
    if p.read == 0 {
        let first = p.unread.first.first().map_or_else(
            || "the logs hold no line at all".to_string(),
            |u| format!("the first that could not: {} line {}: {}", u.source, u.line, u.why),
        );
        bail!(
            "no request could be read from the logs as {} ({first}); give the right --format, or the log \
             the server wrote",
            formats.join(", ")
        );
    }
    if let Some(withheld) = ReplayResults::not_sent_said(&p.not_sent) {
        bail!("nothing would be sent: {withheld}");
    }
    bail!(
        "none of the {} request(s) read from the logs applies: --database, --user, --start, --end or \
         --limit leave nothing to replay",
        p.read
    )
}

/// Which statements the replay sends to `db`: what stays inside it, and the kinds allowed.
fn statements(a: &ReplayJob, db: &dyn Ds3Database) -> Statements {
    Statements {
        dialect: Dialect::of(db.kind()),
        database: db.database_name(),
        allowed: a.options.allow_statement.iter().map(|k| k.trim().to_string()).collect(),
        all: a.options.allow_all_statements,
    }
}

/// The database the options name, as `oltp run` opens it; a SQLite file must be there (a
/// replay sends a log's requests to a copy of the database they were made on).
fn database(a: &ReplayJob) -> Result<Arc<dyn Ds3Database>> {
    if let Some(path) = a.options.path.as_deref().filter(|p| !p.exists()) {
        bail!(
            "--path {}: no such SQLite database; replay against a copy of the database the logs were \
             recorded on (an empty file is an empty database, for logs that make their own tables), or \
             let an oltp workload before it in the plan load one",
            path.display()
        );
    }
    let dbs = crate::subcommand::oltp::open_databases(&a.options.db())?;
    if dbs.len() != 1 {
        bail!("--url: a replay runs against one database; give one URL");
    }
    dbs.into_iter().next().context("a database")
}

fn into_bundle(
    a: &ReplayJob,
    checked: &Checked,
    db: &Arc<dyn Ds3Database>,
    name: &str,
    dir: &BundleDir,
    stop: &StopFlag,
) -> Result<Measured> {
    let at = jiff::Timestamp::now();
    let place = storbench_bench::db::local_paths(db.as_ref());
    let device = place.first().and_then(|p| storbench_bench::monitor::resolve_device(p).ok().flatten());
    let (database, unknown) = measure::database_info(db.as_ref());
    let mut first = started(a, checked, db.as_ref(), name, &at.to_string());
    first.warnings.extend(unknown);
    let start = Start {
        run: storbench_bench::run::measure::Start {
            at,
            summary: first,
            targets: place.iter().map(PathBuf::as_path).collect(),
            database,
            device: device.as_ref().map(|d| d.name.as_str()),
        },
        table: table::replay_table,
        background: &a.out.streams(),
        background_dir: None,
        background_wait: a.out.background_wait,
    };
    let connect = replay::Connect::to(db.clone());
    measure::measure(dir, start, stop, |rec, first| {
        Ok(replay::bundle::record(rec, first, &checked.spec, (sources(checked)?, connect), stop)?)
    })
}

/// The summary as the replay starts: what was asked.
fn started(a: &ReplayJob, c: &Checked, db: &dyn Database, name: &str, started_at: &str) -> Summary {
    let logs: Vec<String> = c.logs.iter().map(|l| l.path.display().to_string()).collect();
    let formats: Vec<&str> = c.logs.iter().map(|l| l.format.name()).collect();
    let parameters = serde_json::json!({
        "logs": logs,
        "formats": formats,
        "mode": c.spec.mode.name(),
        "speed": c.spec.mode.speed(),
        "in_flight": c.spec.mode.in_flight(),
        "limit": a.options.limit,
        "start_s": c.spec.filter.start.as_secs_f64(),
        "end_s": c.spec.filter.end.map(|e| e.as_secs_f64()),
        "database": a.options.database,
        "user": a.options.user,
        "strict": a.options.strict,
        "max_errors": c.spec.max_errors_pct(),
        "allow_statement": a.options.allow_statement,
        "allow_all_statements": a.options.allow_all_statements,
        "steady_state_s": c.spec.steady_state.map(|r| r.as_secs_f64()),
        "backend": db.kind().as_str(),
        "target": db.describe(),
    });
    let results = ReplayResults {
        mode: c.spec.mode.name().into(),
        speed: c.spec.mode.speed(),
        in_flight: Some(c.spec.mode.in_flight()),
        ..ReplayResults::default()
    };
    Summary {
        name: name.into(),
        parameters,
        target: TargetInfo { path: db.describe(), kind: db.kind().as_str().into(), ..TargetInfo::default() },
        engine: db.kind().as_str().into(),
        ..measure::started_summary(entry::KIND.name, started_at, Results::Replay(results))
    }
}
