//! The report as a document of plain blocks (headings, paragraphs, lists, tables, charts),
//! built once and written by each exporter (`html`, `markdown`, `text`), so the formats never
//! disagree about content.

use super::svg::Chart;
pub use crate::format::{given, num, pct};

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
