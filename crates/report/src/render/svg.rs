//! Line charts as inline SVG: per-second series with the measured phase shaded, scaling
//! curves over a sweep, and latency spectra (a log y axis, named x positions). Plain SVG elements only (no script, no fonts or files fetched), so a
//! report opens offline in any browser and prints as it shows.

use std::fmt::Write;

/// A line chart: one or more lines over a shared x axis.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    /// An x range to shade: the measured phase.
    pub shade: Option<(f64, f64)>,
    /// An x range to mark apart, with what it is (a replay's cold start).
    pub band: Option<Band>,
    /// Names for x positions where x is a category (a sweep over non-numeric values).
    pub x_names: Vec<String>,
    /// Draw a dot at every point (scaling curves: few points, each a measured group).
    pub dots: bool,
    /// Where the x axis starts when the data starts later (0: the start of a run).
    pub x_start: Option<f64>,
    /// A logarithmic y axis, gridlines at powers of ten, for values spanning several of them
    /// (latencies from the median to the maximum); values at or below zero are not drawn.
    pub y_log: bool,
}

/// A stretch of the x axis marked apart, and what it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub what: String,
}

/// One named line; a point without a y value breaks the line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, Option<f64>)>,
}

const W: f64 = 760.0;
const H: f64 = 250.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 46.0;
const BOTTOM: f64 = 40.0;
/// Gridlines an axis draws at most: values far past what a run measures (a damaged
/// timeseries.csv) would otherwise step forever.
const MAX_TICKS: usize = 16;
const COLOURS: [&str; 6] = ["#1f6fb4", "#d4452a", "#2c9a3c", "#e08a0b", "#8a52b8", "#6b6b6b"];

/// Maps data to pixels.
struct Frame {
    x: (f64, f64),
    y_max: f64,
    y_step: f64,
    /// On a log y axis, the powers of ten at its bottom and top.
    y_decades: Option<(f64, f64)>,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x.0) / (self.x.1 - self.x.0) * (W - LEFT - RIGHT)
    }
    fn py(&self, y: f64) -> f64 {
        let share = match self.y_decades {
            Some((lo, hi)) => (y.log10() - lo) / (hi - lo),
            None => y / self.y_max,
        };
        H - BOTTOM - share * (H - TOP - BOTTOM)
    }

    /// Whether `y` has a place on the y axis (a log axis has none for zero).
    fn shows(&self, y: f64) -> bool {
        self.y_decades.is_none() || y > 0.0
    }

    /// The y gridlines: round steps from zero, or on a log axis each power of ten (and 2 and 5
    /// times it where the axis spans two decades or fewer).
    fn y_ticks(&self) -> Vec<f64> {
        let Some((lo, hi)) = self.y_decades else {
            let steps = (0..MAX_TICKS).map(|i| i as f64 * self.y_step);
            return steps.take_while(|y| *y <= self.y_max * 1.0001).collect();
        };
        let factors: &[f64] = if hi - lo <= 2.0 { &[1.0, 2.0, 5.0] } else { &[1.0] };
        let decades = (lo as i32..=hi as i32).map(|d| 10f64.powi(d));
        let ticks = decades.flat_map(|p| factors.iter().map(move |f| f * p));
        ticks.filter(|y| y.log10() <= hi + 1e-9).take(MAX_TICKS).collect()
    }
}

impl Chart {
    /// Whether any line has a value to draw.
    pub fn has_data(&self) -> bool {
        self.lines.iter().any(|l| l.points.iter().any(|(_, y)| y.is_some()))
    }

    /// The chart as an `<svg class="chart">` element.
    pub fn svg(&self) -> String {
        let frame = self.frame();
        let mut s = format!(
            "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" \
             width=\"{W}\" height=\"{H}\" role=\"img\"><title>{}</title>\
             <rect width=\"{W}\" height=\"{H}\" fill=\"#fff\"/>",
            esc(&self.title)
        );
        if let Some((a, b)) = self.shade {
            let (x0, x1) = (frame.px(a.max(frame.x.0)), frame.px(b.min(frame.x.1)));
            let h = H - TOP - BOTTOM;
            let _ = write!(
                s,
                "<rect class=\"window\" x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{h}\" \
                 fill=\"#e8eef7\"><title>measured phase</title></rect>",
                (x1 - x0).max(0.0)
            );
        }
        if let Some(b) = &self.band {
            let (x0, x1) = (frame.px(b.from.max(frame.x.0)), frame.px(b.to.min(frame.x.1)));
            let h = H - TOP - BOTTOM;
            let _ = write!(
                s,
                "<rect class=\"band\" x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{h}\" \
                 fill=\"#f6dccb\" fill-opacity=\"0.7\"><title>{}</title></rect>",
                (x1 - x0).max(0.0),
                esc(&b.what)
            );
        }
        self.axes(&mut s, &frame);
        s.push_str("<g class=\"plot\" fill=\"none\" stroke-width=\"1.8\">");
        for (i, line) in self.lines.iter().enumerate() {
            self.line(&mut s, &frame, line, COLOURS[i % COLOURS.len()]);
        }
        s.push_str("</g>");
        self.legend(&mut s);
        s.push_str("</svg>");
        s
    }

