//! The MariaDB/MySQL backend: connections, sessions, the server's counters and facts, and
//! which databases storbench may write.
//!
//! - Where: `mysql://user[:password]@host[:port]/dbname` (or `mariadb://`); the password comes
//!   from the URL or `MYSQL_PWD` and is never printed. Connections go over TCP to the host and
//!   port given (no switch to the local socket), so the URL is what is measured.
//! - Safety: storbench loads into a database that holds nothing, or its own earlier load proven
//!   by its marker, and never drops a database ([`ownership`]).
//! - [`sql`]: a session running any SQL text.
//!
//! DS3 on this backend (schema, load, reset, stored procedures) is in
//! `workload::oltp::ds3::mysql`.

mod counters;
pub(crate) use counters::status_query;
pub(crate) mod ownership;
mod sql;
#[cfg(test)]
mod tests;

pub use sql::MysqlSession;

use super::{
    BackendKind, ConnectionRoom, CounterSampler, Database, DbError, DbErrorKind, DbResult, SqlSession,
    WriterLock,
};
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};
use std::time::Duration;

/// How `load` puts rows into the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMethod {
    /// LOAD DATA LOCAL INFILE where the server allows it (`local_infile=ON`), else INSERT.
    Auto,
    /// LOAD DATA LOCAL INFILE fed from the generator (fails where `local_infile` is off).
    Infile,
    /// Multi-row INSERTs of about 1 MiB.
    Insert,
}

/// A MariaDB or MySQL database reached by URL.
#[derive(Clone)]
pub struct Mysql {
    host: String,
    port: u16,
    user: String,
    pass: Option<String>,
    db: String,
    pub(crate) method: LoadMethod,
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
    pub(crate) fn server(&self) -> String {
        format!("mysql://{}@{}:{}", self.user, self.host, self.port)
    }

    /// `database 'name' at mysql://user@host:port`, for messages.
    pub(crate) fn place(&self) -> String {
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

    /// A session on the database.
    pub fn session(&self) -> DbResult<MysqlSession> {
        Ok(MysqlSession::new(self.conn(true)?))
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

    fn database_name(&self) -> String {
        self.db.clone()
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

    /// `innodb_log_group_home_dir` where it is set apart from the data directory (a relative
    /// one is under it); unset or `./`, the redo log is in the data directory.
    fn log_location(&self) -> Option<std::path::PathBuf> {
        use mysql::prelude::Queryable;
        let home: Option<String> =
            self.conn(false).ok()?.query_first("SELECT @@innodb_log_group_home_dir").ok()??;
        let home = home.filter(|h| !h.is_empty() && h.trim_end_matches('/') != ".")?;
        Some(self.data_location()?.join(home)).filter(|p| p.exists())
    }
}

/// Runs one statement that returns nothing, naming it in the error.
pub(crate) fn run(conn: &mut Conn, sql: &str) -> DbResult<()> {
    let head: String = sql.trim_start().chars().take(60).collect();
    conn.query_drop(sql).ctx(&head)
}
