//! The PostgreSQL backend: connections (URL, password sources, errors that say what to fix),
//! sessions, the server's counters and facts, and which databases storbench may write.
//!
//! - [`claim`]: what a load may load into and what a load or reset may drop, proven by
//!   storbench's marker; [`catalogue`]: everything a database holds, from the whole catalogue.
//! - [`sql`]: a session running any SQL text.
//! - `counters`: per-second rates from `pg_stat_database` and the background writer.
//! - `ownership`: the one-writer lock and the identity of a database.
//!
//! A workload that loads a database (DS3, in `workload::oltp::ds3::postgres`) keeps its
//! record in the working database's `storbench_meta` and its pristine copy in
//! `<db>_pristine`, through [`claim`]; so load and reset need the CREATEDB privilege.

pub(crate) mod catalogue;
pub(crate) mod claim;
mod counters;
mod ownership;
mod pgpass;
mod sql;
#[cfg(test)]
mod tests;

pub use sql::PgSession;

use super::{
    BackendKind, ConnectionRoom, CounterSampler, Database, DbError, DbErrorKind, DbResult, SqlSession,
    WriterLock, database_info, url_with_encoded_password,
};
use postgres::config::Host;
use postgres::{Client, Config, NoTls};
use std::str::FromStr;
use std::time::Duration;
use storbench_report::DatabaseInfo;

/// The suffix of the pristine copy's name: `<db>_pristine`.
const PRISTINE_SUFFIX: &str = "_pristine";
/// PostgreSQL's longest identifier, in bytes (longer names are silently truncated).
const MAX_NAME: usize = 63;
/// The database storbench connects to when it creates, drops or clones databases.
pub(crate) const MAINTENANCE_DB: &str = "postgres";

/// A PostgreSQL database at a URL `postgres://user[:password]@host[:port]/dbname`; the
/// password comes from the URL, else `with_password` (a password file), else `PGPASSWORD`,
/// else PostgreSQL's own password file (`PGPASSFILE` or `~/.pgpass`, see `pgpass`).
/// Every password is remembered by `secret`, so no message shows it.
pub struct Postgres {
    config: Config,
    pub(crate) dbname: String,
    /// The URL without its password.
    shown: String,
    /// Whether the URL gave the password (which then wins over a password file).
    password_in_url: bool,
    /// Why `~/.pgpass` (or `PGPASSFILE`) had a password for this server that was not used,
    /// told when the server refuses the login.
    password_note: Option<String>,
}

impl Postgres {
    /// Parses the URL; connects to nothing yet.
    pub fn new(url: &str) -> DbResult<Postgres> {
        let usage = "expected postgres://user[:password]@host[:port]/dbname";
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(DbError::new(DbErrorKind::Connection, format!("not a PostgreSQL URL; {usage}")));
        }
        // The driver ends the password at its first `@`; encoded, every character may be in it.
        let mut config = Config::from_str(&url_with_encoded_password(url)).map_err(|e| {
            DbError::new(
                DbErrorKind::Connection,
                format!("cannot parse the PostgreSQL URL ({}); {usage}", chain(&e)),
            )
        })?;
        let missing =
            |what: &str| DbError::new(DbErrorKind::Connection, format!("the URL has no {what}; {usage}"));
        let user = config.get_user().ok_or_else(|| missing("user name"))?.to_owned();
        let dbname =
            config.get_dbname().filter(|d| !d.is_empty()).ok_or_else(|| missing("database name"))?.to_owned();
        let host = match config.get_hosts().first().ok_or_else(|| missing("host"))? {
            Host::Tcp(h) => h.clone(),
            Host::Unix(path) => path.display().to_string(),
        };
        if dbname.len() + PRISTINE_SUFFIX.len().max(claim::SWAP_SUFFIX.len()) > MAX_NAME {
            return Err(DbError::new(
                DbErrorKind::Connection,
                format!(
                    "database name '{dbname}' is too long: storbench also makes '{dbname}{PRISTINE_SUFFIX}', and \
                     PostgreSQL names hold {MAX_NAME} bytes; use a name of at most {} bytes",
                    MAX_NAME - PRISTINE_SUFFIX.len()
                ),
            ));
        }
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let password_in_url = config.get_password().is_some();
        let found =
            if password_in_url { Ok(None) } else { password_from_environment(&config, port, &dbname, &user) };
        let password_note = found.as_ref().err().cloned();
        if let Ok(Some(password)) = found {
            config.password(password);
        }
        if let Some(password) = config.get_password() {
            crate::secret::remember(&String::from_utf8_lossy(password));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("storbench");
        let shown = format!("postgres://{user}@{host}:{port}/{dbname}");
        Ok(Postgres { config, dbname, shown, password_in_url, password_note })
    }

