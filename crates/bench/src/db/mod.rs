//! The database layer: embedded SQLite, PostgreSQL and MariaDB/MySQL, for any workload that
//! talks to a database. It knows nothing of a workload's tables (DS3's schema, load and
//! transactions live in `workload::oltp::ds3`, built on this layer).
//!
//! - [`Database`]: one database: where it is, its connections ([`sql`]: sessions that run any
//!   SQL text), its server's facts (version and settings for the disclosure, connection
//!   room, identity) and its counters every second.
//! - Who may write it: the one-writer lock ([`writer_lock`]) and what in a database is
//!   storbench's ([`ownership`], with each server's claims: PostgreSQL's marker and pristine
//!   copies, MariaDB's marker).
//! - Errors by kind ([`DbErrorKind`]), which a run counts instead of stopping.
//! - Which database a user names ([`options`]).
//!
//! Timing is not done here: a workload's driver times each call in one place, so every
//! backend is measured the same way.

pub mod mysql;
pub mod options;
pub mod ownership;
pub mod postgres;
pub mod sql;
pub mod sqlite;
/// Test support for this crate's and the CLI's tests: where the test servers are.
#[doc(hidden)]
pub mod testing;
pub mod writer_lock;

pub use sql::SqlSession;
use std::fmt;
use storbench_report::DatabaseInfo;
pub use writer_lock::WriterLock;

/// Which database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    Sqlite,
    #[serde(alias = "postgresql", alias = "pg")]
    Postgres,
    #[serde(alias = "mariadb")]
    Mysql,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Sqlite => "sqlite",
            BackendKind::Postgres => "postgres",
            BackendKind::Mysql => "mysql",
        }
    }
}

/// What went wrong with a database call. During a run these are counted by kind, not fatal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DbErrorKind {
    /// Could not connect, or the connection was lost (server restarted, network dropped).
    Connection,
    /// Deadlock or serialization failure: the transaction was rolled back and may be retried.
    Deadlock,
    /// Wrong credentials or no permission.
    Auth,
    /// The database, a table or a function is missing: not loaded, or loaded by something else.
    Missing,
    /// Anything else the database reported.
    Query,
}

impl DbErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DbErrorKind::Connection => "connection",
            DbErrorKind::Deadlock => "deadlock",
            DbErrorKind::Auth => "auth",
            DbErrorKind::Missing => "missing",
            DbErrorKind::Query => "query",
        }
    }
}

#[derive(Debug, Clone)]
pub struct DbError {
    pub kind: DbErrorKind,
    /// The database's message, with enough context to act on; never holds a password.
    pub message: String,
}

