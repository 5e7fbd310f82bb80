//! The document as Markdown (GitHub's tables): everything but the charts.

use super::doc::{Block, Table};

/// First line of every Markdown report: marks it as storbench's own, so a later report may
/// replace it and nothing else.
pub const GENERATOR: &str = "<!-- written by storbench report -->";

pub(super) fn page(blocks: &[Block]) -> String {
    let mut s = format!("{GENERATOR}\n");
    for b in blocks {
        let text = match b {
            Block::Heading(level, text) => format!("{} {}", "#".repeat(*level as usize), inline(text)),
            Block::Para(text) => inline(text),
            Block::List(items) => list(items.iter().map(String::as_str)),
            Block::Findings(items) => list(items.iter().map(|f| f.text.as_str())),
            Block::Table(t) => table(t),
            Block::Chart(_) => continue,
        };
        s.push('\n');
        s.push_str(&text);
        s.push('\n');
    }
    s
}

fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.map(|i| format!("- {}", inline(i))).collect::<Vec<_>>().join("\n")
}

fn table(t: &Table) -> String {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![line(&t.header), format!("|{}", " --- |".repeat(t.header.len()))];
    out.extend(t.rows.iter().map(|r| line(&r.cells)));
    out.join("\n")
}

/// A cell's text with what Markdown would read as table syntax escaped.
fn cell(text: &str) -> String {
    let text = inline(text).replace('|', "\\|").replace('\n', " ");
    if text.is_empty() { " ".into() } else { text }
}

/// Text from plans and bundles (names, descriptions, errors) with the characters a Markdown
/// viewer would take for HTML written as entities, so it shows as written.
fn inline(text: &str) -> String {
    crate::text::visible(text).replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_in_plan_text_shows_as_text() {
        let md = page(&[Block::Para("6 x SSD <script>alert(1)</script> & more".into())]);
        assert!(md.contains("6 x SSD &lt;script&gt;alert(1)&lt;/script&gt; &amp; more"), "{md}");
    }
}
