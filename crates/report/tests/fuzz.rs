//! Fuzzing the readers of a bundle's files on stable, inside `cargo test` (fuzz/harness.rs says
//! how; fuzz/checks/report.rs holds what each target promises, shared with the cargo-fuzz
//! targets): summary.json, evaluation.json, timeseries.csv and disclosure.json from a short
//! evaluation of every workload kind (fuzz/corpus/), damaged as bytes and edited as JSON, read
//! and rendered into every report.

#[path = "../../../fuzz/checks/report.rs"]
mod checks;
#[path = "../../../fuzz/harness.rs"]
mod harness;

use harness::{checking, config, json_damaged, mutated, seeds};
use proptest::prelude::*;
use storbench_report::evaluation::Evaluation;
use storbench_report::render::Series;
use storbench_report::{Disclosure, Summary};

fn corpus(target: &str) -> Vec<Vec<u8>> {
    seeds(env!("CARGO_MANIFEST_DIR"), target)
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn any_summary_reads_or_is_refused_and_renders(bytes in json_damaged(corpus("summary"), 6)) {
        checking(|| checks::summary(&bytes));
    }

    #[test]
    fn any_evaluation_reads_or_is_refused_and_renders(bytes in json_damaged(corpus("evaluation"), 6)) {
        checking(|| checks::evaluation(&bytes));
    }

    #[test]
    fn any_time_series_reads_or_is_refused_and_charts(bytes in mutated(corpus("timeseries"), 6)) {
        checking(|| checks::timeseries(&bytes));
    }

    #[test]
    fn any_disclosure_reads_or_is_refused_and_renders(bytes in json_damaged(corpus("disclosure"), 6)) {
        checking(|| checks::disclosure(&bytes));
    }
}

/// The seeds are what storbench writes today and reads whole: a seed that stopped reading
/// would leave its target fuzzing nothing but refusals.
#[test]
fn every_seed_reads_and_renders() {
    for bytes in corpus("summary") {
        serde_json::from_slice::<Summary>(&bytes).unwrap();
        checks::summary(&bytes);
    }
    for bytes in corpus("evaluation") {
        assert!(!serde_json::from_slice::<Evaluation>(&bytes).unwrap().runs.is_empty());
        checks::evaluation(&bytes);
    }
    for bytes in corpus("timeseries") {
        assert!(!Series::parse(std::str::from_utf8(&bytes).unwrap()).unwrap().t_s.is_empty());
        checks::timeseries(&bytes);
    }
    for bytes in corpus("disclosure") {
        serde_json::from_slice::<Disclosure>(&bytes).unwrap();
        checks::disclosure(&bytes);
    }
}
