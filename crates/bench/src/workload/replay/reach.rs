//! What a replay sends of a log's SQL: only what acts inside the one database it was given.
//! Every statement is classified before it is sent, by allow-list: a statement whose first
//! words are known to act inside one database (queries, changes of rows, transactions, the
//! tables, views, indexes and functions of that database, session settings) goes; anything
//! else is withheld under its kind ("DROP DATABASE", "COPY TO PROGRAM", "ALTER SYSTEM"),
//! counted, and sent only where the user allowed that kind (`--allow-statement KIND`) or
//! every kind (`--allow-all-statements`).
//!
//! Inside an allowed statement it also looks for what reaches beyond: the server's and host's
//! files and programs (`pg_read_file`, `lo_export`, `SELECT ... INTO OUTFILE`,
//! `load_extension`), server administration (`pg_terminate_backend`), other servers
//! (`dblink`) and, in MySQL, a table or routine of another database (`otherdb.orders`). A
//! request of several statements is withheld when any of them is. The text is read by a small
//! lexer that knows each dialect's quotes and comments (MySQL's `/*! ... */` is code), in one
//! pass: linear in the statement, whatever it holds.
//!
//! Statements built while the server runs (a function's dynamic SQL) cannot be seen in a log:
//! replaying as a user without superuser rights keeps those inside too.

use std::collections::BTreeSet;

/// The SQL the replayed database speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dialect {
    #[default]
    Postgres,
    Mysql,
    Sqlite,
}

/// Which statements a replay sends: the database it was given, and the kinds the user allowed
/// beyond it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Statements {
    pub dialect: Dialect,
    /// The database the replay was given (a MySQL statement naming another is withheld).
    pub database: String,
    /// Kinds sent although they reach beyond it, as the user named them (any case).
    pub allowed: BTreeSet<String>,
    /// Every statement is sent (`--allow-all-statements`).
    pub all: bool,
}

impl Dialect {
    /// The dialect of a database of `kind`.
    pub fn of(kind: crate::db::BackendKind) -> Dialect {
        match kind {
            crate::db::BackendKind::Postgres => Dialect::Postgres,
            crate::db::BackendKind::Mysql => Dialect::Mysql,
            crate::db::BackendKind::Sqlite => Dialect::Sqlite,
        }
    }
}

impl Statements {
    /// The kinds beyond the database the user allowed, as the summary says them: `all`, or
    /// each kind as given.
    pub fn allowed_said(&self) -> Vec<String> {
        if self.all { vec!["all".into()] } else { self.allowed.iter().cloned().collect() }
    }

    /// The kind that keeps `sql` from being sent; None when it is sent.
    pub fn withheld(&self, sql: &str) -> Option<String> {
        if self.all {
            return None;
        }
        let kind = beyond(sql, self.dialect, &self.database)?;
        let allowed = self.allowed.iter().any(|a| a.eq_ignore_ascii_case(&kind));
        (!allowed).then_some(kind)
    }
}

/// The kind of the first statement of `sql` that reaches beyond database `database`, None
/// when every statement stays inside it.
pub fn beyond(sql: &str, dialect: Dialect, database: &str) -> Option<String> {
    let tokens = lex(sql, dialect);
    tokens.split(|t| *t == Tok::Punct(';')).find_map(|s| statement(s, dialect, database))
}

/// Statements of one database's own: their first word, and sent (after the checks of what
/// they hold) in every dialect.
const INSIDE: &[&str] = &[
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "WITH",
    "VALUES",
    "TABLE",
    "REPLACE",
    "BEGIN",
    "COMMIT",
    "END",
    "ROLLBACK",
    "ABORT",
    "SAVEPOINT",
    "RELEASE",
    "EXECUTE",
    "DEALLOCATE",
    "FETCH",
    "DECLARE",
    "CLOSE",
    "MOVE",
    "LISTEN",
    "NOTIFY",
    "UNLISTEN",
    "DISCARD",
    "SHOW",
    "EXPLAIN",
    "DESCRIBE",
    "DESC",
    "TRUNCATE",
    "LOCK",
    "UNLOCK",
    "CALL",
    "ANALYZE",
    "ANALYSE",
    "COMMENT",
    "HANDLER",
    "CLUSTER",
    "REFRESH",
    "OPTIMIZE",
    "CHECK",
    "REPAIR",
    "CHECKSUM",
    "PRAGMA",
    "REINDEX",
    "DETACH",
    "START",
    "VACUUM",
];

