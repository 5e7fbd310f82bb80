//! Request logs read for a replay, one request at a time (a log of any size streams through
//! with flat memory): what each request is (`Entry`), where it is in the log, and why a line
//! could not be read (`LineError`, counted and shown, never fatal unless asked).
//!
//! Formats: PostgreSQL's csvlog and its stderr log (`postgres`), MySQL's and MariaDB's
//! general and slow query logs (`mysql`), whose requests are SQL text; storbench's own request
//! log of DS3 calls (`storbench`); web servers' access logs, mapped to DS3 calls (`web`).
//! Every reader gives the
//! requests in the log's order with their time in nanoseconds since 1970 as the log wrote it
//! (its time zone is the log's; only the differences between requests matter to a replay).

mod csv;
pub mod mysql;
pub mod postgres;
pub mod storbench;
mod time;
pub mod web;

use crate::workload::oltp::ds3::call::Call;

/// What a request sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// SQL text, parameters in place, run as it is.
    Sql(String),
    /// A DVD Store call, run as DS3 runs it on the backend.
    Ds3(Call),
}

impl Body {
    /// Its SQL text; empty for a DS3 call.
    pub fn sql(&self) -> &str {
        match self {
            Body::Sql(sql) => sql,
            Body::Ds3(_) => "",
        }
    }
}

/// What a log says of a session at a point: a request, or that the session is over.
#[derive(Debug, Clone, PartialEq)]
pub enum What {
    Request(Body),
    /// The session is over: its connection is let go once its requests have run, so that a
    /// log of many short sessions never holds more connections than the original did.
    End(Close),
}

/// What becomes of an ended session's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// The client disconnected (PostgreSQL's `disconnection:`, MySQL's `Quit`): closed, as
    /// the original was.
    Disconnect,
    /// A web request is over: back to its source's pool for the next request, as a web tier's
    /// connection pool keeps it.
    Pool,
}

impl What {
    /// Its SQL text; empty for a DS3 call or an end.
    pub fn sql(&self) -> &str {
        match self {
            What::Request(body) => body.sql(),
            What::End(_) => "",
        }
    }

    /// Its type for the per-type figures when its requests are SQL text
    /// ([`statement_kind`]); empty for an end.
    pub fn sql_kind(&self) -> String {
        match self {
            What::Request(body) => statement_kind(body.sql()),
            What::End(_) => String::new(),
        }
    }
}

/// One request of a log, or a session's end.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// When the log says it started, nanoseconds since 1970 in the log's time zone.
    pub at_ns: i128,
    /// The session (connection) it ran on, as the log names it: each session's requests are
    /// replayed in their order on a connection of their own.
    pub session: String,
    pub user: String,
    pub database: String,
    /// Its type for the per-type figures: the statement's kind (`SELECT`, `UPDATE`, `BEGIN`),
    /// with the function or procedure it calls where it calls one (`SELECT login`); a DS3
    /// call's name (`login`, `purchase`); empty for an end.
    pub kind: String,
    pub what: What,
    /// The line of the log it starts on (1 is the first).
    pub line: u64,
}

/// A part of a log that could not be read as a request: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: u64,
    pub why: String,
    /// A web server's request for a path no route of the mapping takes (a page that is no
    /// database call, an image): that path. Counted per path, and never an error, even for
    /// a strict replay.
    pub unmatched: Option<String>,
}

impl LineError {
    pub fn new(line: u64, why: impl Into<String>) -> LineError {
        LineError { line, why: why.into(), unmatched: None }
    }

    /// Line `line` asks for `path`, which no route takes.
    pub fn unmatched(line: u64, path: &str) -> LineError {
        LineError { line, why: format!("no route for {path}"), unmatched: Some(path.to_string()) }
    }
}

/// What a reader gives: a request, or a line it could not read.
pub type Read = Result<Entry, LineError>;

/// The formats a replay reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    Storbench,
    Combined,
    PgCsvlog,
    PgStderr,
    MysqlGeneral,
    MysqlSlow,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Storbench,
        Format::Combined,
        Format::PgCsvlog,
        Format::PgStderr,
        Format::MysqlGeneral,
        Format::MysqlSlow,
    ];

    /// Its name for `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Storbench => "storbench",
            Format::Combined => "combined",
            Format::PgCsvlog => "pg-csvlog",
            Format::PgStderr => "pg-stderr",
            Format::MysqlGeneral => "mysql-general",
            Format::MysqlSlow => "mysql-slow",
        }
    }

    /// The format `head` (a log's first lines) is written in, by what only that format's
    /// lines look like; None when no format fits, or more than one.
    pub fn detect(head: &str) -> Option<Format> {
        let lines: Vec<&str> = head.lines().filter(|l| !l.trim().is_empty()).take(50).collect();
        let found: Vec<Format> =
            Format::ALL.into_iter().filter(|f| lines.iter().any(|l| f.marks(l))).collect();
        match found.as_slice() {
            [one] => Some(*one),
            // A slow log opens with the general log's banner too; its `# Time:` or
            // `# User@Host:` lines are its own.
            [Format::MysqlGeneral, Format::MysqlSlow] => Some(Format::MysqlSlow),
            _ => None,
        }
    }

    /// Whether `line` is one only this format writes.
    fn marks(self, line: &str) -> bool {
        let iso_start = line.get(..23).and_then(time::parse_iso).is_some();
        match self {
            Format::Storbench => line.starts_with("{\"time\":"),
            Format::Combined => web::is_access_line(line),
            // `2026-11-26 05:04:54.418 UTC,"user","db",pid,...`: a time, then a comma.
            Format::PgCsvlog => {
                let zone_then_comma = line.get(23..).and_then(|r| r.trim_start().split_once(','));
                iso_start && zone_then_comma.is_some_and(|(zone, _)| !zone.contains([' ', '|']))
            }
            Format::PgStderr => {
                ["LOG:  ", "DETAIL:  ", "ERROR:  ", "STATEMENT:  "].iter().any(|m| line.contains(m))
                    && iso_start
            }
            Format::MysqlGeneral => line.contains(" Query\t") || line.contains(" Connect\t"),
            Format::MysqlSlow => line.starts_with("# User@Host: ") || line.starts_with("# Query_time: "),
        }
    }
}

