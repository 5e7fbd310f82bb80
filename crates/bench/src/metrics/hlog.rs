//! Histograms on disk: HdrHistogram's interval log (`.hlog`), one line per histogram, each the
//! compressed V2 encoding in base64. HdrHistogram's own tools read it, and any set of lines
//! merges exactly, so per-second histograms can be combined into any window afterwards.

use super::LatencyHistogram;
use base64::Engine as _;
use std::io::{self, Write};

/// Appends histograms to an interval log.
pub struct HlogWriter<W: Write> {
    out: W,
}

impl<W: Write> HlogWriter<W> {
    /// Writes the log header; `start_epoch_s` is the run's start in seconds since 1970.
    pub fn new(mut out: W, start_epoch_s: f64) -> io::Result<Self> {
        writeln!(out, "#storbench latency histograms: values in nanoseconds; Interval_Max in milliseconds")?;
        writeln!(out, "#[StartTime: {start_epoch_s:.3} (seconds since epoch)]")?;
        writeln!(out, "#[BaseTime: {start_epoch_s:.3} (seconds since epoch)]")?;
        writeln!(
            out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        Ok(HlogWriter { out })
    }

    /// One histogram covering `start_s..start_s + length_s` (seconds since the run's start).
    pub fn write(&mut self, tag: &str, start_s: f64, length_s: f64, h: &LatencyHistogram) -> io::Result<()> {
        let encoded = histogram_text(h);
        let max_ms = if h.is_empty() { 0.0 } else { h.quantile_ns(1.0) as f64 / 1e6 };
        writeln!(self.out, "Tag={tag},{start_s:.3},{length_s:.3},{max_ms:.3},{encoded}")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Reads back the histograms of a log written by `HlogWriter`: (tag, start, length, histogram).
pub fn read_hlog(text: &str) -> Result<Vec<(String, f64, f64, LatencyHistogram)>, String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("Tag=")) {
        let fields: Vec<&str> = line.splitn(5, ',').collect();
        let [tag, start, len, _max, data] = fields[..] else {
            return Err(format!("bad line: {line}"));
        };
        let num = |s: &str| s.parse::<f64>().map_err(|e| e.to_string());
        out.push((
            tag.trim_start_matches("Tag=").to_string(),
            num(start)?,
            num(len)?,
            histogram_from_text(data)?,
        ));
    }
    Ok(out)
}

/// A histogram as a log line holds it: the compressed V2 encoding in base64.
pub fn histogram_text(h: &LatencyHistogram) -> String {
    base64::engine::general_purpose::STANDARD.encode(h.encode())
}

/// Reads back `histogram_text`'s output.
pub fn histogram_from_text(text: &str) -> Result<LatencyHistogram, String> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| e.to_string())?;
    LatencyHistogram::decode(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_interval_histograms_read_back_and_merge_into_the_total() {
        let mut total = LatencyHistogram::new();
        let mut w = HlogWriter::new(Vec::new(), 1_700_000_000.0).unwrap();
        for second in 0..3u64 {
            let mut h = LatencyHistogram::new();
            for i in 0..1000 {
                h.record(10_000 + second * 1_000 + i);
            }
            total.merge(&h);
            w.write("read", second as f64, 1.0, &h).unwrap();
        }
        let back = read_hlog(std::str::from_utf8(&w.into_inner()).unwrap()).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!((back[2].0.as_str(), back[2].1), ("read", 2.0));
        let mut merged = LatencyHistogram::new();
        back.iter().for_each(|(_, _, _, h)| merged.merge(h));
        assert_eq!(merged.summary(), total.summary());
    }
}