/// What CREATE, ALTER and DROP may make or change inside one database.
const INSIDE_OBJECTS: &[&str] = &[
    "TABLE",
    "INDEX",
    "VIEW",
    "SEQUENCE",
    "FUNCTION",
    "PROCEDURE",
    "TRIGGER",
    "TYPE",
    "DOMAIN",
    "RULE",
    "POLICY",
    "STATISTICS",
    "AGGREGATE",
    "EVENT",
    "OPERATOR",
    "COLLATION",
    "CONVERSION",
    "TEXT",
    "CAST",
];

/// Words between CREATE/ALTER/DROP and the object that say how, not what.
const OBJECT_QUALIFIERS: &[&str] = &[
    "OR",
    "REPLACE",
    "TEMP",
    "TEMPORARY",
    "UNIQUE",
    "UNLOGGED",
    "GLOBAL",
    "LOCAL",
    "MATERIALIZED",
    "RECURSIVE",
    "CONSTRAINT",
    "SPATIAL",
    "FULLTEXT",
    "ONLINE",
    "OFFLINE",
    "IGNORE",
    "VIRTUAL",
    "TRUSTED",
    "PROCEDURAL",
    "ALGORITHM",
    "DEFINER",
    "SQL",
    "SECURITY",
    "INVOKER",
    "UNDEFINED",
    "MERGE",
    "TEMPTABLE",
    "IF",
    "NOT",
    "EXISTS",
];

/// Functions that read or write the server's files, run programs, administer the server or
/// reach other servers: withheld wherever they are called, by their name.
const BEYOND_FUNCTIONS: &[&str] = &[
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "pg_stat_file",
    "pg_file_write",
    "pg_file_rename",
    "pg_file_unlink",
    "pg_logdir_ls",
    "lo_import",
    "lo_export",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_switch_wal",
    "pg_create_restore_point",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_create_physical_replication_slot",
    "pg_create_logical_replication_slot",
    "pg_drop_replication_slot",
    "dblink",
    "dblink_exec",
    "dblink_connect",
    "dblink_send_query",
    "load_file",
    "sys_exec",
    "sys_eval",
    "load_extension",
    "readfile",
    "writefile",
    "edit",
];

/// MySQL's other databases that a statement may read without reaching beyond its own.
const METADATA_DATABASES: &[&str] = &["information_schema"];

/// Untrusted procedural languages: a function in one runs as the server's own user.
const UNTRUSTED_LANGUAGES: &[&str] =
    &["plpythonu", "plpython2u", "plpython3u", "plperlu", "pltclu", "plsh", "c", "internal"];

/// A piece of SQL text.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A word as written (keywords, names, numbers).
    Word(String),
    /// A quoted name (`"x"`, `` `x` ``, `[x]`), its quotes removed.
    Name(String),
    /// A string constant, its quotes removed (a dollar-quoted body too).
    Str(String),
    Punct(char),
    /// A backslash command (psql's `\c`), never SQL.
    Backslash,
}

impl Tok {
    fn word(&self) -> Option<&str> {
        match self {
            Tok::Word(w) => Some(w),
            _ => None,
        }
    }

    fn is_word(&self, w: &str) -> bool {
        self.word().is_some_and(|x| x.eq_ignore_ascii_case(w))
    }

    /// A name, quoted or not, as written.
    fn name(&self) -> Option<&str> {
        match self {
            Tok::Word(w) | Tok::Name(w) => Some(w),
            _ => None,
        }
    }

    /// A name or a string constant's text.
    fn text(&self) -> Option<&str> {
        match self {
            Tok::Str(s) => Some(s),
            _ => self.name(),
        }
    }
}

