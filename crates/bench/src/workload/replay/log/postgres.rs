//! PostgreSQL's statement logs: csvlog (`log_destination = 'csvlog'`), and the stderr log
//! with a `log_line_prefix` that carries the time, the user, the database and the session
//! (pgreplay's `'%m|%u|%d|%c|'` is the default). Statements come from `log_statement = 'all'`
//! (`statement: ...`, `execute NAME: ...`) or `log_min_duration_statement = 0` (the same after
//! `duration: N ms  `); an extended-protocol statement's parameters (the `DETAIL:  parameters:
//! $1 = '...'` that follows it) are put in place as the literals the log quotes. Parse and bind
//! lines, durations alone, connections and errors are not requests.

use super::csv::Records;
use super::{Body, Close, Entry, LineError, Lines, Read, What, time};
use std::io::BufRead;

/// The prefix pgreplay asks for, and the one assumed when none is given.
pub const DEFAULT_PREFIX: &str = "%m|%u|%d|%c|";

/// A csvlog's requests.
pub struct CsvLog<R> {
    records: Records<R>,
}

impl<R: BufRead> CsvLog<R> {
    pub fn new(input: R) -> Self {
        CsvLog { records: Records::new(input) }
    }
}

// The csvlog's columns this reader uses (the same from PostgreSQL 8.3 to 17).
const LOG_TIME: usize = 0;
const USER: usize = 1;
const DATABASE: usize = 2;
const SESSION: usize = 5;
const SEVERITY: usize = 11;
const MESSAGE: usize = 13;
const DETAIL: usize = 14;

impl<R: BufRead> Iterator for CsvLog<R> {
    type Item = Read;

    fn next(&mut self) -> Option<Read> {
        self.entry().transpose()
    }
}

impl<R: BufRead> CsvLog<R> {
    /// The next request; None at the end of the log.
    fn entry(&mut self) -> Result<Option<Entry>, LineError> {
        loop {
            let Some((line, f)) = self.records.next_record().transpose()? else { return Ok(None) };
            if f.len() <= DETAIL {
                let why = format!("{} fields where a csvlog record has at least 22", f.len());
                return Err(LineError::new(line, why));
            }
            if f[SEVERITY] != "LOG" {
                continue;
            }
            let Some(what) = logged(&f[MESSAGE], &f[DETAIL]) else { continue };
            let Some(at_ns) = time::parse_iso(&f[LOG_TIME]) else {
                return Err(LineError::new(line, format!("log_time {:?} is not a time", f[LOG_TIME])));
            };
            let what = what.map_err(|why| LineError::new(line, why))?;
            return Ok(Some(Entry {
                at_ns,
                session: f[SESSION].clone(),
                user: f[USER].clone(),
                database: f[DATABASE].clone(),
                kind: what.sql_kind(),
                what,
                line,
            }));
        }
    }
}

/// A stderr log's requests, its lines read through `prefix` (a `log_line_prefix`).
pub struct StderrLog<R> {
    lines: Lines<R>,
    prefix: Prefix,
}

impl<R: BufRead> StderrLog<R> {
    /// A reader of `input` whose lines start with `prefix`; refused when the prefix lacks the
    /// time (`%m` or `%t`) or a session (`%c`, or `%p`).
    pub fn new(input: R, prefix: &str) -> Result<Self, String> {
        Ok(StderrLog { lines: Lines::new(input), prefix: Prefix::parse(prefix)? })
    }

    /// A message with its continuation lines (a tab first).
    fn continued(&mut self, message: String) -> String {
        self.lines.joined(message, |t| t.strip_prefix('\t'))
    }
}

impl<R: BufRead> Iterator for StderrLog<R> {
    type Item = Read;

    fn next(&mut self) -> Option<Read> {
        self.entry().transpose()
    }
}

impl<R: BufRead> StderrLog<R> {
    /// The next request; None at the end of the log.
    fn entry(&mut self) -> Result<Option<Entry>, LineError> {
        loop {
            let Some((line, text)) = self.lines.next().transpose()? else { return Ok(None) };
            let Some((fields, rest)) = self.prefix.split(&text) else {
                let why = "the line does not start with the log_line_prefix given".to_string();
                return Err(LineError::new(line, why));
            };
            let Some(message) = rest.strip_prefix("LOG:  ") else { continue };
            let message = self.continued(message.to_string());
            let detail = self.detail_of(&fields);
            let Some(what) = logged(&message, &detail) else { continue };
            let Some(at_ns) = time::parse_iso(&fields.time) else {
                return Err(LineError::new(line, format!("{:?} is not a time", fields.time)));
            };
            let what = what.map_err(|why| LineError::new(line, why))?;
            let Fields { session, user, database, .. } = fields;
            return Ok(Some(Entry { at_ns, session, user, database, kind: what.sql_kind(), what, line }));
        }
    }
}

