//! Options of `storbench replay`, defined once: doc comment = `--help` = plan key.

use crate::args::OutputArgs;
use crate::args::oltp::DbArgs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use storbench_bench::units::Seconds;
use storbench_bench::workload::replay::log::Format;
use storbench_bench::workload::replay::options::{Pacing, ReplayOptions};

/// Options of `storbench replay`; the same keys work in a plan file's replay workload. Each
/// flag is a key of the library's `ReplayOptions`, which the flags convert into
/// (`ReplayArgs::job`).
#[derive(Args, Debug, Clone, Default)]
pub struct ReplayArgs {
    /// The request logs, one source each; several replay side by side, as the web servers of
    /// a site do. Read as they stream, so a log of any size takes little memory.
    #[arg(value_name = "LOG", value_parser = storbench_bench::units::file_place)]
    pub logs: Vec<PathBuf>,

    /// The logs' format: storbench (the DVD Store calls `oltp run --record` writes),
    /// combined (a web server's access log, Apache's and nginx's Combined or Common Log
    /// Format, turned into DVD Store calls by --mapping), pg-csvlog (PostgreSQL's log_destination = csvlog), pg-stderr
    /// (PostgreSQL's stderr log; its log_line_prefix must carry the time and the session, see
    /// --log-line-prefix), mysql-general (MySQL's or MariaDB's general query log) or
    /// mysql-slow (the slow query log, long_query_time = 0 to have every statement). Default:
    /// detected from each log's first lines.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,

    /// For combined: the TOML file of routes from the site's URLs to DVD Store calls
    /// (examples/ds3-web.toml maps DVD Store's own web tier).
    #[arg(long, value_name = "FILE")]
    pub mapping: Option<PathBuf>,

    /// For pg-stderr: the server's log_line_prefix, which must hold the time (%m, %t or %n)
    /// and the session (%c) or process (%p). Default: '%m|%u|%d|%c|'.
    #[arg(long, value_name = "PREFIX")]
    pub log_line_prefix: Option<String>,

    #[command(flatten)]
    pub db: DbArgs,

    /// fire-hose: every request as soon as the one before it in its session is answered, at
    /// most --in-flight at once per source; time-sync: each request at its time in the log
    /// (divided by --speed), latency from that time. Default: fire-hose.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,

    /// fire-hose: requests in flight per source at most (an ASP.NET web server's 20 by
    /// default, as the reference replay used).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub in_flight: Option<u32>,

    /// time-sync: how much faster than the log to go (2 = twice as fast). Default: 1.
    #[arg(long, value_name = "X")]
    pub speed: Option<f64>,

    /// Replay at most this many requests (of those that apply), over all logs.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,

    #[command(flatten)]
    pub steady: crate::args::SteadyArgs,

    /// Replay the part of each log from this far after its first request (30s, 10m).
    #[arg(long, value_name = "DURATION")]
    pub start: Option<Seconds>,

    /// Replay the part of each log up to this far after its first request.
    #[arg(long, value_name = "DURATION")]
    pub end: Option<Seconds>,

    /// Only the requests of sessions on this database (as the log names it).
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,

    /// Only the requests of sessions of this user.
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,

    /// The share of failed requests, in percent, over which the replay fails its check (exit 1,
    /// status "check failed"): a replay whose requests fail did not reproduce its log's load.
    /// A request not sent because the database gave its session no connection fails the
    /// check whatever this is. Default: 1.
    #[arg(long, value_name = "PCT")]
    pub max_errors: Option<f64>,

    /// Send the statements of this kind although they reach beyond the database the replay
    /// was given (repeatable), the kind as the replay's "not sent" line names it: "DROP
    /// DATABASE", "SET GLOBAL", "COPY TO PROGRAM", "another database", "pg_read_file". By
    /// default only what acts inside that database is sent: a statement on other databases,
    /// roles or tablespaces, the server's settings, its files or programs, its extensions or
    /// languages, replication or its administration is counted, not sent.
    #[arg(long, value_name = "KIND")]
    pub allow_statement: Vec<String>,

    /// Send every statement of the logs, whatever it reaches (a log you trust, against a
    /// server of its own).
    #[arg(long)]
    pub allow_all_statements: bool,

    /// Stop at the first line that cannot be read as a request, instead of counting it,
    /// showing the first few with their line numbers, and going on.
    #[arg(long)]
    pub strict: bool,

    #[command(flatten)]
    pub out: OutputArgs,
}

// `storbench replay`'s command line: a plan's replay keys and the search's (command line only;
// no doc comment: it would be the command's help).
#[derive(Args, Debug, Clone, Default)]
pub struct ReplayCommand {
    #[command(flatten)]
    pub args: ReplayArgs,
    #[command(flatten)]
    pub search: crate::search::args::SearchArgs,
}

impl ReplayArgs {
    /// The flags as the library's options, and where the output goes.
    pub fn job(self) -> ReplayJob {
        // Every key of the options set here; every flag is one of them (a test holds it).
        let options = ReplayOptions {
            logs: self.logs,
            format: self.format.map(Format::from),
            mapping: self.mapping,
            log_line_prefix: self.log_line_prefix,
            backend: self.db.backend.map(Into::into),
            path: self.db.path,
            url: self.db.url,
            password_file: self.db.password_file,
            mode: self.mode.map(Pacing::from),
            in_flight: self.in_flight,
            speed: self.speed,
            limit: self.limit,
            steady_state: self.steady.steady_state,
            start: self.start,
            end: self.end,
            database: self.database,
            user: self.user,
            max_errors: self.max_errors,
            allow_statement: self.allow_statement,
            allow_all_statements: self.allow_all_statements,
            strict: self.strict,
        };
        ReplayJob { options, cli: (), out: self.out }
    }
}

/// A replay workload as the command line and a plan run it.
pub type ReplayJob = crate::args::Job<ReplayOptions>;

/// `--format`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatArg {
    Storbench,
    Combined,
    PgCsvlog,
    PgStderr,
    MysqlGeneral,
    MysqlSlow,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Storbench => Format::Storbench,
            FormatArg::Combined => Format::Combined,
            FormatArg::PgCsvlog => Format::PgCsvlog,
            FormatArg::PgStderr => Format::PgStderr,
            FormatArg::MysqlGeneral => Format::MysqlGeneral,
            FormatArg::MysqlSlow => Format::MysqlSlow,
        }
    }
}

/// `--mode`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeArg {
    FireHose,
    TimeSync,
}

impl From<ModeArg> for Pacing {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::FireHose => Pacing::FireHose,
            ModeArg::TimeSync => Pacing::TimeSync,
        }
    }
}