impl DbError {
    pub fn new(kind: DbErrorKind, message: impl Into<String>) -> Self {
        DbError { kind, message: message.into() }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

pub type DbResult<T> = Result<T, DbError>;

/// A server's connection limit, to check that a run's sessions fit before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionRoom {
    /// The server's `max_connections` (minus the slots it keeps for superusers).
    pub max: u64,
    /// Connections open now, this process's included.
    pub in_use: u64,
}

/// The disclosure of a `kind` database: its version and settings, without any setting whose
/// name looks like it could hold a secret (a password, a key, a connection string).
pub(crate) fn database_info(
    kind: BackendKind,
    version: String,
    settings: impl IntoIterator<Item = (String, String)>,
) -> DatabaseInfo {
    DatabaseInfo {
        kind: Some(kind.as_str().to_owned()),
        version: Some(version).filter(|v| !v.is_empty()),
        non_default_settings: settings.into_iter().filter(|(name, _)| !secret_looking(name)).collect(),
    }
}

fn secret_looking(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["password", "passwd", "secret", "key", "token", "credential", "conninfo", "passphrase", "auth"]
        .iter()
        .any(|w| name.contains(w))
}

/// The error for a database whose load of `size` was stopped or failed midway: its rows are
/// incomplete, so neither a run nor a check means anything on it.
pub(crate) fn load_unfinished(place: &str, size: &str) -> DbError {
    DbError::new(
        DbErrorKind::Missing,
        format!(
            "the load of {size} into {place} did not finish (it was stopped or failed midway), so its data is \
             incomplete and cannot be checked or run on; load it again"
        ),
    )
}

/// A new marker for a database storbench loads: 128 random bits from the kernel, as 32 hex
/// digits. It is written into the database and into storbench's record of the load (see
/// [`postgres`] and [`mysql`]); a later load or reset goes ahead only where both match.
pub(crate) fn new_marker() -> DbResult<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).map_err(|e| {
        DbError::new(DbErrorKind::Query, format!("reading /dev/urandom for the load's marker: {e}"))
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `text` is a marker as [`new_marker`] writes it.
pub(crate) fn is_marker(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// `url` with the password of its `scheme://user:password@host` part percent-encoded, so a
/// password may hold `@`, `:`, `/`, `;` or `#` written plainly: the password runs from the
/// user's `:` to the URL's last `@`. A `%` that already starts an escape is kept.
pub(crate) fn url_with_encoded_password(url: &str) -> String {
    use std::fmt::Write as _;
    let Some(start) = url.find("://").map(|i| i + 3) else { return url.to_owned() };
    let Some(at) = url.rfind('@').filter(|&at| at > start) else { return url.to_owned() };
    let Some(colon) = url[start..at].find(':').map(|c| start + c) else { return url.to_owned() };
    let password = &url[colon + 1..at];
    let mut out = url[..=colon].to_owned();
    for (i, ch) in password.char_indices() {
        let escape =
            ch == '%' && password.get(i + 1..i + 3).is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        if ch.is_ascii_alphanumeric() || "-._~".contains(ch) || escape {
            out.push(ch);
        } else {
            let mut bytes = [0; 4];
            for b in ch.encode_utf8(&mut bytes).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out.push_str(&url[at..]);
    out
}

/// Samples the database's counters; each call covers the time since the previous one.
pub trait CounterSampler: Send {
    /// Values in the order of `storbench_report::columns::db::ALL`; rates use the real time
    /// elapsed between calls.
    fn sample(&mut self) -> [Option<f64>; 7];
}

/// One database: where it is, how to reach it, who may write it, and what the server says
/// about itself. A workload's own use of it (DS3's load, reset and transactions) is built on
/// top, in the workload.
pub trait Database: Send + Sync {
    fn kind(&self) -> BackendKind;
    /// Where it is, for messages and the summary (a path, or a URL without its password).
    fn describe(&self) -> String;
    /// The database's name as its SQL names it (a server's database; SQLite's `main`).
    fn database_name(&self) -> String;
    /// Makes this process the database's one writer until the guard is dropped: load, reset
    /// and a run hold it, so a second storbench cannot load or reset under them. Fails at
    /// once (never waits) with an error naming the holder when another process has it.
    fn lock_writer(&self) -> DbResult<WriterLock>;
    /// A session that runs any SQL text (see [`sql`]), on the database a run uses.
    fn open_session(&self) -> DbResult<Box<dyn SqlSession>>;
    /// How many connections the server allows and how many are open now; None for an
    /// embedded database, which has no such limit.
    fn connection_room(&self) -> DbResult<Option<ConnectionRoom>>;
    /// What names this database however it is reached: two URLs with the same identity (such
    /// as `postgres://127.0.0.1/x` and `postgres://localhost:5432/x`) are one database. None
    /// where the place itself is the identity (an embedded database's file).
    fn identity(&self) -> DbResult<Option<String>> {
        Ok(None)
    }
    fn counters(&self) -> DbResult<Box<dyn CounterSampler>>;
    /// Version and non-default settings, for the full disclosure (`disclosure.json`); built
    /// with `database_info`, so nothing that looks like a secret is in it.
    fn server_info(&self) -> DbResult<DatabaseInfo>;
    /// Where the data lives on this machine (the database file, or the server's data
    /// directory), so its block device can be found and sampled; None when not local or unknown.
    fn data_location(&self) -> Option<std::path::PathBuf>;
    /// Where the server writes its log on this machine when it has a directory of its own
    /// (PostgreSQL's WAL directory, often a link to another volume; InnoDB's redo log
    /// directory when configured apart), so its device is counted on its own; None when it is
    /// not local, unknown, or simply inside the data directory.
    fn log_location(&self) -> Option<std::path::PathBuf> {
        None
    }
}

/// The directories and files of `db` on this machine that exist, data first then log: the
/// paths whose devices a run on it counts, each on its own.
pub fn local_paths(db: &dyn Database) -> Vec<std::path::PathBuf> {
    [db.data_location(), db.log_location()].into_iter().flatten().filter(|p| p.exists()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disclosure_never_holds_a_setting_that_looks_like_a_secret() {
        let settings = [
            ("shared_buffers", "128MB"),
            ("ssl_key_file", "/etc/ssl/private/x.key"),
            ("primary_conninfo", "host=a password=hunter2"),
            ("wsrep_sst_auth", "root:hunter2"),
        ];
        let info = database_info(
            BackendKind::Postgres,
            "16.2".into(),
            settings.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        );
        assert_eq!(info.kind.as_deref(), Some("postgres"));
        assert_eq!(info.version.as_deref(), Some("16.2"));
        assert_eq!(info.non_default_settings.keys().collect::<Vec<_>>(), vec!["shared_buffers"]);
        assert_eq!(database_info(BackendKind::Sqlite, String::new(), []).version, None);
    }

    #[test]
    fn a_password_may_hold_any_character_written_plainly() {
        assert_eq!(
            url_with_encoded_password("postgres://u:pa@s;s/#@h:5432/db"),
            "postgres://u:pa%40s%3Bs%2F%23@h:5432/db"
        );
        assert_eq!(url_with_encoded_password("postgres://u:a%40b@h/db"), "postgres://u:a%40b@h/db");
        assert_eq!(url_with_encoded_password("postgres://u@h/db"), "postgres://u@h/db");
    }
}