impl<R: BufRead> StderrLog<R> {
    /// The DETAIL line that follows a message of the same session, taken; empty when there is
    /// none.
    fn detail_of(&mut self, of: &Fields) -> String {
        let Some(Ok((n, text))) = self.lines.next() else { return String::new() };
        let detail = self
            .prefix
            .split(&text)
            .filter(|(f, _)| f.session == of.session)
            .and_then(|(_, rest)| rest.strip_prefix("DETAIL:  ").map(str::to_string));
        match detail {
            Some(d) => self.continued(d),
            None => {
                self.lines.put_back((n, text));
                String::new()
            }
        }
    }
}

/// What a stderr line's prefix says.
#[derive(Debug, Default, PartialEq)]
struct Fields {
    time: String,
    session: String,
    user: String,
    database: String,
}

/// A `log_line_prefix` as a pattern: literal text and escapes.
#[derive(Debug)]
struct Prefix(Vec<Part>);

#[derive(Debug, PartialEq)]
enum Part {
    Text(String),
    Escape(char),
}

impl Prefix {
    fn parse(spec: &str) -> Result<Prefix, String> {
        let mut parts = Vec::new();
        let mut chars = spec.chars();
        let mut text = String::new();
        while let Some(c) = chars.next() {
            if c != '%' {
                text.push(c);
                continue;
            }
            let e = chars.next().ok_or("log_line_prefix ends with a lone %")?;
            if e == '%' {
                text.push('%');
                continue;
            }
            if !text.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut text)));
            }
            if matches!(parts.last(), Some(Part::Escape(_))) && !matches!(e, 'm' | 't') {
                return Err(format!(
                    "log_line_prefix {spec:?}: put a separator between %-escapes, as in %m|%u|%d|%c|"
                ));
            }
            parts.push(Part::Escape(e));
        }
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        let has = |set: &[char]| parts.iter().any(|p| matches!(p, Part::Escape(e) if set.contains(e)));
        if !has(&['m', 't']) || !has(&['c', 'p']) {
            return Err(format!(
                "log_line_prefix {spec:?} lacks the time (%m or %t) or the session (%c or %p); a replay needs both, as in {DEFAULT_PREFIX}"
            ));
        }
        Ok(Prefix(parts))
    }

    /// The prefix's fields and the rest of `line`; None when the line does not follow it.
    fn split<'a>(&self, line: &'a str) -> Option<(Fields, &'a str)> {
        let mut rest = line;
        let mut f = Fields::default();
        for (i, part) in self.0.iter().enumerate() {
            match part {
                Part::Text(t) => rest = rest.strip_prefix(t.as_str())?,
                Part::Escape(e) => {
                    let value;
                    (value, rest) = match e {
                        'm' | 't' => split_time(rest)?,
                        _ => match self.0.get(i + 1) {
                            Some(Part::Text(t)) => rest.split_at(rest.find(t.as_str())?),
                            _ => rest.split_at(rest.find(' ').unwrap_or(rest.len())),
                        },
                    };
                    match e {
                        'm' | 't' => f.time = value.to_string(),
                        'c' => f.session = value.to_string(),
                        'p' if f.session.is_empty() => f.session = value.to_string(),
                        'u' => f.user = value.to_string(),
                        'd' => f.database = value.to_string(),
                        _ => {}
                    }
                }
            }
        }
        Some((f, rest))
    }
}

/// A timestamp at the start of `s` (`2026-11-26 05:04:54[.418] ZONE`) and what follows.
fn split_time(s: &str) -> Option<(&str, &str)> {
    let clock_end =
        19 + s.get(19..)?.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len() - 19);
    let after = &s[clock_end..];
    let zone = after
        .strip_prefix(' ')
        .map_or(0, |z| 1 + z.find(|c: char| !(c.is_alphanumeric() || "+-:".contains(c))).unwrap_or(z.len()));
    Some(s.split_at(clock_end + zone))
}

/// What a LOG message says: a statement, with the parameters `detail` gives put in place, or
/// the session's end (`disconnection:`, written with `log_disconnections = on`); None for a
/// message that is neither (parse, bind, a duration alone, a connection).
fn logged(message: &str, detail: &str) -> Option<Result<What, String>> {
    if message.starts_with("disconnection: ") {
        return Some(Ok(What::End(Close::Disconnect)));
    }
    statement(message, detail).map(|sql| sql.map(|sql| What::Request(Body::Sql(sql))))
}

