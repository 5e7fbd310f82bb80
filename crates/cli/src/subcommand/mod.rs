//! One module per subcommand: validate the parsed options, run, show the result. A workload's
//! module is listed here twice: as a module, and its entry (`<kind>/entry.rs`) in [`KINDS`],
//! through which its subcommand, its plan kind and its rebuilt summary are found (`registry`).

pub mod compare;
pub mod decide;
pub mod evaluation;
pub mod integrity;
pub mod io;
pub mod mailbox;
pub mod merge;
pub mod oltp;
pub mod plan;
pub mod replay;
pub mod report;
pub mod summarize;
pub mod trace;
pub mod wal;

/// Every workload kind, in the order `--help`, `plan init` and messages list them.
pub static KINDS: &[&crate::registry::kind::Kind] = &[
    &io::entry::KIND,
    &oltp::entry::KIND,
    &mailbox::entry::KIND,
    &integrity::entry::KIND,
    &replay::entry::KIND,
    &trace::entry::KIND,
    &wal::entry::KIND,
];
