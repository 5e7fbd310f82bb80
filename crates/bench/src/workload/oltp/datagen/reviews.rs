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
use crate::rng::{self, Rng, WorkerRng};
use crate::workload::oltp::size::RowCounts;
use crate::workload::oltp::words::review_words;
use std::sync::OnceLock;

/// Reviews per chunk (about 500 KB of reviews, 500 KB of ratings).
const CHUNK: u64 = 1_024;
/// Words of a summary.
const SUMMARY_WORDS: u64 = 3;

pub(super) fn layout(c: &RowCounts) -> Layout {
    Layout::new(CHUNK, &[(1, c.reviews())])
}

/// U[3,40]-1 ratings for the next review.
fn ratings(counts: &mut WorkerRng) -> u64 {
    rng::between(counts, 2, 39)
}

/// The review words, each with a space after it, padded to 8 bytes, and its length with the
/// space: a word is copied with one fixed-size copy. Words longer than 7 letters (there are
/// none) would be cut.
fn vocabulary() -> &'static [([u8; 8], usize)] {
    static WORDS: OnceLock<Vec<([u8; 8], usize)>> = OnceLock::new();
    WORDS.get_or_init(|| {
        review_words()
            .iter()
            .map(|w| {
                let mut padded = [b' '; 8];
                let len = w.len().min(7);
                padded[..len].copy_from_slice(&w.as_bytes()[..len]);
                (padded, len + 1)
            })
            .collect()
    })
}

/// `n` random words, each followed by a space; two words per 64-bit draw.
fn words(r: &mut WorkerRng, vocabulary: &[([u8; 8], usize)], n: u64, w: &mut Csv<'_>) {
    let size = vocabulary.len() as u32;
    let mut put = |x: u64| {
        let (word, len) = &vocabulary[rng::below32(x as u32, size) as usize];
        w.put_short(word, *len);
    };
    for _ in 0..n / 2 {
        let x = r.next_u64();
        put(x);
        put(x >> 32);
    }
    if n % 2 == 1 {
        put(r.next_u64());
    }
}

pub(super) fn write_reviews(seed: u64, c: &RowCounts, chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    let mut r = chunk_rng(seed, Stream::Reviews, chunk.index);
    let vocabulary = vocabulary();
    for id in chunk.ids.clone() {
        let prod = rng::between(&mut r, 1, c.products);
        let month = rng::between(&mut r, 1, 12) as u8;
        let day = rng::between(&mut r, 1, days_in(month)) as u8;
        let stars = rng::between(&mut r, 1, 5);
        w.int(id).int(prod).date(YEAR, month, day).int(stars).int(rng::between(&mut r, 1, c.customers));
        // The summary has no trailing space: its last one becomes the separator.
        words(&mut r, vocabulary, SUMMARY_WORDS, w);
        w.replace_last(b',');
        let n = rng::between(&mut r, 6, 129);
        words(&mut r, vocabulary, n, w);
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