/// The longest record or line read: a statement of 64 MiB is already far past any real one.
pub(super) const MAX_RECORD: usize = 64 << 20;

/// Appends `input` up to and including its next line break to `text`, `room` bytes at the
/// most: how many it appended (0 at the end of the input).
pub(super) fn read_line_within(
    input: &mut impl std::io::BufRead,
    text: &mut Vec<u8>,
    room: usize,
) -> std::io::Result<usize> {
    let mut taken = 0;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() || taken >= room {
            return Ok(taken);
        }
        let want = buf.len().min(room - taken);
        let (n, ended) = match buf[..want].iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (want, false),
        };
        text.extend_from_slice(&buf[..n]);
        input.consume(n);
        taken += n;
        if ended {
            return Ok(taken);
        }
    }
}

/// Passes over the rest of the current line.
pub(super) fn skip_line(input: &mut impl std::io::BufRead) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// A log's lines with their numbers, one kept back when a reader looked ahead. A line is held
/// to `MAX_RECORD` (a longer one is an unreadable line, the rest of it passed over), and so is
/// a statement joined from several.
pub(super) struct Lines<R> {
    input: R,
    line: u64,
    ahead: Option<(u64, String)>,
}

impl<R: std::io::BufRead> Lines<R> {
    pub(super) fn new(input: R) -> Self {
        Lines { input, line: 0, ahead: None }
    }

    /// The next line (without its line break) and its number.
    pub(super) fn next(&mut self) -> Option<Result<(u64, String), LineError>> {
        if let Some(l) = self.ahead.take() {
            return Some(Ok(l));
        }
        let mut text = Vec::new();
        match read_line_within(&mut self.input, &mut text, MAX_RECORD + 1) {
            Ok(0) => None,
            Ok(_) if text.len() > MAX_RECORD => {
                self.line += 1;
                let _ = skip_line(&mut self.input);
                Some(Err(LineError::new(self.line, "a line longer than 64 MiB")))
            }
            Ok(_) => {
                self.line += 1;
                let text = String::from_utf8_lossy(&text);
                Some(Ok((self.line, text.trim_end_matches(['\n', '\r']).to_string())))
            }
            Err(e) => Some(Err(LineError::new(self.line + 1, format!("reading the log: {e}")))),
        }
    }