/// `sql` as tokens, comments dropped, in one pass.
fn lex(sql: &str, dialect: Dialect) -> Vec<Tok> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // MySQL runs what `/*! ... */` holds: its closing `*/` is skipped as a blank.
    let mut in_code_comment = false;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            _ if c.is_whitespace() => i += 1,
            '-' if next == Some('-') => i = line_end(&chars, i),
            '#' if dialect == Dialect::Mysql => i = line_end(&chars, i),
            '/' if next == Some('*') => {
                if dialect == Dialect::Mysql && matches!(chars.get(i + 2), Some('!' | '+')) {
                    in_code_comment = chars[i + 2] == '!';
                    i += 3;
                    while chars.get(i).is_some_and(char::is_ascii_digit) {
                        i += 1;
                    }
                    if !in_code_comment {
                        i = comment_end(&chars, i);
                    }
                } else {
                    i = comment_end(&chars, i + 2);
                }
            }
            '*' if next == Some('/') && in_code_comment => {
                in_code_comment = false;
                i += 2;
            }
            '\'' => {
                let backslashes = dialect == Dialect::Mysql || escape_prefix(&out, &chars, i);
                let (text, end) = quoted(&chars, i, '\'', backslashes);
                out.push(Tok::Str(text));
                i = end;
            }
            '"' if dialect == Dialect::Mysql => {
                let (text, end) = quoted(&chars, i, '"', true);
                out.push(Tok::Str(text));
                i = end;
            }
            '"' | '`' => {
                let (text, end) = quoted(&chars, i, c, false);
                out.push(Tok::Name(text));
                i = end;
            }
            '[' if dialect == Dialect::Sqlite => {
                let end = (i + 1..chars.len()).find(|&j| chars[j] == ']').unwrap_or(chars.len());
                out.push(Tok::Name(chars[i + 1..end].iter().collect()));
                i = end + 1;
            }
            '$' if dialect == Dialect::Postgres && dollar_tag(&chars, i).is_some() => {
                let tag = dollar_tag(&chars, i).unwrap_or_default();
                let body = i + tag.len();
                let end = find(&chars, body, &tag).unwrap_or(chars.len());
                out.push(Tok::Str(chars[body..end].iter().collect()));
                i = (end + tag.len()).min(chars.len());
            }
            '\\' if out.is_empty() => {
                out.push(Tok::Backslash);
                i = chars.len();
            }
            _ if is_word_char(c) => {
                let start = i;
                while chars.get(i).is_some_and(|&c| is_word_char(c) || c == '$') {
                    i += 1;
                }
                out.push(Tok::Word(chars[start..i].iter().collect()));
            }
            _ => {
                out.push(Tok::Punct(c));
                i += 1;
            }
        }
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the line holding `i` ends.
fn line_end(chars: &[char], i: usize) -> usize {
    (i..chars.len()).find(|&j| chars[j] == '\n').unwrap_or(chars.len())
}

/// Just past the `*/` that closes a comment whose text starts at `from`.
fn comment_end(chars: &[char], from: usize) -> usize {
    find(chars, from, &['*', '/']).map_or(chars.len(), |j| j + 2)
}

/// Where `needle` next starts at or after `from`.
fn find(chars: &[char], from: usize, needle: &[char]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    (from..chars.len().saturating_sub(needle.len() - 1)).find(|&j| chars[j..j + needle.len()] == *needle)
}

/// A PostgreSQL string with backslash escapes: `E'...'` (the E just before it).
fn escape_prefix(out: &[Tok], chars: &[char], i: usize) -> bool {
    i > 0 && chars[i - 1].eq_ignore_ascii_case(&'e') && out.last().is_some_and(|t| t.is_word("E"))
}

/// The text quoted by `quote` from `i` (a doubled quote is one; with `backslashes`, a
/// backslash escapes the next character) and where it ends.
fn quoted(chars: &[char], i: usize, quote: char, backslashes: bool) -> (String, usize) {
    let mut text = String::new();
    let mut j = i + 1;
    while j < chars.len() {
        let c = chars[j];
        if backslashes && c == '\\' {
            text.extend(chars.get(j + 1));
            j += 2;
        } else if c == quote && chars.get(j + 1) == Some(&quote) {
            text.push(quote);
            j += 2;
        } else if c == quote {
            return (text, j + 1);
        } else {
            text.push(c);
            j += 1;
        }
    }
    (text, chars.len())
}

/// A dollar quote's tag at `i` (`$$`, `$body$`), as characters.
fn dollar_tag(chars: &[char], i: usize) -> Option<Vec<char>> {
    let mut j = i + 1;
    while chars.get(j).is_some_and(|&c| c.is_alphanumeric() || c == '_') {
        j += 1;
    }
    let starts_like_a_name = chars.get(i + 1).is_none_or(|c| !c.is_ascii_digit());
    (chars.get(j) == Some(&'$') && starts_like_a_name).then(|| chars[i..=j].to_vec())
}

