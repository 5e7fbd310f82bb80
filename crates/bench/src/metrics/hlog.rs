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
        let max_ns = if h.is_empty() { 0 } else { h.quantile_ns(1.0) };
        self.write_encoded(tag, start_s, length_s, max_ns, &h.encode())
    }

    /// As `write`, of a histogram already encoded (`LatencyHistogram::encode`'s form) whose
    /// highest value is `max_ns`.
    pub fn write_encoded(
        &mut self,
        tag: &str,
        start_s: f64,
        length_s: f64,
        max_ns: u64,
        encoded: &[u8],
    ) -> io::Result<()> {
        let encoded = base64::engine::general_purpose::STANDARD.encode(encoded);
        let max_ms = max_ns as f64 / 1e6;
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
    log_lines(text)
        .map(|line| {
            let (tag, start, len, data) = line?;
            Ok((tag.to_string(), start, len, histogram_from_text(data)?))
        })
        .collect()
}

/// Each histogram line of a log: (tag, start, length, the histogram's text).
fn log_lines(text: &str) -> impl Iterator<Item = Result<(&str, f64, f64, &str), String>> {
    text.lines().filter(|l| l.starts_with("Tag=")).map(|line| {
        let fields: Vec<&str> = line.splitn(5, ',').collect();
        let [tag, start, len, _max, data] = fields[..] else {
            return Err(format!("bad line: {line}"));
        };
        let num = |s: &str| s.parse::<f64>().map_err(|e| e.to_string());
        Ok((tag.trim_start_matches("Tag="), num(start)?, num(len)?, data))
    })
}

/// A log's histograms kept as the log encodes them (compressed, out of base64), each decoded
/// only when used: a record's thousands of interval histograms cost their encoded size, not
/// a full-range histogram each.
#[derive(Debug, Default)]
pub struct EncodedLog {
    bytes: Vec<u8>,
    lines: Vec<(String, std::ops::Range<usize>)>,
}

impl EncodedLog {
    /// The histograms of the log `text` whose tags `keep` takes, in file order.
    pub fn read(text: &str, keep: impl Fn(&str) -> bool) -> Result<EncodedLog, String> {
        // Base64 makes three bytes of four: the bytes in one allocation, not doubled into.
        let mut log = EncodedLog { bytes: Vec::with_capacity(text.len() / 4 * 3), lines: Vec::new() };
        for line in log_lines(text) {
            let (tag, _, _, data) = line?;
            if keep(tag) {
                let at = log.bytes.len();
                base64::engine::general_purpose::STANDARD
                    .decode_vec(data, &mut log.bytes)
                    .map_err(|e| format!("histogram {tag}: {e}"))?;
                log.lines.push((tag.to_string(), at..log.bytes.len()));
            }
        }
        Ok(log)
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The tag of the `n`th histogram.
    pub fn tag(&self, n: usize) -> Option<&str> {
        self.lines.get(n).map(|(tag, _)| tag.as_str())
    }

    /// The `n`th histogram, decoded.
    pub fn decode(&self, n: usize) -> Result<LatencyHistogram, String> {
        LatencyHistogram::decode(self.encoded(n))
    }

    /// Adds the `n`th histogram to `sum`.
    pub fn add_to(
        &self,
        n: usize,
        sum: &mut super::BucketSum,
        scratch: &mut super::Inflater,
    ) -> Result<(), String> {
        sum.add_encoded(self.encoded(n), scratch)
            .map_err(|e| format!("histogram {n} ({}): {e}", self.lines[n].0))
    }

    fn encoded(&self, n: usize) -> &[u8] {
        &self.bytes[self.lines[n].1.clone()]
    }
}

/// A log on disk read forward, one line at a time, histogram by histogram (those
/// `EncodedLog::read` keeps with its `-total` filter: every tag not ending in `-total`): how a
/// merge reads many shards' logs without holding any of them.
pub struct LogCursor {
    reader: std::io::BufReader<std::fs::File>,
    line: Vec<u8>,
    bytes: Vec<u8>,
    /// The index of the next histogram.
    next: usize,
}

impl LogCursor {
    pub fn new(file: std::fs::File) -> LogCursor {
        let reader = std::io::BufReader::with_capacity(32 << 10, file);
        LogCursor { reader, line: Vec::new(), bytes: Vec::new(), next: 0 }
    }

    /// The `n`th histogram's tag and encoding (compressed, out of base64); `n` lies at or
    /// after the next one (the log is read forward only).
    pub fn at(&mut self, n: usize) -> Result<(&str, &[u8]), String> {
        use std::io::BufRead;
        if n < self.next {
            return Err(format!("histogram {n} asked for after histogram {}", self.next));
        }
        loop {
            self.line.clear();
            let read = self.reader.read_until(b'\n', &mut self.line).map_err(|e| e.to_string())?;
            if read == 0 {
                return Err(format!("the log ends before histogram {n}"));
            }
            let Some(rest) = self.line.strip_prefix(b"Tag=") else { continue };
            let tag_len = rest.iter().position(|b| *b == b',').unwrap_or(rest.len());
            if rest[..tag_len].ends_with(b"-total") {
                continue;
            }
            self.next += 1;
            if self.next <= n {
                continue;
            }
            let text = std::str::from_utf8(&self.line).map_err(|e| e.to_string())?;
            let line = text.trim_end_matches(['\n', '\r']);
            let fields: Vec<&str> = line.splitn(5, ',').collect();
            let [tag, _, _, _, data] = fields[..] else { return Err(format!("bad line: {line}")) };
            self.bytes.clear();
            base64::engine::general_purpose::STANDARD
                .decode_vec(data, &mut self.bytes)
                .map_err(|e| format!("histogram {tag}: {e}"))?;
            return Ok((tag.trim_start_matches("Tag="), &self.bytes));
        }
    }
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
        let text = String::from_utf8(w.into_inner()).unwrap();
        let back = read_hlog(&text).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!((back[2].0.as_str(), back[2].1), ("read", 2.0));
        let mut merged = LatencyHistogram::new();
        back.iter().for_each(|(_, _, _, h)| merged.merge(h));
        assert_eq!(merged.summary(), total.summary());
        // Kept encoded, each reads back as itself and adds up to the same total.
        let log = EncodedLog::read(&text, |_| true).unwrap();
        let (mut added, mut scratch) =
            (super::super::BucketSum::default(), super::super::Inflater::default());
        assert_eq!(log.len(), back.len());
        for (n, (.., h)) in back.iter().enumerate() {
            assert_eq!(log.decode(n).unwrap().summary(), h.summary());
            log.add_to(n, &mut added, &mut scratch).unwrap();
        }
        assert_eq!((log.tag(2), added.histogram().summary()), (Some("read"), total.summary()));
        // Read forward from a file, the same histograms, the `-total` lines skipped.
        let path = std::env::temp_dir().join(format!("storbench-hlog-{}", std::process::id()));
        crate::files::write_atomic(&path, format!("{text}Tag=read-total,0,3,0,xx\n").as_bytes()).unwrap();
        let mut cursor = LogCursor::new(crate::files::input::open_input(&path).unwrap());
        let (tag, bytes) = cursor.at(1).unwrap();
        assert_eq!((tag, LatencyHistogram::decode(bytes).unwrap().summary()), ("read", back[1].3.summary()));
        assert!(cursor.at(0).is_err(), "forward only");
        assert_eq!(cursor.at(2).unwrap().0, "read");
        assert!(cursor.at(3).is_err(), "a -total line is no interval's");
        crate::files::remove_own(&path).ok();
    }
}