    /// The next line that is not blank; `read` turns it into what the reader gives.
    pub(super) fn next_filled<T>(
        &mut self,
        read: impl FnOnce(u64, &str) -> Result<T, LineError>,
    ) -> Option<Result<T, LineError>> {
        loop {
            match self.next()? {
                Ok((_, text)) if text.trim().is_empty() => continue,
                Ok((line, text)) => return Some(read(line, &text)),
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// Keeps `line` back for the next `next`.
    pub(super) fn put_back(&mut self, line: (u64, String)) {
        self.ahead = Some(line);
    }

    /// `first` and, each on a line of its own, the lines after it that `continues` takes
    /// (giving the part that belongs), up to the first it does not take, which is kept back.
    pub(super) fn joined(&mut self, mut first: String, continues: impl Fn(&str) -> Option<&str>) -> String {
        while let Some(Ok((n, text))) = self.next() {
            match continues(&text) {
                Some(more) if first.len() + more.len() < MAX_RECORD => {
                    first.push('\n');
                    first.push_str(more);
                }
                // Past the limit, the statement ends there; the rest is read as lines of its own.
                _ => {
                    self.put_back((n, text));
                    break;
                }
            }
        }
        first
    }
}

/// The kind of a statement for the per-type figures: its first keyword in capitals, and for a
/// call the name of what it calls (`CALL new_order`, `SELECT browse_by_title`: a SELECT whose
/// first item, or whose FROM, is a function call). Comments before it are skipped.
pub fn statement_kind(sql: &str) -> String {
    let text = skip_comments(sql);
    let mut words = Words(text);
    let Some(first) = words.next_word() else { return "EMPTY".into() };
    let keyword = first.to_ascii_uppercase();
    let called = match keyword.as_str() {
        "CALL" => words.called(),
        "SELECT" => words.called().or_else(|| words.star_from().then(|| words.called()).flatten()),
        _ => None,
    };
    match called {
        Some(name) if !is_builtin(&name) => format!("{keyword} {name}"),
        _ => keyword,
    }
}

/// SQL's own functions (aggregates, clocks, casts): a `SELECT count(*)` is a plain SELECT, not
/// a call of the application's.
fn is_builtin(name: &str) -> bool {
    const BUILTIN: [&str; 16] = [
        "count",
        "sum",
        "min",
        "max",
        "avg",
        "coalesce",
        "now",
        "current_timestamp",
        "cast",
        "lower",
        "upper",
        "length",
        "abs",
        "round",
        "nextval",
        "version",
    ];
    BUILTIN.iter().any(|b| b.eq_ignore_ascii_case(name))
}

/// `sql` without the comments and blanks before its first word.
fn skip_comments(mut sql: &str) -> &str {
    loop {
        sql = sql.trim_start();
        if let Some(rest) = sql.strip_prefix("--") {
            sql = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(rest) = sql.strip_prefix("/*") {
            sql = rest.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return sql;
        }
    }
}

/// The words of a statement's start.
struct Words<'a>(&'a str);

impl<'a> Words<'a> {
    fn next_word(&mut self) -> Option<&'a str> {
        let s = self.0.trim_start();
        let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).unwrap_or(s.len());
        let (word, rest) = s.split_at(end);
        self.0 = rest;
        (!word.is_empty()).then_some(word)
    }

    /// The name at this point when a call follows it (`name(`), in lower case.
    fn called(&mut self) -> Option<String> {
        let before = self.0;
        let name = self.next_word()?;
        if self.0.trim_start().starts_with('(') && !name.chars().next()?.is_ascii_digit() {
            return Some(name.to_ascii_lowercase());
        }
        self.0 = before;
        None
    }

    /// Whether `* FROM` comes next (taken if so).
    fn star_from(&mut self) -> bool {
        let Some(rest) = self.0.trim_start().strip_prefix('*') else { return false };
        let mut after = Words(rest);
        let from = after.next_word().is_some_and(|w| w.eq_ignore_ascii_case("from"));
        if from {
            self.0 = after.0;
        }
        from
    }
}

#[cfg(test)]
mod tests {
    use super::{Format, statement_kind};

    #[test]
    fn each_captured_log_is_recognised_as_its_own_format_and_plain_text_as_none() {
        let logs = [
            (include_str!("../../../../../../fuzz/corpus/replay_log/pg15.csv"), Format::PgCsvlog),
            (include_str!("../../../../../../fuzz/corpus/replay_log/pg15-duration.csv"), Format::PgCsvlog),
            (include_str!("../../../../../../fuzz/corpus/replay_log/pg15-stderr.log"), Format::PgStderr),
            (
                include_str!("../../../../../../fuzz/corpus/replay_log/pg15-duration-stderr.log"),
                Format::PgStderr,
            ),
            (
                include_str!("../../../../../../fuzz/corpus/replay_log/mariadb10.11-general.log"),
                Format::MysqlGeneral,
            ),
            (
                include_str!("../../../../../../fuzz/corpus/replay_log/mariadb10.11-slow.log"),
                Format::MysqlSlow,
            ),
        ];
        for (text, format) in logs {
            assert_eq!(Format::detect(text), Some(format), "{}", format.name());
        }
        assert_eq!(Format::detect("hello\nworld\n"), None);
        assert_eq!(
            Format::detect("2026-11-26 05:04:5ééééééééé,x\n€€€€€€€€€€€€€€€€\n"),
            None,
            "any text, no panic"
        );
        assert_eq!(Format::detect(""), None);
    }

    #[test]
    fn a_statement_is_typed_by_its_keyword_and_a_call_by_what_it_calls() {
        assert_eq!(statement_kind("select abalance from pgbench_accounts where aid = 1"), "SELECT");
        assert_eq!(statement_kind("  UPDATE t SET a = 1"), "UPDATE");
        assert_eq!(statement_kind("BEGIN;"), "BEGIN");
        assert_eq!(statement_kind("CALL new_order(1, 2)"), "CALL new_order");
        assert_eq!(statement_kind("SELECT * FROM Login_Customer('u', 'p')"), "SELECT login_customer");
        assert_eq!(statement_kind("select browse_by_title ($1, $2)"), "SELECT browse_by_title");
        assert_eq!(
            statement_kind("/* app */ -- note\n SELECT count(*) FROM t"),
            "SELECT",
            "an aggregate is no call"
        );
        assert_eq!(statement_kind("SELECT MAX(a), now() FROM t"), "SELECT");
        assert_eq!(statement_kind("SELECT * FROM t WHERE a = 1"), "SELECT");
        assert_eq!(statement_kind("SELECT 1"), "SELECT");
        assert_eq!(statement_kind(" -- only a comment"), "EMPTY");
    }
}
