//! Which database a workload talks to, as a user names it: the backend, a SQLite file, or
//! server URLs, and where a server's password may come from. A plan's keys and the flags of
//! `oltp` and `replay` alike (the command line converts its flags into this type).

use super::BackendKind;
use serde::Deserialize;
use std::path::PathBuf;

/// The database keys of a workload (their help is `storbench oltp run --help`'s).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DbOptions {
    /// sqlite, postgres or mysql; else taken from the URL's scheme, else sqlite.
    pub backend: Option<BackendKind>,
    /// A SQLite database file.
    pub path: Option<PathBuf>,
    /// Server URLs, one or more.
    pub url: Vec<String>,
    /// A file holding the server's password on its first line.
    pub password_file: Option<PathBuf>,
}
