//! The trace file: a block device's requests, compact and versioned, written as they complete
//! and read back in issue order.
//!
//! Layout: the magic `SBTRACE\0`, the version (u32 little-endian), the length of a JSON
//! [`Header`] (u32), the header, then one [`RECORD_LEN`]-byte record per request in issue order:
//! issue time (ns since the capture began, u64), first sector (512-byte units, u64), bytes
//! (u32), latency from issue to completion (µs, u32; `u32::MAX` when the completion was not
//! seen), the operation (u8), flags (u8: bit 0 FUA, bit 1 sync, bit 2 metadata), two bytes
//! unused, and the issuing process id (u32; 0 where the kernel did not say).
//!
//! Version 2 ends with an end mark: a record whose operation is [`END_OP`] and whose issue
//! time field holds the count of records before it. A capture writes its trace as it goes
//! (flushed at least every [`FLUSH_EVERY`] and whenever its 1 MiB buffer fills), so one killed
//! outright leaves a trace readable up to its last flush; with no end mark (or a record cut
//! short) the reader gives what is there and says it is `cut_short`. Version 1 traces, which
//! had no end mark, are read as they are.

use serde::{Deserialize, Serialize};
use std::io::{self, BufWriter, Read, Write};

pub const MAGIC: &[u8; 8] = b"SBTRACE\0";
pub const VERSION: u32 = 2;
/// The operation byte of the end mark.
pub const END_OP: u8 = 0xFE;
/// The longest a written record waits in the writer's buffer.
pub const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
pub const RECORD_LEN: usize = 32;
/// Latency of a request whose completion was not seen.
pub const NO_LATENCY: u32 = u32::MAX;
/// The longest header a reader takes.
const HEADER_LIMIT: u32 = 1 << 20;
/// The largest read or write a record may hold: no block device takes one request this large
/// (Linux limits them to max_sectors_kb, a few MiB); a discard may be larger.
pub const MAX_DATA_BYTES: u32 = 32 << 20;
/// The longest a trace may span from the capture's start: a month.
pub const MAX_SPAN_NS: u64 = 31 * 24 * 3600 * 1_000_000_000;
/// The last byte a request may reach: an exbibyte.
const MAX_END: u64 = 1 << 60;

/// What a request asked of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Flush,
    Discard,
    Other,
}

impl Op {
    fn code(self) -> u8 {
        self as u8
    }

    fn of(code: u8) -> Op {
        match code {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Flush,
            3 => Op::Discard,
            _ => Op::Other,
        }
    }
}

pub const FUA: u8 = 1;
pub const SYNC: u8 = 2;
pub const META: u8 = 4;

/// One request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub issue_ns: u64,
    pub sector: u64,
    pub bytes: u32,
    pub latency_us: u32,
    pub op: Op,
    pub flags: u8,
    pub pid: u32,
}

impl Record {
    pub fn offset(&self) -> u64 {
        self.sector * 512
    }

    pub fn end(&self) -> u64 {
        self.offset() + u64::from(self.bytes)
    }

    fn encode(&self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
        b[0..8].copy_from_slice(&self.issue_ns.to_le_bytes());
        b[8..16].copy_from_slice(&self.sector.to_le_bytes());
        b[16..20].copy_from_slice(&self.bytes.to_le_bytes());
        b[20..24].copy_from_slice(&self.latency_us.to_le_bytes());
        b[24] = self.op.code();
        b[25] = self.flags;
        b[28..32].copy_from_slice(&self.pid.to_le_bytes());
        b
    }

    fn decode(b: &[u8; RECORD_LEN]) -> Record {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Record {
            issue_ns: u64_at(0),
            sector: u64_at(8),
            bytes: u32_at(16),
            latency_us: u32_at(20),
            op: Op::of(b[24]),
            flags: b[25],
            pid: u32_at(28),
        }
    }
}

/// What the trace is of and how it was taken.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The device as named when captured (`/dev/loop3`) and its kernel name and number.
    pub device: String,
    pub kernel_name: String,
    pub major_minor: String,
    /// Its size, bytes.
    pub size_bytes: u64,
    /// When the capture began (RFC 3339).
    pub started_at: String,
    /// How the requests were recorded.
    pub method: String,
}

