//! The stable-Rust half of storbench's fuzzing, shared by the property tests that `cargo test`
//! runs (crates/cli/src/plan/fuzz_tests.rs, crates/bench/tests/fuzz.rs,
//! crates/report/tests/fuzz.rs, each including this file with `#[path]`).
//!
//! Each test takes the committed seed files of its target (fuzz/corpus/<target>/, real files
//! storbench wrote) and feeds the reader what a damaged, cut, hand-edited or hostile copy of
//! them looks like: bytes flipped or set, ranges cut out or repeated (a record written twice,
//! nesting a thousand deep), numbers swapped for the edges of every integer type, text swapped
//! for control characters, quotes and brackets, pieces of another seed spliced in. What every
//! test holds, on any input:
//! - no panic: a bad file is an `Err`, not an abort;
//! - no hang: each case runs in a child process (proptest's fork mode) that is killed, and the
//!   case failed, after [`CASE_TIMEOUT_MS`];
//! - no allocation sized by a number in the input: while an input is checked, one allocation
//!   above [`ALLOCATION_LIMIT`] fails (the child aborts with "memory allocation of N bytes
//!   failed" and proptest reports the input).
//!
//! The cases are the same on every run (a fixed seed), so CI is repeatable; set
//! PROPTEST_RNG_SEED to explore others and PROPTEST_CASES for longer runs. A failing case is
//! printed shrunk to a minimal input: add it to the target's corpus once it is fixed.

#![allow(dead_code)] // Each test binary uses the part it needs.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;

/// One allocation larger than this, while an input is checked, is a defect: the inputs are a
/// few hundred KiB at most, so only a size read from the input asks for more.
pub const ALLOCATION_LIMIT: usize = 64 << 20;

/// A case that runs longer than this hangs (a case takes milliseconds; the margin is for a
/// loaded two-core CI machine running debug builds).
pub const CASE_TIMEOUT_MS: u32 = 30_000;

/// The fixed seed of every run, unless PROPTEST_RNG_SEED says otherwise.
const SEED: u64 = 21;

thread_local! {
    static CHECKING: Cell<bool> = const { Cell::new(false) };
}

/// The system allocator, refusing one allocation above [`ALLOCATION_LIMIT`] on a thread that
/// is checking an input (every other test in the binary is untouched).
pub struct Bounded;

impl Bounded {
    fn refuses(size: usize) -> bool {
        size > ALLOCATION_LIMIT && CHECKING.try_with(Cell::get).unwrap_or(false)
    }
}

