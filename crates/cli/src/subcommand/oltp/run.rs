//! `storbench oltp run`: validate, check each database matches --db-size, reset it to the
//! state after the load, run the driver into a bundle, print DS3's lines, then the summary.

use super::{db_size, open_databases};
use crate::args::oltp::{OltpJob, OltpRunArgs};
use crate::measure::{self, BundleDir, Finished, Measured, Ran, Recording, Start};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use storbench_bench::monitor::resolve_device;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::oltp::DbSize;
use storbench_bench::workload::oltp::bundle::{self as oltp_bundle, OltpPlace};
use storbench_bench::workload::oltp::ds3::Ds3Database;
use storbench_bench::workload::oltp::ds3::lines::{self as ds3, Sampled};
use storbench_bench::workload::oltp::options::OltpOptions;
use storbench_bench::workload::oltp::requests::{Recorded, RequestLog};
use storbench_bench::workload::oltp::users::{self, OltpInterval, OltpRecorder, OltpSpec};
use storbench_report::{Summary, export};

/// DS3's limit on driver threads over all targets.
const MAX_THREADS: u32 = 1_000;

/// How DS3's lines are printed.
pub(super) struct LineOptions {
    log_freq: u32,
    timestamp: Stamp,
    detailed: bool,
    to_stderr: bool,
    out_file: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stamp {
    None,
    Utc,
    Local,
}

pub fn run(a: &OltpJob, stop: &StopFlag) -> Result<Ending> {
    let ran = measure(a, None, stop)?;
    if let Some(m) = &ran.measured {
        show(&m.summary, &a.out)?;
    }
    Ok(ran.ending)
}

/// `oltp run` into the bundle directory `given`, or a new one under --output-dir: its ending,
/// summary and bundle. `storbench run` calls this.
pub fn measure(a: &OltpJob, given: Option<&Path>, stop: &StopFlag) -> Result<Ran> {
    let (size, spec, lines) = checked(a)?;
    if let Some(v) = &a.cli.windows_perf_host {
        say!(
            "note: ignoring DS3's '{v}' (perf host, virt_dir or page_type): storbench samples CPU itself and talks to the database directly"
        );
    }
    let dbs = open_databases(&a.options.db())?;
    super::check_apart(&dbs.iter().map(|db| ("--url", db.clone())).collect::<Vec<_>>())?;
    if dbs.len() as u32 * spec.n_threads > MAX_THREADS {
        bail!(
            "{} targets × {} threads is over DS3's limit of {MAX_THREADS} threads",
            dbs.len(),
            spec.n_threads
        );
    }
    // A database file that is not there is refused before its lock file is made beside it.
    let files = dbs.iter().filter(|db| db.kind() == storbench_bench::db::BackendKind::Sqlite);
    for path in files.filter_map(|db| db.data_location()) {
        if storbench_bench::files::entry(&path)?.is_none() {
            bail!("no database at {}; load one first (the OLTP load creates it)", path.display());
        }
    }
    // One writer per database, from before the reset to the end of the run.
    let _writers = dbs.iter().map(|db| db.lock_writer()).collect::<Result<Vec<_>, _>>()?;
    for db in &dbs {
        check_shape(db.as_ref(), &spec, &size.to_string())?;
        check_connections(db.as_ref(), spec.n_threads)?;
    }
    if !a.options.no_reset {
        for db in &dbs {
            let secs = db
                .reset()
                .with_context(|| format!("resetting {} to its state after the load", db.describe()))?;
            say!("reset {} to its state after the load in {secs:.1} s", db.describe());
        }
    }
    let place = place_of(&dbs, size.to_string());
    let max = a.options.settle_time.map_or(OltpRunArgs::SETTLE_TIME, |s| s.0);
    let settled = storbench_bench::run::settle(place.device.as_ref().map(|d| d.name.as_str()), max, stop);
    if !max.is_zero() {
        let how = if settled.idle { "the device is idle" } else { "the device is still busy; going on" };
        say!("settled for {:.1} s: {how}", settled.waited.as_secs_f64());
    }
    let name = a.out.name.clone().unwrap_or_else(|| format!("oltp-{}", place.backend));
    let dir = BundleDir::choose(given, &a.out, &name)?;
    let log = a.cli.record.as_deref().map(|p| RequestLog::create(p, &host_name())).transpose()?;
    let dbs: Vec<Arc<dyn Ds3Database>> = match &log {
        Some(log) => dbs.into_iter().map(|db| Arc::new(Recorded::new(db, log.clone())) as _).collect(),
        None => dbs,
    };
    let measured = run_into(&spec, &dbs, &place, (&name, &dir), &lines, &a.out, stop);
    if let (Some(log), Some(path)) = (&log, &a.cli.record) {
        drop(dbs);
        match log.finish() {
            Ok(n) => say!("recorded {n} DVD Store calls to {}", path.display()),
            Err(e) => say!("warning: {}: {e}", path.display()),
        }
    }
    let measured = measured?;
    let ending = if stop.is_stopped() { Ending::Interrupted } else { Ending::Ok };
    Ok(Ran { ending, measured: Some(measured) })
}

/// This machine's name, the source of every line it records.
fn host_name() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

/// Connections a run opens besides its driver threads' sessions: the writer's lock and the
/// counters' sampler.
const EXTRA_CONNECTIONS: u64 = 2;

/// Refuses a run whose sessions would not fit in the server's free connections, before it
/// resets anything (rather than failing midway with "too many clients").
fn check_connections(db: &dyn Ds3Database, threads: u32) -> Result<()> {
    let Some(room) =
        db.connection_room().with_context(|| format!("reading {}'s connection limit", db.describe()))?
    else {
        return Ok(());
    };
    // This process's lock connection is already counted in use.
    let free = room.max.saturating_sub(room.in_use);
    let needed = u64::from(threads) + EXTRA_CONNECTIONS - 1;
    if needed > free {
        bail!(
            "--n-threads {threads} needs {needed} more connections to {}, but the server takes {} (its \
             max_connections, less any kept for superusers), {} of them open now, leaving {free}; use \
             --n-threads {} or fewer, or raise max_connections on the server",
            db.describe(),
            room.max,
            room.in_use,
            free.saturating_sub(EXTRA_CONNECTIONS - 1)
        );
    }
    Ok(())
}

/// The options as `run` checks them, before it opens a database.
pub(super) fn checked(a: &OltpJob) -> Result<(DbSize, OltpSpec, LineOptions)> {
    let size = db_size(a.options.db_size.as_deref().unwrap_or(OltpOptions::DB_SIZE))?;
    let spec = a.options.spec(size.counts()).map_err(anyhow::Error::msg)?;
    let lines = line_options(a)?;
    new_file("--record", a.cli.record.as_deref())?;
    Ok((size, spec, lines))
}

/// The longest interval between DS3's stat lines: a day.
const MAX_LOG_FREQ: u32 = 86_400;

fn line_options(a: &OltpJob) -> Result<LineOptions> {
    let timestamp = match a.options.log_timestamp.as_deref().map(str::to_ascii_uppercase).as_deref() {
        None | Some("NONE") => Stamp::None,
        Some("UTC") => Stamp::Utc,
        Some("LOCAL") => Stamp::Local,
        Some(other) => bail!("--log-timestamp {other}: use NONE, UTC or LOCAL"),
    };
    let log_freq = a.options.log_freq.unwrap_or(10);
    if !(1..=MAX_LOG_FREQ).contains(&log_freq) {
        bail!("--log-freq {log_freq}: the stat line interval is 1 to {MAX_LOG_FREQ} seconds (a day)");
    }
    new_file("--out-filename", a.cli.out_filename.as_deref())?;
    Ok(LineOptions {
        log_freq,
        timestamp,
        detailed: a.options.detailed_view.is_some_and(|y| y.0),
        to_stderr: a.out.json,
        out_file: a.cli.out_filename.clone(),
    })
}

/// Refuses `path` (given as `flag`) when anything is there: storbench writes only new files.
fn new_file(flag: &str, path: Option<&Path>) -> Result<()> {
    if let Some(p) = path
        && storbench_bench::files::entry(&storbench_bench::files::resolve_parent(p)?)?.is_some()
    {
        bail!(
            "{flag} {}: something is there already; storbench does not overwrite it. Name a new file",
            p.display()
        );
    }
    Ok(())
}

/// The loaded database must be the size the driver draws customers and products from.
fn check_shape(db: &dyn Ds3Database, spec: &OltpSpec, size: &str) -> Result<()> {
    let shape = db.shape().with_context(|| format!("opening {}", db.describe()))?;
    if shape.customers != spec.max_customer || shape.products != spec.max_product {
        bail!(
            "{} was loaded with {} customers and {} products, but --db-size {size} means {} and {}; \
             run with the --db-size it was loaded with, or load it again at {size}",
            db.describe(),
            shape.customers,
            shape.products,
            spec.max_customer,
            spec.max_product
        );
    }
    if !spec.restock && db.kind() == storbench_bench::db::BackendKind::Sqlite {
        bail!(
            "--restock N follows DS3's MySQL edition (no restock trigger) and is for the server backends; \
             SQLite always restocks: drop --restock N, or run on --backend mysql or postgres"
        );
    }
    if !shape.ds3 && !spec.ds2_mode {
        bail!("{} was loaded with --ds2 (no reviews or membership); run with --ds2-mode", db.describe());
    }
    Ok(())
}

fn place_of(dbs: &[Arc<dyn Ds3Database>], db_size: String) -> OltpPlace {
    let first = &dbs[0];
    let local_path = first.data_location();
    let device = local_path.as_deref().and_then(|p| resolve_device(p).ok().flatten());
    let size_bytes = local_path
        .as_deref()
        .and_then(|p| std::fs::metadata(p).ok())
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len());
    OltpPlace {
        backend: first.kind().as_str(),
        targets: dbs.iter().map(|d| d.describe()).collect(),
        db_size,
        device,
        size_bytes,
    }
}

