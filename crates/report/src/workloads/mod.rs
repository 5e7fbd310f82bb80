//! The workloads the report knows, listed once: the results each puts in a summary
//! ([`Results`]) and how the report reaches whichever a run holds ([`for_results`]). (The
//! columns each writes are declared by its library registry entry.) A workload whose report side is in its own
//! folder here (`wal`: its results, its columns, and how the report judges and shows them) is
//! named in this file and nowhere else in this crate; the others' results are still in
//! `crate::model`, their columns in `crate::columns` and their pages in `crate::render`.

pub mod wal;

use crate::model::{IntegrityResults, IoResults, MailboxResults, OltpResults, ReplayResults};
use serde::{Deserialize, Serialize};
use wal::results::WalResults;

/// The workload-specific part of a summary: read as the first workload whose fields fit, so a
/// workload's results keep fields no earlier one has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Results {
    Io(IoResults),
    Oltp(OltpResults),
    Mailbox(MailboxResults),
    Integrity(IntegrityResults),
    Replay(ReplayResults),
    Wal(WalResults),
}

/// `for_results!(results, r => answer)`: `answer` with `r` bound to the results of whichever
/// workload `results` holds, each workload's own type: how the report asks a run's workload
/// (`crate::workload::WorkloadResults`, `render`'s `Shown`) without naming one.
macro_rules! for_results {
    ($results:expr, $r:ident => $answer:expr) => {
        match $results {
            $crate::workloads::Results::Io($r) => $answer,
            $crate::workloads::Results::Oltp($r) => $answer,
            $crate::workloads::Results::Mailbox($r) => $answer,
            $crate::workloads::Results::Integrity($r) => $answer,
            $crate::workloads::Results::Replay($r) => $answer,
            $crate::workloads::Results::Wal($r) => $answer,
        }
    };
}
pub(crate) use for_results;