/// The statement a LOG message (and its DETAIL) gives, if it gives one.
fn statement(message: &str, detail: &str) -> Option<Result<String, String>> {
    let m = strip_duration(message);
    if let Some(sql) = m.strip_prefix("statement: ") {
        return Some(Ok(sql.to_string()));
    }
    let rest = m.strip_prefix("execute ")?;
    let (_, sql) = rest.split_once(": ")?;
    let params = detail.strip_prefix("parameters: ").map_or(Ok(Vec::new()), parameters);
    Some(params.map(|p| with_parameters(sql, &p)))
}

/// The message after a `duration: N ms  ` that may lead it.
fn strip_duration(message: &str) -> &str {
    let Some(rest) = message.strip_prefix("duration: ") else { return message };
    match rest.split_once(" ms") {
        Some((n, after)) if n.parse::<f64>().is_ok() => after.trim_start(),
        _ => message,
    }
}

/// `$1 = '-1464', $2 = NULL` as the literal of each parameter by its number.
fn parameters(text: &str) -> Result<Vec<(usize, String)>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let bad = || format!("the parameters {text:?} are not $N = 'value', ...");
        let after = rest.strip_prefix('$').ok_or_else(bad)?;
        let digits = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
        let n: usize = after[..digits].parse().map_err(|_| bad())?;
        let value = after[digits..].trim_start().strip_prefix('=').ok_or_else(bad)?.trim_start();
        let (literal, after) = if let Some(v) = value.strip_prefix("NULL") {
            ("NULL".to_string(), v)
        } else {
            let end = quoted_end(value).ok_or_else(bad)?;
            (value[..end].to_string(), &value[end..])
        };
        out.push((n, literal));
        rest = after.trim_start().strip_prefix(',').unwrap_or(after).trim_start();
    }
    Ok(out)
}

