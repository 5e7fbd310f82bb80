//! The integrity workload's 8 KiB page and its checker: what a page read back holds (its
//! generation, a tear between writes, another page's content, nothing yet, or garbage).
//!
//! Layout (little-endian). Every 512-byte sector starts with a 16-byte stamp: the write's
//! generation (u64) and a seal (u64) derived from (file, page, sector index, generation), so a
//! sector proves on its own which write of which page it comes from, as SQL Server's torn-page
//! bits do per sector. Sector 0 carries the page header after its stamp: magic `SBIP` (4),
//! crc32c (4) of the whole page except these 4 bytes, file id (2), 6 zero bytes, page number
//! (8), generation (8). Everything else is pseudo-random bytes from (seed, file, page,
//! generation), which neither compresses nor dedupes.
//!
//! Generations start at 1; generation 0 names a sector or page never written (all zeros, as a
//! freshly grown file reads).

use std::fmt;

use crate::rng::mix;
use crate::workload::io::verify::fill_random;
use crate::workload::mailbox::format::{get_u32, get_u64};

pub const PAGE: usize = 8192;
pub const SECTOR: usize = 512;
pub const SECTORS: usize = PAGE / SECTOR;
const STAMP: usize = 16;
const MAGIC: &[u8; 4] = b"SBIP";
const MAGIC_AT: usize = STAMP;
const CRC_AT: usize = STAMP + 4;
const FILE_AT: usize = STAMP + 8;
const PAGE_AT: usize = STAMP + 16;
const GENERATION_AT: usize = STAMP + 24;

/// One page of one file of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct PageId {
    pub file: u16,
    pub page: u64,
}

impl PageId {
    /// Where the page starts in its file.
    pub fn offset(self) -> u64 {
        self.page * PAGE as u64
    }

    fn key(self) -> u64 {
        mix(mix(self.page) ^ u64::from(self.file))
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "file {} page {}", self.file, self.page)
    }
}

/// What a page read back from where `expected` lives holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// An intact page of this place, of this generation (possibly an older one: the caller
    /// compares generations).
    Ok { generation: u64 },
    /// Every sector is a valid sector of this page, but not all from one write: each sector's
    /// generation, 0 where the sector was never written.
    Torn { sectors: [u64; SECTORS] },
    /// An intact page of another place (a misdirected write or read).
    Misplaced { found: PageId, generation: u64 },
    /// All zeros: never written.
    Unwritten,
    /// Anything else: a checksum that does not match, or a sector that is no sector of this
    /// page.
    Corrupt,
}

impl Checked {
    /// The generations this read can stand for: one for an intact page of its place (0 when
    /// unwritten), each sector's for a torn one; none for misplaced or corrupt content.
    pub fn generations(&self) -> &[u64] {
        match self {
            Checked::Ok { generation } => std::slice::from_ref(generation),
            Checked::Torn { sectors } => sectors,
            Checked::Unwritten => &[0],
            Checked::Misplaced { .. } | Checked::Corrupt => &[],
        }
    }
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Checked::Ok { generation } => write!(f, "generation {generation}"),
            Checked::Torn { sectors } => write_torn(f, sectors),
            Checked::Misplaced { found, generation } => write!(f, "{found} generation {generation}"),
            Checked::Unwritten => write!(f, "never written (zeros)"),
            Checked::Corrupt => write!(f, "checksum mismatch"),
        }
    }
}

/// "torn: sectors 0-3 generation 9, 4-15 generation 8": each run of sectors of one write.
fn write_torn(f: &mut fmt::Formatter<'_>, sectors: &[u64; SECTORS]) -> fmt::Result {
    write!(f, "torn: sectors ")?;
    let mut start = 0;
    for end in 1..=SECTORS {
        if end == SECTORS || sectors[end] != sectors[start] {
            let sep = if start == 0 { "" } else { ", " };
            write!(f, "{sep}{start}-{} generation {}", end - 1, sectors[start])?;
            start = end;
        }
    }
    Ok(())
}

/// Fills `buf` (one page) with the image of write `generation` (from 1) of page `id`.
pub fn write_page(buf: &mut [u8], id: PageId, generation: u64, seed: u64) {
    assert_eq!(buf.len(), PAGE, "a page buffer is one page long");
    debug_assert!(generation > 0, "generation 0 means never written");
    fill_random(buf, seed ^ mix(id.key() ^ mix(generation)));
    for (index, sector) in buf.chunks_exact_mut(SECTOR).enumerate() {
        sector[..8].copy_from_slice(&generation.to_le_bytes());
        sector[8..STAMP].copy_from_slice(&seal(id, index, generation).to_le_bytes());
    }
    buf[MAGIC_AT..CRC_AT].copy_from_slice(MAGIC);
    buf[FILE_AT..FILE_AT + 2].copy_from_slice(&id.file.to_le_bytes());
    buf[FILE_AT + 2..PAGE_AT].fill(0);
    buf[PAGE_AT..GENERATION_AT].copy_from_slice(&id.page.to_le_bytes());
    buf[GENERATION_AT..GENERATION_AT + 8].copy_from_slice(&generation.to_le_bytes());
    let crc = page_crc(buf);
    buf[CRC_AT..FILE_AT].copy_from_slice(&crc.to_le_bytes());
}

