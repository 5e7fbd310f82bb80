//! Judging a page read back: what it held (`page::Checked`) against what the journal
//! acknowledged and what this run already read, named by the error classes, and the
//! error record each failure leaves in the bundle's error file.

use super::page::{Checked, PageId};
use crate::engine::Dir;

/// The error classes, named as the results' `errors` fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// An acknowledged write is not there: an older generation (or nothing) came back.
    LostWrites,
    /// A read returned an older generation than one this run already read back.
    StaleReads,
    /// Sectors of one page from different writes, not explained by a write in flight.
    TornPages,
    /// An intact page holding another page's id.
    MisplacedPages,
    /// Anything else: checksum mismatch, garbage, (during a run) a generation never issued.
    Checksum,
    /// The kernel failed a read.
    ReadErrors,
    /// The kernel failed a write.
    WriteErrors,
}

/// The verdict on one page read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Fine,
    /// An error of `class`; `expected` is the generation the page should have held at least
    /// (the acknowledged one for a lost write or a torn page, the one read before for a stale
    /// read), where one applies.
    Error {
        class: ErrorClass,
        expected: Option<u64>,
    },
    /// A sector sealed for this page holds `generation`, above any the writer was allowed to
    /// issue. Storage cannot make such a sector (its seal is a hash of the page and the
    /// generation); the record of what was issued is short: a damaged journal, when the limit
    /// came from one.
    NeverIssued {
        generation: u64,
    },
}

impl Verdict {
    /// The error class, None when the page is fine; a generation never issued is a checksum
    /// error where the limit is the writer's own (during a run).
    pub fn class(&self) -> Option<ErrorClass> {
        match self {
            Verdict::Fine => None,
            Verdict::Error { class, .. } => Some(*class),
            Verdict::NeverIssued { .. } => Some(ErrorClass::Checksum),
        }
    }
}

/// Judges `checked`, read from a page whose newest acknowledged generation is `acknowledged`
/// and whose newest generation read back in this run is `newest_seen`, when no generation
/// above `issued_limit` was ever issued. The rule: the page must hold at least the acknowledged
/// generation; anything newer up to `issued_limit` is a write in flight (or not yet journalled)
/// and fine, even torn between such writes, as a crash leaves it; it must not go back below a
/// generation already read (a stale read, even where that generation was the acknowledged
/// one: it was there). Unwritten counts as generation 0.
pub fn classify(
    acknowledged: Option<u64>,
    checked: Checked,
    newest_seen: Option<u64>,
    issued_limit: u64,
) -> Verdict {
    let error = |class, expected| Verdict::Error { class, expected };
    let found = checked.generations();
    let (Some(&oldest), Some(&newest)) = (found.iter().min(), found.iter().max()) else {
        return match checked {
            Checked::Misplaced { .. } => error(ErrorClass::MisplacedPages, acknowledged),
            _ => error(ErrorClass::Checksum, acknowledged),
        };
    };
    let torn = matches!(checked, Checked::Torn { .. });
    // A write already read back that goes missing was there: the read is stale, the more
    // specific name.
    let read_back = newest_seen.filter(|&s| s >= acknowledged.unwrap_or(0));
    if newest > issued_limit {
        Verdict::NeverIssued { generation: newest }
    } else if read_back.is_some_and(|s| oldest < s) {
        error(if torn { ErrorClass::TornPages } else { ErrorClass::StaleReads }, read_back)
    } else if acknowledged.is_some_and(|a| oldest < a) {
        error(if torn { ErrorClass::TornPages } else { ErrorClass::LostWrites }, acknowledged)
    } else if newest_seen.is_some_and(|s| oldest < s) {
        error(if torn { ErrorClass::TornPages } else { ErrorClass::StaleReads }, newest_seen)
    } else {
        Verdict::Fine
    }
}

/// One failure, as the bundle's error file lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ErrorRecord {
    pub class: ErrorClass,
    pub file: u16,
    /// Byte offset of the page in its file.
    pub offset: u64,
    pub page: u64,
    pub expected: String,
    pub found: String,
}

impl ErrorRecord {
    /// The record of a page check that `classify` failed with `class` and `expected`.
    pub fn of_page(id: PageId, class: ErrorClass, expected: Option<u64>, checked: &Checked) -> ErrorRecord {
        ErrorRecord {
            class,
            file: id.file,
            offset: id.offset(),
            page: id.page,
            expected: at_least(expected),
            found: checked.to_string(),
        }
    }

    /// The record of a page acknowledged at `acknowledged` that lies past the end of its file,
    /// `pages` whole pages long: a lost write (the file was truncated or never grew).
    pub fn of_page_past_end(id: PageId, acknowledged: u64, pages: u64) -> ErrorRecord {
        ErrorRecord {
            class: ErrorClass::LostWrites,
            file: id.file,
            offset: id.offset(),
            page: id.page,
            expected: at_least(Some(acknowledged)),
            found: format!("past the end of the file ({pages} whole pages)"),
        }
    }

    /// The record of a request on `id` that the kernel failed; `failure` names why (the
    /// errno's name, as `Completion::failure` gives it).
    pub fn of_failed_io(id: PageId, dir: Dir, failure: &str) -> ErrorRecord {
        let (class, expected) = match dir {
            Dir::Read => (ErrorClass::ReadErrors, "a completed read"),
            Dir::Write => (ErrorClass::WriteErrors, "a completed write"),
            Dir::Flush | Dir::Fsync => (ErrorClass::WriteErrors, "a completed flush"),
        };
        ErrorRecord {
            class,
            file: id.file,
            offset: id.offset(),
            page: id.page,
            expected: expected.to_string(),
            found: failure.to_string(),
        }
    }
}

