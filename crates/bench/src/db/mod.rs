//! Database backends for the OLTP workload: embedded SQLite, PostgreSQL and MariaDB/MySQL.
//!
//! A backend does four things the workload needs, each behind one trait method: load a
//! generated data set (schema, bulk load, indexes, full-text search, restock trigger, sequence
//! positions, statistics), put the database back to the state right after the load (`reset`),
//! open sessions that run DS3's transactions (one connection per driver thread), and report
//! its own counters every second. Timing is not done here: the driver times each call in one
//! place, so every backend is measured the same way.

pub mod mysql;
pub mod ownership;
pub mod postgres;
pub mod sql;
pub mod sqlite;
/// Test support for this crate's and the CLI's tests: where the test servers are.
#[doc(hidden)]
pub mod testing;
pub mod writer_lock;

use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use crate::workload::oltp::schema::Table;
use std::fmt;
use storbench_report::DatabaseInfo;
pub use writer_lock::WriterLock;

/// Which database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Sqlite,
    Postgres,
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

/// LOGIN's answer: the customer (0 when user name and password matched nobody) and how many
/// history rows (title, actor, related title) came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Login {
    pub customer_id: i64,
    pub history_rows: u32,
}

/// NEW_CUSTOMER's fields (DS3 §3.2 step 1). Region is 1 for "US", else 2.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewCustomer {
    pub firstname: String,
    pub lastname: String,
    pub address1: String,
    pub address2: String,
    pub city: String,
    pub state: String,
    pub zip: u32,
    pub country: String,
    pub region: u8,
    pub email: String,
    pub phone: String,
    pub creditcardtype: u8,
    pub creditcard: String,
    /// `YYYY/MM`.
    pub creditcardexpiration: String,
    pub username: String,
    pub password: String,
    pub age: u8,
    pub income: u32,
    /// `M` or `F`.
    pub gender: char,
}

/// BROWSE_BY_*: products in a category that are on special, or whose actor or title matches
/// both words (full-text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Browse<'a> {
    Category(u8),
    /// `FIRST LAST`.
    Actor(&'a str),
    /// `WORD WORD`.
    Title(&'a str),
}

/// GET_PROD_REVIEWS_BY_ACTOR / _BY_TITLE: reviews of products whose actor or title contains
/// one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewSearch<'a> {
    Actor(&'a str),
    Title(&'a str),
}

/// GET_PROD_REVIEWS variants: most helpful first, only one star rating, or newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewOrder {
    Helpful,
    Stars(u8),
    Date,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewReview {
    pub prod_id: i64,
    pub stars: u8,
    pub customer_id: i64,
    pub summary: String,
    pub text: String,
}

/// PURCHASE: one transaction that writes the order, its lines and the customer's history,
/// and takes the quantities from stock. At most 10 items.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Purchase {
    pub customer_id: i64,
    /// (product, quantity).
    pub items: Vec<(i64, u16)>,
    pub net_cents: i64,
    pub tax_cents: i64,
    pub total_cents: i64,
}

/// One connection running DS3's transactions. Each call is one round trip (or one stored
/// procedure) as DS3 makes it; the driver times it. A call that fails leaves the session
/// usable unless the error kind is `Connection`.
pub trait Session: Send {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login>;
    /// The new customer's id, or None when the user name is taken.
    fn new_customer(&mut self, c: &NewCustomer) -> DbResult<Option<i64>>;
    /// False when the customer is already a member.
    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool>;
    /// Rows returned (at most `batch`).
    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32>;
    /// Rows returned (at most `batch`); `depth` caps the inner product-review join (DS3.5's
    /// search_depth).
    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, depth: u32) -> DbResult<u32>;
    /// Rows returned (at most `batch`).
    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32>;
    /// The new review's id.
    fn new_review(&mut self, r: &NewReview) -> DbResult<i64>;
    /// The new rating's id.
    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64>;
    /// Prices in cents of the given products, into `out` as (product, cents); the driver sums
    /// the order from them outside the timed section, as DS3 does.
    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()>;
    /// The new order's id, or None when an item was out of stock and the whole order was
    /// rolled back. The inventory rows are locked while read and updated, so concurrent
    /// purchases never lose a sale.
    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>>;
    /// Whether a sale that leaves fewer than 3 in stock restocks the product (the default) or
    /// sells it out, as DS3's MySQL edition does (its restock trigger is a stub), for this
    /// session's purchases. A backend without the choice answers with an error of kind `Query`.
    fn set_restock(&mut self, on: bool) -> DbResult<()>;
}