    fn frame(&self) -> Frame {
        let xs = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
        let (mut lo, mut hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
        if let Some((a, b)) = self.shade {
            (lo, hi) = (lo.min(a), hi.max(b));
        }
        if let Some(start) = self.x_start {
            lo = lo.min(start);
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if hi <= lo {
            (lo, hi) = (lo - 0.5, hi + 0.5);
        }
        let ys = self.lines.iter().flat_map(|l| l.points.iter().filter_map(|p| p.1));
        let top = ys.clone().fold(0.0_f64, f64::max);
        // Round up to a whole number of round steps, so the top gridline is labelled.
        let step = nice_step(top / 4.0);
        let (y_max, y_step) = if top > 0.0 { ((top / step).ceil() * step, step) } else { (1.0, 0.25) };
        let y_decades = self.y_log.then(|| decades(ys));
        Frame { x: (lo, hi), y_max, y_step, y_decades }
    }

    fn axes(&self, s: &mut String, f: &Frame) {
        for y in f.y_ticks() {
            let py = f.py(y);
            let _ = write!(
                s,
                "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                py + 4.0,
                short(y)
            );
        }
        for (x, label) in self.x_ticks(f) {
            let px = f.px(x);
            // A long label at the right edge (99.99999) ends at its tick instead of past the picture.
            let anchor = if px + 3.6 * label.chars().count() as f64 > W { "end" } else { "middle" };
            let _ = write!(
                s,
                "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>\
                 <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" font-size=\"12\">{}</text>",
                H - BOTTOM,
                H - BOTTOM + 4.0,
                H - BOTTOM + 16.0,
                esc(&label)
            );
        }
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{b:.1}\" y2=\"{b:.1}\" stroke=\"#555\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\
             <text x=\"14\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\" \
             transform=\"rotate(-90 14 {:.1})\">{}</text>",
            W - RIGHT,
            (LEFT + W - RIGHT) / 2.0,
            H - 6.0,
            esc(&self.x_label),
            (TOP + H - BOTTOM) / 2.0,
            (TOP + H - BOTTOM) / 2.0,
            esc(&self.y_label),
            b = H - BOTTOM,
        );
    }

    /// Named categories where given, else about six round numbers across the range.
    fn x_ticks(&self, f: &Frame) -> Vec<(f64, String)> {
        if !self.x_names.is_empty() {
            return self.x_names.iter().enumerate().map(|(i, n)| (i as f64, n.clone())).collect();
        }
        let step = nice_step((f.x.1 - f.x.0) / 6.0);
        let mut x = (f.x.0 / step).ceil() * step;
        let mut ticks = Vec::new();
        while x <= f.x.1 + step * 1e-6 && ticks.len() < MAX_TICKS {
            ticks.push((x, short(x)));
            x += step;
        }
        ticks
    }

    fn line(&self, s: &mut String, f: &Frame, line: &Line, colour: &str) {
        let mut d = String::new();
        let mut run: Vec<(f64, f64)> = Vec::new();
        let flush = |run: &mut Vec<(f64, f64)>, d: &mut String| {
            for (i, (x, y)) in run.iter().enumerate() {
                let _ = write!(d, "{}{:.1} {:.1} ", if i == 0 { "M" } else { "L" }, f.px(*x), f.py(*y));
            }
            if run.len() == 1 {
                // A lone point still shows: a short tick of its own.
                let _ = write!(d, "h0.1 ");
            }
            run.clear();
        };
        for (x, y) in &line.points {
            match y {
                Some(y) if f.shows(*y) => run.push((*x, *y)),
                _ => flush(&mut run, &mut d),
            }
        }
        flush(&mut run, &mut d);
        let _ = write!(
            s,
            "<path d=\"{}\" stroke=\"{colour}\" stroke-linejoin=\"round\" stroke-linecap=\"round\"><title>{}</title></path>",
            d.trim_end(),
            esc(&line.name)
        );
        if self.dots {
            for (x, y) in line.points.iter().filter_map(|(x, y)| y.filter(|y| f.shows(*y)).map(|y| (*x, y))) {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{colour}\"/>",
                    f.px(x),
                    f.py(y)
                );
            }
        }
    }

