//! A trace's requests as an io job's source (`IoSpec::trace`): the one io worker of a
//! `replay-trace` run takes its requests from the trace instead of drawing them, and runs
//! them through the same engines, intervals, histograms, series and bundle as any io job.
//!
//! As recorded, each request is due at its recorded time since the trace's first request,
//! divided by a speed: its latency counts from that intended time and its lateness is the
//! job's schedule lag, so a target that falls behind shows it rather than hiding it. Fast,
//! each goes as soon as a slot is free (the job's depth). Offsets beyond the job's region fold
//! back into it. Reads, writes and flushes (fdatasync of the target) are replayed; discards
//! and other requests are passed over (the trace's fingerprint counts them).

use super::format::{Op, Record, TraceReader};
use crate::engine::Dir;
use crate::workload::io::Region;
use std::io::BufReader;
use std::path::PathBuf;

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// At the recorded times divided by `speed` (2.0: twice as fast).
    AsRecorded { speed: f64 },
    /// Each as soon as fewer than the job's depth are in flight.
    Fast,
}

/// The trace an io job replays.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSource {
    pub path: PathBuf,
    pub pace: Pace,
    /// O_DIRECT's alignment (1 through the page cache): offsets and lengths are rounded to it.
    pub align: u32,
}

/// One request of the trace as the worker issues it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    /// When it is due, ns after the run's start; None when fast.
    pub due_ns: Option<u64>,
    pub dir: Dir,
    pub offset: u64,
    pub len: u32,
}

/// The trace read as the worker goes, one request ahead.
pub struct TraceFeed {
    reader: TraceReader<BufReader<std::fs::File>>,
    pace: Pace,
    align: u32,
    region: Region,
    max_len: u32,
    first_ns: Option<u64>,
    ahead: Option<Next>,
    /// Why reading stopped before the trace's end.
    pub failure: Option<std::io::Error>,
}

impl TraceFeed {
    /// The trace of `source` for a worker over `region` whose buffers hold `max_len` bytes.
    pub fn open(source: &TraceSource, region: Region, max_len: u32) -> std::io::Result<TraceFeed> {
        let named =
            |e: &dyn std::fmt::Display| std::io::Error::other(format!("{}: {e}", source.path.display()));
        let file = crate::input::open_input(&source.path).map_err(|e| named(&e))?;
        let reader = TraceReader::new(BufReader::with_capacity(1 << 20, file)).map_err(|e| named(&e))?;
        let mut feed = TraceFeed {
            reader,
            pace: source.pace,
            align: source.align.max(1),
            region,
            max_len,
            first_ns: None,
            ahead: None,
            failure: None,
        };
        feed.read_ahead();
        Ok(feed)
    }

    /// The next request, not yet taken; None once the trace is done.
    #[inline]
    pub fn peek(&self) -> Option<&Next> {
        self.ahead.as_ref()
    }

    /// Takes the next request and reads the one after it.
    pub fn take(&mut self) -> Option<Next> {
        let next = self.ahead.take();
        self.read_ahead();
        next
    }

    fn read_ahead(&mut self) {
        while self.failure.is_none() {
            match self.reader.next_record() {
                Ok(Some(r)) => {
                    if let Some(next) = self.request(&r) {
                        self.ahead = Some(next);
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => self.failure = Some(std::io::Error::other(e.to_string())),
            }
        }
    }

    /// `r` as the worker issues it; None for what is not replayed.
    fn request(&mut self, r: &Record) -> Option<Next> {
        let dir = match r.op {
            Op::Read => Dir::Read,
            Op::Write => Dir::Write,
            Op::Flush => Dir::Flush,
            _ => return None,
        };
        let first = *self.first_ns.get_or_insert(r.issue_ns);
        let due_ns = match self.pace {
            Pace::AsRecorded { speed } => Some(scaled(r.issue_ns.saturating_sub(first), speed)),
            Pace::Fast => None,
        };
        let (offset, len) = match dir {
            Dir::Flush => (0, 0),
            _ => {
                let len = round_up(r.bytes.max(1), self.align).min(self.max_len);
                (self.fold(r.offset(), len), len)
            }
        };
        Some(Next { due_ns, dir, offset, len })
    }

    /// `offset` folded into the region, aligned, with room for `len`.
    fn fold(&self, offset: u64, len: u32) -> u64 {
        let align = u64::from(self.align);
        let span = self.region.len;
        let room = span.saturating_sub(u64::from(len)).max(1);
        let at = if offset + u64::from(len) <= span { offset } else { offset % room };
        self.region.start + at / align * align
    }
}

fn scaled(ns: u64, speed: f64) -> u64 {
    (ns as f64 / speed) as u64
}

fn round_up(x: u32, align: u32) -> u32 {
    x.div_ceil(align) * align
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::blocktrace::format::{Header, TraceWriter};

    pub(crate) fn rec(issue_ms: u64, offset_kib: u64, kib: u32, op: Op) -> Record {
        Record {
            issue_ns: issue_ms * 1_000_000,
            sector: offset_kib * 2,
            bytes: kib * 1024,
            latency_us: 10,
            op,
            flags: 0,
            pid: 0,
        }
    }

    /// A trace file of `records` in `dir`.
    pub(crate) fn trace(dir: &std::path::Path, records: &[Record]) -> PathBuf {
        let path = dir.join("t.sbtrace");
        let header = Header { device: "/dev/test".into(), size_bytes: 1 << 30, ..Header::default() };
        let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap(), &header).unwrap();
        for r in records {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        path
    }

    #[test]
    fn offsets_past_the_region_fold_into_it_aligned() {
        let dir = tempfile::tempdir().unwrap();
        let path = trace(dir.path(), &[rec(0, 4, 4, Op::Read), rec(1, 5 * 1024 + 4, 4, Op::Write)]);
        let source = TraceSource { path, pace: Pace::Fast, align: 512 };
        let region = Region { start: 1 << 20, len: 1 << 20 };
        let mut feed = TraceFeed::open(&source, region, 64 << 10).unwrap();
        assert_eq!(feed.take().unwrap().offset, (1 << 20) + 4096, "inside the region: where it was");
        let folded = feed.take().unwrap();
        assert!(folded.offset >= 1 << 20 && folded.offset + 4096 <= 2 << 20, "{folded:?}");
        assert!(folded.offset.is_multiple_of(512) && folded.len == 4096, "{folded:?}");
        assert!(feed.take().is_none() && feed.failure.is_none());
        assert_eq!(round_up(1000, 512), 1024);
    }
}