/// Writes a trace: the header, then records, then the end mark.
pub struct TraceWriter<W: Write> {
    out: BufWriter<W>,
    pub records: u64,
    flushed: std::time::Instant,
}

impl<W: Write> TraceWriter<W> {
    pub fn new(out: W, header: &Header) -> io::Result<TraceWriter<W>> {
        let mut out = BufWriter::with_capacity(1 << 20, out);
        let json = serde_json::to_vec(header).map_err(io::Error::other)?;
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        out.write_all(&(json.len() as u32).to_le_bytes())?;
        out.write_all(&json)?;
        // The header is on disk before any record: a trace cut short still says what it is.
        out.flush()?;
        Ok(TraceWriter { out, records: 0, flushed: std::time::Instant::now() })
    }

    /// Writes out what is buffered when it has waited [`FLUSH_EVERY`]: a capture calls this
    /// as it goes, so that its death loses a second of requests at most.
    pub fn flush_if_due(&mut self) -> io::Result<()> {
        if self.flushed.elapsed() >= FLUSH_EVERY {
            self.out.flush()?;
            self.flushed = std::time::Instant::now();
        }
        Ok(())
    }

    pub fn write(&mut self, r: &Record) -> io::Result<()> {
        self.records += 1;
        self.out.write_all(&r.encode())
    }