/// The kind of one statement's tokens that reaches beyond `database`, if it does.
fn statement(toks: &[Tok], dialect: Dialect, database: &str) -> Option<String> {
    let toks = strip_parens(toks);
    let first = toks.first()?;
    if *first == Tok::Backslash {
        return Some("psql meta-command".into());
    }
    let Some(verb) = first.word().map(str::to_ascii_uppercase) else {
        return Some("not a statement".into());
    };
    let rest = &toks[1..];
    let said = |words: &[&str]| Some(words.join(" "));
    let kind = match verb.as_str() {
        "CREATE" | "ALTER" | "DROP" => object(&verb, rest, dialect, database),
        "SET" => set(rest, dialect),
        "USE" => use_database(rest, database),
        "COPY" if dialect == Dialect::Postgres => copy(rest),
        "LOAD" => match rest.first().and_then(Tok::word).map(str::to_ascii_uppercase).as_deref() {
            Some("DATA" | "XML") => said(&["LOAD DATA INFILE"]),
            Some("INDEX") => said(&["LOAD INDEX"]),
            _ => said(&["LOAD a library"]),
        },
        "RESET" if dialect != Dialect::Postgres => said(&["RESET"]),
        "RESET" => None,
        "PREPARE" => return prepared(rest, dialect, database),
        "VACUUM" if rest.iter().any(|t| t.is_word("INTO")) => said(&["VACUUM INTO a file"]),
        "ATTACH" => said(&["ATTACH"]),
        "START" if rest.first().is_some_and(|t| t.is_word("SLAVE") || t.is_word("REPLICA")) => {
            said(&["START REPLICA"])
        }
        "DO" if dialect == Dialect::Postgres => said(&["DO"]),
        "DO" => None,
        v if INSIDE.contains(&v) => None,
        "GRANT" | "REVOKE" | "KILL" | "SHUTDOWN" | "FLUSH" | "PURGE" | "CLONE" | "RESTART" | "BINLOG"
        | "CHECKPOINT" | "REASSIGN" => Some(verb.clone()),
        "CHANGE" => said(&["CHANGE REPLICATION SOURCE"]),
        "STOP" => said(&["STOP REPLICA"]),
        "INSTALL" | "UNINSTALL" => Some(format!("{verb} PLUGIN")),
        "IMPORT" => said(&["IMPORT"]),
        "CACHE" => said(&["CACHE INDEX"]),
        "SECURITY" => said(&["SECURITY LABEL"]),
        // Anything not known to stay inside is withheld under its first word.
        other => Some(other.to_string()),
    };
    kind.or_else(|| within(toks, dialect, database))
}

/// The tokens without the parentheses around a whole statement (`(SELECT 1)`).
fn strip_parens(mut toks: &[Tok]) -> &[Tok] {
    while toks.first() == Some(&Tok::Punct('(')) {
        toks = &toks[1..];
    }
    toks
}

/// CREATE, ALTER or DROP `rest`: inside for a database's own objects, else its kind.
fn object(verb: &str, rest: &[Tok], dialect: Dialect, database: &str) -> Option<String> {
    // MySQL's `DEFINER = user@host` and `ALGORITHM = MERGE` come before the object: a word
    // after `=` or `@` is a value, not the object.
    let valued = |i: usize| i > 0 && matches!(rest[i - 1], Tok::Punct('=' | '@'));
    let words = rest.iter().enumerate().filter(|(i, _)| !valued(*i)).filter_map(|(_, t)| t.word());
    let object = words.map(str::to_ascii_uppercase).find(|w| !OBJECT_QUALIFIERS.contains(&w.as_str()))?;
    let kind = |what: &str| Some(format!("{verb} {what}"));
    match object.as_str() {
        "SCHEMA" if dialect == Dialect::Mysql => kind("DATABASE"),
        "DATABASE" | "ROLE" | "USER" | "GROUP" | "TABLESPACE" | "EXTENSION" | "LANGUAGE" | "SERVER"
        | "SYSTEM" | "PUBLICATION" | "SUBSCRIPTION" | "INSTANCE" | "LOGFILE" => kind(&object),
        "FOREIGN" => kind("FOREIGN TABLE or DATA WRAPPER"),
        "DEFAULT" => kind("DEFAULT PRIVILEGES"),
        "ACCESS" => kind("ACCESS METHOD"),
        "RESOURCE" => kind("RESOURCE GROUP"),
        "SPATIAL" => kind("SPATIAL REFERENCE SYSTEM"),
        "EVENT" if dialect == Dialect::Postgres => kind("EVENT TRIGGER"),
        "FUNCTION" | "PROCEDURE" if verb == "CREATE" => function(rest, dialect, database),
        "SCHEMA" => None,
        o if INSIDE_OBJECTS.contains(&o) => None,
        // MySQL's `CREATE DEFINER = ... PROCEDURE`: the definer's name came before.
        o => kind(o),
    }
}

