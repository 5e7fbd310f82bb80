//! The mailbox workload: the I/O of Exchange's database engine (ESE), as Jetstress drives it.
mod cache;
mod format;
mod instance;
mod layout;
mod log;
mod preset;
mod recorder;
mod verify;

pub use preset::{OpMix, Preset, Profile, TestType, Thresholds};
pub use verify::{VerifyReport, verify};