/// The length of the single-quoted literal that starts `s` ('' inside is a quote).
fn quoted_end(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'\'') {
        return None;
    }
    let mut i = 1;
    while i < bytes.len() {
        if bytes[i] == b'\'' {
            if bytes.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// `sql` with each `$N` outside literals, quoted names and comments replaced by its literal.
fn with_parameters(sql: &str, params: &[(usize, String)]) -> String {
    if params.is_empty() {
        return sql.to_string();
    }
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(c) = rest.chars().next() {
        let skip = match c {
            '\'' => quoted_end(rest),
            '"' => rest[1..].find('"').map(|i| i + 2),
            '-' if rest.starts_with("--") => Some(rest.find('\n').unwrap_or(rest.len())),
            '/' if rest.starts_with("/*") => rest.find("*/").map(|i| i + 2),
            '$' => {
                let digits = rest[1..].find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len() - 1);
                let literal = rest[1..=digits]
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| params.iter().find(|(p, _)| *p == n))
                    .filter(|_| digits > 0);
                if let Some((_, literal)) = literal {
                    out.push_str(literal);
                    rest = &rest[1 + digits..];
                    continue;
                }
                None
            }
            _ => None,
        };
        let n = skip.unwrap_or(c.len_utf8()).min(rest.len());
        out.push_str(&rest[..n]);
        rest = &rest[n..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = include_str!("../../../../../../fuzz/corpus/replay_log/pg15.csv");
    const STDERR: &str = include_str!("../../../../../../fuzz/corpus/replay_log/pg15-stderr.log");
    const CSV_DURATION: &str = include_str!("../../../../../../fuzz/corpus/replay_log/pg15-duration.csv");
    const STDERR_DURATION: &str =
        include_str!("../../../../../../fuzz/corpus/replay_log/pg15-duration-stderr.log");

    fn all(reader: impl Iterator<Item = Read>) -> Vec<Entry> {
        reader.map(|r| r.unwrap_or_else(|e| panic!("line {}: {}", e.line, e.why))).collect()
    }

    #[test]
    fn a_csvlog_and_a_stderr_log_of_the_same_statements_read_as_the_same_requests() {
        for (csv, stderr) in [(CSV, STDERR), (CSV_DURATION, STDERR_DURATION)] {
            let from_csv = all(CsvLog::new(csv.as_bytes()));
            let from_stderr = all(StderrLog::new(stderr.as_bytes(), DEFAULT_PREFIX).unwrap());
            assert!(!from_csv.is_empty());
            // The two logs are written apart, so sessions interleave differently within a
            // millisecond; each session's requests are the same, in the same order.
            let by_session = |entries: &[Entry]| {
                let mut m: std::collections::BTreeMap<String, Vec<_>> = Default::default();
                for e in entries {
                    let fields = (
                        e.at_ns,
                        e.user.clone(),
                        e.database.clone(),
                        e.kind.clone(),
                        e.what.sql().to_string(),
                    );
                    m.entry(e.session.clone()).or_default().push(fields);
                }
                m
            };
            assert_eq!(by_session(&from_csv), by_session(&from_stderr));
        }
    }

    #[test]
    fn log_statement_all_gives_each_statement_once_with_its_parameters_in_place() {
        let (got, ends): (Vec<Entry>, Vec<Entry>) =
            all(CsvLog::new(CSV.as_bytes())).into_iter().partition(|e| matches!(e.what, What::Request(_)));
        let kinds: Vec<&str> = got.iter().map(|e| e.kind.as_str()).collect();
        // pgbench -M prepared: BEGIN and the first UPDATE of two clients, then one SELECT.
        assert_eq!(&kinds[..4], ["BEGIN", "BEGIN", "UPDATE", "UPDATE"], "{kinds:?}");
        let update = &got[2];
        assert_eq!(
            update.what.sql(),
            "UPDATE pgbench_accounts SET abalance = abalance + '-1464' WHERE aid = '36234';"
        );
        assert_eq!(
            (update.session.as_str(), update.user.as_str(), update.database.as_str()),
            ("6b07bdf6.3e9", "postgres", "postgres")
        );
        assert_eq!(update.at_ns, time::parse_iso("2026-11-26 05:04:54.418 UTC").unwrap());
        let last = got.last().unwrap();
        assert_eq!(last.what.sql(), "SELECT 'it''s', E'a\\nb', now()");
        assert!(got.iter().all(|e| !e.what.sql().contains("$1")), "no parameter left as a placeholder");
        // log_disconnections: each session's end, after its last statement.
        let ended: Vec<&str> = ends.iter().map(|e| e.session.as_str()).collect();
        assert_eq!(ended, ["6b07bdf6.3e9", "6b07bdf6.3ea", "6b07bdf6.3ec"]);
        for end in &ends {
            assert_eq!((&end.what, end.kind.as_str()), (&What::End(Close::Disconnect), ""));
            let last = got.iter().filter(|e| e.session == end.session).map(|e| e.at_ns).max().unwrap();
            assert!(end.at_ns >= last, "{end:?}");
        }
    }

    #[test]
    fn log_min_duration_statement_gives_statements_after_their_duration_and_keeps_line_breaks() {
        let got = all(CsvLog::new(CSV_DURATION.as_bytes()));
        let two = got.iter().find(|e| e.what.sql().contains("two")).expect("the psql statement");
        assert_eq!(two.what.sql(), "SELECT 'it''s',\n  'two\nlines' AS \"q,x\";");
        assert_eq!(two.kind, "SELECT");
        let unnamed = got.iter().find(|e| e.what.sql().starts_with("UPDATE pgbench_accounts")).unwrap();
        assert_eq!(
            unnamed.what.sql(),
            "UPDATE pgbench_accounts SET abalance = abalance + '-2376' WHERE aid = '21527';"
        );
        assert!(
            got.iter().any(|e| e.what.sql() == "select count(*) from pgbench_branches" && e.kind == "SELECT")
        );
    }

    #[test]
    fn parameters_go_only_where_a_placeholder_is_and_quotes_survive() {
        let p = parameters("$1 = 'it''s', $2 = NULL, $10 = '7'").unwrap();
        assert_eq!(p, [(1, "'it''s'".to_string()), (2, "NULL".into()), (10, "'7'".into())]);
        let sql = "SELECT '$1', \"$2\", $1, $2 -- $1\n, $10, $11";
        assert_eq!(with_parameters(sql, &p), "SELECT '$1', \"$2\", 'it''s', NULL -- $1\n, '7', $11");
        assert!(parameters("$1 = 'open").is_err());
    }

    #[test]
    fn a_prefix_without_time_or_session_is_refused_and_a_line_that_does_not_follow_it_is_counted() {
        assert!(StderrLog::new(&b""[..], "%u|%d|").err().unwrap().contains("lacks the time"));
        assert!(StderrLog::new(&b""[..], "%m%u").err().unwrap().contains("separator"));
        let text = "not a log line\n2026-11-26 05:04:54.418 UTC|u|d|s1|LOG:  statement: SELECT 1\n";
        let got: Vec<Read> = StderrLog::new(text.as_bytes(), DEFAULT_PREFIX).unwrap().collect();
        assert_eq!(got[0].as_ref().unwrap_err().line, 1);
        assert_eq!(got[1].as_ref().unwrap().what.sql(), "SELECT 1");
        let pid = "2026-11-26 05:04:54 UTC [812] LOG:  statement: SELECT 2\n";
        let got: Vec<Read> = StderrLog::new(pid.as_bytes(), "%t [%p] ").unwrap().collect();
        assert_eq!(got[0].as_ref().unwrap().session, "812");
    }
}
