//! CSV records as PostgreSQL's csvlog writes them: fields separated by commas, a field in
//! double quotes may hold commas, doubled quotes and line breaks, so one record may span
//! several lines. Read one record at a time; a record longer than the limit is an error, not
//! memory without bound.

use super::{LineError, MAX_RECORD, read_line_within, skip_line};
use std::io::BufRead;

/// Reads records from `input`, counting lines.
pub struct Records<R> {
    input: R,
    line: u64,
}

impl<R: BufRead> Records<R> {
    pub fn new(input: R) -> Self {
        Records { input, line: 0 }
    }

    /// The next record and the line it starts on; None at the end of the input. Linear in the
    /// record whatever its lines (whether a quoted field is still open is kept as each line
    /// comes, by its quotes' parity), and never more than `MAX_RECORD` held, a line without
    /// an end included.
    pub fn next_record(&mut self) -> Option<Result<(u64, Vec<String>), LineError>> {
        let start = self.line + 1;
        let mut text = Vec::new();
        let mut open = false;
        loop {
            let before = text.len();
            match read_line_within(&mut self.input, &mut text, MAX_RECORD + 1 - before) {
                Ok(0) if before == 0 => return None,
                Ok(0) => {
                    return Some(Err(LineError::new(
                        start,
                        "a quoted field is not closed at the end of the log",
                    )));
                }
                Ok(_) => self.line += 1,
                Err(e) => {
                    return Some(Err(LineError::new(self.line + 1, format!("reading the log: {e}"))));
                }
            }
            if text.len() > MAX_RECORD {
                // The rest of the line is passed over, so the next record starts on the next one.
                let _ = skip_line(&mut self.input);
                return Some(Err(LineError::new(start, "a record longer than 64 MiB")));
            }
            open ^= text[before..].iter().filter(|&&b| b == b'"').count() % 2 == 1;
            if !open {
                return Some(Ok((start, split(&String::from_utf8_lossy(&text)))));
            }
        }
    }
}

/// The fields of one whole record (`text` ends with its line break, and no quoted field is
/// left open).
fn split(text: &str) -> Vec<String> {
    let text = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(text);
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (false, c) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_keep_commas_quotes_and_line_breaks_and_an_open_one_is_an_error() {
        let text = "a,\"b,c\",\"say \"\"hi\"\"\",,\"two\nlines\"\nnext,1\n\"open\n";
        let mut r = Records::new(text.as_bytes());
        let (line, first) = r.next_record().unwrap().unwrap();
        assert_eq!(
            (line, first),
            (1, vec!["a".to_string(), "b,c".into(), "say \"hi\"".into(), "".into(), "two\nlines".into()])
        );
        let (line, second) = r.next_record().unwrap().unwrap();
        assert_eq!((line, second), (3, vec!["next".to_string(), "1".into()]));
        assert_eq!(r.next_record().unwrap().unwrap_err().line, 4);
        assert!(r.next_record().is_none());
    }

    #[test]
    fn a_record_of_many_lines_reads_in_linear_time_and_an_endless_line_in_bounded_memory() {
        // 200,000 lines inside one quoted field: re-reading the record at each line would take
        // minutes.
        let many = format!("a,\"{}\"\nnext,1\n", "x\n".repeat(200_000));
        let started = std::time::Instant::now();
        let mut r = Records::new(many.as_bytes());
        let (_, fields) = r.next_record().unwrap().unwrap();
        assert_eq!(fields[1].len(), 400_000);
        assert_eq!(r.next_record().unwrap().unwrap(), (200_002, vec!["next".to_string(), "1".into()]));
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        // A line past the limit with no end: refused by its line, holding no more than the
        // limit, and the next line read as the next record.
        let endless = std::io::Read::chain(
            std::io::Read::take(std::io::repeat(b'y'), MAX_RECORD as u64 + 10),
            &b"\nok,2\n"[..],
        );
        let mut r = Records::new(std::io::BufReader::new(endless));
        assert_eq!(r.next_record().unwrap().unwrap_err().line, 1);
        assert_eq!(r.next_record().unwrap().unwrap(), (2, vec!["ok".to_string(), "2".into()]));
    }
}
