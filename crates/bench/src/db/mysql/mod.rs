//! The MariaDB/MySQL backend of the OLTP workload.
//!
//! - Where: `mysql://user[:password]@host[:port]/dbname` (or `mariadb://`); the password comes
//!   from the URL or `MYSQL_PWD` and is never printed. Connections go over TCP to the host and
//!   port given (no switch to the local socket), so the URL is what is measured.
//! - Safety: storbench loads into a database that holds nothing, or its own earlier load proven
//!   by its marker, and never drops a database ([`ownership`]).
//! - Schema: DS3's tables, every one on InnoDB. DS3 kept PRODUCTS on MyISAM for its FULLTEXT
//!   indexes; InnoDB has FULLTEXT since MySQL 5.6 / MariaDB 10.0, and keeping PRODUCTS on
//!   InnoDB keeps every table crash-safe and transactional and the buffer-pool counters
//!   complete. The index set and every query's access path are DS3's (natural-language
//!   full-text search, helpfulness read through the clustered index), so an order asks of the
//!   storage what it asks in DS3.
//! - Load: `LOAD DATA LOCAL INFILE` streamed from the generator through the driver's
//!   local-infile handler (no temporary files), with multi-row INSERTs as the fallback when
//!   the server has `local_infile` off; unique and foreign-key checks are off during the load,
//!   secondary and FULLTEXT indexes, foreign keys, the restock trigger and the procedures come
//!   after it.
//! - Transactions ([`session`]): every one of DS3 §3.1's transactions is a stored procedure
//!   that `load` creates (`procs.sql`), called as a prepared `CALL`, one round trip each, as
//!   DS3 runs them server-side. LOGIN, NEW_CUSTOMER and PURCHASE save round trips or must be
//!   one server-side transaction; the single-statement ones (new member, browses, review
//!   searches, reviews, new review, new helpfulness, prices) are procedures too, so the SQL a
//!   run executes lives on the server as DS3's does (on PostgreSQL they are functions).
//! - Reset ([`reset`]): a delta reset that deletes what a run inserted (ids above the loaded
//!   maxima) and restores INVENTORY and MEMBERSHIP from copies kept at load time.

mod counters;
mod fidelity;
mod load;
mod ownership;
mod reset;
mod session;
mod sql;
#[cfg(test)]
mod tests;

use super::{
    BackendKind, CheckReport, ConnectionRoom, CounterSampler, Database, DbError, DbErrorKind, DbResult,
    LoadProgress, LoadReport, LoadedShape, Session, WriterLock,
};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};
use std::time::Duration;

pub use load::LoadMethod;

/// A MariaDB or MySQL database reached by URL.
#[derive(Clone)]
pub struct Mysql {
    host: String,
    port: u16,
    user: String,
    pass: Option<String>,
    db: String,
    method: LoadMethod,
    /// Whether the URL gave the password (which then wins over a password file).
    password_in_url: bool,
}

impl std::fmt::Debug for Mysql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The table that marks a database as storbench's, with what was loaded into it.
pub(crate) const META_TABLE: &str = "storbench_meta";

impl Mysql {
    /// Parses `mysql://user[:password]@host[:port]/dbname` (`mariadb://` too). Nothing is
    /// contacted yet.
    pub fn new(url: &str) -> DbResult<Mysql> {
        let bad = |why: &str| {
            DbError::new(
                DbErrorKind::Connection,
                format!(
                    "'{}' is not a MariaDB/MySQL URL ({why}); write mysql://user[:password]@host[:port]/dbname",
                    crate::secret::redact(url)
                ),
            )
        };
        let rest = url
            .strip_prefix("mysql://")
            .or_else(|| url.strip_prefix("mariadb://"))
            .ok_or_else(|| bad("it must start with mysql:// or mariadb://"))?;
        let (auth, rest) = rest.rsplit_once('@').ok_or_else(|| bad("no user@ before the host"))?;
        let (user, pass) = match auth.split_once(':') {
            Some((u, p)) => (u, Some(percent_decode(p))),
            None => (auth, None),
        };
        let (hostport, db) = rest.split_once('/').ok_or_else(|| bad("no /dbname after the host"))?;
        let db = percent_decode(db.split('?').next().unwrap_or_default());
        let (host, port) = split_host_port(hostport).ok_or_else(|| bad("the port is not a number"))?;
        if user.is_empty() || host.is_empty() {
            return Err(bad("the user or the host is empty"));
        }
        if db.is_empty()
            || !db.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
            || db.len() > 64
        {
            return Err(bad("the database name must be 1-64 letters, digits, _ or $"));
        }
        let password_in_url = pass.is_some();
        let pass = pass.or_else(|| std::env::var("MYSQL_PWD").ok());
        if let Some(p) = &pass {
            crate::secret::remember(p);
        }
        Ok(Mysql {
            host: host.to_owned(),
            port,
            user: percent_decode(user),
            pass,
            db,
            method: LoadMethod::Auto,
            password_in_url,
        })
    }

