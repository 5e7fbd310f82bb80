//! CSV records as PostgreSQL's csvlog writes them: fields separated by commas, a field in
//! double quotes may hold commas, doubled quotes and line breaks, so one record may span
//! several lines. Read one record at a time; a record longer than the limit is an error, not
//! memory without bound.

use super::LineError;
use std::io::BufRead;

/// The longest record read: a statement of 64 MiB is already far past any real one.
const MAX_RECORD: usize = 64 << 20;

/// Reads records from `input`, counting lines.
pub struct Records<R> {
    input: R,
    line: u64,
}

impl<R: BufRead> Records<R> {
    pub fn new(input: R) -> Self {
        Records { input, line: 0 }
    }

    /// The next record and the line it starts on; None at the end of the input.
    pub fn next_record(&mut self) -> Option<Result<(u64, Vec<String>), LineError>> {
        let start = self.line + 1;
        let mut text = String::new();
        loop {
            let before = text.len();
            match self.input.read_line(&mut text) {
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
                return Some(Err(LineError::new(start, "a record longer than 64 MiB")));
            }
            if let Some(fields) = split(&text) {
                return Some(Ok((start, fields)));
            }
        }
    }
}

/// The fields of one whole record (`text` ends with its line break); None while a quoted field
/// is still open (the record goes on on the next line).
fn split(text: &str) -> Option<Vec<String>> {
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
    if quoted {
        return None;
    }
    fields.push(field);
    Some(fields)
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
}
