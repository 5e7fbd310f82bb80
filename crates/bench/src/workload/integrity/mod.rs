//! The integrity workload (a SQLIOSim-class stress that proves storage keeps what it
//! acknowledged): the self-checking 8 KiB page (`page`), the journal of acknowledged writes
//! kept apart from the data (`journal`), the judgement of a page read against both, by error
//! class (`verdict`), the files and their manifest (`layout`), the lock-free page table and
//! dirty pages (`state`), one activity's engine loop (`worker`), the run itself with its
//! activities, syncer and the run driver (`run`), a seeded fault-injecting engine wrapper that
//! proves the checker finds every class (`faults`), the final audit pass that reads every page
//! against the journal (`audit`), and the suspect pages: every page found damaged, once, kept
//! out of use as evidence (`suspects`); the options as a user gives them (`options`).

pub mod audit;
pub mod bundle;
pub mod crash;
pub mod entry;
pub mod faults;
pub mod journal;
pub mod layout;
pub mod options;
pub mod page;
pub mod place;
pub mod recorder;
pub mod run;
#[cfg(test)]
mod run_tests;
pub mod state;
pub mod summary;
pub mod suspects;
pub mod verdict;
mod worker;

pub use audit::{AuditReport, MAX_ERRORS_KEPT, audit};
pub use faults::{Fault, FaultRules, FaultyEngine, Injection, InjectionLog, When, misdirected_offset};
pub use journal::{Expected, Journal, JournalError};
pub use layout::{Layout, Manifest, Sizes};
pub use options::{IntegrityOptions, IntegrityPreset};
pub use page::{Checked, PAGE, PageId, SECTOR, SECTORS, check_page, write_page};
pub use recorder::{Activity, IntegrityRecorder};
pub use run::{IntegrityDetail, IntegrityInterval, IntegrityOutcome, IntegritySpec, create, run};
pub use suspects::{AuditFinding, SuspectPage, Suspects};
pub use verdict::{ErrorClass, ErrorRecord, Verdict, classify};