/// A function's definition: its body's statements classified as statements are, and a
/// function in an untrusted language withheld.
fn function(rest: &[Tok], dialect: Dialect, database: &str) -> Option<String> {
    let language = rest
        .windows(2)
        .find(|w| w[0].is_word("LANGUAGE"))
        .and_then(|w| w[1].text().map(str::to_ascii_lowercase));
    if let Some(l) = language.filter(|l| UNTRUSTED_LANGUAGES.contains(&l.as_str())) {
        return Some(format!("CREATE FUNCTION in the untrusted language {l}"));
    }
    if dialect != Dialect::Postgres {
        return None;
    }
    let bodies = rest.iter().filter_map(|t| match t {
        Tok::Str(body) => Some(body),
        _ => None,
    });
    // A body is SQL or PL/pgSQL; its own strings are not bodies again (one level).
    bodies
        .flat_map(|b| {
            lex(b, dialect).split(|t| *t == Tok::Punct(';')).map(<[Tok]>::to_vec).collect::<Vec<_>>()
        })
        .find_map(|s| {
            let s = strip_block_words(&s);
            (!s.is_empty()).then(|| statement_only(s, dialect, database)).flatten()
        })
}

/// A PL/pgSQL statement without the block words before it (`BEGIN`, `DECLARE x int`).
fn strip_block_words(toks: &[Tok]) -> &[Tok] {
    let mut toks = toks;
    while toks.first().is_some_and(|t| t.is_word("BEGIN") || t.is_word("DECLARE")) && toks.len() > 1 {
        toks = &toks[1..];
    }
    toks
}

/// A statement of a function's body: beyond only for what reaches beyond, never for words
/// that are PL/pgSQL's own (`RETURN`, `IF`, an assignment).
fn statement_only(toks: &[Tok], dialect: Dialect, database: &str) -> Option<String> {
    let first = toks.first()?.word()?.to_ascii_uppercase();
    let sql =
        ["CREATE", "ALTER", "DROP", "SET", "COPY", "GRANT", "REVOKE", "LOAD", "CHECKPOINT", "REASSIGN", "DO"];
    if sql.contains(&first.as_str()) {
        statement(toks, dialect, database)
    } else {
        within(toks, dialect, database)
    }
}

/// SET: session settings go; the server's (GLOBAL, PERSIST) and another role's do not.
fn set(rest: &[Tok], dialect: Dialect) -> Option<String> {
    let first = rest.first().and_then(Tok::word).map(str::to_ascii_uppercase);
    let global_variable =
        rest.windows(3).any(|w| w[0] == Tok::Punct('@') && w[1] == Tok::Punct('@') && is_server_scope(&w[2]));
    match first.as_deref() {
        Some("GLOBAL" | "PERSIST" | "PERSIST_ONLY") => Some("SET GLOBAL".into()),
        Some("ROLE") => Some("SET ROLE".into()),
        Some("DEFAULT") if rest.get(1).is_some_and(|t| t.is_word("ROLE")) => Some("SET ROLE".into()),
        Some("PASSWORD") => Some("SET PASSWORD".into()),
        Some("SESSION") if rest.get(1).is_some_and(|t| t.is_word("AUTHORIZATION")) => Some("SET ROLE".into()),
        _ if dialect == Dialect::Mysql && global_variable => Some("SET GLOBAL".into()),
        _ => None,
    }
}

fn is_server_scope(t: &Tok) -> bool {
    ["GLOBAL", "PERSIST", "PERSIST_ONLY"].iter().any(|w| t.is_word(w))
}

/// USE: inside for the database given, another's kind else.
fn use_database(rest: &[Tok], database: &str) -> Option<String> {
    let named = rest.first().and_then(Tok::name)?;
    (!named.eq_ignore_ascii_case(database)).then(|| "USE of another database".into())
}

/// PostgreSQL's COPY: to or from the client goes; a file or a program is the server's.
fn copy(rest: &[Tok]) -> Option<String> {
    let mut depth = 0i32;
    for (i, t) in rest.iter().enumerate() {
        match t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth -= 1,
            Tok::Word(w)
                if depth == 0 && (w.eq_ignore_ascii_case("TO") || w.eq_ignore_ascii_case("FROM")) =>
            {
                let direction = w.to_ascii_uppercase();
                return match rest.get(i + 1) {
                    Some(t) if t.is_word("STDIN") || t.is_word("STDOUT") => None,
                    Some(t) if t.is_word("PROGRAM") => Some(format!("COPY {direction} PROGRAM")),
                    _ => Some(format!("COPY {direction} a file")),
                };
            }
            _ => {}
        }
    }
    None
}

