//! Two bundles side by side (`storbench compare A B`), possibly from different machines.
//!
//! Groups are matched by workload label and sweep point, and by configuration name where both
//! bundles have it (otherwise every configuration of one meets every one of the other). Two
//! single runs of the same kind of workload are compared directly whatever their names. The
//! HTML and Markdown comparisons also hold the latency spectra of the matched groups, A's and
//! B's lines overlaid (`spectrum`).

use super::doc::{Block, Finding, Table, num};
use super::findings;
use super::spectrum::{self, Place};
use super::{ReportInput, at, html, markdown, text};
use crate::evaluation::Point;
use crate::evaluation::{Group, difference};

/// Which bundle is which: a short name ("A") and where it came from (its path).
pub struct Side<'a> {
    pub input: &'a ReportInput,
    pub name: &'a str,
    pub source: &'a str,
}

/// The comparison for a terminal: the findings, then the table.
pub fn compare_text(a: &Side<'_>, b: &Side<'_>) -> String {
    text::page(&document(a, b))
}

pub fn compare_html(a: &Side<'_>, b: &Side<'_>) -> String {
    html::page(&title(a, b), &with_spectra(a, b))
}

pub fn compare_markdown(a: &Side<'_>, b: &Side<'_>) -> String {
    markdown::page(&with_spectra(a, b))
}

/// The latency spectra of the matched groups as image files: (file name, SVG).
pub fn compare_pictures(a: &Side<'_>, b: &Side<'_>) -> Vec<(String, String)> {
    let (pa, pb) =
        (crate::evaluation::points(&a.input.evaluation), crate::evaluation::points(&b.input.evaluation));
    let places = places(a, b, &pairs(&pa, &pb));
    spectrum::all_pictures(&places).iter().map(spectrum::Picture::file).collect()
}

/// The comparison with the latency spectra after the table (for files, not the terminal).
fn with_spectra(a: &Side<'_>, b: &Side<'_>) -> Vec<Block> {
    let (pa, pb) =
        (crate::evaluation::points(&a.input.evaluation), crate::evaluation::points(&b.input.evaluation));
    let mut d = document(a, b);
    d.extend(spectrum::section(&places(a, b, &pairs(&pa, &pb))));
    d
}

/// A place per matched workload, with a line for each of A's and B's groups there.
fn places<'a>(a: &Side<'a>, b: &Side<'a>, pairs: &[Pair<'_>]) -> Vec<Place<'a>> {
    let mut out: Vec<Place<'a>> = Vec::new();
    for (place, ga, gb) in pairs {
        let i = match out.iter().position(|p| p.label == *place) {
            Some(i) => i,
            None => {
                out.push(Place::new(place, None));
                out.len() - 1
            }
        };
        for (side, g) in [(a, ga), (b, gb)] {
            let name = format!("{} {}", side.name, g.configuration);
            let Some(run) = g.shown() else { continue };
            if !out[i].curves.iter().any(|c| c.name == name) {
                out[i].add(name, side.input, run);
            }
        }
    }
    out
}

fn title(a: &Side<'_>, b: &Side<'_>) -> String {
    format!("storbench compare: {} vs {}", a.name, b.name)
}

fn document(a: &Side<'_>, b: &Side<'_>) -> Vec<Block> {
    let (pa, pb) =
        (crate::evaluation::points(&a.input.evaluation), crate::evaluation::points(&b.input.evaluation));
    let pairs = pairs(&pa, &pb);
    let describe = |s: &Side<'_>| {
        let e = &s.input.evaluation;
        format!(
            "{} = {} ({}, {} run(s), storbench {})",
            s.name,
            s.source,
            e.name,
            e.runs.len(),
            e.tool_version
        )
    };
    let mut found = Vec::new();
    let (na, nb) = (a.name, b.name);
    let header = [
        "workload".into(),
        na.into(),
        format!("{na} median"),
        format!("{na} min–max"),
        nb.into(),
        format!("{nb} median"),
        format!("{nb} min–max"),
        format!("{na} vs {nb}"),
        "verdict".into(),
    ];
    let mut table = Table { header: header.to_vec(), rows: Vec::new() };
    for (place, ga, gb) in &pairs {
        let la = format!("{} {}", a.name, ga.configuration);
        let lb = format!("{} {}", b.name, gb.configuration);
        let ga = Group { configuration: &la, ..ga.clone() };
        let gb = Group { configuration: &lb, ..gb.clone() };
        if let Some((row, finding)) = compare_groups(place, &ga, &gb) {
            table.push(row);
            found.extend(finding);
        }
    }
    if found.is_empty() {
        found.push(Finding { text: nothing_matched(&pa, &pb), claim: false });
    }
    vec![
        Block::Heading(1, title(a, b)),
        Block::List(vec![describe(a), describe(b)]),
        Block::Heading(2, "Findings".into()),
        Block::Findings(found),
        Block::Heading(2, "Medians side by side".into()),
        Block::Table(table),
    ]
}

