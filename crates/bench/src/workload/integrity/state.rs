//! What the running workload knows of every page, shared by its activities without a lock:
//! one word per page (its newest acknowledged generation, whether that generation was read
//! back since, whether a failed write left it uncertain, whether it was found damaged and
//! taken out of use, and a busy bit that gives one activity the page for one request), the
//! dirty pages the lazy writer has to write, and the run-wide generation sequence with its
//! journal reservations.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::{Arc, Mutex};

use super::journal::{Journal, JournalError};

const BUSY: u64 = 1 << 63;
/// The page's generation was read back intact since it was written.
const SEEN: u64 = 1 << 62;
/// A write to the page failed: it may hold that write's generation, part of it, or the one
/// before, so the next read takes what it finds.
const UNCERTAIN: u64 = 1 << 61;
/// The page was found damaged: it stays busy for good, so no activity reads or writes it
/// again and what the storage did to it stays for the audit and `integrity verify`.
const SUSPECT: u64 = 1 << 60;
const GENERATION: u64 = SUSPECT - 1;

/// A page's state while its holder owns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageState(u64);

impl PageState {
    pub const UNWRITTEN: PageState = PageState(0);

    /// The newest acknowledged generation (0: never written).
    pub fn generation(self) -> u64 {
        self.0 & GENERATION
    }

    pub fn seen(self) -> bool {
        self.0 & SEEN != 0
    }

    pub fn uncertain(self) -> bool {
        self.0 & UNCERTAIN != 0
    }

    /// Written at `generation`, not yet read back.
    pub fn written(generation: u64) -> PageState {
        PageState(generation & GENERATION)
    }

    /// Read back intact at `generation`.
    pub fn read_back(generation: u64) -> PageState {
        PageState((generation & GENERATION) | SEEN)
    }

    /// A write failed: what the page holds is no longer known.
    pub fn after_failed_write(self) -> PageState {
        PageState(self.0 | UNCERTAIN)
    }
}

/// One word per page of one file, up to the file's largest size.
pub struct PageTable {
    words: Box<[AtomicU64]>,
}

impl PageTable {
    pub fn new(pages: u64) -> PageTable {
        PageTable { words: (0..pages).map(|_| AtomicU64::new(0)).collect() }
    }

    pub fn pages(&self) -> u64 {
        self.words.len() as u64
    }

    /// Takes page `page` if no one holds it; its state then stays as returned until `release`.
    pub fn try_take(&self, page: u64) -> Option<PageState> {
        let word = self.words.get(page as usize)?;
        let current = word.load(Relaxed);
        if current & BUSY != 0 {
            return None;
        }
        word.compare_exchange(current, current | BUSY, Acquire, Relaxed).ok().map(PageState)
    }

    /// Takes up to `len` pages from `first`, stopping at the first page someone holds; the
    /// states of the pages taken, in order.
    pub fn take_run(&self, first: u64, len: u64, states: &mut Vec<PageState>) {
        states.clear();
        for page in first..first.saturating_add(len).min(self.pages()) {
            match self.try_take(page) {
                Some(state) => states.push(state),
                None => break,
            }
        }
    }

    /// Takes `page`, waiting while another holds it (a shrink cutting the file); None for a
    /// page taken out of use, which is never given back.
    pub fn take_waiting(&self, page: u64) -> Option<PageState> {
        loop {
            if let Some(state) = self.try_take(page) {
                return Some(state);
            }
            if self.is_suspect(page) {
                return None;
            }
            std::thread::yield_now();
        }
    }

    /// Takes `page`, which its caller holds, out of use for good: found damaged, it is kept as
    /// it was found (busy, so no activity takes it again).
    pub fn quarantine(&self, page: u64) {
        self.words[page as usize].fetch_or(SUSPECT | BUSY, Release);
    }

    /// Whether `page` was taken out of use as damaged.
    pub fn is_suspect(&self, page: u64) -> bool {
        self.words.get(page as usize).is_some_and(|w| w.load(Acquire) & SUSPECT != 0)
    }

    /// Gives `page` back with its new state.
    pub fn release(&self, page: u64, state: PageState) {
        self.words[page as usize].store(state.0 & !(BUSY | SUSPECT), Release);
    }

    /// The state of every page (for tests and the summary; pages being written show their
    /// state before the write).
    pub fn peek(&self, page: u64) -> PageState {
        PageState(self.words[page as usize].load(Acquire) & !BUSY)
    }
}

/// The dirty pages of the data file: set by the users, taken by the lazy writer.
pub struct DirtyMap {
    words: Box<[AtomicU64]>,
}

impl DirtyMap {
    pub fn new(pages: u64) -> DirtyMap {
        DirtyMap { words: (0..pages.div_ceil(64)).map(|_| AtomicU64::new(0)).collect() }
    }

    pub fn mark(&self, page: u64) {
        self.words[(page / 64) as usize].fetch_or(1 << (page % 64), Relaxed);
    }

    /// Unmarks `page`; whether it was dirty.
    pub fn clear(&self, page: u64) -> bool {
        let bit = 1 << (page % 64);
        self.words[(page / 64) as usize].fetch_and(!bit, Relaxed) & bit != 0
    }

