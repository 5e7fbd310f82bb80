//! MySQL's and MariaDB's general query log and slow query log (`long_query_time = 0` logs
//! every statement). The general log has a line per command (`Query`, `Execute` with its
//! parameters in place, `Connect` with the user and database, `Init DB`), a time where the
//! second changed (MariaDB's `YYMMDD H:MM:SS`) or on every line (MySQL's ISO time), and a
//! statement's line breaks kept on the lines after it. The slow log has a `#` header per
//! statement (user, thread, schema), `SET timestamp=N;` (its start, to the second) and the
//! statement up to the next header.

use super::{Body, Close, Entry, LineError, Lines, Read, What, time};
use std::io::BufRead;

/// The three lines a server writes when it opens a log (again at every restart).
fn is_banner(text: &str) -> bool {
    let columns = text.starts_with("Time") && text.contains("Id") && text.ends_with("Argument");
    columns || text.contains(", Version: ") || text.starts_with("Tcp port: ")
}

/// Who a session is, from its `Connect` line.
#[derive(Debug, Clone, Default)]
struct Session {
    user: String,
    database: String,
}

/// A general query log's requests: each `Query` and `Execute`.
pub struct GeneralLog<R> {
    lines: Lines<R>,
    /// The time of the last line that had one.
    at_ns: i128,
    sessions: std::collections::HashMap<String, Session>,
}

impl<R: BufRead> GeneralLog<R> {
    pub fn new(input: R) -> Self {
        GeneralLog { lines: Lines::new(input), at_ns: 0, sessions: Default::default() }
    }
}

/// One command line of a general log: its time if it has one, the session, the command and
/// its argument.
struct Command<'a> {
    at_ns: Option<i128>,
    id: &'a str,
    command: &'a str,
    argument: &'a str,
}

const COMMANDS: [&str; 12] = [
    "Query",
    "Execute",
    "Connect",
    "Init DB",
    "Quit",
    "Prepare",
    "Close stmt",
    "Reset stmt",
    "Change user",
    "Field List",
    "Ping",
    "Statistics",
];

/// `[time]\t<blanks>ID COMMAND\tARGUMENT`; None for a line that is not one (a statement's
/// next line).
fn command(text: &str) -> Option<Command<'_>> {
    let (stamp, rest) = text.split_once('\t')?;
    let at_ns = match stamp.trim() {
        "" => None,
        s => Some(time::parse_iso(s).or_else(|| time::parse_yymmdd(s))?),
    };
    let rest = rest.trim_start_matches(['\t', ' ']);
    let digits = rest.find(|c: char| !c.is_ascii_digit()).filter(|&n| n > 0)?;
    let (id, rest) = rest.split_at(digits);
    let rest = rest.strip_prefix(' ')?;
    let command = COMMANDS.into_iter().find(|c| rest.starts_with(c) && rest[c.len()..].starts_with('\t'))?;
    Some(Command { at_ns, id, command, argument: &rest[command.len() + 1..] })
}

impl<R: BufRead> Iterator for GeneralLog<R> {
    type Item = Read;

    fn next(&mut self) -> Option<Read> {
        self.entry().transpose()
    }
}

impl<R: BufRead> GeneralLog<R> {
    /// The next request; None at the end of the log.
    fn entry(&mut self) -> Result<Option<Entry>, LineError> {
        loop {
            let Some((line, text)) = self.lines.next().transpose()? else { return Ok(None) };
            if is_banner(&text) {
                continue;
            }
            let Some(c) = command(&text) else {
                return Err(LineError::new(line, "not a command line of a general query log"));
            };
            self.at_ns = c.at_ns.unwrap_or(self.at_ns);
            let session = self.sessions.entry(c.id.to_string()).or_default();
            match c.command {
                "Connect" => *session = connected(c.argument),
                "Init DB" => session.database = c.argument.trim().to_string(),
                "Query" | "Execute" => {
                    let (id, first) = (c.id.to_string(), c.argument.to_string());
                    let sql = self.statement(first);
                    return Ok(Some(self.entry_of(id, What::Request(Body::Sql(sql)), line)));
                }
                "Quit" => {
                    let id = c.id.to_string();
                    let end = self.entry_of(id, What::End(Close::Disconnect), line);
                    self.sessions.remove(c.id);
                    return Ok(Some(end));
                }
                _ => {}
            }
        }
    }
}

