//! The log stream of one database: records appended in memory, written sequentially in whole
//! sectors, one write at a time, each write carrying everything appended since the last one
//! (group commit). Generations are files of `log_file_size` bytes; positions (`lgpos`) count
//! payload bytes from the start of the stream, so a position maps to a generation, block and
//! offset by arithmetic.
//!
//! A write starts at the block holding the first unwritten byte, so a partly filled last block
//! is written again by the next write, as the engine rewrites its last partial sector.
//! Records: length (2) | kind (1) | page count (1) | page numbers (8 each) | filler, so
//! that a replay knows which pages each record changed.

use super::format::{Filler, LOG_BLOCK_HEADER, LOG_FILE_HEADER, seal_log_block};
use std::collections::VecDeque;

/// Block layout of every log file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogGeometry {
    /// One block per sector: the unit of every log write.
    pub block: usize,
    pub file_size: usize,
}

impl LogGeometry {
    pub fn header_blocks(&self) -> usize {
        LOG_FILE_HEADER.div_ceil(self.block)
    }

    pub fn blocks(&self) -> usize {
        self.file_size / self.block
    }

    pub fn payload_per_block(&self) -> usize {
        self.block - LOG_BLOCK_HEADER
    }

    pub fn payload_per_file(&self) -> u64 {
        ((self.blocks() - self.header_blocks()) * self.payload_per_block()) as u64
    }

    /// Byte offset in its file of stream position `lgpos` (file-relative position `rel`).
    fn file_offset(&self, rel: u64) -> usize {
        let ppb = self.payload_per_block() as u64;
        let block = self.header_blocks() as u64 + rel / ppb;
        (block * self.block as u64 + LOG_BLOCK_HEADER as u64 + rel % ppb) as usize
    }
}

/// What a log record changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    Insert = 1,
    Delete = 2,
    Replace = 3,
    Commit = 4,
}

pub const RECORD_HEADER: usize = 4;

/// One file's image while it is being filled and written.
struct Image {
    generation: u32,
    start: u64,
    bytes: Vec<u8>,
}

/// A write the stream wants issued: `len` bytes at `offset` of generation `generation`'s file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogWrite {
    pub generation: u32,
    pub offset: usize,
    pub len: usize,
    /// Stream position durable once it completes.
    pub end: u64,
    /// The write completes its file: the next goes to the next generation.
    pub closes_file: bool,
}

pub struct LogStream {
    pub geo: LogGeometry,
    first_generation: u32,
    images: VecDeque<Image>,
    /// Appended and durable positions.
    pub lgpos: u64,
    pub flushed: u64,
    in_flight: Option<LogWrite>,
    filler: Filler,
}

impl LogStream {
    /// A stream whose position 0 is the start of generation `first_generation`.
    pub fn new(geo: LogGeometry, first_generation: u32, filler: Filler) -> Self {
        let mut s = LogStream {
            geo,
            first_generation,
            images: VecDeque::new(),
            lgpos: 0,
            flushed: 0,
            in_flight: None,
            filler,
        };
        s.push_image();
        s
    }

    /// Generation holding stream position `lgpos`.
    pub fn generation_of(&self, lgpos: u64) -> u32 {
        self.first_generation + (lgpos / self.geo.payload_per_file()) as u32
    }

    /// Generation of the file the next write goes to.
    pub fn writing_generation(&self) -> u32 {
        self.images.front().map_or(self.first_generation, |i| i.generation)
    }

    fn push_image(&mut self) {
        let generation = self.images.back().map_or(self.generation_of(self.flushed), |i| i.generation + 1);
        let start = u64::from(generation - self.first_generation) * self.geo.payload_per_file();
        let mut bytes = vec![0u8; self.geo.file_size];
        self.filler.fill(&mut bytes);
        self.images.push_back(Image { generation, start, bytes });
    }

