//! Options of `storbench oltp`: DS3's parameters under kebab-case names, with DS3's own
//! `--name=value` spellings accepted as aliases, so existing driver scripts keep working.

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;
use storbench_bench::units::{Minutes, Seconds, YesNo};
use storbench_bench::workload::oltp::options::OltpOptions;

#[derive(Subcommand, Debug)]
pub enum OltpCommand {
    /// Write the DS3 data set as CSV files in DS3's layout (cust/, orders/, prod/,
    /// membership/, reviews/), for DS3's own loaders. `load` does not need them: it streams
    /// the same rows straight into the database.
    Gen(OltpGenArgs),
    /// Create the DS3 schema in a database and load a data set: bulk load, indexes,
    /// full-text search, the restock trigger, statistics. Keeps a pristine copy that `run`
    /// resets to.
    Load(OltpLoadArgs),
    /// Run the DS3 driver: threads per target, warm-up, measured phase; prints DS3's
    /// periodic lines and Final line, writes a result bundle.
    #[command(args_override_self = true)]
    Run(Box<OltpRun>),
    /// Verify a database after runs: every product's sales must equal the quantities of its
    /// order lines (a lost update breaks it). Exit code 1 when they do not.
    Check(DbArgs),
    /// Measure the storage work of DS3's calls by the server's own counters: the calls of
    /// --orders orders (drawn as a run draws them) are replayed per call type and whole, once
    /// through storbench's calls and once through DS3's own SQL, each from the state after
    /// the load, on an idle PostgreSQL or MariaDB/MySQL server. Prints per call and per order
    /// the change of every counter for both and their ratio. The database must be loaded
    /// (`oltp load`); it is reset to that state before each batch and at the end.
    Fidelity(OltpFidelityArgs),
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendArg {
    /// Embedded SQLite: one file (--path).
    Sqlite,
    /// PostgreSQL server (--url postgres://user@host:port/db).
    #[value(alias = "postgresql", alias = "pg")]
    Postgres,
    /// MariaDB or MySQL server (--url mysql://user@host:port/db).
    #[value(alias = "mariadb")]
    Mysql,
}

impl From<BackendArg> for storbench_bench::db::BackendKind {
    fn from(b: BackendArg) -> Self {
        use storbench_bench::db::BackendKind;
        match b {
            BackendArg::Sqlite => BackendKind::Sqlite,
            BackendArg::Postgres => BackendKind::Postgres,
            BackendArg::Mysql => BackendKind::Mysql,
        }
    }
}

/// Which database: the backend and where it is.
#[derive(Args, Debug, Clone, Default)]
pub struct DbArgs {
    /// Database: sqlite (embedded, default), postgres or mysql (MariaDB too). Default: taken
    /// from the --url scheme, else sqlite.
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub backend: Option<BackendArg>,

    /// SQLite database file. Default for oltp: ./storbench-ds3.db; a replay has none (name the
    /// copy of the database its logs were recorded on; in a plan, relative to the
    /// configuration's target).
    #[arg(long, value_name = "FILE", value_parser = storbench_bench::units::file_place)]
    pub path: Option<PathBuf>,

    /// Server database URL: postgres://user[:password]@host[:port]/dbname or
    /// mysql://user[:password]@host[:port]/dbname. The password may hold any character
    /// (`@`, `;`, `:`, `/`) as it is, or percent-encoded; it may instead come from
    /// --password-file, PGPASSWORD, MYSQL_PWD or ~/.pgpass, and is never printed. Several targets (for
    /// `run`): repeat --url, or separate URLs with ';' (a ';' splits only where a new
    /// scheme:// follows, so one inside a password stays).
    #[arg(long, value_name = "URL", alias = "target")]
    pub url: Vec<String>,

