//! Latency spectra: per workload and request type, each configuration's latency at every
//! percentile of its measured phase, drawn on a log "nines" axis (0, 90, 99, 99.9, ... each
//! step ten times rarer) with the configurations overlaid, as HdrHistogram's percentile plots
//! draw them; and the same figures as a table (p50 to max) for report.md.
//!
//! A line is a group's reported run, from the union of its measured intervals' HDR histograms
//! (`latency.hlog`), which the caller reads into [`ReportInput::spectra`] at [`quantiles`]. This
//! file owns which quantiles a spectrum holds, where each lies on the axis, which histograms
//! of each workload are drawn (by the request types it declares), and the pictures, section and image files made of them.

use super::doc::{Block, Table, given, num};
use super::svg::{Chart, Line};
use super::{ReportInput, at};
use crate::evaluation::{RunRecord, SweepPoint};
use std::collections::BTreeMap;

use crate::latency::REPLAY_TYPE;
pub use crate::latency::{LatencyTypes, Spectrum};

/// The quantiles every spectrum holds, whatever its count: the minimum, the median and each
/// whole nine up to five. Literals, so a table finds them by equality.
const FIXED: [f64; 7] = [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999];
/// Points between whole nines, for a smooth line.
const PER_DECADE: u32 = 10;
/// The deepest nine a line reaches (a billion latencies and more draw no further).
const MAX_NINES: f64 = 9.0;
/// The table's columns: quantile and heading.
const TABULATED: [(f64, &str); 6] =
    [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9"), (0.9999, "p99.99"), (1.0, "max")];

/// The quantiles a spectrum of `count` latencies holds, rising: [`FIXED`], ten a decade
/// between them and on to the rank of the slowest latency (at most [`MAX_NINES`]), and the
/// maximum (1).
pub fn quantiles(count: u64) -> Vec<f64> {
    let deepest = nines(1.0, count).min(MAX_NINES);
    let steps = (deepest * f64::from(PER_DECADE) + 1e-9).floor() as u32;
    // Whole nines up to five are FIXED's literals; a computed 1 - 10^-k may differ in its last bit.
    let between = (1..=steps).filter(|k| k % PER_DECADE != 0 || k / PER_DECADE > 5);
    let mut qs: Vec<f64> = FIXED.to_vec();
    qs.extend(between.map(|k| 1.0 - 10f64.powf(-f64::from(k) / f64::from(PER_DECADE))));
    qs.push(1.0);
    qs.sort_by(f64::total_cmp);
    qs.dedup();
    qs
}

/// Where quantile `q` of `count` latencies lies on the nines axis: -log10(1 - q), so 0.9 is 1
/// and 0.999 is 3; the maximum, and any quantile finer than the data tells apart, at the rank
/// of the slowest latency (log10 of the count).
pub fn nines(q: f64, count: u64) -> f64 {
    let slowest = (count.max(1) as f64).log10();
    if q >= 1.0 { slowest } else { (-(1.0 - q).log10()).clamp(0.0, slowest) }
}

/// The percentile a whole nine stands for, as the axis labels it: 0, 90, 99, 99.9, ...
fn percentile_label(nine: u32) -> String {
    match nine {
        0 => "0".into(),
        1 => "90".into(),
        2 => "99".into(),
        n => format!("99.{}", "9".repeat(n as usize - 2)),
    }
}

/// One line of a picture: a run's spectra and the name its line gets.
pub(super) struct Curve<'a> {
    pub name: String,
    pub types: LatencyTypes,
    pub spectra: &'a BTreeMap<String, Spectrum>,
}

/// A workload at a sweep point, a line per configuration.
pub(super) struct Place<'a> {
    /// As headings name it: `randread at iodepth = 4`.
    pub label: String,
    /// The start of its files' names: `latency-randread-iodepth-4`.
    pub stem: String,
    pub curves: Vec<Curve<'a>>,
}

