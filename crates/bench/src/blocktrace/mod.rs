//! Block-layer capture and what a capture says: a device's requests recorded from the
//! kernel's tracepoints (`capture`) into a compact, versioned trace file (`format`), and the
//! numbers a person and a model need from it (`fingerprint`); a run's own capture as a
//! background stream (`stream`); a replay of a trace (`replay`) and its options (`options`).

pub mod capture;
pub mod entry;
pub mod fidelity;
pub mod fingerprint;
pub mod format;
pub mod job;
pub mod options;
mod raw;
pub mod replay;
pub mod stream;
