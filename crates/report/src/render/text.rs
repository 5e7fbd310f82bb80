//! The document as plain text for a terminal: headings underlined, tables in aligned columns,
//! no charts.

use super::doc::{Block, Table};

pub(super) fn page(blocks: &[Block]) -> String {
    let mut s = String::new();
    for b in blocks {
        let text = match b {
            Block::Heading(_, text) => format!("{text}\n{}", "-".repeat(text.chars().count())),
            Block::Para(text) => text.clone(),
            Block::List(items) => bullets(items.iter().map(String::as_str)),
            Block::Findings(items) => bullets(items.iter().map(|f| f.text.as_str())),
            Block::Table(t) => table(t),
            Block::Chart(_) => continue,
        };
        s.push_str(&text);
        s.push_str("\n\n");
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

fn bullets<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.map(|i| format!("* {i}")).collect::<Vec<_>>().join("\n")
}

/// Columns padded to their widest cell; the first left-aligned, figures right-aligned.
fn table(t: &Table) -> String {
    let rows: Vec<&Vec<String>> = std::iter::once(&t.header).chain(t.rows.iter().map(|r| &r.cells)).collect();
    let width = |i: usize| rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..t.header.len()).map(width).collect();
    let line = |cells: &Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| if i == 0 { format!("{c:<w$}") } else { format!("{c:>w$}") })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    rows.iter().map(|r| line(r)).collect::<Vec<_>>().join("\n")
}