/// PREPARE: the statement it prepares is classified (PostgreSQL's after AS, MySQL's text);
/// MySQL's from a variable cannot be seen.
fn prepared(rest: &[Tok], dialect: Dialect, database: &str) -> Option<String> {
    if dialect == Dialect::Mysql {
        return match rest.iter().skip_while(|t| !t.is_word("FROM")).nth(1) {
            Some(Tok::Str(text)) => beyond(text, dialect, database),
            _ => Some("PREPARE from a variable".into()),
        };
    }
    let after_as = rest.iter().position(|t| t.is_word("AS"))?;
    statement(&rest[after_as + 1..], dialect, database)
}

/// What an allowed statement holds that reaches beyond: a function of the server's files,
/// programs or administration; MySQL's INTO OUTFILE and the tables of another database.
fn within(toks: &[Tok], dialect: Dialect, database: &str) -> Option<String> {
    for (i, t) in toks.iter().enumerate() {
        let called = toks.get(i + 1) == Some(&Tok::Punct('('));
        if let Some(name) = t.word().filter(|_| called) {
            let name = name.to_ascii_lowercase();
            if BEYOND_FUNCTIONS.contains(&name.as_str()) {
                return Some(name);
            }
        }
        if dialect == Dialect::Mysql && t.is_word("INTO") {
            let target = toks.get(i + 1);
            if target.is_some_and(|t| t.is_word("OUTFILE") || t.is_word("DUMPFILE")) {
                return Some("SELECT INTO OUTFILE".into());
            }
        }
    }
    (dialect == Dialect::Mysql).then(|| other_database(toks, database)).flatten()
}

/// Words after which MySQL names a table (or routine): a name `a.b` there is database a's.
const TABLE_PLACES: &[&str] =
    &["FROM", "JOIN", "INTO", "UPDATE", "TABLE", "TABLES", "CALL", "DESCRIBE", "DESC"];

/// A MySQL name of another database's table or routine: `a.b` where a table is named
/// (after FROM, JOIN, INTO, UPDATE, TABLE, and in a FROM list after a comma), `a.b(` (a
/// routine), or `a.b.c` anywhere (a column of a's table).
fn other_database(toks: &[Tok], database: &str) -> Option<String> {
    let mut listing = false;
    for (i, t) in toks.iter().enumerate() {
        if let Some(w) = t.word() {
            let w = w.to_ascii_uppercase();
            if TABLE_PLACES.contains(&w.as_str()) {
                listing = true;
                if let Some(kind) = qualifier(&toks[i + 1..]).and_then(|db| other(db, database)) {
                    return Some(kind);
                }
                continue;
            }
            if ["WHERE", "SET", "VALUES", "ON", "USING", "GROUP", "ORDER", "LIMIT", "HAVING", "SELECT"]
                .contains(&w.as_str())
            {
                listing = false;
            }
        }
        let listed = (listing && *t == Tok::Punct(',')).then(|| qualifier(&toks[i + 1..])).flatten();
        if let Some(kind) = listed.and_then(|db| other(db, database)) {
            return Some(kind);
        }
        let dotted = |k: usize| {
            toks.get(i + k) == Some(&Tok::Punct('.'))
                && toks.get(i + k + 1).is_some_and(|t| t.name().is_some())
        };
        let three_part = t.name().is_some() && dotted(1) && dotted(3);
        let routine = t.name().is_some() && dotted(1) && toks.get(i + 3) == Some(&Tok::Punct('('));
        let previous_is_dot = i > 0 && toks[i - 1] == Tok::Punct('.');
        let named = ((three_part || routine) && !previous_is_dot).then(|| t.name()).flatten();
        if let Some(kind) = named.and_then(|db| other(db, database)) {
            return Some(kind);
        }
    }
    None
}

/// The database part of a qualified name at the start of `toks` (`db.table`).
fn qualifier(toks: &[Tok]) -> Option<&str> {
    let name = toks.first()?.name()?;
    let dotted = toks.get(1) == Some(&Tok::Punct('.')) && toks.get(2).is_some_and(|t| t.name().is_some());
    dotted.then_some(name)
}

