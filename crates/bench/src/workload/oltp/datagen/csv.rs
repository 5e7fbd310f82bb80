//! DS3's CSV bytes, both ways: `Csv` writes a row into a reused buffer (integers by a
//! two-digits-at-a-time formatter, money with two decimals, dates `YYYY/MM/DD`, no quoting, no
//! allocation per row), and `parse_row` reads a generated line back into typed `Field`s for the
//! loaders that take rows rather than CSV. Every backend therefore gets the very same values.

use crate::workload::oltp::schema::{Date, Field, Table};

/// "00" "01" ... "99": two digits per table lookup.
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// A row writer. Every field method appends the value and a comma; `end` turns the last comma
/// into the line end, so a row is written without a "first field?" test.
pub(super) struct Csv<'a> {
    buf: &'a mut Vec<u8>,
    eol: &'static [u8],
}

impl<'a> Csv<'a> {
    pub fn new(buf: &'a mut Vec<u8>, crlf: bool) -> Self {
        Csv { buf, eol: if crlf { b"\r\n" } else { b"\n" } }
    }

    /// `v` in decimal, without a separator (for values built from several parts).
    #[inline]
    pub fn put_int(&mut self, mut v: u64) -> &mut Self {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        while v >= 100 {
            let d = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            tmp[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
        }
        if v >= 10 {
            let d = v as usize * 2;
            i -= 2;
            tmp[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
        } else {
            i -= 1;
            tmp[i] = b'0' + v as u8;
        }
        self.buf.extend_from_slice(&tmp[i..]);
        self
    }

    /// Bytes as they are, without a separator.
    #[inline]
    pub fn put(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }

    /// Two digits, zero-padded (months, days).
    #[inline]
    pub fn put_2(&mut self, v: u8) -> &mut Self {
        let d = usize::from(v % 100) * 2;
        self.put(&PAIRS[d..d + 2])
    }

    #[inline]
    pub fn sep(&mut self) -> &mut Self {
        self.buf.push(b',');
        self
    }

    #[inline]
    pub fn int(&mut self, v: u64) -> &mut Self {
        self.put_int(v).sep()
    }

    #[inline]
    pub fn text(&mut self, b: &[u8]) -> &mut Self {
        self.put(b).sep()
    }

    /// An amount in cents as `units.cc`.
    #[inline]
    pub fn cents(&mut self, c: u64) -> &mut Self {
        self.put_int(c / 100).put(b".").put_2((c % 100) as u8).sep()
    }

    #[inline]
    pub fn date(&mut self, year: u16, month: u8, day: u8) -> &mut Self {
        self.put_int(u64::from(year)).put(b"/").put_2(month).put(b"/").put_2(day).sep()
    }

    /// Ends the row: the trailing comma becomes the line end.
    #[inline]
    pub fn end(&mut self) {
        self.buf.pop();
        self.buf.extend_from_slice(self.eol);
    }
}

/// How a column's text is read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Int,
    Text,
    Cents,
    Date,
}

/// The kinds of `table`'s columns, in `Table::columns` order.
pub(super) fn kinds(table: Table) -> &'static [Kind] {
    use Kind::{Cents as C, Date as D, Int as I, Text as T};
    match table {
        Table::Categories => &[I, T],
        Table::Products => &[I, I, T, T, C, I, I, I],
        Table::Inventory | Table::CustHist => &[I, I, I],
        Table::Customers => &[I, T, T, T, T, T, T, T, T, I, T, T, I, T, T, T, T, I, I, T],
        Table::Orders => &[I, D, I, C, C, C],
        Table::Orderlines => &[I, I, I, I, D],
        Table::Membership => &[I, I, D],
        Table::Reviews => &[I, I, D, I, I, T, T],
        Table::ReviewsHelpfulness => &[I, I, I, I],
        Table::Reorder => &[],
    }
}

/// The most columns any table has (customers).
pub(super) const MAX_COLUMNS: usize = 20;

/// Reads one generated line (without its line end) into `out`; returns the number of fields.
/// The generator writes only ASCII digits, letters and a few marks, so nothing here can fail
/// on its output; a malformed value would read as 0 or as an empty field.
pub(super) fn parse_row<'a>(line: &'a [u8], kinds: &[Kind], out: &mut [Field<'a>; MAX_COLUMNS]) -> usize {
    let mut n = 0;
    for (raw, kind) in line.split(|&b| b == b',').zip(kinds) {
        out[n] = match kind {
            Kind::Int => Field::Int(digits(raw)),
            Kind::Cents => Field::Cents(cents(raw)),
            Kind::Date => Field::Date(date(raw)),
            Kind::Text if raw.is_empty() => Field::Empty,
            Kind::Text => Field::Text(std::str::from_utf8(raw).unwrap_or_default()),
        };
        n += 1;
    }
    n
}

fn digits(b: &[u8]) -> i64 {
    b.iter().fold(0i64, |v, &d| v * 10 + i64::from(d.wrapping_sub(b'0')))
}

fn cents(b: &[u8]) -> i64 {
    match b.iter().position(|&c| c == b'.') {
        Some(dot) => digits(&b[..dot]) * 100 + digits(&b[dot + 1..]),
        None => digits(b) * 100,
    }
}

fn date(b: &[u8]) -> Date {
    let mut parts = b.split(|&c| c == b'/').map(digits);
    let mut next = || parts.next().unwrap_or(0);
    Date { year: next() as u16, month: next() as u8, day: next() as u8 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(f: impl FnOnce(&mut Csv<'_>), crlf: bool) -> String {
        let mut buf = Vec::new();
        let mut w = Csv::new(&mut buf, crlf);
        f(&mut w);
        w.end();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn integers_money_and_dates_are_written_as_ds3_writes_them() {
        let line = row(
            |w| {
                for v in [0, 7, 10, 99, 100, 12_345, u64::MAX] {
                    w.int(v);
                }
                w.cents(5).cents(1_000).cents(4_000_033).date(2013, 2, 8).text(b"").text(b"x");
            },
            false,
        );
        assert_eq!(line, "0,7,10,99,100,12345,18446744073709551615,0.05,10.00,40000.33,2013/02/08,,x\n");
        assert_eq!(row(|w| _ = w.int(1).int(2), true), "1,2\r\n");
    }

    #[test]
    fn a_line_reads_back_into_the_typed_fields_it_was_written_from() {
        let line =
            row(|w| _ = w.int(42).date(2013, 12, 31).int(7).cents(12_345).cents(1_019).cents(13_364), false);
        let mut out = [Field::Empty; MAX_COLUMNS];
        let n = parse_row(line.trim_end().as_bytes(), kinds(Table::Orders), &mut out);
        let d = Date { year: 2013, month: 12, day: 31 };
        assert_eq!(
            out[..n],
            [
                Field::Int(42),
                Field::Date(d),
                Field::Int(7),
                Field::Cents(12_345),
                Field::Cents(1_019),
                Field::Cents(13_364)
            ]
        );
        let n = parse_row(b"1,Action", kinds(Table::Categories), &mut out);
        assert_eq!(out[..n], [Field::Int(1), Field::Text("Action")]);
        assert_eq!(kinds(Table::Customers).len(), MAX_COLUMNS);
    }
}
