//! The integrity workload (a SQLIOSim-class stress that proves storage keeps what it
//! acknowledged). So far its verification core: the self-checking 8 KiB page (`page`), the
//! journal of acknowledged writes kept apart from the data (`journal`), and the judgement of
//! a page read against both, by error class (`verdict`).

pub mod journal;
pub mod page;
pub mod verdict;

pub use journal::{Expected, Journal, JournalError};
pub use page::{Checked, PAGE, PageId, SECTOR, SECTORS, check_page, write_page};
pub use verdict::{ErrorClass, ErrorRecord, Verdict, classify};
