//! What in a database is storbench's, and what storbench must leave alone.
//!
//! The rule every backend follows: a database is loaded only when it holds no objects of any
//! kind, or carries storbench's own marker from an earlier load; then everything in it must be
//! one of the objects storbench's SQL creates. Anything else (a user's function, type, view,
//! procedure, extension, schema, trigger, event, ...) stops the load or reset before its first
//! write, with an error naming what is there. storbench's objects are named by its own SQL
//! files ([`created_names`]), so what it drops is its own list, never "everything there".

use super::{DbError, DbErrorKind};

/// One object found in a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbObject {
    /// `table`, `view`, `function`, `procedure`, `type`, `extension`, `schema`, `trigger`, ...
    pub kind: String,
    /// The name storbench's SQL would give it; empty when it cannot be storbench's (it lives
    /// in another schema, for instance).
    pub name: String,
    /// How a message names it: `public.ds3_login(text, text)`, `hstore`.
    pub shown: String,
}

/// The objects `sql` creates, as (kind, name): `CREATE [UNIQUE|VIRTUAL|OR REPLACE] TABLE|INDEX|
/// FUNCTION|PROCEDURE|TRIGGER|VIEW|SEQUENCE name` and `ADD CONSTRAINT name`. Kinds are lower
/// case; a virtual table is a table.
pub(crate) fn created_names(sql: &str) -> Vec<(&'static str, String)> {
    const KINDS: [&str; 7] = ["table", "index", "function", "procedure", "trigger", "view", "sequence"];
    const SKIPPED: [&str; 4] = ["or", "replace", "unique", "virtual"];
    let words: Vec<String> = sql
        .lines()
        .map(|l| l.split("--").next().unwrap_or_default())
        .flat_map(|l| l.split(|c: char| c.is_whitespace() || c == '(' || c == ';'))
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_matches(|c| c == '`' || c == '"').to_ascii_lowercase())
        .collect();
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if word == "constraint" && i > 0 && words[i - 1] == "add" {
            found.extend(words.get(i + 1).map(|n| ("constraint", n.clone())));
            continue;
        }
        if word != "create" {
            continue;
        }
        let mut rest = words[i + 1..].iter().skip_while(|w| SKIPPED.contains(&w.as_str()));
        let Some(kind) = rest.next().and_then(|k| KINDS.iter().find(|&&c| c == k.as_str())) else {
            continue;
        };
        if let Some(name) = rest.find(|w| !["if", "not", "exists"].contains(&w.as_str())) {
            found.push((*kind, name.clone()));
        }
    }
    found
}

/// The objects in `found` storbench did not create: all of them when the database carries
/// no storbench marker, else those that are not one of `ours` (kind, name).
pub(crate) fn not_ours(found: Vec<DbObject>, marked: bool, ours: &[(&str, String)]) -> Vec<DbObject> {
    if !marked {
        return found;
    }
    found
        .into_iter()
        .filter(|o| {
            o.name.is_empty() || !ours.iter().any(|(k, n)| *k == o.kind && n.eq_ignore_ascii_case(&o.name))
        })
        .collect()
}

/// Where else a server's data set can go.
pub(crate) const SERVER_ELSEWHERE: &str = "another database name in the URL (storbench creates the database)";

/// How many objects a message names before "and N more".
const NAMED: usize = 10;

/// The error that refuses `place` (such as "database 'test'") because it holds `objects`;
/// `elsewhere` says where else to load ("another database name in the URL").
pub(crate) fn refusal(place: &str, objects: &[DbObject], elsewhere: &str) -> DbError {
    let mut list: Vec<String> =
        objects.iter().take(NAMED).map(|o| format!("{} {}", o.kind, o.shown)).collect();
    if objects.len() > NAMED {
        list.push(format!("and {} more", objects.len() - NAMED));
    }
    let count = match objects.len() {
        1 => "1 object".to_owned(),
        n => format!("{n} objects"),
    };
    DbError::new(
        DbErrorKind::Query,
        format!(
            "{place} holds {count} storbench did not create: {}; storbench never drops or replaces what \
             it did not create: use {elsewhere}, or drop them yourself",
            list.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(kind: &str, name: &str) -> DbObject {
        DbObject { kind: kind.into(), name: name.into(), shown: format!("public.{name}") }
    }

    #[test]
    fn the_names_storbench_creates_come_from_its_sql() {
        let sql = "-- CREATE TABLE commented\nCREATE TABLE a (x int);\nCREATE UNIQUE INDEX ix_a ON a (x);\n\
                   CREATE OR REPLACE FUNCTION f(p int) RETURNS int;\nCREATE VIRTUAL TABLE v USING fts5(t);\n\
                   ALTER TABLE a ADD CONSTRAINT fk_a FOREIGN KEY (x);\nCREATE TRIGGER `restock` BEFORE UPDATE";
        let names = created_names(sql);
        let want = [
            ("table", "a"),
            ("index", "ix_a"),
            ("function", "f"),
            ("table", "v"),
            ("constraint", "fk_a"),
            ("trigger", "restock"),
        ];
        assert_eq!(names, want.map(|(k, n)| (k, n.to_owned())));
    }

    #[test]
    fn an_unmarked_database_owns_nothing_and_a_marked_one_only_its_names() {
        let ours = vec![("function", "sb_login".to_owned())];
        let found = vec![obj("function", "sb_login"), obj("type", "mood"), obj("table", "sb_login")];
        assert_eq!(not_ours(found.clone(), false, &ours).len(), 3);
        let theirs = not_ours(found, true, &ours);
        assert_eq!(theirs, vec![obj("type", "mood"), obj("table", "sb_login")]);
        let message = refusal("database 'test'", &theirs, "another").message;
        assert!(
            message.contains("holds 2 objects storbench did not create: type public.mood, table"),
            "{message}"
        );
    }
}