type Pair<'a> = (String, Group<'a>, Group<'a>);

/// The groups of A and B that measured the same thing.
fn pairs<'a>(pa: &[Point<'a>], pb: &[Point<'a>]) -> Vec<Pair<'a>> {
    if let ([x], [y]) = (pa, pb)
        && let ([ga], [gb]) = (x.groups.as_slice(), y.groups.as_slice())
        && ga.runs.len() == 1
        && gb.runs.len() == 1
        && ga.runs[0].kind == gb.runs[0].kind
    {
        let place = if x.workload == y.workload {
            x.workload.to_string()
        } else {
            format!("{} / {}", x.workload, y.workload)
        };
        return vec![(place, ga.clone(), gb.clone())];
    }
    let mut out = Vec::new();
    for x in pa {
        let Some(y) = pb.iter().find(|y| y.workload == x.workload && y.sweep == x.sweep) else { continue };
        let place = format!("{}{}", x.workload, at(x.sweep));
        for ga in &x.groups {
            let same: Vec<&Group<'_>> =
                y.groups.iter().filter(|gb| gb.configuration == ga.configuration).collect();
            let partners = if same.is_empty() { y.groups.iter().collect() } else { same };
            out.extend(partners.into_iter().map(|gb| (place.clone(), ga.clone(), gb.clone())));
        }
    }
    out
}

/// The table row for A against B, and the findings with the better one named first.
fn compare_groups(place: &str, ga: &Group<'_>, gb: &Group<'_>) -> Option<(Vec<String>, Vec<Finding>)> {
    let (sa, sb) = (ga.spread()?, gb.spread()?);
    let higher = ga.reported()?.headline.as_ref()?.higher_is_better;
    let d = difference(&sa, &sb, higher)?;
    // As the findings say it: no side is better where the spreads overlap, or where too few
    // runs stand behind either side to tell the difference from chance.
    let ahead = if d.a_better { ga.configuration } else { gb.configuration };
    let verdict = match (d.within_spread, d.few) {
        (true, _) => "within the spread".to_string(),
        (false, true) => format!("{ahead} ahead, too few runs to tell"),
        (false, false) => format!("{ahead} better"),
    };
    let range = |s: &crate::evaluation::Spread| format!("{}–{}", num(s.min), num(s.max));
    let metric = ga.reported()?.headline.as_ref()?.metric.clone();
    let row = vec![
        format!("{place} ({metric})"),
        ga.configuration.to_string(),
        format!("{}{} (n={})", num(sa.median), ga.errors_note(), sa.n),
        range(&sa),
        gb.configuration.to_string(),
        format!("{}{} (n={})", num(sb.median), gb.errors_note(), sb.n),
        range(&sb),
        format!("{:+.1} %", d.pct),
        verdict,
    ];
    let found = if d.a_better || d.within_spread {
        findings::pair(place, (ga, &sa), (gb, &sb))
    } else {
        findings::pair(place, (gb, &sb), (ga, &sa))
    };
    Some((row, found))
}

fn nothing_matched(pa: &[Point<'_>], pb: &[Point<'_>]) -> String {
    let names = |p: &[Point<'_>]| {
        let mut v: Vec<&str> = p.iter().map(|p| p.workload).collect();
        v.dedup();
        if v.is_empty() { "nothing measured".to_string() } else { v.join(", ") }
    };
    format!(
        "Nothing to compare: no workload with a measured run appears in both (A: {}; B: {}).",
        names(pa),
        names(pb)
    )
}