    /// Uses `password` unless the URL has one (a password file's, read by the caller).
    pub fn with_password(mut self, password: &str) -> Postgres {
        crate::secret::remember(password);
        if !self.password_in_url {
            self.config.password(password);
            self.password_note = None;
        }
        self
    }

    /// A session on the working database.
    pub fn session(&self) -> DbResult<PgSession> {
        Ok(PgSession::new(self.connect_db()?))
    }

    /// `postgres://user@host:port`, for messages.
    fn describe_server(&self) -> &str {
        self.shown.rsplit_once('/').map_or(self.shown.as_str(), |(server, _)| server)
    }

    pub(crate) fn pristine_name(&self) -> String {
        format!("{}{PRISTINE_SUFFIX}", self.dbname)
    }

    /// A connection to database `dbname` on this server, with errors that say what to fix.
    pub(crate) fn connect_to(&self, dbname: &str) -> DbResult<Client> {
        let mut config = self.config.clone();
        config.dbname(dbname);
        config.connect(NoTls).map_err(|e| self.connect_error(&e, dbname))
    }

    /// A connection to the working database.
    pub(crate) fn connect_db(&self) -> DbResult<Client> {
        self.connect_to(&self.dbname)
    }

    /// A connection to the maintenance database, to create, drop and clone databases.
    pub(crate) fn connect_admin(&self) -> DbResult<Client> {
        self.connect_to(MAINTENANCE_DB)
    }

    fn connect_error(&self, e: &postgres::Error, dbname: &str) -> DbError {
        let user = self.config.get_user().unwrap_or_default();
        let server = self.describe_server();
        let what = describe(e);
        match kind_of(e) {
            DbErrorKind::Auth => DbError::new(
                DbErrorKind::Auth,
                format!(
                    "PostgreSQL at {server} refused user '{user}' for database '{dbname}': {what}; check the \
                     user and password (in the URL, the password file, PGPASSWORD or ~/.pgpass) and the server's \
                     pg_hba.conf{}",
                    self.password_note.as_ref().map(|n| format!("; {n}")).unwrap_or_default()
                ),
            ),
            DbErrorKind::Missing => DbError::new(
                DbErrorKind::Missing,
                format!(
                    "database '{dbname}' does not exist at {server}: {what}; run the OLTP load first (it \
                     creates the database) or fix the database name in the URL"
                ),
            ),
            _ if e.code().is_some_and(|c| c.code() == "53300") => DbError::new(
                DbErrorKind::Connection,
                format!(
                    "PostgreSQL at {server} has no connection left for database '{dbname}' ({what}): every one \
                     of its max_connections is taken; open fewer sessions or raise max_connections on the server"
                ),
            ),
            DbErrorKind::Connection | DbErrorKind::Deadlock | DbErrorKind::Query => DbError::new(
                DbErrorKind::Connection,
                format!(
                    "cannot connect to PostgreSQL at {server} (database '{dbname}'): {what}; is the server \
                     running and listening there? check host and port in the URL"
                ),
            ),
        }
    }
}

/// The password when the URL has none, looked up as psql does: `PGPASSWORD`, else the line
/// of PostgreSQL's password file that matches this connection (see `pgpass`). `Err` is why a
/// matching line was not used.
fn password_from_environment(
    config: &Config,
    port: u16,
    dbname: &str,
    user: &str,
) -> Result<Option<String>, String> {
    if let Ok(password) = std::env::var("PGPASSWORD") {
        return Ok(Some(password));
    }
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.as_str(),
        // libpq matches a Unix-socket connection with `localhost`.
        _ => "localhost",
    };
    pgpass::lookup(host, port, dbname, user)
}

/// The error kind of a PostgreSQL error, from its SQLSTATE; errors without one are the
/// connection's (closed, I/O) or the client's (Query).
pub(crate) fn kind_of(e: &postgres::Error) -> DbErrorKind {
    match e.code() {
        Some(code) => kind_of_sqlstate(code.code()),
        None if e.is_closed() || io_source(e) => DbErrorKind::Connection,
        None => DbErrorKind::Query,
    }
}