    fn legend(&self, s: &mut String) {
        let _ = write!(
            s,
            "<text x=\"{LEFT}\" y=\"17\" font-size=\"15\" font-weight=\"bold\">{}</text>",
            esc(&self.title)
        );
        let mut x = LEFT;
        for (i, line) in self.lines.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"27\" width=\"14\" height=\"4\" fill=\"{colour}\"/>\
                 <text x=\"{:.1}\" y=\"33\" font-size=\"12\">{}</text>",
                x + 18.0,
                esc(&line.name)
            );
            x += 30.0 + 6.5 * line.name.chars().count() as f64;
        }
    }
}

/// The powers of ten (as exponents) just below the least positive of `ys` and just above the
/// greatest: at least one decade apart, 0..1 where none is positive.
fn decades(ys: impl Iterator<Item = f64>) -> (f64, f64) {
    let positive = ys.filter(|y| *y > 0.0 && y.is_finite());
    let (min, max) = positive.fold((f64::INFINITY, 0.0_f64), |(a, b), y| (a.min(y), b.max(y)));
    if !min.is_finite() {
        return (0.0, 1.0);
    }
    let (lo, hi) = (min.log10().floor(), max.log10().ceil());
    (lo, if hi > lo { hi } else { lo + 1.0 })
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let base = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * base).find(|s| *s >= raw * 0.999).unwrap_or(10.0 * base)
}

/// An axis label: 2.5M, 40k, 12, 0.5.
fn short(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
    };
    match a {
        a if a >= 1e9 => trim(format!("{:.2}", v / 1e9)) + "G",
        a if a >= 1e6 => trim(format!("{:.2}", v / 1e6)) + "M",
        a if a >= 1e4 => trim(format!("{:.1}", v / 1e3)) + "k",
        // A log axis reaches far below 1: 0.0001 keeps its digit.
        a if a > 0.0 && a < 0.001 => trim(format!("{v:.*}", (2.0 - a.log10().floor()) as usize)),
        _ => trim(format!("{v:.3}")),
    }
}

/// Text made safe inside HTML or SVG elements and attributes.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::text::visible(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(points: Vec<(f64, Option<f64>)>) -> Chart {
        Chart {
            title: "IOPS <r&w>".into(),
            lines: vec![Line { name: "read".into(), points }],
            shade: Some((1.0, 3.0)),
            ..Chart::default()
        }
    }

    #[test]
    fn a_gap_in_the_values_breaks_the_line_and_the_window_is_shaded() {
        let svg = chart(vec![(1.0, Some(10.0)), (2.0, None), (3.0, Some(30.0)), (4.0, Some(20.0))]).svg();
        let d = svg.split("<path d=\"").nth(1).unwrap();
        assert_eq!(d.matches('M').count(), 2, "{d}");
        assert!(svg.contains("class=\"window\""));
        assert!(svg.contains("IOPS &lt;r&amp;w&gt;"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    #[test]
    fn a_band_is_drawn_under_the_lines_with_what_it_is_and_no_band_draws_nothing() {
        let points = vec![(0.0, Some(10.0)), (10.0, Some(30.0))];
        let mut c = chart(points);
        assert!(!c.svg().contains("class=\"band\""));
        c.band = Some(Band { from: 0.0, to: 2.5, what: "cold start: the first 2.5 s".into() });
        let svg = c.svg();
        let band = svg.split("class=\"band\"").nth(1).expect("the band is drawn");
        assert!(band.contains("<title>cold start: the first 2.5 s</title>"), "{band}");
        let width: f64 = band.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        let plot = W - LEFT - RIGHT;
        assert!((width - plot / 4.0).abs() < 1.0, "a quarter of the x range: {width} of {plot}");
        assert!(svg.find("class=\"band\"") < svg.find("class=\"plot\""), "under the lines");
    }

    #[test]
    fn an_empty_or_flat_chart_still_has_finite_coordinates() {
        for points in [vec![], vec![(5.0, Some(0.0))], vec![(1.0, None)]] {
            let svg = chart(points).svg();
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        }
    }

    #[test]
    fn axis_steps_are_round() {
        assert_eq!(nice_step(3.2), 5.0);
        assert_eq!(nice_step(0.13), 0.2);
        assert_eq!(nice_step(1000.0), 1000.0);
        assert_eq!(short(2_500_000.0), "2.5M");
        assert_eq!(short(40_000.0), "40k");
        assert_eq!(short(0.5), "0.5");
    }
}
