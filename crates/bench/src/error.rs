//! The library's one error type. Failures of single I/Os during a run are not errors: they are
//! counted in the results.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{op} {path}: {source}")]
    Io { op: &'static str, path: PathBuf, source: std::io::Error },
    #[error("{what}: {source}")]
    Setup { what: &'static str, source: std::io::Error },
    // Transparent: the refusal's message once, not again as its own cause ("X: X").
    #[error(transparent)]
    Refused(#[from] crate::target::Refusal),
    #[error("invalid job: {0}")]
    InvalidJob(String),
    /// A refusal or a failure said whole, naming what was wrong and the fix (`refuse!`).
    #[error("{0}")]
    Said(String),
}

impl From<String> for Error {
    fn from(said: String) -> Error {
        Error::Said(said)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// A failure's cause said after what was being done, as one [`Error::Said`] (`reading the
/// writer's journal: No such file or directory`).
pub(crate) trait Doing<T> {
    fn doing(self, what: &str) -> Result<T>;
}

impl<T, E: std::fmt::Display> Doing<T> for std::result::Result<T, E> {
    fn doing(self, what: &str) -> Result<T> {
        self.map_err(|e| Error::Said(format!("{what}: {e}")))
    }
}