    pub fn is_dirty(&self, page: u64) -> bool {
        self.words[(page / 64) as usize].load(Relaxed) & (1 << (page % 64)) != 0
    }

    /// The first dirty page at or after `from` and below `end`, wrapping around to 0 once.
    pub fn next_dirty(&self, from: u64, end: u64) -> Option<u64> {
        let scan = |lo: u64, hi: u64| -> Option<u64> {
            let mut page = lo;
            while page < hi {
                let word = self.words[(page / 64) as usize].load(Relaxed) >> (page % 64);
                if word != 0 {
                    let found = page + u64::from(word.trailing_zeros());
                    return (found < hi).then_some(found);
                }
                page = (page / 64 + 1) * 64;
            }
            None
        };
        scan(from.min(end), end).or_else(|| scan(0, from.min(end)))
    }

    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.load(Relaxed).count_ones())).sum()
    }
}

/// The run-wide generation sequence: every page write takes the next generation, and none is
/// handed out before the journal reserved it (durably), so that verification after a crash
/// knows which generations may be on disk.
pub struct Generations {
    next: AtomicU64,
    reserved: AtomicU64,
    journal: Arc<Mutex<Journal>>,
}

/// Generations reserved at once: one journal sync per this many page writes.
const RESERVE_CHUNK: u64 = 1 << 22;

impl Generations {
    /// Generations from `first` on, journalled in `journal`.
    pub fn new(first: u64, journal: Arc<Mutex<Journal>>) -> Generations {
        Generations { next: AtomicU64::new(first), reserved: AtomicU64::new(first - 1), journal }
    }

    /// `count` consecutive generations; the first of them.
    pub fn take(&self, count: u64) -> Result<u64, JournalError> {
        let first = self.next.fetch_add(count, Relaxed);
        let last = first + count - 1;
        if last > self.reserved.load(Acquire) {
            let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
            if last > self.reserved.load(Acquire) {
                let up_to = last + RESERVE_CHUNK;
                journal.reserve(up_to)?;
                self.reserved.store(up_to, Release);
            }
        }
        Ok(first)
    }

    /// The highest generation the journal allows on disk.
    pub fn issued_limit(&self) -> u64 {
        self.reserved.load(Acquire)
    }

    /// The next generation to be handed out.
    pub fn next(&self) -> u64 {
        self.next.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_held_by_one_taker_at_a_time_and_keeps_its_state() {
        let table = PageTable::new(8);
        assert_eq!(table.try_take(3), Some(PageState::UNWRITTEN));
        assert_eq!(table.try_take(3), None, "held");
        table.release(3, PageState::written(7));
        let state = table.try_take(3).unwrap();
        assert_eq!((state.generation(), state.seen(), state.uncertain()), (7, false, false));
        table.release(3, state.after_failed_write());
        assert!(table.peek(3).uncertain());
        let mut states = Vec::new();
        table.take_run(2, 4, &mut states);
        assert_eq!(states.len(), 4);
        table.take_run(0, 8, &mut states);
        assert_eq!(states.len(), 2, "stops at page 2, held by the run before");
        assert_eq!(table.try_take(8), None, "past the end");
    }

    #[test]
    fn a_quarantined_page_is_never_taken_again_and_a_waiting_taker_gives_up_on_it() {
        let table = PageTable::new(8);
        let held = table.try_take(5).unwrap();
        assert_eq!(held, PageState::UNWRITTEN);
        table.quarantine(5);
        assert!(table.is_suspect(5) && !table.is_suspect(4) && !table.is_suspect(99));
        assert_eq!(table.try_take(5), None);
        assert_eq!(table.take_waiting(5), None, "a shrink does not wait for it");
        let mut states = Vec::new();
        table.take_run(3, 4, &mut states);
        assert_eq!(states.len(), 2, "a run stops before it");
        table.release(4, PageState::written(9));
        assert_eq!(table.take_waiting(4), Some(PageState::written(9)), "its neighbour is taken as ever");
    }

    #[test]
    fn the_dirty_map_finds_the_next_dirty_page_wrapping_once() {
        let map = DirtyMap::new(200);
        for page in [5, 64, 199] {
            map.mark(page);
        }
        assert_eq!(map.next_dirty(0, 200), Some(5));
        assert_eq!(map.next_dirty(6, 200), Some(64));
        assert_eq!(map.next_dirty(65, 200), Some(199));
        assert_eq!(map.next_dirty(65, 150), Some(5), "wraps; 199 is past the end");
        assert!(map.clear(64) && !map.clear(64));
        assert_eq!(map.count(), 2);
    }

    #[test]
    fn generations_are_handed_out_only_under_a_durable_reservation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        let journal = Arc::new(Mutex::new(Journal::create(&path, 1).unwrap()));
        let gens = Generations::new(1, journal.clone());
        assert_eq!(gens.take(10).unwrap(), 1);
        assert_eq!(gens.take(1).unwrap(), 11);
        assert!(gens.issued_limit() >= 11);
        let loaded = Journal::load(&path).unwrap();
        assert_eq!(loaded.issued_limit, gens.issued_limit(), "the reservation is on disk");
    }
}
