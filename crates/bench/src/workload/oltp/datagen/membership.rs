//! MEMBERSHIP: one random customer in each of k equal intervals of the customer ids (k = 10 %
//! of the customers), so member ids are unique, ascending and evenly spread, as in DS3.

use super::csv::Csv;
use super::{Chunk, Layout, Stream, chunk_rng};
use crate::rng;
use crate::workload::oltp::size::RowCounts;

/// Members per chunk.
const CHUNK: u64 = 8_192;

/// Members are numbered 0..k here; the number is not written.
pub(super) fn layout(c: &RowCounts) -> Layout {
    Layout::new(CHUNK, &[(0, c.members())])
}

pub(super) fn write(seed: u64, c: &RowCounts, chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    let mut r = chunk_rng(seed, Stream::Membership, chunk.index);
    let (n, k) = (u128::from(c.customers), u128::from(c.members()));
    for j in chunk.ids.clone() {
        // Interval j holds the ids lo+1 ..= hi.
        let lo = (u128::from(j) * n / k) as u64;
        let hi = ((u128::from(j) + 1) * n / k) as u64;
        let customer = lo + rng::between(&mut r, 1, hi - lo);
        let kind = rng::between(&mut r, 1, 3);
        let year = rng::between(&mut r, 2015, 2019) as u16;
        w.int(customer).int(kind).date(year, rng::between(&mut r, 1, 12) as u8, 15).end();
    }
    chunk.ids.end - chunk.ids.start
}
