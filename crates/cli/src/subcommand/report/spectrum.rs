//! The latency spectra of a bundle's shown runs (each group's reported run, or where every
//! run failed its check the first of those) for the report's pictures, from each run's
//! `latency.hlog`: the measured phase's `<tag>-total` histograms, which the run wrote as it
//! ended, read from the log's tail alone so that a long run costs no more than a short one;
//! else (a replay, a run killed before its end, `--window`) its record's measured intervals
//! merged, as `storbench summarize` rebuilds its summary.

use anyhow::{Context, Result};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use storbench_bench::files::input::open_input;
use storbench_bench::metrics::{LatencyHistogram, read_hlog};
use storbench_bench::run::IntervalData;
use storbench_bench::run::record::{HLOG_FILE, Recordable, StoredRecord, Tally};
use storbench_bench::workload::registry::workload;
use storbench_report::render::spectrum::quantiles;
use storbench_report::render::{ReportInput, Spectrum};

/// How much of the log's end is read for the totals: they are its last lines, a few
/// histograms of a few KiB each.
const TAIL_BYTES: u64 = 4 << 20;

/// Adds to `input`, read from `dir`, the spectra of each group's shown run, over `window`
/// where given. A run whose histograms cannot be read gets no line, and a note says why.
pub fn add(input: &mut ReportInput, dir: &Path, window: Option<(f64, f64)>) {
    let shown: Vec<(String, String, String)> = input
        .evaluation
        .groups()
        .iter()
        .filter_map(|g| g.shown())
        .filter(|r| input.runs.contains_key(&r.id))
        .filter_map(|r| Some((r.id.clone(), r.kind.clone(), r.bundle.clone()?)))
        .collect();
    for (id, kind, bundle) in shown {
        match read(&dir.join(&bundle), &kind, window) {
            Ok(spectra) if !spectra.is_empty() => {
                input.spectra.insert(id, spectra);
            }
            Ok(_) => {}
            Err(e) => {
                input.problems.push(format!("run {id}: no latency spectrum: {}", crate::output::reason(&e)))
            }
        }
    }
}

/// The spectra of the `kind` run in `dir`, by the tags the pictures draw.
fn read(dir: &Path, kind: &str, window: Option<(f64, f64)>) -> Result<BTreeMap<String, Spectrum>> {
    // A kind this storbench does not have draws nothing: its log is not read.
    let Some(types) = workload(kind).map(|w| w.reported.latency_types) else { return Ok(BTreeMap::new()) };
    let totals = if window.is_none() { totals(dir)? } else { BTreeMap::new() };
    let histograms = if totals.is_empty() { measured(dir, window)? } else { totals };
    let drawn = histograms.into_iter().filter(|(tag, h)| types.name_of(tag).is_some() && !h.is_empty());
    Ok(drawn.map(|(tag, h)| (tag, spectrum(&h))).collect())
}

/// The latencies of `h` at each quantile a spectrum holds.
pub fn spectrum(h: &LatencyHistogram) -> Spectrum {
    let count = h.count();
    Spectrum { count, points: quantiles(count).into_iter().map(|q| (q, h.quantile_ns(q))).collect() }
}

/// The `<tag>-total` histograms at the end of `dir`'s latency.hlog, by tag; none where the
/// run wrote none.
fn totals(dir: &Path) -> Result<BTreeMap<String, LatencyHistogram>> {
    let path = dir.join(HLOG_FILE);
    let mut file = match open_input(&path) {
        Ok(file) => file,
        // The record's reading says what a bundle without its log is.
        Err(e) if e.is_not_found() => return Ok(BTreeMap::new()),
        Err(e) => return Err(e.into()),
    };
    let len = file.metadata().with_context(|| format!("reading {}", path.display()))?.len();
    let (start, mut tail) = (len.saturating_sub(TAIL_BYTES), Vec::new());
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.read_to_end(&mut tail))
        .with_context(|| format!("reading {}", path.display()))?;
    let tail = String::from_utf8_lossy(&tail);
    // Read from the middle of the log, the first line is a piece of one.
    let whole = tail.lines().skip(usize::from(start > 0));
    let lines: Vec<&str> =
        whole.filter(|l| l.split(',').next().is_some_and(|tag| tag.ends_with("-total"))).collect();
    let read = read_hlog(&lines.join("\n")).map_err(|why| anyhow::anyhow!("{}: {why}", path.display()))?;
    let by_tag =
        read.into_iter().filter_map(|(tag, _, _, h)| Some((tag.strip_suffix("-total")?.to_string(), h)));
    Ok(by_tag.collect())
}

/// The measured phase's histograms of `dir`'s record (over `window` where given), by tag.
fn measured(dir: &Path, window: Option<(f64, f64)>) -> Result<BTreeMap<String, LatencyHistogram>> {
    let record = StoredRecord::read(dir)?;
    let out = match window {
        Some(w) => record.outcome_in::<ByTag, serde_json::Value>(w)?,
        None => record.outcome::<ByTag, serde_json::Value>()?,
    };
    Ok(out.totals.0)
}

/// An interval's histograms by tag, whatever the workload: what a spectrum needs of a record.
#[derive(Default)]
struct ByTag(BTreeMap<String, LatencyHistogram>);

impl IntervalData for ByTag {
    fn merge(&mut self, other: &Self) {
        for (tag, h) in &other.0 {
            self.0.entry(tag.clone()).or_default().merge(h);
        }
    }

    fn ops(&self) -> u64 {
        0
    }
}

impl Recordable for ByTag {
    fn tally(&self) -> Tally<'_> {
        let hists = self.0.iter().map(|(tag, h)| (tag.clone(), Cow::Borrowed(h)));
        Tally { counts: BTreeMap::new(), hists: hists.collect() }
    }

    fn from_tally(t: &Tally<'_>) -> Result<Self, String> {
        Ok(ByTag(t.hists.iter().map(|(tag, h)| (tag.clone(), h.as_ref().clone())).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spectrum_holds_the_exact_quantiles_of_its_histogram() {
        // Below 2,048 ns the histogram holds every value exactly.
        let mut h = LatencyHistogram::new();
        (1..=1000).for_each(|ns| h.record(ns));
        let s = spectrum(&h);
        assert_eq!(s.count, 1000);
        let at = |q: f64| s.points.iter().find(|p| p.0 == q).map(|p| p.1);
        let fixed =
            [(0.0, 1), (0.5, 500), (0.9, 900), (0.99, 990), (0.999, 999), (0.9999, 1000), (1.0, 1000)];
        for (q, ns) in fixed {
            assert_eq!(at(q), Some(ns), "quantile {q}");
        }
        assert_eq!(s.points.len(), quantiles(1000).len());
        assert!(s.points.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1), "{:?}", s.points);
        // Ten a decade between: the 1 - 10^-1.5 quantile (96.8 %) is the 969th of 1,000.
        let q = 1.0 - 10f64.powf(-1.5);
        assert_eq!(at(q), Some((q * 1000.0).ceil() as u64));
    }
}
