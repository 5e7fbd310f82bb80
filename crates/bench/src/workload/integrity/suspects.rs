//! The suspect pages, as SQL Server's `msdb.dbo.suspect_pages` keeps them: every page the run
//! or its final audit found damaged, once, with its error class, how often it was found, and
//! when it was first and last seen. The run takes a page it finds damaged out of use
//! (`PageTable::quarantine`), so the audit, `integrity verify` and a vendor see it as it was
//! found; this list says which pages those are and whether the audit found them again.
//!
//! A failed request (`read_errors`, `write_errors`) is listed at the first page it covered:
//! the kernel names no page. A page is listed once: a later finding of another class counts
//! as an occurrence of the first, except that damage found in a page's content replaces a
//! failed request as its class (what the page holds is the stronger evidence).

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::audit::AuditReport;
use super::page::PageId;
use super::verdict::{ErrorClass, ErrorRecord};

/// What the final audit said of a suspect page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditFinding {
    /// The audit found the page damaged again: `integrity verify` finds it too.
    Found,
    /// The audit read the page intact against the journal: the damage was in flight (a read
    /// served wrong, a failed request), not on the medium.
    Intact,
    /// No audit read the page (the run was stopped, or the audit could not run).
    NotAudited,
}

/// One damaged page.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SuspectPage {
    /// 0 the data file, 1 the log file.
    pub file: u16,
    pub page: u64,
    /// Byte offset of the page in its file.
    pub offset: u64,
    pub class: ErrorClass,
    /// Times it was found: every read during the run that found it, and the audit's.
    pub count: u64,
    /// Seconds since the run's activities started.
    pub first_seen_s: f64,
    pub last_seen_s: f64,
    pub audit: AuditFinding,
}

/// The suspect pages of a run, shared by its activities (locked only when an error is found).
#[derive(Debug, Default)]
pub struct Suspects {
    pages: Mutex<BTreeMap<PageId, SuspectPage>>,
}

impl Suspects {
    /// Notes `record`, found `at_s` seconds into the run.
    pub fn note(&self, record: &ErrorRecord, at_s: f64) {
        let id = PageId { file: record.file, page: record.page };
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        let entry = pages.entry(id).or_insert_with(|| SuspectPage {
            file: id.file,
            page: id.page,
            offset: record.offset,
            class: record.class,
            count: 0,
            first_seen_s: at_s,
            last_seen_s: at_s,
            audit: AuditFinding::NotAudited,
        });
        entry.count += 1;
        entry.last_seen_s = entry.last_seen_s.max(at_s);
        if failed_request(entry.class) && !failed_request(record.class) {
            entry.class = record.class;
        }
    }

    /// Adds what the final audit found, `at_s` seconds into the run: each page it found
    /// damaged is found (again), every other listed page read intact (when the audit read
    /// every page).
    pub fn audited(&self, audit: &AuditReport, at_s: f64) {
        for &(id, class) in &audit.damaged {
            let (expected, found) = (String::new(), String::new());
            let record =
                ErrorRecord { class, file: id.file, offset: id.offset(), page: id.page, expected, found };
            self.note(&record, at_s);
        }
        let found: std::collections::HashSet<PageId> = audit.damaged.iter().map(|d| d.0).collect();
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        for (id, page) in pages.iter_mut() {
            page.audit = if found.contains(id) {
                AuditFinding::Found
            } else if audit.complete {
                AuditFinding::Intact
            } else {
                AuditFinding::NotAudited
            };
        }
    }

    /// Every suspect page, by file and page.
    pub fn list(&self) -> Vec<SuspectPage> {
        self.pages.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect()
    }
}

fn failed_request(class: ErrorClass) -> bool {
    matches!(class, ErrorClass::ReadErrors | ErrorClass::WriteErrors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(class: ErrorClass, page: u64) -> ErrorRecord {
        let (expected, found) = (String::new(), String::new());
        ErrorRecord { class, file: 0, offset: page * 8192, page, expected, found }
    }

    #[test]
    fn a_page_is_listed_once_with_every_occurrence_counted_and_its_first_and_last_sighting() {
        let suspects = Suspects::default();
        suspects.note(&record(ErrorClass::Checksum, 7), 1.5);
        suspects.note(&record(ErrorClass::Checksum, 7), 4.0);
        suspects.note(&record(ErrorClass::TornPages, 7), 3.0);
        suspects.note(&record(ErrorClass::WriteErrors, 9), 2.0);
        suspects.note(&record(ErrorClass::LostWrites, 9), 2.5);
        let list = suspects.list();
        assert_eq!(list.len(), 2);
        let p7 = &list[0];
        assert_eq!((p7.page, p7.offset, p7.class, p7.count), (7, 7 * 8192, ErrorClass::Checksum, 3));
        assert_eq!((p7.first_seen_s, p7.last_seen_s, p7.audit), (1.5, 4.0, AuditFinding::NotAudited));
        assert_eq!(list[1].class, ErrorClass::LostWrites, "the page's content outranks a failed write");
    }

    #[test]
    fn the_audit_finds_listed_pages_again_or_intact_and_adds_the_pages_only_it_found() {
        let suspects = Suspects::default();
        suspects.note(&record(ErrorClass::Checksum, 7), 1.0);
        suspects.note(&record(ErrorClass::StaleReads, 8), 2.0);
        let audit = AuditReport {
            complete: true,
            damaged: vec![
                (PageId { file: 0, page: 7 }, ErrorClass::Checksum),
                (PageId { file: 1, page: 3 }, ErrorClass::LostWrites),
            ],
            ..Default::default()
        };
        suspects.audited(&audit, 10.0);
        let got: Vec<(u16, u64, ErrorClass, u64, f64, AuditFinding)> = suspects
            .list()
            .iter()
            .map(|p| (p.file, p.page, p.class, p.count, p.last_seen_s, p.audit))
            .collect();
        assert_eq!(
            got,
            [
                (0, 7, ErrorClass::Checksum, 2, 10.0, AuditFinding::Found),
                (0, 8, ErrorClass::StaleReads, 1, 2.0, AuditFinding::Intact),
                (1, 3, ErrorClass::LostWrites, 1, 10.0, AuditFinding::Found),
            ]
        );
    }
}
