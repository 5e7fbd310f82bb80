//! The mailbox workload: the I/O that Exchange's database engine (ESE) makes, as Jetstress
//! drives it, on real files. `run` is the transactional test (performance and stress);
//! `layout` creates and describes the databases; `verify` checks every page and log block.
//!
//! One thread per database runs every session of that database as a state machine over one
//! engine (`instance`); the cache (`cache`) keeps page identities, not contents; the log
//! (`log`) is written in whole sectors with group commit; pages and log blocks carry
//! checksums (`format`). `preset` holds each Jetstress generation's parameters and
//! thresholds; `judge` applies them; `options` are the workload's keys as a user gives them.

mod backup;
pub mod cache;
pub mod databases;
pub mod entry;
mod finite;
pub(crate) mod format;
mod instance;
mod judge;
pub mod layout;
mod log;
pub mod options;
mod preset;
mod recorder;
mod recovery;
mod run;
mod tune;
mod verify;

pub use backup::{BackupDetail, BackupInterval, BackupOutcome, BackupTally, backup};
pub use instance::InstanceEnd;
pub use judge::{ThresholdCheck, Verdict};
pub use layout::{DbFiles, DbState, Manifest};
pub use options::MailboxOptions;
pub use preset::{OpMix, Preset, Profile, TestType, Thresholds};
pub use recorder::{Corruption, MailboxRecorder};
pub use recovery::{RecoveryDetail, RecoveryInterval, RecoveryOutcome, RecoveryTally, replay};
pub use run::{MailboxInterval, MailboxOutcome, MailboxSpec, run};
pub use tune::{TuneStep, Tuner, median_index};
pub use verify::{VerifyReport, verify};

pub mod summary;
#[cfg(test)]
mod tests;
pub mod validate;