/// Checks a page read from where `expected` lives. The order names each fault once: an intact
/// page (magic and crc hold) is Ok or Misplaced by its header; otherwise the sector stamps
/// decide, read as stamps of `expected`: all zero is Unwritten, valid stamps of more than one
/// generation are Torn, and anything else (a stamp of no write of this page, or one
/// generation throughout with a bad crc) is Corrupt.
pub fn check_page(buf: &[u8], expected: PageId) -> Checked {
    assert_eq!(buf.len(), PAGE, "a page buffer is one page long");
    if let Some((found, generation)) = intact_header(buf) {
        return if found != expected {
            Checked::Misplaced { found, generation }
        } else if stamps_match(buf, expected, generation) {
            Checked::Ok { generation }
        } else {
            Checked::Corrupt
        };
    }
    let Some(sectors) = sector_generations(buf, expected) else {
        return Checked::Corrupt;
    };
    if sectors.iter().all(|&g| g == sectors[0]) {
        if sectors[0] == 0 { Checked::Unwritten } else { Checked::Corrupt }
    } else {
        Checked::Torn { sectors }
    }
}

/// The page's (id, generation) when its magic and checksum hold.
fn intact_header(buf: &[u8]) -> Option<(PageId, u64)> {
    if &buf[MAGIC_AT..CRC_AT] != MAGIC || get_u32(buf, CRC_AT) != page_crc(buf) {
        return None;
    }
    let file = u16::from_le_bytes([buf[FILE_AT], buf[FILE_AT + 1]]);
    Some((PageId { file, page: get_u64(buf, PAGE_AT) }, get_u64(buf, GENERATION_AT)))
}

fn stamps_match(buf: &[u8], id: PageId, generation: u64) -> bool {
    buf.chunks_exact(SECTOR).enumerate().all(|(index, s)| stamp_generation(s, id, index) == Some(generation))
}

/// Each sector's generation read as a sector of `id` (0 for an all-zero sector), or None when
/// a sector is neither.
fn sector_generations(buf: &[u8], id: PageId) -> Option<[u64; SECTORS]> {
    let mut found = [0u64; SECTORS];
    for (index, sector) in buf.chunks_exact(SECTOR).enumerate() {
        found[index] = match stamp_generation(sector, id, index) {
            Some(generation) => generation,
            None if sector.iter().all(|&b| b == 0) => 0,
            None => return None,
        };
    }
    Some(found)
}

/// The generation a sector's stamp names, when its seal is that of sector `index` of `id`.
fn stamp_generation(sector: &[u8], id: PageId, index: usize) -> Option<u64> {
    let generation = get_u64(sector, 0);
    (generation != 0 && get_u64(sector, 8) == seal(id, index, generation)).then_some(generation)
}

fn seal(id: PageId, index: usize, generation: u64) -> u64 {
    mix(id.key() ^ mix(generation ^ ((index as u64) << 56)))
}