fn run_into(
    spec: &OltpSpec,
    dbs: &[Arc<dyn Ds3Database>],
    place: &OltpPlace,
    (name, dir): (&str, &BundleDir),
    lines: &LineOptions,
    out: &crate::args::OutputArgs,
    stop: &StopFlag,
) -> Result<Measured> {
    let at = jiff::Timestamp::now();
    let mut first = oltp_bundle::started(spec, place, name, &at.to_string());
    // Every database's data and log, each device counted on its own.
    let places: Vec<PathBuf> =
        dbs.iter().flat_map(|d| storbench_bench::db::local_paths(d.as_ref())).collect();
    let (database, unknown) = measure::database_info(dbs[0].as_ref());
    first.warnings.extend(unknown);
    // A SQLite file's directory is the run's; a server's data directory is not storbench's.
    let sqlite = dbs.iter().find(|d| d.kind() == storbench_bench::db::BackendKind::Sqlite);
    let sqlite_dir = sqlite.and_then(|d| d.data_location()).and_then(|p| p.parent().map(PathBuf::from));
    let start = Start {
        run: storbench_bench::run::measure::Start {
            at,
            summary: first,
            targets: places.iter().map(PathBuf::as_path).collect(),
            database,
            device: place.device.as_ref().map(|d| d.name.as_str()),
        },
        table: crate::subcommand::oltp::table::oltp_table,
        background: &out.streams(),
        background_dir: sqlite_dir.as_deref(),
        background_wait: out.background_wait,
    };
    measure::measure(dir, start, stop, |rec, first| record_run(rec, first, spec, dbs, place, lines, stop))
}

