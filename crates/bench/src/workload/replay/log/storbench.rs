//! storbench's own request log (`oltp run --record`; the line format is
//! `crate::workload::oltp::requests`): each line a DS3 call with its time and session. A line
//! holds no user or database, so a replay's `--user` and `--database` filters do not apply to
//! it. Blank lines are skipped.

use super::{Body, Entry, LineError, Lines, Read, What};
use crate::workload::oltp::requests::Line;
use std::io::BufRead;

/// A request log's calls.
pub struct RequestLog<R> {
    lines: Lines<R>,
}

impl<R: BufRead> RequestLog<R> {
    pub fn new(input: R) -> Self {
        RequestLog { lines: Lines::new(input) }
    }
}

impl<R: BufRead> Iterator for RequestLog<R> {
    type Item = Read;

    fn next(&mut self) -> Option<Read> {
        self.lines.next_filled(|line, text| {
            let l = Line::parse(text).map_err(|why| LineError::new(line, why))?;
            Ok(Entry {
                at_ns: l.time.as_nanosecond(),
                session: l.session,
                user: String::new(),
                database: String::new(),
                kind: l.call.kind().to_string(),
                what: What::Request(Body::Ds3(l.call)),
                line,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::oltp::ds3::call::Call;

    #[test]
    fn each_line_is_a_call_in_its_session_and_a_bad_line_is_named_by_its_number() {
        let log = concat!(
            r#"{"time":"2026-11-26T10:00:00Z","source":"h","session":"1","type":"login","params":{"username":"user3","password":"password"}}"#,
            "\n\n",
            r#"{"time":"2026-11-26T10:00:00.5Z","source":"h","session":"2","type":"browse_by_category","params":{"category":"4","batch":10}}"#,
            "\n",
            r#"{"time":"2026-11-26T10:00:01Z","session":"1","type":"purchase","params":{"customer_id":3}}"#,
            "\n",
        );
        let got: Vec<Read> = RequestLog::new(log.as_bytes()).collect();
        assert_eq!(got.len(), 3);
        let login = got[0].as_ref().unwrap();
        assert_eq!((login.session.as_str(), login.kind.as_str(), login.line), ("1", "login", 1));
        let browse = got[1].as_ref().unwrap();
        assert_eq!(browse.at_ns - login.at_ns, 500_000_000);
        assert_eq!(browse.what, What::Request(Body::Ds3(Call::BrowseByCategory { category: 4, batch: 10 })));
        assert_eq!(browse.line, 3, "the blank line is counted, not read");
        let bad = got[2].as_ref().unwrap_err();
        assert_eq!(bad.line, 4);
        assert!(bad.why.contains("prod_ids"), "names the missing parameter: {}", bad.why);
    }
}
