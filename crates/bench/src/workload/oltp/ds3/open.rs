//! The DS3 databases a user names (`DbOptions`): one SQLite file, or a database server for each
//! URL, opened with the password from a file where one is given. Nothing is connected to
//! here; the first session does that.

use super::Ds3Database;
use crate::db::BackendKind;
use crate::db::options::DbOptions;
use crate::db::sqlite::Sqlite;
use std::path::PathBuf;
use std::sync::Arc;

type Result<T> = std::result::Result<T, String>;

/// The databases the options name: one SQLite file, or a server for each of `urls` (the
/// caller's share of [`urls`] of the options' `url`).
pub fn open(a: &DbOptions, urls: &[String]) -> Result<Vec<Arc<dyn Ds3Database>>> {
    let backend = match (a.backend, urls.first()) {
        (Some(b), _) => b,
        (None, Some(url)) => backend_of_url(url)?,
        (None, None) => BackendKind::Sqlite,
    };
    match backend {
        BackendKind::Sqlite => {
            if !urls.is_empty() {
                return Err(
                    "--url is for database servers; SQLite takes --path FILE (or pick --backend postgres or mysql)"
                        .into(),
                );
            }
            let path =
                a.path.clone().unwrap_or_else(|| PathBuf::from(crate::target::own_name("storbench-ds3.db")));
            Ok(vec![Arc::new(Sqlite::new(path))])
        }
        server => {
            if a.path.is_some() {
                return Err(format!("--path is for SQLite; a {} server takes --url", server.as_str()));
            }
            if urls.is_empty() {
                return Err(format!(
                    "--backend {} needs --url, such as {}",
                    server.as_str(),
                    match server {
                        BackendKind::Postgres => "postgres://postgres@127.0.0.1:5432/ds3",
                        _ => "mysql://root@127.0.0.1:3306/ds3",
                    }
                ));
            }
            let password = a.password_file.as_deref().map(read_password_file).transpose()?;
            urls.iter().map(|u| open_server(server, u, password.as_deref())).collect()
        }
    }
}

/// The URLs of the --url values: a value splits at a ';' only where another `scheme://`
/// follows, so a ';' inside a password is kept.
pub fn urls(values: &[String]) -> Vec<String> {
    let mut urls = Vec::new();
    for value in values {
        let mut rest = value.as_str();
        while let Some(cut) = next_target(rest) {
            urls.push(rest[..cut].to_owned());
            rest = &rest[cut + 1..];
        }
        urls.push(rest.to_owned());
    }
    urls.retain(|u| !u.trim().is_empty());
    urls
}

/// Where in `text` a ';' is followed by a URL scheme.
fn next_target(text: &str) -> Option<usize> {
    text.match_indices(';').map(|(i, _)| i).find(|&i| {
        let after = text[i + 1..].trim_start();
        after.split_once("://").is_some_and(|(scheme, _)| {
            !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        })
    })
}

/// The password on the first line of `path`; the file must be a small regular file.
pub fn read_password_file(path: &std::path::Path) -> Result<String> {
    const MAX: u64 = 4096;
    let text = crate::input::read_text(path, MAX)
        .map_err(|e| format!("--password-file: {e}; write the password alone on its first line"))?;
    let password = text.lines().next().unwrap_or_default().trim_end().to_owned();
    crate::secret::remember(&password);
    if password.is_empty() {
        return Err(format!(
            "--password-file {}: the first line is empty; write the password there",
            path.display()
        ));
    }
    Ok(password)
}

pub fn backend_of_url(url: &str) -> Result<BackendKind> {
    match url.split_once("://").map(|(scheme, _)| scheme) {
        Some("postgres" | "postgresql") => Ok(BackendKind::Postgres),
        Some("mysql" | "mariadb") => Ok(BackendKind::Mysql),
        _ => Err(format!(
            "--url {}: not a database URL; write postgres://user@host:port/db or mysql://user@host:port/db",
            crate::secret::redact(url)
        )),
    }
}

fn open_server(kind: BackendKind, url: &str, password: Option<&str>) -> Result<Arc<dyn Ds3Database>> {
    use crate::db::{mysql::Mysql, postgres::Postgres};
    let opened = |e: crate::db::DbError| e.to_string();
    crate::secret::remember_in(url);
    let db: Arc<dyn Ds3Database> = match (kind, password) {
        (BackendKind::Postgres, None) => Arc::new(Postgres::new(url).map_err(opened)?),
        (BackendKind::Postgres, Some(p)) => Arc::new(Postgres::new(url).map_err(opened)?.with_password(p)),
        (_, None) => Arc::new(Mysql::new(url).map_err(opened)?),
        (_, Some(p)) => Arc::new(Mysql::new(url).map_err(opened)?.with_password(p)),
    };
    Ok(db)
}