// SAFETY: every call is passed on to `System` unchanged, or refused with a null pointer,
// which `GlobalAlloc` allows for any request.
unsafe impl GlobalAlloc for Bounded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if Self::refuses(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if Self::refuses(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if Self::refuses(new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Bounded = Bounded;

/// Runs `check` with allocations bounded (see [`Bounded`]).
pub fn checking<T>(check: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            CHECKING.with(|c| c.set(false));
        }
    }
    CHECKING.with(|c| c.set(true));
    let _reset = Reset;
    check()
}

/// The configuration of every fuzz test: `cases` cases (PROPTEST_CASES wins), a fixed seed
/// (PROPTEST_RNG_SEED wins), each case in a child process with a time limit.
pub fn config(cases: u32) -> Config {
    let set = |name| std::env::var_os(name).is_some();
    let default = Config::default();
    Config {
        cases: if set("PROPTEST_CASES") { default.cases } else { cases },
        rng_seed: if set("PROPTEST_RNG_SEED") { default.rng_seed } else { RngSeed::Fixed(SEED) },
        fork: true,
        timeout: CASE_TIMEOUT_MS,
        // Found inputs go into the corpus by hand, once fixed; no files beside the sources.
        failure_persistence: None,
        max_shrink_time: 60_000,
        ..default
    }
}

/// The committed seed files of `target` (fuzz/corpus/<target>/), sorted by name. `crate_dir`
/// is the calling crate's CARGO_MANIFEST_DIR. A target without seeds is a broken checkout.
pub fn seeds(crate_dir: &str, target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(crate_dir).join("../../fuzz/corpus").join(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let files: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(!files.is_empty(), "{} holds no seed files", dir.display());
    files
}

/// Numbers at the edges of the types a reader may hold them in, and floats a parser may
/// choke on.
const NUMBERS: [&str; 26] = [
    "0",
    "-0",
    "1",
    "-1",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "1152921504606846976",
    "1e308",
    "1e309",
    "-1e309",
    "4.9e-324",
    "0.000001",
    "1.5",
    "1e-7",
];

/// Text that breaks quoting, nesting, escaping or a terminal.
const TEXTS: [&str; 22] = [
    "\u{0}",
    "\u{1b}[2J",
    "\r",
    "\u{7f}",
    "\u{9b}",
    "\u{202e}",
    "\u{feff}",
    "é",
    "\"",
    "'",
    "\\",
    "\\u0000",
    "[",
    "]",
    "{",
    "}",
    ",",
    "=",
    "\n",
    "..",
    "nan",
    "inf",
];

/// One edit of a seed; positions are taken proportionally to the length at the time.
#[derive(Debug, Clone)]
pub enum Edit {
    Flip {
        at: Index,
        bit: u8,
    },
    Set {
        at: Index,
        byte: u8,
    },
    Cut {
        at: Index,
        len: u16,
    },
    Truncate {
        at: Index,
    },
    Repeat {
        at: Index,
        len: u8,
        times: u16,
    },
    Insert {
        at: Index,
        text: &'static str,
    },
    /// Replaces the digits run at `at` (or the next one) with `number`.
    Number {
        at: Index,
        number: &'static str,
    },
    /// Puts `len` bytes of another seed, from `from`, at `at`.
    Splice {
        at: Index,
        seed: Index,
        from: Index,
        len: u16,
    },
}

/// Edits weighted towards those that keep a file readable up to the field they change: a
/// reader's arithmetic is reached only through a file that otherwise parses.
fn edit() -> impl Strategy<Value = Edit> {
    let index = any::<Index>;
    prop_oneof![
        4 => (index(), proptest::sample::select(&NUMBERS[..])).prop_map(|(at, number)| Edit::Number { at, number }),
        2 => (index(), proptest::sample::select(&TEXTS[..])).prop_map(|(at, text)| Edit::Insert { at, text }),
        1 => (index(), 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        1 => (index(), any::<u8>()).prop_map(|(at, byte)| Edit::Set { at, byte }),
        1 => (index(), 1u16..512).prop_map(|(at, len)| Edit::Cut { at, len }),
        1 => (index(), 1u8..64, prop_oneof![2u16..8, 2u16..2000])
            .prop_map(|(at, len, times)| Edit::Repeat { at, len, times }),
        1 => (index(), index(), index(), 1u16..4096)
            .prop_map(|(at, seed, from, len)| Edit::Splice { at, seed, from, len }),
        1 => index().prop_map(|at| Edit::Truncate { at }),
    ]
}

/// An input's bytes, shown as a byte string when a case fails (readable for text and binary).
#[derive(Clone)]
pub struct Input(pub Vec<u8>);

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// A seed of `seeds` with one to `max_edits` edits applied.
pub fn mutated(seeds: Vec<Vec<u8>>, max_edits: usize) -> impl Strategy<Value = Input> {
    // One or two edits half the time: most files stop being readable after a few.
    let edits = prop_oneof![
        proptest::collection::vec(edit(), 1..=2),
        proptest::collection::vec(edit(), 1..=max_edits.max(1)),
    ];
    (any::<Index>(), edits).prop_map(move |(pick, edits)| {
        let mut bytes = pick.get(&seeds).clone();
        for e in &edits {
            apply(&mut bytes, e, &seeds);
        }
        Input(bytes)
    })
}

/// `mutated` as text, the way a reader of text files sees it (invalid UTF-8 replaced).
pub fn mutated_text(seeds: Vec<Vec<u8>>, max_edits: usize) -> impl Strategy<Value = String> {
    mutated(seeds, max_edits).prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn apply(bytes: &mut Vec<u8>, edit: &Edit, seeds: &[Vec<u8>]) {
    let at = |i: &Index, len: usize| if len == 0 { 0 } else { i.index(len + 1) };
    let n = bytes.len();
    match edit {
        Edit::Flip { at: i, bit } if n > 0 => bytes[i.index(n)] ^= 1 << bit,
        Edit::Set { at: i, byte } if n > 0 => bytes[i.index(n)] = *byte,
        Edit::Flip { .. } | Edit::Set { .. } => {}
        Edit::Cut { at: i, len } => {
            let start = at(i, n);
            bytes.drain(start..(start + usize::from(*len)).min(n));
        }
        Edit::Truncate { at: i } => bytes.truncate(at(i, n)),
        Edit::Repeat { at: i, len, times } => {
            let start = at(i, n);
            let piece = bytes[start..(start + usize::from(*len)).min(n)].to_vec();
            let copies = piece.repeat(usize::from(*times));
            bytes.splice(start..start, copies);
        }
        Edit::Insert { at: i, text } => {
            let start = at(i, n);
            bytes.splice(start..start, text.bytes());
        }
        Edit::Number { at: i, number } => replace_number(bytes, at(i, n), number),
        Edit::Splice { at: i, seed, from, len } => {
            let other = seed.get(seeds);
            let start = at(from, other.len());
            let piece = &other[start..(start + usize::from(*len)).min(other.len())];
            let to = at(i, n);
            bytes.splice(to..to, piece.iter().copied());
        }
    }
}

/// Replaces the first run of ASCII digits at or after `from` with `number`.
fn replace_number(bytes: &mut Vec<u8>, from: usize, number: &str) {
    let Some(start) = bytes[from.min(bytes.len())..].iter().position(u8::is_ascii_digit).map(|p| p + from)
    else {
        return;
    };
    let len = bytes[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    bytes.splice(start..start + len, number.bytes());
}

/// A JSON value where a reader's arithmetic or types break: integer edges, huge and tiny
/// floats, and values of another type.
fn edge_json(pick: usize) -> serde_json::Value {
    use serde_json::json;
    match pick % 16 {
        0 => json!(u64::MAX),
        1 => json!(u64::MAX - 1),
        2 => json!(i64::MAX),
        3 => json!(i64::MIN),
        4 => json!(1u64 << 60),
        5 => json!(u32::MAX),
        6 => json!(-1),
        7 => json!(0),
        8 => json!(1e308),
        9 => json!(-1e308),
        10 => json!(5e-324),
        11 => json!(0.5),
        12 => json!(""),
        13 => json!(null),
        14 => json!([]),
        _ => json!({}),
    }
}

/// Every number, string and null in `value`, depth first.
fn leaves(value: &mut serde_json::Value) -> Vec<&mut serde_json::Value> {
    match value {
        serde_json::Value::Array(items) => items.iter_mut().flat_map(leaves).collect(),
        serde_json::Value::Object(fields) => fields.values_mut().flat_map(leaves).collect(),
        leaf => vec![leaf],
    }
}

/// A JSON seed of `seeds` with one to `max_edits` of its leaves (numbers above all) set to
/// [`edge_json`] values: still JSON, so every edit reaches the reader's types and arithmetic.
pub fn json_edited(seeds: Vec<Vec<u8>>, max_edits: usize) -> impl Strategy<Value = Input> {
    let edits = proptest::collection::vec((any::<Index>(), any::<usize>()), 1..=max_edits.max(1));
    (any::<Index>(), edits).prop_map(move |(pick, edits)| {
        let seed: &Vec<u8> = pick.get(&seeds);
        let mut value: serde_json::Value = serde_json::from_slice(seed).expect("a JSON seed");
        for (at, edge) in &edits {
            let mut all = leaves(&mut value);
            let numbers = all.iter().filter(|v| v.is_number()).count();
            // Numbers three times out of four, when there are any.
            let only_numbers = numbers > 0 && edge % 4 != 0;
            let mut chosen: Vec<&mut serde_json::Value> = if only_numbers {
                all.into_iter().filter(|v| v.is_number()).collect()
            } else {
                std::mem::take(&mut all)
            };
            if !chosen.is_empty() {
                let n = chosen.len();
                *chosen.swap_remove(at.index(n)) = edge_json(edge / 4);
            }
        }
        Input(serde_json::to_vec_pretty(&value).expect("serializes"))
    })
}

/// A JSON seed damaged as bytes ([`mutated`]) or edited as JSON ([`json_edited`]).
pub fn json_damaged(seeds: Vec<Vec<u8>>, max_edits: usize) -> impl Strategy<Value = Input> {
    prop_oneof![mutated(seeds.clone(), max_edits), json_edited(seeds, 3)]
}