/// Runs the driver (the library's `oltp::bundle::record`), each second into DS3's lines.
fn record_run(
    rec: &mut Recording,
    first: Summary,
    spec: &OltpSpec,
    dbs: &[Arc<dyn Ds3Database>],
    place: &OltpPlace,
    lines: &LineOptions,
    stop: &StopFlag,
) -> Result<Finished> {
    let mut printer = Printer::new(lines, dbs.len())?;
    printer.say(&parameter_line(spec, place));
    oltp_bundle::record(rec, first, spec, (dbs, place), stop, &mut printer).context("starting the run")
}

impl oltp_bundle::Watch for Printer<'_> {
    fn interval(&mut self, closed: &OltpInterval) {
        Printer::interval(self, closed);
    }

    fn ended(&mut self, outcome: &users::OltpOutcome, targets: &[String]) {
        self.finish(outcome, targets);
    }
}

/// DS3 echoes its parameters first.
fn parameter_line(spec: &OltpSpec, place: &OltpPlace) -> String {
    format!(
        "target={} n_threads={} ramp_rate={} run_time={} db_size={} warmup_time={} think_time={} \
         pct_newcustomers={} pct_newmember={} n_searches={} search_batch_size={} search_depth={} n_reviews={} \
         pct_newreviews={} pct_newhelpfulness={} n_line_items={} ds2_mode={} restock={} seed={}",
        place.targets.join(";"),
        spec.n_threads,
        spec.ramp_rate,
        minutes(spec.run_time),
        place.db_size,
        minutes(spec.warmup_time),
        spec.think_time.as_secs_f64(),
        spec.pct_newcustomers,
        spec.pct_newmember,
        spec.n_searches,
        spec.search_batch_size,
        spec.search_depth,
        spec.n_reviews,
        spec.pct_newreviews,
        spec.pct_newhelpfulness,
        spec.n_line_items,
        if spec.ds2_mode { "Y" } else { "N" },
        if spec.restock { "Y" } else { "N" },
        spec.seed
    )
}

