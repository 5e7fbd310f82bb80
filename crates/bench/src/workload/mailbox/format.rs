//! On-disk formats: database pages and log blocks, each carrying a CRC-32C over everything
//! after it, so that every page and log block can be verified after a run, as the engine's
//! own checksums are.
//!
//! A database page: crc32c (4) | magic `SBPG` (4) | page number (8) | database id (4) |
//! page size (4) | stamp (8: a counter raised by every write of the database) | body.
//! A log block (one sector): crc32c (4) | magic `SBLG` (4) | generation (4) | block index in
//! the file (4) | payload bytes used (2) | 2 reserved | payload. Block 0 .. HEADER_BLOCKS of a
//! log file form its header; payload starts after them.
//!
//! Bodies are random bytes, different in every page write and every database: a 64 KiB
//! random pool XORed with a per-write key, so that content neither compresses nor dedupes
//! (users' complaint 2 of mailbox.md §6) and costs no more than a copy.

use crate::rng::{Rng, WorkerRng, mix, stream};

pub const PAGE_MAGIC: &[u8; 4] = b"SBPG";
pub const LOG_MAGIC: &[u8; 4] = b"SBLG";
pub const PAGE_HEADER: usize = 32;
pub const LOG_BLOCK_HEADER: usize = 20;
/// Bytes at the start of a log file that hold its header (one block of this size).
pub const LOG_FILE_HEADER: usize = 4096;
const POOL_BYTES: usize = 64 * 1024;

/// Random bytes to derive page and log bodies from.
pub struct Filler {
    pool: Vec<u64>,
    rng: WorkerRng,
}

impl Filler {
    pub fn new(seed: u64, stream_id: u64) -> Self {
        let mut rng = stream(seed, stream_id);
        let pool = (0..POOL_BYTES / 8).map(|_| rng.next_u64()).collect();
        Filler { pool, rng }
    }

    /// Fills `out` (a multiple of 8 bytes) with pool words XORed with a fresh key, starting
    /// at a random place in the pool. Runs of the pool are XORed whole, which the compiler
    /// vectorises: a 32 KB page costs about as much as copying it.
    pub fn fill(&mut self, out: &mut [u8]) {
        let key = self.rng.next_u64() | 1;
        let mut at = (self.rng.next_u64() as usize) % self.pool.len();
        let mut rest = out;
        while rest.len() >= 8 {
            let n = (self.pool.len() - at).min(rest.len() / 8);
            let (head, tail) = rest.split_at_mut(n * 8);
            for (chunk, w) in head.chunks_exact_mut(8).zip(&self.pool[at..at + n]) {
                chunk.copy_from_slice(&(w ^ key).to_le_bytes());
            }
            rest = tail;
            at = 0;
        }
    }
}

/// What a page says about itself when it is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageFault {
    /// The checksum does not match the content.
    Checksum,
    /// Not a page of ours (wrong magic), or all zeros.
    Magic,
    /// A valid page, but of another place in the file (a misdirected write).
    Misplaced { found: u64 },
    /// A valid page of another database.
    Foreign { found: u32 },
}

impl std::fmt::Display for PageFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageFault::Checksum => write!(f, "checksum mismatch"),
            PageFault::Magic => write!(f, "not a database page (bad magic or zeroed)"),
            PageFault::Misplaced { found } => write!(f, "holds page {found} (misdirected write)"),
            PageFault::Foreign { found } => write!(f, "belongs to database {found}"),
        }
    }
}

fn crc_of(buf: &[u8]) -> u32 {
    crc32c::crc32c(&buf[4..])
}