impl<R: BufRead> GeneralLog<R> {
    /// `what` of session `id` at the latest time, line `line`.
    fn entry_of(&self, id: String, what: What, line: u64) -> Entry {
        let s = self.sessions.get(&id).cloned().unwrap_or_default();
        let kind = what.sql_kind();
        Entry { at_ns: self.at_ns, session: id, user: s.user, database: s.database, kind, what, line }
    }

    /// A statement with the lines after it that are not commands (its own line breaks).
    fn statement(&mut self, first: String) -> String {
        self.lines.joined(first, |t| (command(t).is_none() && !is_banner(t)).then_some(t))
    }
}

/// `root@127.0.0.1 on test using TCP/IP` (MariaDB) or `root@localhost on test using Socket`.
fn connected(argument: &str) -> Session {
    let (who, rest) = argument.split_once(" on ").unwrap_or((argument, ""));
    let user = who.split('@').next().unwrap_or("").to_string();
    let database = rest.split(" using ").next().unwrap_or("").trim().to_string();
    Session { user, database }
}

/// A slow query log's requests.
pub struct SlowLog<R> {
    lines: Lines<R>,
    database: String,
}

impl<R: BufRead> SlowLog<R> {
    pub fn new(input: R) -> Self {
        SlowLog { lines: Lines::new(input), database: String::new() }
    }
}

/// What an entry's header says.
#[derive(Default)]
struct Header {
    at_ns: Option<i128>,
    user: String,
    session: String,
}

impl<R: BufRead> Iterator for SlowLog<R> {
    type Item = Read;

    fn next(&mut self) -> Option<Read> {
        self.entry().transpose()
    }
}

impl<R: BufRead> SlowLog<R> {
    /// The next request; None at the end of the log.
    fn entry(&mut self) -> Result<Option<Entry>, LineError> {
        let mut h = Header::default();
        loop {
            let Some((line, text)) = self.lines.next().transpose()? else { return Ok(None) };
            if is_banner(&text) {
                continue;
            }
            if let Some(header) = text.strip_prefix("# ") {
                read_header(header, &mut h);
                continue;
            }
            if let Some(db) = text.strip_prefix("use ").and_then(|t| t.strip_suffix(';')) {
                self.database = db.trim_matches('`').to_string();
                continue;
            }
            if let Some(secs) = text.strip_prefix("SET timestamp=").and_then(|t| t.strip_suffix(';')) {
                match secs.parse::<i128>() {
                    Ok(s) => h.at_ns = Some(s * 1_000_000_000),
                    Err(_) => {
                        return Err(LineError::new(line, format!("timestamp {secs:?} is not a number")));
                    }
                }
                continue;
            }
            let sql = self.statement(text);
            let Some(at_ns) = h.at_ns else {
                return Err(LineError::new(line, "a statement without its SET timestamp"));
            };
            let what = What::Request(Body::Sql(sql));
            let (session, user, database) = (h.session, h.user, self.database.clone());
            return Ok(Some(Entry { at_ns, session, user, database, kind: what.sql_kind(), what, line }));
        }
    }
}

impl<R: BufRead> SlowLog<R> {
    /// A statement up to the next entry's header, its last `;` dropped.
    fn statement(&mut self, first: String) -> String {
        let sql = self.lines.joined(first, |t| (!t.starts_with("# ") && !is_banner(t)).then_some(t));
        sql.strip_suffix(';').map(str::to_string).unwrap_or(sql)
    }
}

