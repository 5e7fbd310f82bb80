//! The password file PostgreSQL's own clients read: `PGPASSFILE`, else `~/.pgpass`, lines of
//! `hostname:port:database:username:password` where `*` matches anything, `\` escapes `:` and
//! `\`, `#` starts a comment, and the first matching line wins; a Unix-socket connection
//! matches `localhost`. As libpq does, a file that others may read (mode beyond 0600) or that
//! is not a regular file is not used; its matching line is returned as a note so that a
//! refused login can say why the password was not sent.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// The largest password file read; a bigger one is not a password file.
const MAX_BYTES: u64 = 1 << 20;

/// The password of the first line matching this connection: `Ok(None)` when there is no file
/// or no such line, `Err(note)` when the line exists but the file may not be used.
pub(super) fn lookup(host: &str, port: u16, dbname: &str, user: &str) -> Result<Option<String>, String> {
    let Some(path) = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))
    else {
        return Ok(None);
    };
    let Ok(meta) = std::fs::metadata(&path) else { return Ok(None) };
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let Some(password) = matching_password(&text, [host, &port.to_string(), dbname, user]) else {
        return Ok(None);
    };
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "the password file {} has a line for this server but others may read it, so it was not used \
             (psql ignores it too); run chmod 600 {}",
            path.display(),
            path.display()
        ));
    }
    crate::secret::remember(&password);
    Ok(Some(password))
}

/// The password of the first non-comment line whose four first fields match `wanted`.
fn matching_password(text: &str, wanted: [&str; 4]) -> Option<String> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|line| {
        let mut fields = fields(line);
        let matches = fields.len() >= 5 && wanted.iter().zip(&fields).all(|(w, f)| f == "*" || f == w);
        matches.then(|| fields.swap_remove(4))
    })
}

/// A line's fields, split at unescaped `:`, with `\` escapes removed.
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ':' => out.push(String::new()),
            '\\' => out.last_mut().unwrap().extend(chars.next()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::matching_password;

    #[test]
    fn a_line_splits_at_unescaped_colons_and_unescapes_the_password() {
        assert_eq!(
            super::fields(r"db.host:*:ds3:bob:pa\:ss\\w@rd"),
            ["db.host", "*", "ds3", "bob", r"pa:ss\w@rd"]
        );
    }

    #[test]
    fn the_first_matching_line_wins_and_stars_match_anything() {
        let text = "# comment\nother:5432:ds3:bob:no\n*:5432:ds3:bob:first\n*:*:*:*:second\n";
        assert_eq!(matching_password(text, ["h", "5432", "ds3", "bob"]).as_deref(), Some("first"));
        assert_eq!(matching_password(text, ["h", "5433", "ds3", "bob"]).as_deref(), Some("second"));
        assert_eq!(matching_password("h:5432:ds3:bob\n", ["h", "5432", "ds3", "bob"]), None);
    }
}