    /// File holding the server password on its first line (trailing white space dropped), for
    /// a password that should not sit in a command line, a plan or the environment; keep it
    /// readable by you alone (chmod 600). Used when the URL has no password; wins over
    /// PGPASSWORD / MYSQL_PWD. Without any of these, PostgreSQL's own password file is read
    /// as psql reads it: PGPASSFILE, else ~/.pgpass, lines host:port:database:user:password
    /// (`*` matches anything, `\:` and `\\` escape, `#` comments, the first match wins, a
    /// Unix socket matches `localhost`); a file others may read (not chmod 600) is not used,
    /// and a refused login then says so.
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
}

impl DbArgs {
    /// The flags as the library's options.
    pub fn options(&self) -> storbench_bench::db::options::DbOptions {
        storbench_bench::db::options::DbOptions {
            backend: self.backend.map(Into::into),
            path: self.path.clone(),
            url: self.url.clone(),
            password_file: self.password_file.clone(),
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct OltpGenArgs {
    /// Data set size: S (10MB), M (1GB), L (100GB), or <n>MB (1-1023) / <n>GB (1-4095), with
    /// DS3's row-count rules.
    #[arg(long, value_name = "SIZE", default_value = OltpOptions::DB_SIZE, alias = "db_size")]
    pub db_size: String,

    /// Directory for the CSV files (created; existing files are never overwritten).
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub out: PathBuf,

    /// Output format; csv (DS3's files) is the one there is.
    #[arg(long, value_name = "FORMAT", default_value = "csv")]
    pub format: String,

    /// Only DS2's tables (no membership, reviews or review helpfulness).
    #[arg(long)]
    pub ds2: bool,

    /// Windows line ends (CRLF), as DS3's generators write with sys=1.
    #[arg(long)]
    pub crlf: bool,

    /// Generator threads. Default: the number of CPUs.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Seed of every random value; the same seed gives the same files.
    #[arg(long, value_name = "N", default_value_t = storbench_bench::rng::DEFAULT_SEED)]
    pub seed: u64,
}

#[derive(Args, Debug, Clone)]
pub struct OltpLoadArgs {
    #[command(flatten)]
    pub db: DbArgs,

    /// Data set size: S (10MB), M (1GB), L (100GB), or <n>MB / <n>GB.
    #[arg(long, value_name = "SIZE", default_value = OltpOptions::DB_SIZE, alias = "db_size")]
    pub db_size: String,

    /// Load only DS2's tables.
    #[arg(long)]
    pub ds2: bool,

    /// Seed of every generated value.
    #[arg(long, value_name = "N", default_value_t = storbench_bench::rng::DEFAULT_SEED)]
    pub seed: u64,
}

#[derive(Args, Debug, Clone)]
pub struct OltpFidelityArgs {
    #[command(flatten)]
    pub db: DbArgs,

    /// Size the database was loaded at: S (10MB), M (1GB), L (100GB), or <n>MB / <n>GB.
    #[arg(long, value_name = "SIZE", default_value = OltpOptions::DB_SIZE, alias = "db_size")]
    pub db_size: String,

    /// Orders whose calls are replayed.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub orders: u64,

    /// Seed of the orders' choices (a run's first thread draws the same).
    #[arg(long, value_name = "N", default_value_t = storbench_bench::rng::DEFAULT_SEED)]
    pub seed: u64,

    /// Times each batch is replayed (from the state after the load each time); every figure
    /// is the median.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub repeat: u32,

    /// A DS3 checkout (github.com/dvdstore/ds3, the directory holding pgsqlds3/): on
    /// PostgreSQL its pgsqlds3/build/pgsqlds3_create_sp.sql is installed in schema ds3 and
    /// called as DS3's driver calls it. MariaDB/MySQL needs none: DS3's statements are sent
    /// as its driver sends them.
    #[arg(long, value_name = "DIR")]
    pub ds3_source: Option<PathBuf>,

    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

// `storbench oltp run`'s command line: a plan's oltp keys and the search's (command line only;
// no doc comment: it would replace the subcommand's help).
#[derive(Args, Debug, Clone, Default)]
pub struct OltpRun {
    #[command(flatten)]
    pub run: OltpRunArgs,
    #[command(flatten)]
    pub search: crate::search::args::SearchArgs,
}

/// Options of `storbench oltp run`; the same keys work in a plan file's oltp workload, but
/// for the files DS3's lines and the calls go to and DS3's parameter file (the command
/// line's, `OltpRunCli`). Each other flag is a key of the library's `OltpOptions`, which the
/// flags convert into (`OltpRunArgs::job`).
#[derive(Args, Debug, Clone, Default)]
pub struct OltpRunArgs {
    #[command(flatten)]
    pub db: DbArgs,

    /// Size the database was loaded at (S, M, L, <n>MB, <n>GB): sets the customer and product
    /// ranges the driver draws from; must match the load. Default: 10MB.
    #[arg(long, value_name = "SIZE", alias = "db_size")]
    pub db_size: Option<String>,

    /// Threads per target, each with its own connection (DS3 n_threads). Default: 1.
    #[arg(long, value_name = "N", alias = "n_threads")]
    pub n_threads: Option<u32>,

    /// Measured time after the warm-up; a bare number is minutes, as in DS3 (run_time).
    /// Default: 3m.
    #[arg(long, value_name = "DURATION", alias = "run_time")]
    pub run_time: Option<Minutes>,

    #[command(flatten)]
    pub steady: super::SteadyArgs,

    /// Warm-up before the measured phase, then every counter is reset; a bare number is
    /// minutes (warmup_time). Default: 1m.
    #[arg(long, value_name = "DURATION", alias = "warmup_time")]
    pub warmup_time: Option<Minutes>,

    /// Mean think time between a thread's orders, seconds (each pause is U[0, 2x)); 0 is a
    /// closed loop (think_time). Default: 0.
    #[arg(long, value_name = "SECONDS", alias = "think_time")]
    pub think_time: Option<Seconds>,

    /// Threads started per second; each waits U[0, threads/rate) s before connecting
    /// (ramp_rate). Default: 10.
    #[arg(long, value_name = "USERS_PER_S", alias = "ramp_rate")]
    pub ramp_rate: Option<f64>,

    /// Percent of orders by a new customer instead of a login (pct_newcustomers). Default: 20.
    #[arg(long, value_name = "PCT", alias = "pct_newcustomers")]
    pub pct_newcustomers: Option<f64>,

    /// Percent of orders that add a membership (pct_newmember). Default: 1.
    #[arg(long, value_name = "PCT", alias = "pct_newmember")]
    pub pct_newmember: Option<f64>,

    /// Mean product searches per order (n_searches). Default: 3.
    #[arg(long, value_name = "N", alias = "n_searches")]
    pub n_searches: Option<u32>,

    /// Mean rows asked for per search (search_batch_size). Default: 5.
    #[arg(long, value_name = "N", alias = "search_batch_size")]
    pub search_batch_size: Option<u32>,

    /// Inner row limit of review searches by actor or title (search_depth, DS3.5).
    /// Default: 500.
    #[arg(long, value_name = "N", alias = "search_depth")]
    pub search_depth: Option<u32>,

    /// Mean review searches, and mean review look-ups, per order (n_reviews). Default: 3.
    #[arg(long, value_name = "N", alias = "n_reviews")]
    pub n_reviews: Option<u32>,

    /// Percent of orders that write a review (pct_newreviews). Default: 5.
    #[arg(long, value_name = "PCT", alias = "pct_newreviews")]
    pub pct_newreviews: Option<f64>,

    /// Percent of orders that rate a review (pct_newhelpfulness). Default: 10.
    #[arg(long, value_name = "PCT", alias = "pct_newhelpfulness")]
    pub pct_newhelpfulness: Option<f64>,

    /// Mean items per purchase, at most 10 bought (n_line_items). Default: 5.
    #[arg(long, value_name = "N", alias = "n_line_items")]
    pub n_line_items: Option<u32>,

    /// Restock a product when a sale leaves fewer than 3 in stock: Y (the default) as DS3
    /// does on PostgreSQL, or N as DS3's MySQL edition does, whose restock trigger is a stub:
    /// products sell out and the rollback rate climbs with the order count. Servers only.
    #[arg(long, value_name = "Y|N", num_args = 0..=1, default_missing_value = "Y")]
    pub restock: Option<YesNo>,

    /// DS2's workload on the DS3 schema: no membership or review steps (ds2_mode). Takes an
    /// optional Y/N as DS3 does.
    #[arg(long, value_name = "Y|N", alias = "ds2_mode", alias = "ds2", num_args = 0..=1, default_missing_value = "Y")]
    pub ds2_mode: Option<YesNo>,

    /// Seconds between DS3 stat lines (log_freq). Default: 10.
    #[arg(long, value_name = "SECONDS", alias = "log_freq")]
    pub log_freq: Option<u32>,

    /// Prefix of each stat line: NONE, UTC or LOCAL time (log_timestamp). Default: NONE.
    #[arg(long, value_name = "NONE|UTC|LOCAL", alias = "log_timestamp")]
    pub log_timestamp: Option<String>,

    /// With several targets, print each target's line at every interval (detailed_view).
    #[arg(long, value_name = "Y|N", alias = "detailed_view", num_args = 0..=1, default_missing_value = "Y")]
    pub detailed_view: Option<YesNo>,

    /// Also write DS3's periodic figures as CSV to this file (out_filename).
    #[arg(long, value_name = "FILE", alias = "out_filename", value_parser = storbench_bench::units::file_place)]
    pub out_filename: Option<PathBuf>,

    /// Also write every DVD Store call the run makes (warm-up included), with its time and
    /// session, to this new file as JSON Lines: a request log that `storbench replay` runs
    /// again, on other storage.
    #[arg(long, value_name = "FILE", value_parser = storbench_bench::units::file_place)]
    pub record: Option<PathBuf>,

    /// Seed of every choice the threads make. Default: 1.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Run on the database as it is instead of resetting it to the state after the load.
    #[arg(long)]
    pub no_reset: bool,

    /// Before the run, flush the OS's dirty pages and wait up to this long for the database's
    /// device to be idle (under 10 % busy for 2 s), so the run does not pay for the writes of
    /// the load or the reset; 0 skips it. Default: 30s.
    #[arg(long, value_name = "DURATION")]
    pub settle_time: Option<Seconds>,

    /// DS3's parameter file: `name=value` lines (DS3's names), read in place of this option,
    /// so options after it win, as in DS3 (config_file).
    #[arg(long, value_name = "FILE", alias = "config_file")]
    pub config_file: Option<PathBuf>,

    /// DS3's ways of reading host CPU (windows_perf_host, linux_perf_host) and its web tier
    /// (virt_dir, page_type): accepted so DS3 scripts run, and ignored. storbench samples the
    /// CPU itself and talks to the database directly.
    #[arg(
        long,
        value_name = "VALUE",
        hide = true,
        alias = "windows_perf_host",
        alias = "linux-perf-host",
        alias = "linux_perf_host",
        alias = "virt_dir",
        alias = "virt-dir",
        alias = "page_type",
        alias = "page-type"
    )]
    pub windows_perf_host: Option<String>,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

impl OltpRunArgs {
    /// The settle of an evaluation's runs (`idle_settle`), which an oltp run does itself.
    pub const SETTLE_TIME: Duration = crate::plan::method::Method::IDLE_SETTLE;

    /// The flags as the library's options, the command line's own, and where the output goes.
    pub fn job(self) -> OltpJob {
        // Every key of the options set here; every flag but the command line's own is one of
        // them (a test holds it).
        let options = OltpOptions {
            backend: self.db.backend.map(Into::into),
            path: self.db.path,
            url: self.db.url,
            password_file: self.db.password_file,
            db_size: self.db_size,
            n_threads: self.n_threads,
            run_time: self.run_time,
            steady_state: self.steady.steady_state,
            warmup_time: self.warmup_time,
            think_time: self.think_time,
            ramp_rate: self.ramp_rate,
            pct_newcustomers: self.pct_newcustomers,
            pct_newmember: self.pct_newmember,
            n_searches: self.n_searches,
            search_batch_size: self.search_batch_size,
            search_depth: self.search_depth,
            n_reviews: self.n_reviews,
            pct_newreviews: self.pct_newreviews,
            pct_newhelpfulness: self.pct_newhelpfulness,
            n_line_items: self.n_line_items,
            restock: self.restock,
            ds2_mode: self.ds2_mode,
            log_freq: self.log_freq,
            log_timestamp: self.log_timestamp,
            detailed_view: self.detailed_view,
            seed: self.seed,
            no_reset: self.no_reset,
            settle_time: self.settle_time,
        };
        let cli = OltpRunCli {
            out_filename: self.out_filename,
            record: self.record,
            windows_perf_host: self.windows_perf_host,
        };
        OltpJob { options, cli, out: self.out }
    }
}

/// What only `oltp run`'s command line gives: the files DS3's CSV lines and the calls go to,
/// and DS3's host options it ignores (its parameter file is read before parsing).
#[derive(Debug, Clone, Default)]
pub struct OltpRunCli {
    pub out_filename: Option<PathBuf>,
    pub record: Option<PathBuf>,
    pub windows_perf_host: Option<String>,
}

/// An oltp run as the command line and a plan run it.
pub type OltpJob = super::Job<OltpOptions, OltpRunCli>;

/// Splices DS3 parameter files into the command line: `--config_file=F` (or `--config-file
/// F`) becomes `--name=value` for each `name=value` line of F, in its place. Blank lines and
/// lines starting with `#` are skipped.
pub fn expand_config_files(args: Vec<std::ffi::OsString>) -> Result<Vec<std::ffi::OsString>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let text = arg.to_string_lossy();
        let path = match text.split_once('=') {
            Some(("--config_file" | "--config-file", p)) => p.to_owned(),
            None if text == "--config_file" || text == "--config-file" => match it.next() {
                Some(p) => p.to_string_lossy().into_owned(),
                None => return Err(format!("{text} needs a file name")),
            },
            _ => {
                out.push(arg);
                continue;
            }
        };
        let body = storbench_bench::input::read_text(
            std::path::Path::new(&path),
            storbench_bench::input::TEXT_LIMIT,
        )
        .map_err(|e| format!("--config-file {e} (a DS3 parameter file)"))?;
        for (n, line) in body.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if !line.contains('=') {
                return Err(format!(
                    "{path}:{n}: '{line}' is not name=value; DS3 parameter files hold lines like n_threads=8"
                ));
            }
            out.push(format!("--{line}").into());
        }
    }
    Ok(out)
}
