//! The vocabularies behind titles, actor names and review text, shared by the generator and
//! the driver (which searches for what the generator wrote).
//!
//! DS3 draws titles from 1,000 words, actors from 200 first by 200 last names and reviews from
//! about 4,950 words. storbench keeps those sizes, which shape how selective the searches are,
//! but makes its own words: each is three consonant-vowel syllables (`KORIMA`), picked by a
//! bijective scramble of its index, so every word in every list is distinct and one token to a
//! full-text index under any tokenizer, and no stemmer changes it.

use std::sync::OnceLock;

pub const TITLE_WORDS: usize = 1_000;
pub const FIRST_NAMES: usize = 200;
pub const LAST_NAMES: usize = 200;
pub const REVIEW_WORDS: usize = 4_950;

const CONSONANTS: &[u8] = b"BDFGKLMNPRSTVZ";
const VOWELS: &[u8] = b"AEIOU";
const SYLLABLES: usize = 14 * 5;
const SPACE: usize = SYLLABLES * SYLLABLES * SYLLABLES;

/// Word `g` of the shared space: a multiplicative scramble (the factor is coprime with the
/// space, so distinct indexes give distinct words) spread into three syllables.
fn word(g: usize, lower: bool) -> String {
    let mut k = (g * 48_271 + 12_345) % SPACE;
    let mut w = String::with_capacity(6);
    for _ in 0..3 {
        let s = k % SYLLABLES;
        k /= SYLLABLES;
        for b in [CONSONANTS[s / VOWELS.len()], VOWELS[s % VOWELS.len()]] {
            w.push(if lower { b.to_ascii_lowercase() } else { b } as char);
        }
    }
    w
}

struct Lists {
    titles: Vec<&'static str>,
    first: Vec<&'static str>,
    last: Vec<&'static str>,
    review: Vec<&'static str>,
}

fn lists() -> &'static Lists {
    static LISTS: OnceLock<Lists> = OnceLock::new();
    LISTS.get_or_init(|| {
        let mut next = 0;
        let mut take = |n: usize, lower: bool| -> Vec<&'static str> {
            let out = (next..next + n).map(|g| &*word(g, lower).leak()).collect();
            next += n;
            out
        };
        Lists {
            titles: take(TITLE_WORDS, false),
            first: take(FIRST_NAMES, false),
            last: take(LAST_NAMES, false),
            review: take(REVIEW_WORDS, true),
        }
    })
}

/// Upper-case words that make product titles (`FIRST SECOND`).
pub fn title_words() -> &'static [&'static str] {
    &lists().titles
}

/// Upper-case actor first names.
pub fn first_names() -> &'static [&'static str] {
    &lists().first
}

/// Upper-case actor last names.
pub fn last_names() -> &'static [&'static str] {
    &lists().last
}

/// Lower-case words of review summaries and texts.
pub fn review_words() -> &'static [&'static str] {
    &lists().review
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn lists_have_ds3s_sizes_and_no_word_is_in_two_places() {
        let all: Vec<&str> = [title_words(), first_names(), last_names(), review_words()].concat();
        assert_eq!(all.len(), TITLE_WORDS + FIRST_NAMES + LAST_NAMES + REVIEW_WORDS);
        let distinct: HashSet<String> = all.iter().map(|w| w.to_ascii_uppercase()).collect();
        assert_eq!(distinct.len(), all.len());
    }

    #[test]
    fn words_are_six_letters_in_the_lists_case_and_stable() {
        assert!(title_words().iter().all(|w| w.len() == 6 && w.bytes().all(|b| b.is_ascii_uppercase())));
        assert!(review_words().iter().all(|w| w.len() == 6 && w.bytes().all(|b| b.is_ascii_lowercase())));
        // The vocabulary is part of the data set: changing it changes every database.
        assert_eq!(word(0, false), word(0, false));
        assert_eq!(title_words()[0], word(0, false));
    }
}