impl<'a> Place<'a> {
    pub fn new(workload: &str, sweep: Option<&SweepPoint>) -> Place<'a> {
        let point = sweep.map(|p| format!("-{}-{}", p.param, super::sweep_value(p))).unwrap_or_default();
        Place {
            label: format!("{workload}{}", at(sweep)),
            stem: format!("latency-{}", slug(&format!("{workload}{point}"))),
            curves: Vec::new(),
        }
    }

    /// Adds a line named `name` of `run`'s spectra in `input`, where one of them is drawn.
    pub fn add(&mut self, name: String, input: &'a ReportInput, run: &RunRecord) {
        let (Some(spectra), Some(data)) = (input.spectra.get(&run.id), input.runs.get(&run.id)) else {
            return;
        };
        let types = data.summary.results.workload().reported().latency_types;
        if spectra.keys().any(|tag| types.name_of(tag).is_some()) {
            self.curves.push(Curve { name, types, spectra });
        }
    }

    /// The histogram tags any line draws, in tag order (reads before writes).
    fn tags(&self) -> Vec<&'a str> {
        let mut tags: Vec<&str> = Vec::new();
        for c in &self.curves {
            let drawn = c.spectra.keys().filter(|t| c.types.name_of(t).is_some());
            tags.extend(drawn.map(String::as_str));
        }
        tags.sort_unstable();
        tags.dedup();
        tags
    }
}

/// A picture: the chart and the image file it is written to.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    pub file: String,
    pub chart: Chart,
}

impl Picture {
    /// The image file's name and its text, a standalone SVG.
    pub fn file(&self) -> (String, String) {
        (self.file.clone(), self.chart.svg())
    }
}

/// The places of an evaluation: each workload at each sweep point, a line per configuration
/// (its group's reported run, or where every run failed its check the first of those).
pub(super) fn places(input: &ReportInput) -> Vec<Place<'_>> {
    let mut out = Vec::new();
    for point in crate::evaluation::points(&input.evaluation) {
        let mut place = Place::new(point.workload, point.sweep);
        for g in &point.groups {
            let Some(run) = g.shown() else { continue };
            place.add(g.configuration.to_string(), input, run);
        }
        out.push(place);
    }
    out
}

/// The pictures of `place`, one per request type; `taken` holds the file names given so far,
/// and each name is new (a workload label that reads the same as another's once made safe).
fn pictures(place: &Place<'_>, taken: &mut Vec<String>) -> Vec<Picture> {
    let typed = place.curves.iter().any(|c| c.types.several());
    let mut out = Vec::new();
    for tag in place.tags() {
        let types = place.curves.iter().find(|c| c.spectra.contains_key(tag)).map(|c| c.types);
        let name = types.and_then(|t| t.name_of(tag)).unwrap_or_else(|| tag.to_string());
        let own = slug(tag.strip_prefix(REPLAY_TYPE).unwrap_or(tag));
        let stem = if typed { format!("{}-{own}", place.stem) } else { place.stem.clone() };
        let mut file = format!("{stem}.svg");
        for n in 2.. {
            if !taken.contains(&file) {
                break;
            }
            file = format!("{stem}-{n}.svg");
        }
        taken.push(file.clone());
        out.push(Picture { file, chart: chart(place, tag, &name) });
    }
    out
}

/// Every place's pictures, in order.
pub(super) fn all_pictures(places: &[Place<'_>]) -> Vec<Picture> {
    let mut taken = Vec::new();
    places.iter().flat_map(|p| pictures(p, &mut taken)).collect()
}

/// The latency of `name` requests (`tag`) at `place`, a line per curve with that histogram.
fn chart(place: &Place<'_>, tag: &str, name: &str) -> Chart {
    let lines: Vec<Line> = place
        .curves
        .iter()
        .filter_map(|c| c.spectra.get(tag).map(|s| Line { name: c.name.clone(), points: points(s) }))
        .collect();
    let deepest = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).fold(0.0, f64::max);
    Chart {
        title: format!("{}: {name}, latency by percentile", place.label),
        x_label: "percentile (log scale of nines: each step ten times rarer)".into(),
        y_label: "ms (log scale)".into(),
        x_names: (0..=(deepest + 1e-9).floor() as u32).map(percentile_label).collect(),
        lines,
        y_log: true,
        ..Chart::default()
    }
}