/// "another database" when `named` is neither `database` nor a metadata database.
fn other(named: &str, database: &str) -> Option<String> {
    let ours = named.eq_ignore_ascii_case(database);
    let metadata = METADATA_DATABASES.iter().any(|m| m.eq_ignore_ascii_case(named));
    (!ours && !metadata).then(|| "another database".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(sql: &str) -> Option<String> {
        beyond(sql, Dialect::Postgres, "shop")
    }

    fn my(sql: &str) -> Option<String> {
        beyond(sql, Dialect::Mysql, "shop")
    }

    fn lite(sql: &str) -> Option<String> {
        beyond(sql, Dialect::Sqlite, "main")
    }

    #[test]
    fn what_acts_inside_one_database_is_sent() {
        for sql in [
            "SELECT * FROM orders WHERE id = 1",
            "select abalance from pgbench_accounts where aid = 1",
            "INSERT INTO orders VALUES (1, 'DROP DATABASE shop')",
            "UPDATE t SET a = 1; COMMIT",
            "BEGIN",
            "START TRANSACTION",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "CREATE TABLE t (a int)",
            "CREATE OR REPLACE VIEW v AS SELECT 1",
            "CREATE UNIQUE INDEX i ON t (a)",
            "DROP TABLE IF EXISTS t",
            "ALTER TABLE t ADD COLUMN b int",
            "CREATE SCHEMA app",
            "SET LOCAL statement_timeout = '5s'",
            "SET search_path TO app",
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "COPY orders TO STDOUT",
            "COPY orders FROM STDIN WITH (FORMAT csv)",
            "TRUNCATE orders",
            "VACUUM ANALYZE orders",
            "PREPARE q (int) AS SELECT * FROM t WHERE a = $1",
            "EXECUTE q(1)",
            "SELECT login_customer('u', 'p')",
            "-- DROP DATABASE shop\nSELECT 1",
            "/* ALTER SYSTEM SET x = 1 */ SELECT 1",
            "SELECT 'pg_read_file(''/etc/passwd'')'",
            "(SELECT 1)",
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$",
            "CREATE FUNCTION g() RETURNS void LANGUAGE plpgsql AS $body$ BEGIN UPDATE t SET a = 1; END $body$",
        ] {
            assert_eq!(pg(sql), None, "{sql}");
        }
        for sql in [
            "SELECT * FROM orders o JOIN shop.items i ON o.id = i.order_id",
            "SELECT o.id, o.total FROM orders o",
            "INSERT INTO shop.orders (a) VALUES (1)",
            "SET autocommit = 1",
            "SET NAMES utf8mb4",
            "SET SESSION sql_mode = 'STRICT_ALL_TABLES'",
            "USE shop",
            "SELECT * FROM information_schema.tables",
            "CALL new_order(1, 2)",
            "SELECT \"a;b\", 'c;d' FROM t",
            "LOCK TABLES orders WRITE",
            "CREATE DEFINER = `root`@`%` PROCEDURE p() BEGIN SELECT 1; END",
        ] {
            assert_eq!(my(sql), None, "{sql}");
        }
        for sql in ["SELECT 1", "PRAGMA table_info(t)", "VACUUM", "CREATE INDEX i ON t (a)"] {
            assert_eq!(lite(sql), None, "{sql}");
        }
    }

    #[test]
    fn what_reaches_beyond_the_database_is_withheld_under_its_kind() {
        let cases = [
            (pg("DROP DATABASE other"), "DROP DATABASE"),
            (pg("CREATE DATABASE x"), "CREATE DATABASE"),
            (pg("ALTER ROLE app SUPERUSER"), "ALTER ROLE"),
            (pg("CREATE USER eve"), "CREATE USER"),
            (pg("DROP TABLESPACE fast"), "DROP TABLESPACE"),
            (pg("ALTER SYSTEM SET fsync = off"), "ALTER SYSTEM"),
            (pg("COPY t TO PROGRAM 'rm -rf /'"), "COPY TO PROGRAM"),
            (pg("COPY t FROM '/etc/passwd'"), "COPY FROM a file"),
            (pg("COPY (SELECT 1) TO '/tmp/x'"), "COPY TO a file"),
            (pg("SELECT pg_read_file('/etc/passwd')"), "pg_read_file"),
            (pg("SELECT lo_export(1, '/tmp/x')"), "lo_export"),
            (pg("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"), "pg_terminate_backend"),
            (pg("CREATE EXTENSION plpython3u"), "CREATE EXTENSION"),
            (pg("CREATE LANGUAGE plperlu"), "CREATE LANGUAGE"),
            (
                pg("CREATE FUNCTION f() RETURNS int LANGUAGE plpython3u AS 'return 1'"),
                "CREATE FUNCTION in the untrusted language plpython3u",
            ),
            (
                pg("CREATE FUNCTION f() RETURNS void LANGUAGE sql AS $$ DROP DATABASE other $$"),
                "DROP DATABASE",
            ),
            (pg("DO $$ BEGIN EXECUTE 'DROP DATABASE x'; END $$"), "DO"),
            (pg("SET ROLE postgres"), "SET ROLE"),
            (pg("SET SESSION AUTHORIZATION postgres"), "SET ROLE"),
            (pg("GRANT ALL ON t TO eve"), "GRANT"),
            (pg("CHECKPOINT"), "CHECKPOINT"),
            (pg("\\c other"), "psql meta-command"),
            (pg("SELECT 1; DROP DATABASE other"), "DROP DATABASE"),
            (pg("SELECT * FROM dblink('host=x', 'select 1') AS t(a int)"), "dblink"),
            (pg("LOAD 'auto_explain'"), "LOAD a library"),
            (pg("PREPARE p AS COPY t TO PROGRAM 'x'"), "COPY TO PROGRAM"),
            (pg("FROBNICATE t"), "FROBNICATE"),
            (my("DROP SCHEMA other"), "DROP DATABASE"),
            (my("SET GLOBAL max_connections = 1"), "SET GLOBAL"),
            (my("SET PERSIST innodb_flush_log_at_trx_commit = 0"), "SET GLOBAL"),
            (my("SET @@global.sync_binlog = 0"), "SET GLOBAL"),
            (my("SELECT * FROM t INTO OUTFILE '/tmp/x'"), "SELECT INTO OUTFILE"),
            (my("LOAD DATA INFILE '/etc/passwd' INTO TABLE t"), "LOAD DATA INFILE"),
            (my("SELECT LOAD_FILE('/etc/passwd')"), "load_file"),
            (my("SELECT * FROM other.orders"), "another database"),
            (my("SELECT * FROM orders, `other`.`items`"), "another database"),
            (my("UPDATE mysql.user SET x = 1"), "another database"),
            (my("SELECT other.f(1)"), "another database"),
            (my("SELECT other.t.a FROM t"), "another database"),
            (my("USE other"), "USE of another database"),
            (my("KILL 42"), "KILL"),
            (my("SHUTDOWN"), "SHUTDOWN"),
            (my("FLUSH PRIVILEGES"), "FLUSH"),
            (my("PURGE BINARY LOGS TO 'x'"), "PURGE"),
            (my("RESET MASTER"), "RESET"),
            (my("INSTALL PLUGIN x SONAME 'x.so'"), "INSTALL PLUGIN"),
            (my("/*!50000 DROP DATABASE other */"), "DROP DATABASE"),
            (my("PREPARE s FROM 'DROP DATABASE other'"), "DROP DATABASE"),
            (my("PREPARE s FROM @sql"), "PREPARE from a variable"),
            (lite("ATTACH DATABASE '/tmp/x.db' AS x"), "ATTACH"),
            (lite("VACUUM INTO '/tmp/copy.db'"), "VACUUM INTO a file"),
            (lite("SELECT load_extension('/tmp/evil.so')"), "load_extension"),
        ];
        for (got, want) in cases {
            assert_eq!(got.as_deref(), Some(want));
        }
    }

    #[test]
    fn a_kind_the_user_allowed_is_sent_and_the_others_still_are_not() {
        let mut s = Statements { database: "shop".into(), ..Statements::default() };
        assert_eq!(s.withheld("DROP DATABASE x").as_deref(), Some("DROP DATABASE"));
        s.allowed.insert("drop database".into());
        assert_eq!(s.withheld("DROP DATABASE x"), None, "allowed in any case");
        assert_eq!(s.withheld("ALTER SYSTEM SET a = 1").as_deref(), Some("ALTER SYSTEM"));
        s.all = true;
        assert_eq!(s.withheld("ALTER SYSTEM SET a = 1"), None);
        assert_eq!(s.withheld("SELECT 1"), None);
    }

    #[test]
    fn any_text_is_classified_without_a_panic_in_time_linear_in_it() {
        for sql in [
            "",
            ";;;",
            "'unclosed",
            "$$unclosed",
            "/* unclosed",
            "`x",
            "[x",
            "\"",
            "$1",
            "E'\\'",
            "@@",
            "a.b.(",
            "((((",
        ] {
            for d in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite] {
                let _ = beyond(sql, d, "db");
            }
        }
        assert_eq!(pg(";;;"), None);
        let long = "SELECT 1 FROM t WHERE a IN (".to_string() + &"1,".repeat(200_000) + "1)";
        let started = std::time::Instant::now();
        assert_eq!(my(&long), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    }
}