fn kind_of_sqlstate(code: &str) -> DbErrorKind {
    match code {
        "40P01" | "40001" => DbErrorKind::Deadlock,
        "3D000" | "42P01" | "42883" => DbErrorKind::Missing,
        // insufficient_privilege: "no permission" is Auth's other half.
        "42501" => DbErrorKind::Auth,
        // admin/crash shutdown, cannot connect now, too many connections.
        "57P01" | "57P02" | "57P03" | "53300" => DbErrorKind::Connection,
        c if c.starts_with("08") => DbErrorKind::Connection,
        c if c.starts_with("28") => DbErrorKind::Auth,
        _ => DbErrorKind::Query,
    }
}

fn io_source(e: &postgres::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<std::io::Error>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// An error and its sources, "a: b: c" (the Display of a postgres error alone says little).
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// The server's message with its SQLSTATE, detail and hint; or the client error's chain.
pub(crate) fn describe(e: &postgres::Error) -> String {
    let Some(db) = e.as_db_error() else { return chain(e) };
    let mut text = format!("{} (SQLSTATE {})", db.message(), db.code().code());
    if let Some(detail) = db.detail() {
        text.push_str("; ");
        text.push_str(detail);
    }
    if let Some(hint) = db.hint() {
        text.push_str("; hint: ");
        text.push_str(hint);
    }
    text
}

/// A `DbError` for a failed call: what was being done, the server's words, and for a missing
/// object the fix.
pub(crate) fn db_error(doing: &str, e: &postgres::Error) -> DbError {
    let kind = kind_of(e);
    let mut message = format!("{doing}: {}", describe(e));
    if kind == DbErrorKind::Missing {
        message.push_str("; is the database loaded? run the OLTP load first");
    }
    DbError::new(kind, message)
}

/// `map_err` helper: `.map_err(err("doing x"))`.
pub(crate) fn err(doing: &str) -> impl Fn(postgres::Error) -> DbError + '_ {
    move |e| db_error(doing, &e)
}

/// A name quoted as an SQL identifier.
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A string as an SQL literal.
pub(crate) fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

impl Database for Postgres {
    fn kind(&self) -> BackendKind {
        BackendKind::Postgres
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn database_name(&self) -> String {
        self.dbname.clone()
    }

    fn lock_writer(&self) -> DbResult<WriterLock> {
        ownership::lock_writer(self)
    }

    fn open_session(&self) -> DbResult<Box<dyn SqlSession>> {
        Ok(Box::new(self.session()?))
    }

    fn connection_room(&self) -> DbResult<Option<ConnectionRoom>> {
        ownership::connection_room(self).map(Some)
    }

    fn identity(&self) -> DbResult<Option<String>> {
        ownership::identity(self).map(Some)
    }

    fn counters(&self) -> DbResult<Box<dyn CounterSampler>> {
        Ok(Box::new(counters::PgCounters::new(self)?))
    }

    /// The server's data directory, if the server runs on this machine (the directory exists).
    fn data_location(&self) -> Option<std::path::PathBuf> {
        let dir: String = self.connect_db().ok()?.query_one("SHOW data_directory", &[]).ok()?.get(0);
        Some(std::path::PathBuf::from(dir)).filter(|p| p.exists())
    }

    /// `pg_wal` in the data directory: the WAL, wherever the link there leads.
    fn log_location(&self) -> Option<std::path::PathBuf> {
        Some(self.data_location()?.join("pg_wal")).filter(|p| p.exists())
    }

    /// `server_version`, and the settings the server was configured with: the sources
    /// `default` and `override` (computed at start-up) are the server's own, `client` and
    /// `session` describe this connection, not the server the runs use. `shared_buffers` is
    /// always named, even at its default: the setup checks weigh the data against it.
    fn server_info(&self) -> DbResult<DatabaseInfo> {
        let mut client = self.connect_db()?;
        let version: String =
            client.query_one("SHOW server_version", &[]).map_err(err("reading the server version"))?.get(0);
        let rows = client
            .query(
                "SELECT name, current_setting(name) FROM pg_settings \
                 WHERE source NOT IN ('default', 'override', 'client', 'session') \
                 OR name = 'shared_buffers' ORDER BY name",
                &[],
            )
            .map_err(err("reading the server settings"))?;
        let settings = rows.iter().map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)));
        Ok(database_info(BackendKind::Postgres, version, settings))
    }
}