    /// Uses `password` unless the URL has one (a password file's, read by the caller).
    pub fn with_password(mut self, password: &str) -> Mysql {
        crate::secret::remember(password);
        if !self.password_in_url {
            self.pass = Some(password.to_owned());
        }
        self
    }

    /// `mysql://user@host:port`, for messages.
    fn server(&self) -> String {
        format!("mysql://{}@{}:{}", self.user, self.host, self.port)
    }

    /// `database 'name' at mysql://user@host:port`, for messages.
    fn place(&self) -> String {
        format!("database '{}' at {}", self.db, self.server())
    }

    /// How `load` puts rows in (default `Auto`).
    pub fn with_load_method(mut self, method: LoadMethod) -> Mysql {
        self.method = method;
        self
    }

    /// The database name.
    pub fn db_name(&self) -> &str {
        &self.db
    }

    fn opts(&self, with_db: bool) -> OptsBuilder {
        OptsBuilder::new()
            .ip_or_hostname(Some(self.host.clone()))
            .tcp_port(self.port)
            .user(Some(self.user.clone()))
            .pass(self.pass.clone())
            .db_name(if with_db { Some(self.db.clone()) } else { None })
            .prefer_socket(false)
            .tcp_nodelay(true)
            .tcp_connect_timeout(Some(Duration::from_secs(10)))
            .stmt_cache_size(64)
    }

    /// A connection to the database (`with_db`) or to the server only.
    pub(crate) fn conn(&self, with_db: bool) -> DbResult<Conn> {
        Conn::new(self.opts(with_db)).map_err(|e| self.connect_error(e))
    }

    /// A connection error with what to do about it.
    fn connect_error(&self, e: mysql::Error) -> DbError {
        let too_many = matches!(&e, mysql::Error::MySqlError(m) if m.code == 1040);
        let err = DbError::from(e);
        let at = self.describe();
        let fix = match err.kind {
            DbErrorKind::Auth => format!(
                "check the user and password (in the URL or MYSQL_PWD) and that '{}' may use database '{}'",
                self.user, self.db
            ),
            DbErrorKind::Missing => format!(
                "database '{}' does not exist: run the OLTP load first (it creates the database) or fix the name in the URL",
                self.db
            ),
            _ if too_many => {
                "every one of the server's max_connections is taken; open fewer sessions or raise \
                 max_connections on the server"
                    .to_owned()
            }
            DbErrorKind::Connection => "check that the server runs and the URL's host and port".to_owned(),
            _ => "check the server's error log".to_owned(),
        };
        DbError::new(err.kind, format!("cannot connect to {at}: {}; {fix}", err.message))
    }

    /// What storbench loaded here, or Missing when nothing (or not all of it) is.
    pub(crate) fn meta(&self, conn: &mut Conn) -> DbResult<load::Meta> {
        if let Some(size) = load::unfinished_load(conn)? {
            return Err(crate::db::load_unfinished(
                &format!("database '{}' at {}", self.db, self.server()),
                &size,
            ));
        }
        load::read_meta(conn)?.ok_or_else(|| {
            DbError::new(
                DbErrorKind::Missing,
                format!("{} holds no storbench OLTP data set; run the OLTP load first", self.describe()),
            )
        })
    }
}