/// `User@Host: root[root] @ host [ip]  Id: 31`, `Thread_id: 1384  Schema: test`, `Time: ...`.
fn read_header(header: &str, h: &mut Header) {
    if let Some(who) = header.strip_prefix("User@Host: ") {
        h.user = who.split('[').next().unwrap_or("").trim().to_string();
        if let Some(id) = who.split("Id:").nth(1) {
            h.session = id.trim().to_string();
        }
    } else if let Some(rest) = header.strip_prefix("Thread_id: ") {
        h.session = rest.split_whitespace().next().unwrap_or("").to_string();
    } else if let Some(t) = header.strip_prefix("Time: ") {
        // MySQL's ISO time has the fraction SET timestamp lacks; MariaDB's is to the second.
        h.at_ns = time::parse_iso(t).or(h.at_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERAL: &str = include_str!("../../../../../../fuzz/corpus/replay_log/mariadb10.11-general.log");
    const SLOW: &str = include_str!("../../../../../../fuzz/corpus/replay_log/mariadb10.11-slow.log");

    fn all(reader: impl Iterator<Item = Read>) -> Vec<Entry> {
        reader.map(|r| r.unwrap_or_else(|e| panic!("line {}: {}", e.line, e.why))).collect()
    }

    fn sqls(entries: &[Entry]) -> Vec<&str> {
        entries.iter().map(|e| e.what.sql()).collect()
    }

    const STATEMENTS: [&str; 6] = [
        "SELECT 1",
        "SELECT 'it''s',\n'two\nlines' AS x",
        "CREATE TABLE IF NOT EXISTS sbreplay_t (a int)",
        "INSERT INTO sbreplay_t VALUES (1)",
        "SELECT * FROM sbreplay_t WHERE a = 1",
        "DROP TABLE sbreplay_t",
    ];

    #[test]
    fn mariadbs_general_log_gives_each_query_with_its_session_user_and_database() {
        let got = all(GeneralLog::new(GENERAL.as_bytes()));
        let session: Vec<&Entry> =
            got.iter().filter(|e| e.session == "1384" && matches!(e.what, What::Request(_))).collect();
        assert_eq!(session.iter().map(|e| e.what.sql()).collect::<Vec<_>>(), STATEMENTS);
        let e = session[0];
        assert_eq!((e.user.as_str(), e.database.as_str(), e.kind.as_str()), ("root", "test", "SELECT"));
        assert_eq!(
            e.at_ns,
            time::parse_yymmdd("261126  5:12:51").unwrap(),
            "a line without a time has the last one's"
        );
        assert_eq!(got[0].what.sql(), "SET GLOBAL slow_query_log=ON");
    }

    #[test]
    fn mariadbs_slow_log_gives_the_same_statements_with_their_thread_and_schema() {
        let got = all(SlowLog::new(SLOW.as_bytes()));
        let session: Vec<&Entry> = got.iter().filter(|e| e.session == "1384").collect();
        assert_eq!(session.iter().map(|e| e.what.sql()).collect::<Vec<_>>(), STATEMENTS);
        assert!(
            session.iter().all(|e| e.user == "root"
                && e.database == "test"
                && e.at_ns == 1_795_669_971 * 1_000_000_000)
        );
        assert_eq!(sqls(&got).last(), Some(&"SET GLOBAL general_log=OFF"));
    }

    #[test]
    fn mysqls_general_log_with_a_time_on_every_line_and_an_execute_reads_too() {
        // MySQL 8's layout: an ISO time on each line, the session id right-aligned.
        let text = "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n\
                    Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n\
                    Time                 Id Command    Argument\n\
                    2026-11-26T05:12:51.123456Z\t   31 Connect\tapp@localhost on shop using Socket\n\
                    2026-11-26T05:12:51.200000Z\t   31 Prepare\tSELECT price FROM products WHERE id = ?\n\
                    2026-11-26T05:12:51.200100Z\t   31 Execute\tSELECT price FROM products WHERE id = 7\n\
                    2026-11-26T05:12:51.300000Z\t   31 Quit\t\n";
        let got = all(GeneralLog::new(text.as_bytes()));
        assert_eq!(sqls(&got), ["SELECT price FROM products WHERE id = 7", ""]);
        let quit = &got[1];
        assert_eq!(
            (&quit.what, quit.session.as_str(), quit.user.as_str()),
            (&What::End(Close::Disconnect), "31", "app")
        );
        assert_eq!(quit.at_ns, time::parse_iso("2026-11-26T05:12:51.3Z").unwrap());
        assert_eq!((got[0].user.as_str(), got[0].database.as_str()), ("app", "shop"));
        assert_eq!(got[0].at_ns, time::parse_iso("2026-11-26T05:12:51.2001Z").unwrap());
    }

    #[test]
    fn a_line_that_is_no_command_before_any_statement_is_counted_with_its_number() {
        let text = "garbage here\n\t\t  7 Query\tSELECT 2\n";
        let got: Vec<Read> = GeneralLog::new(text.as_bytes()).collect();
        assert_eq!(got[0].as_ref().unwrap_err().line, 1);
        assert_eq!(got[1].as_ref().unwrap().what.sql(), "SELECT 2");
    }
}