    /// Appends a record of `len` bytes (at least the header and page numbers) naming `pages`;
    /// returns the position after it.
    pub fn append(&mut self, kind: RecordKind, pages: &[u64], len: usize) -> u64 {
        let len = len.max(RECORD_HEADER + 8 * pages.len()).min(u16::MAX as usize);
        let mut head = [0u8; RECORD_HEADER + 8 * 4];
        head[0..2].copy_from_slice(&(len as u16).to_le_bytes());
        head[2] = kind as u8;
        head[3] = pages.len().min(4) as u8;
        for (i, p) in pages.iter().take(4).enumerate() {
            head[RECORD_HEADER + 8 * i..RECORD_HEADER + 8 * i + 8].copy_from_slice(&p.to_le_bytes());
        }
        let n = RECORD_HEADER + 8 * pages.len().min(4);
        self.put(&head[..n]);
        self.lgpos += (len - n) as u64;
        self.ensure_image(self.lgpos);
        self.lgpos
    }

    /// Copies `data` into the stream at the current position.
    fn put(&mut self, mut data: &[u8]) {
        let ppf = self.geo.payload_per_file();
        let ppb = self.geo.payload_per_block() as u64;
        while !data.is_empty() {
            self.ensure_image(self.lgpos);
            let rel = self.lgpos % ppf;
            let room = (ppb - rel % ppb) as usize;
            let take = room.min(data.len());
            let off = self.geo.file_offset(rel);
            let img = self.image_for(self.lgpos);
            img.bytes[off..off + take].copy_from_slice(&data[..take]);
            self.lgpos += take as u64;
            data = &data[take..];
        }
    }

    fn ensure_image(&mut self, lgpos: u64) {
        while self.images.back().is_none_or(|i| lgpos >= i.start + self.geo.payload_per_file()) {
            self.push_image();
        }
    }

    fn image_for(&mut self, lgpos: u64) -> &mut Image {
        let front = self.images.front().map_or(0, |i| i.start);
        let idx = ((lgpos - front) / self.geo.payload_per_file()) as usize;
        &mut self.images[idx]
    }

    pub fn unflushed(&self) -> u64 {
        self.lgpos - self.flushed
    }

    pub fn write_in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// The next write, sealing the blocks it covers, with the bytes to write; None when a
    /// write is in flight or nothing is waiting.
    pub fn next_write(&mut self) -> Option<(LogWrite, &[u8])> {
        if self.in_flight.is_some() || self.lgpos == self.flushed {
            return None;
        }
        let geo = self.geo;
        let ppb = geo.payload_per_block() as u64;
        let img = self.images.front_mut()?;
        let file_end = img.start + geo.payload_per_file();
        let rel_from = self.flushed - img.start;
        let rel_to = self.lgpos.min(file_end) - img.start;
        let first = if rel_from == 0 { 0 } else { geo.header_blocks() + (rel_from / ppb) as usize };
        let last = geo.header_blocks() + rel_to.div_ceil(ppb) as usize;
        for b in first..last {
            let used = if b < geo.header_blocks() {
                0
            } else {
                let block_start = (b - geo.header_blocks()) as u64 * ppb;
                (rel_to.saturating_sub(block_start)).min(ppb) as u16
            };
            seal_log_block(
                &mut img.bytes[b * geo.block..(b + 1) * geo.block],
                img.generation,
                b as u32,
                used,
            );
        }
        let w = LogWrite {
            generation: img.generation,
            offset: first * geo.block,
            len: (last - first) * geo.block,
            end: img.start + rel_to,
            closes_file: img.start + rel_to == file_end,
        };
        self.in_flight = Some(w);
        Some((w, &img.bytes[w.offset..w.offset + w.len]))
    }

    /// The write in flight completed: its positions are durable.
    pub fn completed(&mut self) -> Option<LogWrite> {
        let w = self.in_flight.take()?;
        self.flushed = self.flushed.max(w.end);
        if w.closes_file {
            self.images.pop_front();
            self.ensure_image(self.lgpos);
        }
        Some(w)
    }

    /// The write in flight failed: it will be issued again.
    pub fn failed(&mut self) {
        self.in_flight = None;
    }
}