fn put_u32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(buf: &mut [u8], at: usize, v: u64) {
    buf[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// The little-endian u32 at `at` (page headers here and in the integrity workload).
pub(crate) fn get_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"))
}

/// The little-endian u64 at `at`.
pub(crate) fn get_u64(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

/// Writes a whole page image for `page` of database `db` into `buf` (one page long).
pub fn write_page(buf: &mut [u8], db: u32, page: u64, stamp: u64, filler: &mut Filler) {
    filler.fill(&mut buf[PAGE_HEADER..]);
    buf[4..8].copy_from_slice(PAGE_MAGIC);
    put_u64(buf, 8, page);
    put_u32(buf, 16, db);
    put_u32(buf, 20, buf.len() as u32);
    put_u64(buf, 24, stamp);
    let crc = crc_of(buf);
    put_u32(buf, 0, crc);
}

/// Checks one page image read from where `page` of database `db` lives.
pub fn check_page(buf: &[u8], db: u32, page: u64) -> Result<(), PageFault> {
    if &buf[4..8] != PAGE_MAGIC {
        return Err(PageFault::Magic);
    }
    if get_u32(buf, 0) != crc_of(buf) || get_u32(buf, 20) as usize != buf.len() {
        return Err(PageFault::Checksum);
    }
    let found = get_u64(buf, 8);
    if found != page {
        return Err(PageFault::Misplaced { found });
    }
    let owner = get_u32(buf, 16);
    if owner != db {
        return Err(PageFault::Foreign { found: owner });
    }
    Ok(())
}

/// Seals log block `index` of generation `gen`: its header and checksum. `used` payload bytes
/// are meaningful; the rest of the block is filler.
pub fn seal_log_block(block: &mut [u8], generation: u32, index: u32, used: u16) {
    block[4..8].copy_from_slice(LOG_MAGIC);
    put_u32(block, 8, generation);
    put_u32(block, 12, index);
    block[16..18].copy_from_slice(&used.to_le_bytes());
    block[18..20].fill(0);
    let crc = crc_of(block);
    put_u32(block, 0, crc);
}

/// Checks log block `index` of a file of generation `gen`; returns its payload bytes used.
pub fn check_log_block(block: &[u8], generation: u32, index: u32) -> Result<u16, PageFault> {
    if &block[4..8] != LOG_MAGIC {
        return Err(PageFault::Magic);
    }
    if get_u32(block, 0) != crc_of(block) {
        return Err(PageFault::Checksum);
    }
    let (g, i) = (get_u32(block, 8), get_u32(block, 12));
    if g != generation || i != index {
        return Err(PageFault::Misplaced { found: (u64::from(g) << 32) | u64::from(i) });
    }
    Ok(u16::from_le_bytes([block[16], block[17]]))
}

/// A stream id for database `db`'s filler, distinct from every other use of the seed.
pub fn filler_stream(db: u32, purpose: u64) -> u64 {
    mix(0x6d61_696c_626f_7800 ^ (u64::from(db) << 8) ^ purpose)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_page_checks_and_any_flipped_byte_or_wrong_place_is_caught() {
        let mut f = Filler::new(1, 2);
        let mut page = vec![0u8; 8192];
        write_page(&mut page, 3, 77, 9, &mut f);
        assert_eq!(check_page(&page, 3, 77), Ok(()));
        assert_eq!(check_page(&page, 3, 78), Err(PageFault::Misplaced { found: 77 }));
        assert_eq!(check_page(&page, 4, 77), Err(PageFault::Foreign { found: 3 }));
        for at in [0, 5, 12, 100, 8191] {
            let mut bad = page.clone();
            bad[at] ^= 0x10;
            assert!(check_page(&bad, 3, 77).is_err(), "flip at {at} not caught");
        }
        assert_eq!(check_page(&vec![0u8; 8192], 3, 77), Err(PageFault::Magic));
    }

    #[test]
    fn bodies_differ_between_writes_and_databases_and_do_not_compress() {
        let (mut a, mut b) = (Filler::new(1, filler_stream(1, 0)), Filler::new(1, filler_stream(2, 0)));
        let (mut p1, mut p2, mut p3) = (vec![0u8; 4096], vec![0u8; 4096], vec![0u8; 4096]);
        a.fill(&mut p1);
        a.fill(&mut p2);
        b.fill(&mut p3);
        assert!(p1 != p2 && p1 != p3 && p2 != p3);
        // Every byte value appears about equally often: no run-length or dictionary gain.
        let mut counts = [0u32; 256];
        for &x in p1.iter().chain(&p2).chain(&p3) {
            counts[x as usize] += 1;
        }
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(*lo > 20 && *hi < 80, "byte histogram {lo}..{hi}");
    }

    #[test]
    fn log_blocks_check_and_report_their_fill() {
        let mut block = vec![0xAAu8; 512];
        seal_log_block(&mut block, 5, 9, 300);
        assert_eq!(check_log_block(&block, 5, 9), Ok(300));
        assert!(check_log_block(&block, 6, 9).is_err());
        block[400] ^= 1;
        assert_eq!(check_log_block(&block, 5, 9), Err(PageFault::Checksum));
    }
}
