//! Fuzzing the plan parser and the size and duration parsers (fuzz/harness.rs says how): the
//! plans are the committed ones (fuzz/corpus/plan/: `storbench plan init`'s and an
//! evaluation's copy, with targets that exist everywhere) and the built-in quick plan, damaged
//! and edited; the sizes and durations are generated from their grammar. The binary crate has
//! no library for cargo-fuzz to link, so these run on stable inside `cargo test` only.

#[path = "../../../../fuzz/harness.rs"]
mod harness;

use super::QUICK_PLAN;
use super::expand::runs;
use super::parse::parse;
use super::table::PlanError;
use harness::{checking, config, mutated_text, seeds};
use proptest::prelude::*;
use std::time::Duration;
use storbench_bench::units::{ByteSize, MAX_BYTES, MAX_DURATION, Minutes, Seconds};

fn plan_seeds() -> Vec<Vec<u8>> {
    let mut all = seeds(env!("CARGO_MANIFEST_DIR"), "plan");
    all.push(QUICK_PLAN.as_bytes().to_vec());
    all
}

/// What a user of `storbench run` relies on for any plan text: it parses or is an error that
/// points into the text, and a plan that parses expands into its runs.
fn check_plan(text: &str) -> Result<(), TestCaseError> {
    match checking(|| parse("plan.toml", text).map(|plan| runs(&plan).len())) {
        Ok(n) => prop_assert!(n > 0, "a plan that parses runs something"),
        Err(e) => check_error(&e, text)?,
    }
    Ok(())
}

fn check_error(e: &PlanError, text: &str) -> Result<(), TestCaseError> {
    let lines = text.split('\n').count();
    prop_assert!((1..=lines).contains(&(e.line as usize)), "line {} of {lines}: {e}", e.line);
    prop_assert!(e.column >= 1 && e.caret >= 1, "{e:?}");
    prop_assert!(!e.message.is_empty());
    prop_assert!(e.to_string().starts_with("plan.toml:"), "{e}");
    Ok(())
}

#[test]
fn every_plan_seed_parses_and_runs_something() {
    for (i, seed) in plan_seeds().iter().enumerate() {
        let text = std::str::from_utf8(seed).unwrap();
        let plan = parse("seed", text).unwrap_or_else(|e| panic!("seed {i}: {e}"));
        assert!(!runs(&plan).is_empty(), "seed {i}");
    }
}

/// A plan naming a database with a password: whatever else is wrong with the plan, the
/// error never shows the password.
fn with_password(seed: &[u8]) -> String {
    let text = String::from_utf8_lossy(seed);
    text.replacen("[[configuration]]\n", &format!("[[configuration]]\nurl = [\"{URL}\"]\n"), 1)
}

const PASSWORD: &str = "Zq7-fuzz-secret";
const URL: &str = "postgres://bench:Zq7-fuzz-secret@127.0.0.1/ds3";

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn any_plan_text_parses_or_is_an_error_in_the_text(text in mutated_text(plan_seeds(), 6)) {
        check_plan(&text)?;
    }

    #[test]
    fn a_plan_error_never_shows_a_url_password(
        text in mutated_text(plan_seeds().iter().map(|s| with_password(s).into_bytes()).collect(), 4)
    ) {
        if let Err(e) = checking(|| parse("plan.toml", &text)) {
            // Only while the URL is whole can the password be told from other text.
            if text.contains(URL) {
                prop_assert!(!e.to_string().contains(PASSWORD), "{e}");
            }
        }
    }
}

/// Sizes and durations as people type them, and as they mistype them.
const NUMBER: &str = "[ \t]{0,2}[-+]?[0-9]{0,24}([.][0-9]{0,12})?([eE][-+]?[0-9]{1,4})?";
const SIZE_UNIT: &str = "( ?(B|b|k|K|KB|KiB|kib|M|MB|MiB|G|GB|GiB|T|TiB|P|PiB|E|EB|EiB|Z|ZiB|Y|x))?[ ]{0,2}";
const TIME_UNIT: &str =
    "( ?(ns|us|µs|ms|s|sec|m|min|h|hr|d|days|w|M|months|y|years|x))?([0-9]{1,12}(s|m|h|d|ms))?[ ]{0,2}";

/// A number with one of `units`, or any text at all.
fn typed(units: &str) -> impl Strategy<Value = String> {
    let grammar = proptest::string::string_regex(&format!("{NUMBER}{units}")).expect("a valid regex");
    prop_oneof![grammar, any::<String>()]
}

proptest! {
    #![proptest_config(config(5000))]

    #[test]
    fn a_size_is_at_most_an_exbibyte_and_plain_digits_are_bytes(
        text in typed(SIZE_UNIT)
    ) {
        if let Ok(ByteSize(n)) = checking(|| text.parse::<ByteSize>()) {
            prop_assert!(n <= MAX_BYTES, "{text:?} is {n}");
            if let Ok(exact) = text.trim().parse::<u64>() {
                prop_assert_eq!(n, exact, "{:?}", text);
            }
        }
    }

    #[test]
    fn a_duration_is_at_most_a_year_and_reads_back_as_written(
        text in typed(TIME_UNIT)
    ) {
        if let Ok(Seconds(d)) = checking(|| text.parse::<Seconds>()) {
            prop_assert!(d <= MAX_DURATION, "{text:?} is {d:?}");
            // method.json keeps durations as written; a resume reads them back.
            let written = Seconds(d).to_string();
            prop_assert_eq!(written.parse::<Seconds>().map(|s| s.0), Ok(d), "{:?} -> {}", text, written);
            if let Ok(secs) = text.trim().parse::<u64>() {
                prop_assert_eq!(d, Duration::from_secs(secs));
            }
        }
        if let Ok(Minutes(d)) = checking(|| text.parse::<Minutes>()) {
            prop_assert!(d <= MAX_DURATION, "{text:?} is {d:?}");
        }
    }
}