/// crc32c of the page without its crc field.
fn page_crc(buf: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&buf[..CRC_AT]), &buf[FILE_AT..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: u64 = 0x5EED_0014;

    fn page(id: PageId, generation: u64, seed: u64) -> Vec<u8> {
        let mut buf = vec![0u8; PAGE];
        write_page(&mut buf, id, generation, seed);
        buf
    }

    fn id(file: u16, page: u64) -> PageId {
        PageId { file, page }
    }

    #[test]
    fn a_healthy_page_round_trips_for_many_places_generations_and_seeds() {
        for seed in [0, 1, SEED, u64::MAX] {
            for file in [0, 1, 7, u16::MAX] {
                for p in [0, 1, 63, 1 << 20, u64::MAX / PAGE as u64] {
                    for generation in [1, 2, 1000, u64::MAX] {
                        let buf = page(id(file, p), generation, seed);
                        assert_eq!(check_page(&buf, id(file, p)), Checked::Ok { generation });
                    }
                }
            }
        }
    }

    #[test]
    fn content_depends_on_seed_place_and_generation_and_does_not_repeat() {
        let a = page(id(1, 5), 3, SEED);
        for other in [
            page(id(1, 5), 3, SEED + 1),
            page(id(1, 6), 3, SEED),
            page(id(2, 5), 3, SEED),
            page(id(1, 5), 4, SEED),
        ] {
            // Stamps and header name the place and generation; the content must differ too.
            let content = |buf: &[u8]| {
                buf.chunks(SECTOR).flat_map(|s| &s[GENERATION_AT + 8..]).copied().collect::<Vec<u8>>()
            };
            let same = content(&a).iter().zip(content(&other)).filter(|(x, y)| **x == *y).count();
            assert!(same < PAGE / 64, "{same} equal content bytes between two different writes");
        }
        let sectors: std::collections::HashSet<&[u8]> = a.chunks(SECTOR).map(|s| &s[STAMP..]).collect();
        assert_eq!(sectors.len(), SECTORS, "no two sectors hold the same content");
    }

    /// The first `k` sectors from `newer`, the rest from `older`.
    fn torn(newer: &[u8], older: &[u8], k: usize) -> Vec<u8> {
        let mut buf = older.to_vec();
        buf[..k * SECTOR].copy_from_slice(&newer[..k * SECTOR]);
        buf
    }

    #[test]
    fn a_write_torn_at_every_sector_boundary_is_torn_with_each_sectors_generation() {
        let at = id(3, 4242);
        let (old, new) = (page(at, 8, SEED), page(at, 9, SEED));
        for k in 1..SECTORS {
            for (head, tail, head_gen, tail_gen) in [(&new, &old, 9, 8), (&old, &new, 8, 9)] {
                let mut want = [tail_gen; SECTORS];
                want[..k].fill(head_gen);
                assert_eq!(check_page(&torn(head, tail, k), at), Checked::Torn { sectors: want }, "k={k}");
            }
        }
    }

    #[test]
    fn a_first_write_torn_over_a_fresh_page_is_torn_with_unwritten_sectors() {
        let at = id(0, 12);
        let buf = torn(&page(at, 1, SEED), &[0u8; PAGE], 5);
        let mut want = [0u64; SECTORS];
        want[..5].fill(1);
        assert_eq!(check_page(&buf, at), Checked::Torn { sectors: want });
        assert_eq!(
            Checked::Torn { sectors: want }.to_string(),
            "torn: sectors 0-4 generation 1, 5-15 generation 0"
        );
    }

    #[test]
    fn another_pages_content_is_misplaced_and_names_that_page() {
        let at = id(2, 100);
        for other in [id(2, 101), id(2, 0), id(3, 100), id(0, 100)] {
            let buf = page(other, 6, SEED);
            assert_eq!(check_page(&buf, at), Checked::Misplaced { found: other, generation: 6 }, "{other}");
        }
    }

    #[test]
    fn a_single_flipped_bit_anywhere_is_corrupt() {
        let at = id(1, 77);
        let good = page(at, 5, SEED);
        // Every bit of the header sector's stamp and header, every byte elsewhere.
        let header_bits = (0..GENERATION_AT + 8).flat_map(|byte| (0..8).map(move |bit| (byte, bit)));
        let other_bytes = (GENERATION_AT + 8..PAGE).map(|byte| (byte, byte % 8));
        for (byte, bit) in header_bits.chain(other_bytes) {
            let mut buf = good.clone();
            buf[byte] ^= 1 << bit;
            assert_eq!(check_page(&buf, at), Checked::Corrupt, "bit {bit} of byte {byte}");
        }
    }

    #[test]
    fn a_flipped_bit_in_any_sectors_stamp_is_corrupt_not_torn() {
        let at = id(1, 77);
        let good = page(at, 5, SEED);
        for sector in 0..SECTORS {
            for bit in 0..STAMP * 8 {
                let mut buf = good.clone();
                buf[sector * SECTOR + bit / 8] ^= 1 << (bit % 8);
                assert_eq!(check_page(&buf, at), Checked::Corrupt, "sector {sector} bit {bit}");
            }
        }
    }

    #[test]
    fn an_older_intact_generation_reads_ok_with_that_generation() {
        let at = id(4, 9);
        assert_eq!(check_page(&page(at, 3, SEED), at), Checked::Ok { generation: 3 });
    }

    #[test]
    fn a_zeroed_page_is_unwritten_and_other_fills_are_corrupt() {
        let at = id(0, 0);
        assert_eq!(check_page(&[0u8; PAGE], at), Checked::Unwritten);
        assert_eq!(check_page(&[0xFFu8; PAGE], at), Checked::Corrupt);
        let mut almost = [0u8; PAGE];
        almost[PAGE - 1] = 1;
        assert_eq!(check_page(&almost, at), Checked::Corrupt);
    }

    #[test]
    fn a_page_with_one_sector_from_another_page_is_corrupt() {
        let at = id(1, 1);
        let mut buf = page(at, 2, SEED);
        buf[3 * SECTOR..4 * SECTOR].copy_from_slice(&page(id(1, 2), 2, SEED)[3 * SECTOR..4 * SECTOR]);
        assert_eq!(check_page(&buf, at), Checked::Corrupt);
    }

    #[test]
    fn a_report_names_what_was_found() {
        assert_eq!(Checked::Ok { generation: 4 }.to_string(), "generation 4");
        let found = Checked::Misplaced { found: id(1, 8), generation: 2 };
        assert_eq!(found.to_string(), "file 1 page 8 generation 2");
        assert_eq!(id(1, 8).offset(), 8 * 8192);
    }
}