/// Loading progress: rows written so far of one table, and of the whole set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadProgress {
    pub table: Table,
    /// `"load"`, `"index"`, `"analyze"`, ...: the step under way.
    pub step: &'static str,
    pub rows_done: u64,
    pub rows_total: u64,
}

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    /// Rows per table, as loaded.
    pub rows: Vec<(Table, u64)>,
    pub load_s: f64,
    pub index_s: f64,
    /// Bytes the database takes on disk after the load, where the backend can tell.
    pub size_bytes: Option<u64>,
}

/// What the loaded database holds: enough to check that `--db-size` matches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadedShape {
    /// Customers and products as loaded (before any run added customers).
    pub customers: u64,
    pub products: u64,
    /// Whether the DS3 tables (membership, reviews) are there; false for a `--ds2` load.
    pub ds3: bool,
}

/// `oltp check`: every product's SALES and stock against the order lines written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckReport {
    pub products_checked: u64,
    /// Products whose inventory SALES differs from the sum of their order-line quantities:
    /// (product, sales in inventory, sum of order lines); at most 100.
    pub mismatches: Vec<(i64, i64, i64)>,
    pub mismatch_count: u64,
    /// Orders without lines or lines without an order.
    pub orphans: u64,
}

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

/// One database: where it is and how to load, reset, check and talk to it.
pub trait Database: Send + Sync {
    fn kind(&self) -> BackendKind;
    /// Where it is, for messages and the summary (a path, or a URL without its password).
    fn describe(&self) -> String;
    /// Makes this process the database's one writer until the guard is dropped: load, reset
    /// and a run hold it, so a second storbench cannot load or reset under them. Fails at
    /// once (never waits) with an error naming the holder when another process has it.
    fn lock_writer(&self) -> DbResult<WriterLock>;
    /// Loads `data` from scratch (dropping what storbench loaded there before), leaving the
    /// database pristine: `reset` returns to exactly this state. The caller holds
    /// `lock_writer`. A database holding anything storbench did not create is refused before
    /// the first write (see [`ownership`]).
    fn load(
        &self,
        data: &DataSet,
        progress: &mut dyn FnMut(LoadProgress),
        stop: &StopFlag,
    ) -> DbResult<LoadReport>;
    /// What is loaded, or an error of kind `Missing` when nothing is.
    fn shape(&self) -> DbResult<LoadedShape>;
    /// Puts the database back to the state right after the load. Returns the seconds it took.
    /// The caller holds `lock_writer`.
    fn reset(&self) -> DbResult<f64>;
    fn connect(&self) -> DbResult<Box<dyn Session>>;
    /// A session that runs any SQL text (see [`sql`]), on the database a run uses.
    fn open_session(&self) -> DbResult<Box<dyn sql::SqlSession>>;
    /// How many connections the server allows and how many are open now; None for an
    /// embedded database, which has no such limit.
    fn connection_room(&self) -> DbResult<Option<ConnectionRoom>>;
    /// What names this database however it is reached: two URLs with the same identity (such
    /// as `postgres://127.0.0.1/x` and `postgres://localhost:5432/x`) are one database. None
    /// where the place itself is the identity (an embedded database's file).
    fn identity(&self) -> DbResult<Option<String>> {
        Ok(None)
    }
    fn check(&self) -> DbResult<CheckReport>;
    fn counters(&self) -> DbResult<Box<dyn CounterSampler>>;
    /// Version and non-default settings, for the full disclosure (`disclosure.json`); built
    /// with `database_info`, so nothing that looks like a secret is in it.
    fn server_info(&self) -> DbResult<DatabaseInfo>;
    /// Where the data lives on this machine (the database file, or the server's data
    /// directory), so its block device can be found and sampled; None when not local or unknown.
    fn data_location(&self) -> Option<std::path::PathBuf>;
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