fn split_host_port(s: &str) -> Option<(&str, u16)> {
    let (host, port) = if let Some(v6) = s.strip_prefix('[') {
        let (h, rest) = v6.split_once(']')?;
        (h, rest.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => 3306,
    };
    Some((host, port))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl From<mysql::Error> for DbError {
    fn from(e: mysql::Error) -> Self {
        use mysql::Error as E;
        let kind = match &e {
            E::MySqlError(m) => match m.code {
                1213 | 1205 => DbErrorKind::Deadlock,
                1045 | 1044 | 1142 | 1227 | 1370 => DbErrorKind::Auth,
                1049 | 1146 | 1305 => DbErrorKind::Missing,
                2002 | 2003 | 2006 | 2013 => DbErrorKind::Connection,
                _ => DbErrorKind::Query,
            },
            E::IoError(_) | E::CodecError(_) => DbErrorKind::Connection,
            E::DriverError(
                mysql::DriverError::ConnectTimeout
                | mysql::DriverError::CouldNotConnect(_)
                | mysql::DriverError::PacketOutOfSync
                | mysql::DriverError::UnexpectedPacket
                | mysql::DriverError::Timeout,
            ) => DbErrorKind::Connection,
            _ => DbErrorKind::Query,
        };
        DbError::new(kind, e.to_string())
    }
}

/// Adds what was being done to a driver error.
pub(crate) trait Ctx<T> {
    fn ctx(self, what: &str) -> DbResult<T>;
}

impl<T> Ctx<T> for Result<T, mysql::Error> {
    fn ctx(self, what: &str) -> DbResult<T> {
        self.map_err(|e| {
            let err = DbError::from(e);
            DbError::new(err.kind, format!("{what}: {}", err.message))
        })
    }
}

impl Database for Mysql {
    fn kind(&self) -> BackendKind {
        BackendKind::Mysql
    }

    fn describe(&self) -> String {
        format!("mysql://{}@{}:{}/{}", self.user, self.host, self.port, self.db)
    }

    fn lock_writer(&self) -> DbResult<WriterLock> {
        ownership::lock_writer(self)
    }

    fn load(
        &self,
        data: &DataSet,
        progress: &mut dyn FnMut(LoadProgress),
        stop: &StopFlag,
    ) -> DbResult<LoadReport> {
        load::load(self, data, progress, stop, self.method)
    }

    fn shape(&self) -> DbResult<LoadedShape> {
        let mut conn = self.conn(true)?;
        let m = self.meta(&mut conn)?;
        Ok(LoadedShape { customers: m.customers, products: m.products, ds3: !m.ds2 })
    }

    fn reset(&self) -> DbResult<f64> {
        reset::reset(self)
    }

    fn connect(&self) -> DbResult<Box<dyn Session>> {
        Ok(Box::new(session::MysqlSession::new(self.conn(true)?)))
    }

    fn open_session(&self) -> DbResult<Box<dyn super::sql::SqlSession>> {
        Ok(Box::new(sql::MysqlSession::new(self.conn(true)?)))
    }

    fn connection_room(&self) -> DbResult<Option<ConnectionRoom>> {
        ownership::connection_room(self).map(Some)
    }

    fn identity(&self) -> DbResult<Option<String>> {
        ownership::identity(self).map(Some)
    }

    fn check(&self) -> DbResult<CheckReport> {
        counters::check(self)
    }

    fn counters(&self) -> DbResult<Box<dyn CounterSampler>> {
        Ok(Box::new(counters::StatusSampler::new(self.conn(false)?)?))
    }

    fn server_info(&self) -> DbResult<storbench_report::DatabaseInfo> {
        counters::server_info(&mut self.conn(false)?)
    }

    /// The server's data directory, if the server runs on this machine (the directory exists).
    fn data_location(&self) -> Option<std::path::PathBuf> {
        use mysql::prelude::Queryable;
        let dir: String = self.conn(false).ok()?.query_first("SELECT @@datadir").ok()??;
        Some(std::path::PathBuf::from(dir)).filter(|p| p.exists())
    }
}

/// Runs one statement that returns nothing, naming it in the error.
pub(crate) fn run(conn: &mut Conn, sql: &str) -> DbResult<()> {
    let head: String = sql.trim_start().chars().take(60).collect();
    conn.query_drop(sql).ctx(&head)
}