/// A spectrum's points on the chart: (nines, latency in ms).
fn points(s: &Spectrum) -> Vec<(f64, Option<f64>)> {
    s.points.iter().map(|(q, ns)| (nines(*q, s.count), Some(*ns as f64 / 1e6))).collect()
}

/// The section of `places`: a table of the tabulated percentiles and the pictures; none
/// where no run has a spectrum.
pub(super) fn section(places: &[Place<'_>]) -> Vec<Block> {
    let drawn: Vec<&Place<'_>> = places.iter().filter(|p| !p.curves.is_empty()).collect();
    if drawn.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(2, "Latency spectrum".into()),
        Block::Para(
            "Each configuration's latency at every percentile of its reported run's measured phase, \
             from its HDR histograms (to 3 significant digits). The x axis is in nines (90, 99, \
             99.9, ...: each step ten times rarer) and ends at the slowest request; the y axis is \
             logarithmic. A percentile finer than a run's count of requests tells apart is shown as —."
                .into(),
        ),
    ];
    let mut taken = Vec::new();
    for place in drawn {
        out.push(Block::Heading(3, place.label.clone()));
        out.push(Block::Table(table(place)));
        out.extend(pictures(place, &mut taken).into_iter().map(|p| Block::Chart(p.chart)));
    }
    out
}

/// A row per line and request type: the count and the tabulated percentiles in ms.
fn table(place: &Place<'_>) -> Table {
    let mut header = vec!["configuration".to_string(), "requests".into(), "latencies".into()];
    header.extend(TABULATED.iter().map(|(_, name)| format!("{name} ms")));
    let mut t = Table { header, rows: Vec::new() };
    for tag in place.tags() {
        for c in place.curves.iter() {
            let (Some(s), Some(name)) = (c.spectra.get(tag), c.types.name_of(tag)) else { continue };
            let mut cells = vec![c.name.clone(), name, given(s.count as f64)];
            cells.extend(TABULATED.iter().map(|(q, _)| cell(s, *q)));
            t.push(cells);
        }
    }
    t
}

/// The latency at `q` in ms, or a dash where the run has too few latencies to tell it apart
/// from the maximum (p99.99 of 5,000).
fn cell(s: &Spectrum, q: f64) -> String {
    let resolved = q >= 1.0 || (1.0 - q) * s.count as f64 >= 1.0 - 1e-9;
    match s.points.iter().find(|p| p.0 == q) {
        Some((_, ns)) if resolved => num(*ns as f64 / 1e6),
        _ => "—".into(),
    }
}

/// The report's section: every place of the evaluation.
pub(super) fn blocks(input: &ReportInput) -> Vec<Block> {
    section(&places(input))
}

/// The report's pictures as image files beside it: (file name, SVG).
pub fn report_pictures(input: &ReportInput) -> Vec<(String, String)> {
    all_pictures(&places(input)).iter().map(Picture::file).collect()
}

/// A name safe in a file name: letters, digits, `.`, `_` and `-`, each run of anything else
/// one `-` (`randread at iodepth = 4` is `randread-at-iodepth-4`).
fn slug(name: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let mut s = String::with_capacity(name.len());
    for c in name.chars().map(|c| if safe(c) { c } else { '-' }) {
        if !(c == '-' && s.ends_with('-')) {
            s.push(c);
        }
    }
    s.trim_matches(['-', '.']).to_string()
}

#[cfg(test)]
mod tests;
