//! The report as a document of plain blocks (headings, paragraphs, lists, tables, charts),
//! built once and written by each exporter (`html`, `markdown`, `text`), so the formats never
//! disagree about content.

use super::svg::Chart;

/// One piece of a report, in reading order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Level 1 to 3.
    Heading(u8, String),
    Para(String),
    List(Vec<String>),
    /// Key findings: items that are claims, and items that say a difference is not one.
    Findings(Vec<Finding>),
    Table(Table),
    /// Only in formats that can draw (HTML).
    Chart(Chart),
}

/// One key finding sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub text: String,
    /// False where the sentence says a difference lies within the run-to-run spread.
    pub claim: bool,
}

/// A table; `marked` rows (the reported run) are emphasised.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub cells: Vec<String>,
    pub marked: bool,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table { header: header.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    pub fn push(&mut self, cells: Vec<String>) {
        self.rows.push(Row { cells, marked: false });
    }

    /// Key/value rows, leaving out the keys whose value is unknown.
    pub fn pairs(header: [&str; 2], pairs: Vec<(&str, Option<String>)>) -> Table {
        let mut t = Table::new(&header);
        for (k, v) in pairs {
            if let Some(v) = v {
                t.push(vec![k.to_string(), v]);
            }
        }
        t
    }
}

/// A number as a report shows it: thousands separated, with fewer decimals as it grows
/// (2,418,601; 64,973.7; 501.4; 2.35; 0.412; 0.000241).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let decimals = match v.abs() {
        a if a >= 100_000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 1.0 => 2,
        0.0 => 0,
        // Three significant digits below 1 (0.412, 0.000241), so fast latencies keep theirs.
        a => (2 - a.log10().floor() as i32).clamp(3, 12) as usize,
    };
    let text = format!("{:.*}", decimals, v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let grouped = group(int);
    let sign = if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
    if frac.is_empty() { format!("{sign}{grouped}") } else { format!("{sign}{grouped}.{frac}") }
}

/// A figure a user gave (a limit, a count) as given: whole numbers grouped without decimals
/// (`20,000`), others as written (`0.5`).
pub fn given(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { num_grouped(v) } else { v.to_string() }
}

fn num_grouped(v: f64) -> String {
    let grouped = group(&format!("{:.0}", v.abs()));
    if v < 0.0 { format!("-{grouped}") } else { grouped }
}

/// Digits in groups of three: `20000` reads `20,000`.
fn group(digits: &str) -> String {
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    grouped
}

/// A percentage without a sign, to one decimal below 10 and none above.
pub fn pct(v: f64) -> String {
    let a = v.abs();
    if a < 10.0 { format!("{a:.1} %") } else { format!("{a:.0} %") }
}

/// An optional figure, or a dash.
pub fn opt(v: Option<f64>, unit: &str) -> String {
    match v {
        Some(v) if unit.is_empty() => num(v),
        Some(v) => format!("{} {unit}", num(v)),
        None => "—".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_the_reference_reports() {
        assert_eq!(num(64973.74), "64,973.7");
        assert_eq!(num(501.44), "501.4");
        assert_eq!(num(2.345), "2.35");
        assert_eq!(num(0.4121), "0.412");
        assert_eq!(num(0.000241), "0.000241");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-1234567.0), "-1,234,567");
        assert_eq!(num(f64::NAN), "—");
        assert_eq!(pct(-35.04), "35 %");
        assert_eq!(pct(4.26), "4.3 %");
        assert_eq!(opt(None, "W"), "—");
    }
}
