#![no_main]
//! cargo-fuzz target: see fuzz/checks/report.rs.

#[path = "../checks/report.rs"]
#[allow(dead_code)] // Each target uses one of the checks.
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::evaluation(data));