/// What a page should hold: at least a generation, or (None) any page of its own place.
fn at_least(generation: Option<u64>) -> String {
    match generation {
        Some(generation) => format!("generation {generation} or newer"),
        None => "a page of this place".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::page::{PAGE, SECTORS, check_page, write_page};
    use super::*;

    const LIMIT: u64 = 100;

    fn page(id: PageId, generation: u64) -> Vec<u8> {
        let mut buf = vec![0u8; PAGE];
        write_page(&mut buf, id, generation, 42);
        buf
    }

    fn error(class: ErrorClass, expected: u64) -> Verdict {
        Verdict::Error { class, expected: Some(expected) }
    }

    #[test]
    fn an_older_intact_generation_is_lost_stale_or_fine_by_what_was_acknowledged_and_read() {
        let at = PageId { file: 1, page: 30 };
        let old = check_page(&page(at, 7), at);
        assert_eq!(old, Checked::Ok { generation: 7 });
        let lost = error(ErrorClass::LostWrites, 9);
        let stale = error(ErrorClass::StaleReads, 9);
        let never_issued = Verdict::NeverIssued { generation: 7 };
        let cases = [
            (Some(9), None, LIMIT, lost, "acknowledged newer"),
            (Some(7), Some(9), LIMIT, stale, "read newer before"),
            (Some(9), Some(9), LIMIT, stale, "the acknowledged write was read back before"),
            (Some(7), Some(7), LIMIT, Verdict::Fine, "newer only in flight"),
            (Some(5), None, LIMIT, Verdict::Fine, "a newer unjournalled write landed"),
            (Some(5), None, 6, never_issued, "a generation never issued"),
        ];
        for (acknowledged, seen, limit, want, why) in cases {
            assert_eq!(classify(acknowledged, old, seen, limit), want, "{why}");
        }
        let record = ErrorRecord::of_page(at, ErrorClass::LostWrites, Some(9), &old);
        let want = (ErrorClass::LostWrites, 1, 30 * 8192, 30, "generation 9 or newer", "generation 7");
        let got =
            (record.class, record.file, record.offset, record.page, &record.expected[..], &record.found[..]);
        assert_eq!(got, want);
    }

    #[test]
    fn a_torn_page_is_fine_only_as_a_write_in_flight_over_the_acknowledged_one() {
        let at = PageId { file: 0, page: 3 };
        let mut buf = page(at, 8);
        buf[..4 * 512].copy_from_slice(&page(at, 9)[..4 * 512]);
        let torn = check_page(&buf, at);
        assert!(matches!(torn, Checked::Torn { .. }));
        let cases = [
            (Some(9), None, error(ErrorClass::TornPages, 9), "9 was acknowledged"),
            (Some(8), Some(9), error(ErrorClass::TornPages, 9), "9 was read before"),
            (Some(8), None, Verdict::Fine, "9 was in flight at a crash"),
        ];
        for (acknowledged, seen, want, why) in cases {
            assert_eq!(classify(acknowledged, torn, seen, LIMIT), want, "{why}");
        }
        let record = ErrorRecord::of_page(at, ErrorClass::TornPages, Some(9), &torn);
        assert_eq!(record.found, "torn: sectors 0-3 generation 9, 4-15 generation 8");
        assert_eq!(serde_json::to_value(&record).unwrap()["class"], "torn_pages");
    }

    #[test]
    fn unwritten_is_fine_only_for_a_page_never_acknowledged_nor_read() {
        let at = PageId { file: 0, page: 0 };
        let zeros = check_page(&[0u8; PAGE], at);
        assert_eq!(classify(None, zeros, None, LIMIT), Verdict::Fine);
        assert_eq!(classify(Some(4), zeros, None, LIMIT), error(ErrorClass::LostWrites, 4));
        assert_eq!(classify(None, zeros, Some(4), LIMIT), error(ErrorClass::StaleReads, 4));
        let first_torn = Checked::Torn { sectors: [[1; 8], [0; 8]].concat().try_into().unwrap() };
        assert_eq!(classify(None, first_torn, None, LIMIT), Verdict::Fine, "a first write torn by a crash");
        assert_eq!(classify(Some(1), first_torn, None, LIMIT), error(ErrorClass::TornPages, 1));
        assert_eq!(SECTORS, 16);
    }

    #[test]
    fn misplaced_and_corrupt_pages_are_errors_whatever_the_journal_says() {
        let at = PageId { file: 2, page: 10 };
        let other = PageId { file: 2, page: 11 };
        let misplaced = check_page(&page(other, 3), at);
        for acknowledged in [None, Some(3)] {
            let verdict = classify(acknowledged, misplaced, None, LIMIT);
            assert_eq!(verdict, Verdict::Error { class: ErrorClass::MisplacedPages, expected: acknowledged });
            assert_eq!(
                classify(acknowledged, Checked::Corrupt, None, LIMIT).class(),
                Some(ErrorClass::Checksum)
            );
        }
        let record = ErrorRecord::of_page(at, ErrorClass::MisplacedPages, None, &misplaced);
        assert_eq!((record.offset, &record.found[..]), (10 * 8192, "file 2 page 11 generation 3"));
    }
}