/// Minutes as DS3 writes them: `3`, `0.5`, `0.083`.
fn minutes(d: Duration) -> String {
    let m = format!("{:.3}", d.as_secs_f64() / 60.0);
    m.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Prints DS3's lines as the run goes, and keeps `--out-filename`'s CSV.
struct Printer<'a> {
    opts: &'a LineOptions,
    prev: Vec<Sampled>,
    prev_all: Sampled,
    csv: Option<std::io::BufWriter<std::fs::File>>,
}

impl<'a> Printer<'a> {
    fn new(opts: &'a LineOptions, targets: usize) -> Result<Self> {
        let csv = match &opts.out_file {
            None => None,
            Some(p) => {
                let path = storbench_bench::files::resolve_parent(p)?;
                let f = storbench_bench::files::create(&path, storbench_bench::files::How::WRITE)
                    .with_context(|| format!("creating {}", p.display()))?;
                let mut w = std::io::BufWriter::new(f);
                writeln!(w, "{}", ds3::CSV_HEADER)?;
                Some(w)
            }
        };
        Ok(Printer { opts, prev: vec![Sampled::default(); targets], prev_all: Sampled::default(), csv })
    }

    /// DS3's time stamp of a line (`--log-timestamp`): nothing, UTC with milliseconds, or the
    /// local time as DS3's LOCAL prints it; a space follows one.
    fn stamp(&self) -> String {
        match self.opts.timestamp {
            Stamp::None => String::new(),
            Stamp::Utc => jiff::Timestamp::now().strftime(ds3::UTC_STAMP).to_string(),
            Stamp::Local => jiff::Zoned::now().strftime(ds3::LOCAL_STAMP).to_string(),
        }
    }

    fn say(&self, line: &str) {
        let stamp = self.stamp();
        if self.opts.to_stderr {
            say!("{stamp}{line}");
        } else {
            tell!("{stamp}{line}");
        }
    }

    fn interval(&mut self, closed: &OltpInterval) {
        let iv = &closed.interval;
        if iv.first_measured {
            self.prev_all = Sampled::default();
            self.prev.iter_mut().for_each(|p| *p = Sampled::default());
            self.say("Stats reset");
        }
        let tick = closed.row.t_s.round() as u64;
        if tick == 0 || !tick.is_multiple_of(u64::from(self.opts.log_freq)) {
            return;
        }
        let phase_total = &iv.phase_total.total;
        let line = ds3::periodic(phase_total, iv.phase_elapsed_s, self.prev_all);
        self.write_csv(phase_total, iv.phase_elapsed_s);
        self.say(&line);
        self.prev_all = Sampled::of(phase_total);
        if self.opts.detailed && iv.phase_total.parts.len() > 1 {
            self.say("Individual Stats for each DB / Web Server:");
            for (i, t) in iv.phase_total.parts.iter().enumerate() {
                self.say(&ds3::periodic(t, iv.phase_elapsed_s, self.prev[i]));
                self.prev[i] = Sampled::of(t);
            }
        }
    }

    fn write_csv(&mut self, phase_total: &OltpRecorder, phase_elapsed_s: f64) {
        let stamp = self.stamp();
        let Some(w) = self.csv.as_mut() else { return };
        let figures = ds3::Periodic::of(phase_total, phase_elapsed_s, self.prev_all);
        let _ = writeln!(w, "{}", figures.csv_row(&stamp)).and_then(|_| w.flush());
    }

    fn finish(&mut self, out: &users::OltpOutcome, targets: &[String]) {
        let when = jiff::Zoned::now().strftime("%Y-%m-%d %H:%M:%S").to_string();
        // Final covers the measured phase, whose totals the outcome holds.
        let et = out.measured_s;
        self.say(&format!("Final ({when}): {}", ds3::final_fields(&out.totals.total, et, self.prev_all)));
        if out.totals.parts.len() > 1 {
            for (i, t) in out.totals.parts.iter().enumerate() {
                self.say(&format!("Final: target={} {}", targets[i], ds3::final_fields(t, et, self.prev[i])));
            }
        }
        self.say(&format!("Controller ({when}): all threads stopped, exiting"));
        self.say(&format!(
            "n_purchase_from_start= {} n_rollbacks_from_start= {}",
            out.all.total.purchases, out.all.total.rollbacks
        ));
        self.say("Run over");
    }
}

fn show(summary: &Summary, out: &crate::args::OutputArgs) -> Result<()> {
    crate::output::print_result(|| {
        if out.json {
            export::summary_json(summary)
        } else {
            crate::subcommand::oltp::table::oltp_table(summary) + "\n"
        }
    })
}
