#![no_main]
//! cargo-fuzz target: see fuzz/checks/bench.rs.

#[path = "../checks/bench.rs"]
#[allow(dead_code)] // Each target uses one of the checks.
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::trace(data));