    /// Writes the end mark, flushes what is buffered and hands back the writer.
    pub fn finish(mut self) -> io::Result<W> {
        let mut end = [0u8; RECORD_LEN];
        end[0..8].copy_from_slice(&self.records.to_le_bytes());
        end[24] = END_OP;
        self.out.write_all(&end)?;
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// Why a trace cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("not a storbench trace (it does not begin with SBTRACE)")]
    NotATrace,
    #[error("a trace of version {0}, which this storbench does not read (it reads version {VERSION})")]
    Version(u32),
    #[error("its header is damaged: {0}")]
    Header(String),
    #[error("record {record} is damaged: {why}; no capture writes such a request")]
    Damaged { record: u64, why: String },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Reads a trace: its header, then its records one by one.
pub struct TraceReader<R: Read> {
    input: R,
    pub header: Header,
    read: u64,
    version: u32,
    /// The trace ended before its capture did (no end mark, or a record cut short): what was
    /// read is all there is of it.
    pub cut_short: bool,
    ended: bool,
}

impl<R: Read> TraceReader<R> {
    pub fn new(mut input: R) -> Result<TraceReader<R>, TraceError> {
        let mut magic = [0u8; 8];
        input.read_exact(&mut magic).map_err(|_| TraceError::NotATrace)?;
        if &magic != MAGIC {
            return Err(TraceError::NotATrace);
        }
        let mut word = [0u8; 4];
        input.read_exact(&mut word)?;
        let version = u32::from_le_bytes(word);
        if !(1..=VERSION).contains(&version) {
            return Err(TraceError::Version(version));
        }
        input.read_exact(&mut word)?;
        let len = u32::from_le_bytes(word);
        if len > HEADER_LIMIT {
            return Err(TraceError::Header(format!("{len} bytes long")));
        }
        let mut json = vec![0u8; len as usize];
        input.read_exact(&mut json).map_err(|e| TraceError::Header(e.to_string()))?;
        let header = serde_json::from_slice(&json).map_err(|e| TraceError::Header(e.to_string()))?;
        Ok(TraceReader { input, header, read: 0, version, cut_short: false, ended: false })
    }

    /// The next record; None at the end (its end mark, or where a trace cut short stops:
    /// then `cut_short`).
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if self.ended {
            return Ok(None);
        }
        let mut b = [0u8; RECORD_LEN];
        let mut got = 0;
        while got < RECORD_LEN {
            match self.input.read(&mut b[got..]) {
                Ok(0) => {
                    // Version 1 had no end mark: its end is the file's.
                    self.cut_short = got > 0 || self.version >= 2;
                    self.ended = true;
                    return Ok(None);
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        if b[24] == END_OP && self.version >= 2 {
            self.ended = true;
            let count = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
            if count != self.read {
                let why = format!("its end mark counts {count} records, but {} came before it", self.read);
                return Err(TraceError::Damaged { record: self.read + 1, why });
            }
            return Ok(None);
        }
        self.read += 1;
        let r = Record::decode(&b);
        self.check(&r).map_err(|why| TraceError::Damaged { record: self.read, why })?;
        Ok(Some(r))
    }

    /// Every record is held to what a real capture can write, before anything adds it up:
    /// its place and length in range (so offsets, ends and block counts cannot wrap or grow
    /// without bound), its time within a month of the capture's start.
    fn check(&self, r: &Record) -> Result<(), String> {
        let data = matches!(r.op, Op::Read | Op::Write);
        if data && r.bytes > MAX_DATA_BYTES {
            return Err(format!(
                "a {:?} of {} bytes, over the {MAX_DATA_BYTES} a request can be",
                r.op, r.bytes
            ));
        }
        let end = r.sector.checked_mul(512).and_then(|o| o.checked_add(u64::from(r.bytes)));
        if end.is_none_or(|e| e > MAX_END) {
            return Err(format!("sector {} with {} bytes ends past an exbibyte", r.sector, r.bytes));
        }
        if r.issue_ns > MAX_SPAN_NS {
            return Err(format!(
                "issued {} ns after the capture began, more than the month a trace may span",
                r.issue_ns
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_as_written_after_their_header() {
        let header = Header { device: "/dev/loop3".into(), size_bytes: 1 << 30, ..Header::default() };
        let records = [
            Record {
                issue_ns: 5,
                sector: 8,
                bytes: 4096,
                latency_us: 120,
                op: Op::Read,
                flags: SYNC,
                pid: 77,
            },
            Record {
                issue_ns: 9,
                sector: 0,
                bytes: 0,
                latency_us: NO_LATENCY,
                op: Op::Flush,
                flags: FUA,
                pid: 0,
            },
        ];
        let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
        for r in &records {
            w.write(r).unwrap();
        }
        let bytes = w.finish().unwrap();
        let mut r = TraceReader::new(bytes.as_slice()).unwrap();
        assert_eq!(r.header, header);
        assert_eq!(r.next_record().unwrap(), Some(records[0]));
        assert_eq!(r.next_record().unwrap(), Some(records[1]));
        assert_eq!(r.next_record().unwrap(), None);
        assert!(!r.cut_short, "it ended at its end mark");
        // Cut inside the end mark, or inside the last record: what is whole is read, the rest
        // never as a shorter record, and the trace said to be cut short.
        for (cut, whole) in [(3, 2), (RECORD_LEN + 3, 1), (RECORD_LEN, 2)] {
            let mut r = TraceReader::new(&bytes[..bytes.len() - cut]).unwrap();
            let read = std::iter::from_fn(|| r.next_record().unwrap()).count();
            assert_eq!((read, r.cut_short), (whole, true), "cut {cut} bytes short");
        }
        assert!(matches!(TraceReader::new(&b"not a trace at all"[..]), Err(TraceError::NotATrace)));
    }

    #[test]
    fn a_record_no_capture_writes_is_refused_by_its_number_before_it_is_added_up() {
        let header = Header::default();
        let good = Record {
            issue_ns: 1_000,
            sector: 8,
            bytes: 4096,
            latency_us: 10,
            op: Op::Write,
            flags: 0,
            pid: 0,
        };
        let damaged = [
            Record { bytes: u32::MAX, ..good },
            Record { sector: u64::MAX / 256, ..good },
            Record { issue_ns: 1 << 63, ..good },
        ];
        for bad in damaged {
            let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
            w.write(&good).unwrap();
            w.write(&bad).unwrap();
            let bytes = w.finish().unwrap();
            let mut r = TraceReader::new(bytes.as_slice()).unwrap();
            assert_eq!(r.next_record().unwrap(), Some(good));
            let err = r.next_record().unwrap_err();
            assert!(matches!(err, TraceError::Damaged { record: 2, .. }), "{bad:?}: {err}");
        }
        // A discard may be as large as a u32 says.
        let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
        w.write(&Record { op: Op::Discard, bytes: u32::MAX - 511, ..good }).unwrap();
        let bytes = w.finish().unwrap();
        assert!(TraceReader::new(bytes.as_slice()).unwrap().next_record().unwrap().is_some());
    }
}
