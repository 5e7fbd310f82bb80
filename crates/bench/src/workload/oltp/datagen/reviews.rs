//! REVIEWS and REVIEWS_HELPFULNESS, the bulk of a DS3 set (about three quarters of its bytes).
//!
//! Each review gets U[3,40]-1 helpfulness ratings with ids that run on across reviews, so the
//! number of ratings per review comes from its own cheap stream per chunk of reviews: the
//! first id of every chunk is a prefix sum of counts alone, and the exact row count needs no
//! text. The review text keeps DS3's trailing space after its last word.
//!
//! DS3's generator gives every rating the customer id of the review's author (a bug: authors
//! rate their own reviews). Here a rating's CUSTOMERID is a random customer U[1,customers].

use super::csv::Csv;
use super::orders::{YEAR, days_in};
use super::{Chunk, Layout, Stream, chunk_rng};
use crate::rng::{self, WorkerRng};
use crate::workload::oltp::size::RowCounts;
use crate::workload::oltp::words::review_words;

/// Reviews per chunk (about 500 KB of reviews, 500 KB of ratings).
const CHUNK: u64 = 1_024;
/// Words of a summary.
const SUMMARY_WORDS: usize = 3;

pub(super) fn layout(c: &RowCounts) -> Layout {
    Layout::new(CHUNK, &[(1, c.reviews())])
}

/// U[3,40]-1 ratings for the next review.
fn ratings(counts: &mut WorkerRng) -> u64 {
    rng::between(counts, 2, 39)
}

pub(super) fn write_reviews(seed: u64, c: &RowCounts, chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    let mut r = chunk_rng(seed, Stream::Reviews, chunk.index);
    let words = review_words();
    let n_words = words.len() as u64;
    for id in chunk.ids.clone() {
        let prod = rng::between(&mut r, 1, c.products);
        let month = rng::between(&mut r, 1, 12) as u8;
        let day = rng::between(&mut r, 1, days_in(month)) as u8;
        let stars = rng::between(&mut r, 1, 5);
        w.int(id).int(prod).date(YEAR, month, day).int(stars).int(rng::between(&mut r, 1, c.customers));
        for i in 0..SUMMARY_WORDS {
            if i > 0 {
                w.put(b" ");
            }
            w.put(words[rng::below(&mut r, n_words) as usize].as_bytes());
        }
        w.sep();
        for _ in 0..rng::between(&mut r, 6, 129) {
            w.put(words[rng::below(&mut r, n_words) as usize].as_bytes()).put(b" ");
        }
        w.sep().end();
    }
    chunk.ids.end - chunk.ids.start
}

/// The first rating id of every chunk of reviews, and one past the last rating at the end.
pub(super) fn rating_starts(seed: u64, c: &RowCounts) -> Vec<u64> {
    let layout = layout(c);
    let mut starts = Vec::with_capacity(layout.chunks() as usize + 1);
    let mut next = 1;
    starts.push(next);
    for i in 0..layout.chunks() {
        let mut counts = chunk_rng(seed, Stream::RatingCounts, i);
        next += layout.chunk(i).ids.map(|_| ratings(&mut counts)).sum::<u64>();
        starts.push(next);
    }
    starts
}

/// The ratings of one chunk of reviews, ids from `first_id`.
pub(super) fn write_ratings(seed: u64, c: &RowCounts, first_id: u64, chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    let mut counts = chunk_rng(seed, Stream::RatingCounts, chunk.index);
    let mut r = chunk_rng(seed, Stream::Ratings, chunk.index);
    let mut id = first_id;
    for review in chunk.ids.clone() {
        for _ in 0..ratings(&mut counts) {
            // Customer and rating from one draw over customers × 10.
            let x = rng::below(&mut r, c.customers * 10);
            w.int(id).int(review).int(x / 10 + 1).int(x % 10 + 1).end();
            id += 1;
        }
    }
    id - first_id
}
