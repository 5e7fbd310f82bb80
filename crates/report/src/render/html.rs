//! The document as one self-contained HTML page: styles inline, charts as inline SVG, nothing
//! fetched, so it opens offline and can be mailed as a single file.

use super::doc::{Block, Finding, Table};
use super::svg::esc;
use std::fmt::Write;

/// Marks a page as storbench's own, so a later report may replace it and nothing else.
pub const GENERATOR: &str = "<meta name=\"generator\" content=\"storbench report\">";

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1200px;\
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}\
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}th{background:#f2f2f2}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}tr.reported{background:#fff6d5;font-weight:600}\
ul.findings li{margin:.3em 0}li.not-a-finding{color:#666;font-style:italic}\
div.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:.8em}\
figure{margin:0}svg.chart{width:100%;height:auto;border:1px solid #e3e3e3}";

/// Counts the charts the browser really drew (a plot with a non-empty box) into
/// `data-charts-drawn` on the body, so a headless browser's DOM dump shows whether they rendered.
const CHECK: &str = "<script>(function(){var n=0;document.querySelectorAll('svg.chart g.plot')\
.forEach(function(g){var b=g.getBBox();if(b.width>0||b.height>0)n++;});\
document.body.setAttribute('data-charts-drawn',String(n));})();</script>";

pub(super) fn page(title: &str, blocks: &[Block]) -> String {
    let charts = blocks.iter().filter(|b| matches!(b, Block::Chart(_))).count();
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{GENERATOR}\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head>\n<body data-charts=\"{charts}\">\n",
        esc(title)
    );
    // Consecutive charts share a grid, two abreast where the window is wide enough.
    let mut in_grid = false;
    for b in blocks {
        let chart = matches!(b, Block::Chart(_));
        if chart != in_grid {
            s.push_str(if chart { "<div class=\"charts\">" } else { "</div>\n" });
            in_grid = chart;
        }
        block(&mut s, b);
        s.push('\n');
    }
    if in_grid {
        s.push_str("</div>\n");
    }
    s.push_str(CHECK);
    s.push_str("\n</body></html>\n");
    s
}

fn block(s: &mut String, b: &Block) {
    match b {
        Block::Heading(level, text) => {
            let _ = write!(s, "<h{level}>{}</h{level}>", esc(text));
        }
        Block::Para(text) => {
            let _ = write!(s, "<p>{}</p>", esc(text));
        }
        Block::List(items) => {
            s.push_str("<ul>");
            for i in items {
                let _ = write!(s, "<li>{}</li>", esc(i));
            }
            s.push_str("</ul>");
        }
        Block::Findings(items) => findings(s, items),
        Block::Table(t) => table(s, t),
        Block::Chart(c) => {
            let _ = write!(s, "<figure>{}</figure>", c.svg());
        }
    }
}

fn findings(s: &mut String, items: &[Finding]) {
    s.push_str("<ul class=\"findings\">");
    for f in items {
        let class = if f.claim { "claim" } else { "not-a-finding" };
        let _ = write!(s, "<li class=\"{class}\">{}</li>", esc(&f.text));
    }
    s.push_str("</ul>");
}

fn table(s: &mut String, t: &Table) {
    s.push_str("<table><thead><tr>");
    for (i, h) in t.header.iter().enumerate() {
        // A column of figures has its heading over the digits, on the right.
        let figures = t.rows.iter().filter_map(|r| r.cells.get(i)).all(|c| c.is_empty() || figure(c));
        let class = if figures && !t.rows.is_empty() { " class=\"n\"" } else { "" };
        let _ = write!(s, "<th{class}>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        s.push_str(if r.marked { "<tr class=\"reported\">" } else { "<tr>" });
        for c in &r.cells {
            let class = if figure(c) { " class=\"n\"" } else { "" };
            let _ = write!(s, "<td{class}>{}</td>", esc(c));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
}

/// Whether a cell holds a figure (right-aligned so digits line up): a number, a signed
/// percentage, or the dash of a missing one.
fn figure(cell: &str) -> bool {
    let c = cell.trim_start_matches(['+', '-']);
    c == "—" || c.starts_with(|ch: char| ch.is_ascii_digit())
}
