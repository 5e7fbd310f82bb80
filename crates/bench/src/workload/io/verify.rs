//! Block contents: incompressible data for plain writes, and with `--verify` a header that
//! lets a read prove the block is the one written there.
//!
//! Verified block layout (little-endian): magic u32 `SBV1`, crc32c u32 of bytes 8..len, offset
//! u64, seed u64, generation u64, then pseudo-random bytes derived from (seed, offset,
//! generation). The offset catches misdirected writes, the generation catches lost writes
//! (the block still holds an older version), the crc catches any other corruption.

use crate::rng::mix;

const MAGIC: u32 = u32::from_le_bytes(*b"SBV1");
pub const HEADER_LEN: usize = 32;

/// Fills `buf` with bytes no compressor or deduplicator can shrink: a stream seeded by `key`.
pub fn fill_random(buf: &mut [u8], key: u64) {
    let mut state = mix(key ^ 0xA076_1D64_78BD_642F);
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(state).to_le_bytes()
    };
    // Whole words first: a copy of a fixed 8 bytes is a store, where a copy of a slice of
    // unknown length is a call to memcpy for every 8 bytes.
    let mut words = buf.chunks_exact_mut(8);
    for word in &mut words {
        word.copy_from_slice(&next());
    }
    let tail = words.into_remainder();
    let len = tail.len();
    tail.copy_from_slice(&next()[..len]);
}

/// Makes a reused write buffer unique for this write, cheaply: the first 16 bytes of every
/// 512-byte sector take the offset and a per-write counter, so no two written sectors are the
/// same and the data stays non-dedupable.
#[inline]
pub fn stamp_unique(buf: &mut [u8], offset: u64, counter: u64) {
    let tag = mix(counter).to_le_bytes();
    for (i, sector) in buf.chunks_exact_mut(512).enumerate() {
        sector[..8].copy_from_slice(&(offset + i as u64 * 512).to_le_bytes());
        sector[8..16].copy_from_slice(&tag);
    }
}

/// Writes a verified block for (`seed`, `offset`, `generation`) into `buf`.
pub fn write_block(buf: &mut [u8], seed: u64, offset: u64, generation: u64) {
    fill_random(&mut buf[HEADER_LEN..], seed ^ mix(offset) ^ mix(generation.rotate_left(17)));
    buf[8..16].copy_from_slice(&offset.to_le_bytes());
    buf[16..24].copy_from_slice(&seed.to_le_bytes());
    buf[24..32].copy_from_slice(&generation.to_le_bytes());
    buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    let crc = crc32c::crc32c(&buf[8..]);
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// What a read found wrong, with the expected and found values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBlock {
    pub field: &'static str,
    pub expected: String,
    pub found: String,
}

/// Checks a block read at `offset` that this run last wrote with `generation`.
pub fn check_block(buf: &[u8], seed: u64, offset: u64, generation: u64) -> Result<(), BadBlock> {
    let word = |r: std::ops::Range<usize>| u64::from_le_bytes(buf[r].try_into().expect("8 bytes"));
    let magic = u32::from_le_bytes(buf[0..4].try_into().expect("4 bytes"));
    if magic != MAGIC {
        return Err(bad("magic", format!("{MAGIC:#010x}"), format!("{magic:#010x}")));
    }
    let stored_crc = u32::from_le_bytes(buf[4..8].try_into().expect("4 bytes"));
    let crc = crc32c::crc32c(&buf[8..]);
    if crc != stored_crc {
        return Err(bad("crc", format!("{stored_crc:#010x}"), format!("{crc:#010x}")));
    }
    for (field, range, want) in
        [("offset", 8..16, offset), ("seed", 16..24, seed), ("generation", 24..32, generation)]
    {
        let got = word(range);
        if got != want {
            return Err(bad(field, want.to_string(), got.to_string()));
        }
    }
    Ok(())
}

fn bad(field: &'static str, expected: String, found: String) -> BadBlock {
    BadBlock { field, expected, found }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(seed: u64, offset: u64, generation: u64) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        write_block(&mut b, seed, offset, generation);
        b
    }

    #[test]
    fn a_written_block_verifies_at_its_offset_and_generation() {
        let b = block(7, 8192, 3);
        assert_eq!(check_block(&b, 7, 8192, 3), Ok(()));
    }

    #[test]
    fn a_flipped_bit_is_caught_by_the_crc() {
        let mut b = block(7, 8192, 3);
        b[1000] ^= 0x10;
        let err = check_block(&b, 7, 8192, 3).unwrap_err();
        assert_eq!(err.field, "crc");
    }

    #[test]
    fn a_misdirected_write_reports_the_offset_it_carries() {
        let b = block(7, 4096, 1);
        let err = check_block(&b, 7, 8192, 1).unwrap_err();
        assert_eq!(err, BadBlock { field: "offset", expected: "8192".into(), found: "4096".into() });
    }

    #[test]
    fn a_lost_write_shows_as_an_older_generation() {
        let b = block(7, 8192, 2);
        let err = check_block(&b, 7, 8192, 3).unwrap_err();
        assert_eq!((err.field, err.expected.as_str(), err.found.as_str()), ("generation", "3", "2"));
    }

    #[test]
    fn zeros_are_reported_as_a_bad_magic() {
        assert_eq!(check_block(&[0u8; 4096], 1, 0, 1).unwrap_err().field, "magic");
    }

    #[test]
    fn stamped_sectors_differ_between_writes_and_random_fill_does_not_repeat() {
        let mut a = vec![0u8; 4096];
        fill_random(&mut a, 1);
        let mut b = a.clone();
        stamp_unique(&mut a, 0, 1);
        stamp_unique(&mut b, 0, 2);
        assert_ne!(a[..512], b[..512]);
        let sectors: std::collections::HashSet<&[u8]> = a.chunks(512).collect();
        assert_eq!(sectors.len(), 8, "every sector of a block is different");
    }
}