/// Reads the records of a stream of payload bytes (the used payload of every block, in
/// order): (kind, pages) for each, and the bytes consumed (a record cut off at the end is
/// left for the next call, with the bytes that follow it).
pub fn records(payload: &[u8]) -> (Vec<(u8, Vec<u64>)>, usize) {
    let mut out = Vec::new();
    let mut at = 0;
    while at + RECORD_HEADER <= payload.len() {
        let len = u16::from_le_bytes([payload[at], payload[at + 1]]) as usize;
        let (kind, n) = (payload[at + 2], payload[at + 3] as usize);
        if len < RECORD_HEADER + 8 * n || at + len > payload.len() {
            break;
        }
        let pages = (0..n)
            .map(|i| {
                let p = at + RECORD_HEADER + 8 * i;
                u64::from_le_bytes(payload[p..p + 8].try_into().expect("8 bytes"))
            })
            .collect();
        out.push((kind, pages));
        at += len;
    }
    (out, at)
}

#[cfg(test)]
mod tests {
    use super::super::format::check_log_block;
    use super::*;

    fn stream() -> LogStream {
        let geo = LogGeometry { block: 512, file_size: 64 * 1024 };
        LogStream::new(geo, 1, Filler::new(1, 1))
    }

    #[test]
    fn a_write_covers_what_was_appended_in_whole_blocks_and_rewrites_the_partial_last_one() {
        let mut s = stream();
        let end = s.append(RecordKind::Insert, &[7], 1000);
        assert_eq!(end, 1000);
        let (w, bytes) = s.next_write().unwrap();
        // Header (8 blocks of 512) plus 1000 bytes of payload in 492-byte blocks: 3 blocks.
        assert_eq!((w.offset, w.len, w.end, w.closes_file), (0, 11 * 512, 1000, false));
        assert_eq!(check_log_block(&bytes[8 * 512..9 * 512], 1, 8), Ok(492));
        assert_eq!(check_log_block(&bytes[10 * 512..], 1, 10), Ok(16));
        assert!(s.next_write().is_none(), "one write at a time");
        s.completed();
        s.append(RecordKind::Commit, &[], 40);
        let (w, bytes) = s.next_write().unwrap();
        assert_eq!((w.offset, w.len), (10 * 512, 512));
        assert_eq!(check_log_block(bytes, 1, 10), Ok(56));
    }

    #[test]
    fn a_full_file_is_closed_by_its_last_write_and_the_stream_moves_to_the_next_generation() {
        let mut s = stream();
        let per_file = s.geo.payload_per_file();
        while s.lgpos < per_file + 100 {
            s.append(RecordKind::Replace, &[1, 2], 3000);
        }
        let (w, _) = s.next_write().unwrap();
        assert!(w.closes_file);
        assert_eq!((w.generation, w.end), (1, per_file));
        s.completed();
        assert_eq!(s.writing_generation(), 2);
        let (w, _) = s.next_write().unwrap();
        assert_eq!((w.generation, w.offset, w.end), (2, 0, s.lgpos));
        assert_eq!(s.generation_of(s.lgpos), 2);
    }

    #[test]
    fn records_read_back_from_the_payload_name_their_pages() {
        let mut s = stream();
        s.append(RecordKind::Insert, &[5, 6], 300);
        s.append(RecordKind::Delete, &[9], 100);
        let (_, bytes) = s.next_write().unwrap();
        let mut payload = Vec::new();
        for (i, b) in bytes.chunks(512).enumerate().skip(8) {
            let used = check_log_block(b, 1, i as u32).unwrap() as usize;
            payload.extend_from_slice(&b[LOG_BLOCK_HEADER..LOG_BLOCK_HEADER + used]);
        }
        assert_eq!(records(&payload), (vec![(1, vec![5, 6]), (2, vec![9])], 400));
        assert_eq!(records(&payload[..350]), (vec![(1, vec![5, 6])], 300), "a cut record waits");
    }
}
