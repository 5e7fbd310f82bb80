//! The database cache: which pages are held, which are dirty and since when, and which
//! buffers are free (the avail pool). Page contents are not kept: a page's image is made when
//! it is written and checked when it is read, so the cache costs a few dozen bytes per buffer
//! while producing exactly the reads and writes a real cache of that size would.
//!
//! Replacement is LRU over an intrusive list. Free buffers are taken by reads; maintenance
//! (in `instance`) refills the pool from the LRU tail when it falls under 1 % of the buffers,
//! until 2 % are free, writing dirty victims first, as the engine's avail-pool rule does.

use std::collections::{HashMap, VecDeque};

pub const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Free,
    /// A read into this buffer is in flight.
    Reading,
    Clean,
    Dirty,
}

#[derive(Debug, Clone)]
struct Buffer {
    page: u64,
    state: State,
    /// A write of this page is in flight.
    writing: bool,
    /// Free it once the write in flight completes (chosen by avail-pool maintenance).
    evict_after_write: bool,
    /// Log position of the first change since the page was last clean.
    dirty_since: u64,
    /// Log position of the latest change: the page may be written only once the log is
    /// durable past it (write-ahead logging).
    last_change: u64,
    prev: u32,
    next: u32,
}

/// A dirty page waiting for checkpoint maintenance, oldest change first.
#[derive(Debug, Clone, Copy)]
struct Aged {
    lgpos: u64,
    buf: u32,
}

/// Page buffers of a cache of `cache_bytes` over pages of `page_size` bytes (at least 64).
pub fn buffers_for(cache_bytes: u64, page_size: u32) -> u64 {
    (cache_bytes / u64::from(page_size.max(1))).max(64)
}

/// Memory a cache of `buffers` page buffers really takes, bytes: it tracks pages (state, LRU
/// links, the page map, the free and ageing lists) and holds none of their contents. None past
/// the largest cache it can index.
pub fn bookkeeping_bytes(buffers: u64) -> Option<u64> {
    use std::mem::size_of;
    // A map entry with the hash table's spare room (it keeps at most 7/8 of its slots full).
    let map_entry = 2 * size_of::<(u64, u32)>() + 1;
    let per_buffer = size_of::<Buffer>() + map_entry + size_of::<u32>() + size_of::<Aged>();
    u32::try_from(buffers).ok().map(|_| buffers * per_buffer as u64)
}

pub struct Cache {
    bufs: Vec<Buffer>,
    map: HashMap<u64, u32>,
    free: Vec<u32>,
    /// Buffers not yet ever used: the cache grows into them (from its minimum to its maximum).
    untouched: u32,
    head: u32,
    tail: u32,
    aged: VecDeque<Aged>,
    pub dirty: u32,
}

impl Cache {
    pub fn new(buffers: u32) -> Self {
        let bufs = vec![
            Buffer {
                page: u64::MAX,
                state: State::Free,
                writing: false,
                evict_after_write: false,
                dirty_since: 0,
                last_change: 0,
                prev: NONE,
                next: NONE,
            };
            buffers as usize
        ];
        Cache {
            bufs,
            map: HashMap::with_capacity(buffers as usize),
            free: Vec::new(),
            untouched: buffers,
            head: NONE,
            tail: NONE,
            aged: VecDeque::new(),
            dirty: 0,
        }
    }

    pub fn capacity(&self) -> u32 {
        self.bufs.len() as u32
    }

    /// Buffers holding a page or being read into.
    pub fn used(&self) -> u32 {
        self.capacity() - self.available()
    }

    /// Free buffers, never-used ones included.
    pub fn available(&self) -> u32 {
        self.free.len() as u32 + self.untouched
    }

    pub fn lookup(&self, page: u64) -> Option<u32> {
        self.map.get(&page).copied()
    }

    pub fn state(&self, buf: u32) -> State {
        self.bufs[buf as usize].state
    }

    pub fn page_of(&self, buf: u32) -> u64 {
        self.bufs[buf as usize].page
    }

    pub fn writing(&self, buf: u32) -> bool {
        self.bufs[buf as usize].writing
    }

    /// Takes a free buffer for `page`, which is not cached. None when the pool is empty.
    pub fn reserve(&mut self, page: u64, state: State) -> Option<u32> {
        let buf = match self.free.pop() {
            Some(b) => b,
            None if self.untouched > 0 => {
                self.untouched -= 1;
                self.untouched
            }
            None => return None,
        };
        let b = &mut self.bufs[buf as usize];
        b.page = page;
        b.state = state;
        self.map.insert(page, buf);
        if state != State::Reading {
            self.push_head(buf);
        }
        Some(buf)
    }

    /// A read into `buf` completed.
    pub fn loaded(&mut self, buf: u32) {
        self.bufs[buf as usize].state = State::Clean;
        self.push_head(buf);
    }

    /// A read into `buf` failed: the buffer goes back to the pool.
    pub fn abandon(&mut self, buf: u32) {
        let page = self.bufs[buf as usize].page;
        self.map.remove(&page);
        self.release(buf);
    }

    /// Marks an access: the buffer becomes the most recently used.
    pub fn touch(&mut self, buf: u32) {
        if self.bufs[buf as usize].state != State::Reading {
            self.unlink(buf);
            self.push_head(buf);
        }
    }

    /// Changes the page in `buf` at log position `lgpos`. Only a page in the cache can change:
    /// a buffer still being read (the page was evicted and is being read again by another
    /// session) is left alone.
    pub fn dirty(&mut self, buf: u32, lgpos: u64) {
        self.mark_dirty(buf, lgpos, lgpos);
    }

    /// A page whose write failed: dirty again from `lgpos` (for recovery's start), but its
    /// changes were logged before the write began, so it need not wait for the log.
    pub fn dirty_again(&mut self, buf: u32, lgpos: u64) {
        self.mark_dirty(buf, lgpos, 0);
    }

    fn mark_dirty(&mut self, buf: u32, lgpos: u64, change: u64) {
        let b = &mut self.bufs[buf as usize];
        if b.state == State::Dirty {
            b.last_change = b.last_change.max(change);
        }
        if b.state != State::Clean {
            return;
        }
        b.state = State::Dirty;
        b.dirty_since = lgpos;
        b.last_change = change;
        self.dirty += 1;
        self.aged.push_back(Aged { lgpos, buf });
    }

    /// Log position of the oldest change not yet written: where recovery would start.
    pub fn oldest_dirty(&mut self) -> Option<u64> {
        self.skip_stale();
        self.aged.front().map(|a| a.lgpos)
    }

    /// Whether every change of the page in `buf` is in the log up to `flushed` (a change at
    /// position p is a record starting there, so the log must be durable beyond p).
    pub fn logged(&self, buf: u32, flushed: u64) -> bool {
        self.bufs[buf as usize].last_change < flushed
    }

    /// The oldest dirty page not being written whose changes are logged up to `flushed`, if
    /// its first change is at or before `before`. (A page changed again while being written
    /// waits behind its write; look a little past it.)
    pub fn aged_before(&mut self, before: u64, flushed: u64) -> Option<u32> {
        self.skip_stale();
        self.compact();
        let bufs = &self.bufs;
        let live = |a: &&Aged| {
            let b = &bufs[a.buf as usize];
            b.state == State::Dirty && b.dirty_since == a.lgpos
        };
        // In log order: nothing past `before` qualifies.
        let mut candidates = self.aged.iter().take_while(|a| a.lgpos <= before).filter(live).take(64);
        candidates
            .find(|a| !bufs[a.buf as usize].writing && bufs[a.buf as usize].last_change < flushed)
            .map(|a| a.buf)
    }

    /// Drops the entries of pages written (or changed again) since they were queued once
    /// they outnumber the dirty pages, so that scans stay short. Each compaction costs about
    /// as many steps as stale entries it drops: constant per write.
    fn compact(&mut self) {
        if self.aged.len() > 2 * self.dirty as usize + 64 {
            let bufs = &self.bufs;
            self.aged.retain(|a| {
                let b = &bufs[a.buf as usize];
                b.state == State::Dirty && b.dirty_since == a.lgpos
            });
        }
    }

    fn skip_stale(&mut self) {
        while let Some(a) = self.aged.front() {
            let b = &self.bufs[a.buf as usize];
            if b.state == State::Dirty && b.dirty_since == a.lgpos {
                break;
            }
            self.aged.pop_front();
        }
    }

    /// Starts writing `buf`: it is clean from now on unless changed again before the write
    /// completes (`written` then keeps it dirty).
    pub fn start_write(&mut self, buf: u32, evict: bool) {
        let b = &mut self.bufs[buf as usize];
        debug_assert_eq!(b.state, State::Dirty);
        b.state = State::Clean;
        b.writing = true;
        b.evict_after_write = evict;
        self.dirty -= 1;
    }

    /// The write of `buf` completed; returns whether it was written to be freed (a victim of
    /// avail-pool maintenance). A victim changed again meanwhile stays cached.
    pub fn written(&mut self, buf: u32) -> bool {
        let b = &mut self.bufs[buf as usize];
        b.writing = false;
        let victim = std::mem::take(&mut b.evict_after_write);
        if victim && b.state == State::Clean {
            self.evict(buf);
        }
        victim
    }

    /// The least recently used buffers, oldest first, that maintenance may free.
    pub fn lru_tail(&self, limit: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(limit);
        let mut at = self.tail;
        while at != NONE && out.len() < limit {
            let b = &self.bufs[at as usize];
            if !b.writing {
                out.push(at);
            }
            at = b.prev;
        }
        out
    }

    /// Frees a clean buffer.
    pub fn evict(&mut self, buf: u32) {
        let page = self.bufs[buf as usize].page;
        self.map.remove(&page);
        self.unlink(buf);
        self.release(buf);
    }

    fn release(&mut self, buf: u32) {
        let b = &mut self.bufs[buf as usize];
        b.page = u64::MAX;
        b.state = State::Free;
        self.free.push(buf);
    }

    /// Whether `page` is cached, dirty, free to be written and logged up to `flushed` (for
    /// coalescing).
    pub fn writable(&self, page: u64, flushed: u64) -> Option<u32> {
        let buf = self.lookup(page)?;
        let b = &self.bufs[buf as usize];
        (b.state == State::Dirty && !b.writing && b.last_change < flushed).then_some(buf)
    }

    fn push_head(&mut self, buf: u32) {
        let old = self.head;
        {
            let b = &mut self.bufs[buf as usize];
            b.prev = NONE;
            b.next = old;
        }
        if old != NONE {
            self.bufs[old as usize].prev = buf;
        } else {
            self.tail = buf;
        }
        self.head = buf;
    }

    fn unlink(&mut self, buf: u32) {
        let (prev, next) = {
            let b = &self.bufs[buf as usize];
            (b.prev, b.next)
        };
        if prev != NONE {
            self.bufs[prev as usize].next = next;
        } else if self.head == buf {
            self.head = next;
        }
        if next != NONE {
            self.bufs[next as usize].prev = prev;
        } else if self.tail == buf {
            self.tail = prev;
        }
        let b = &mut self.bufs[buf as usize];
        b.prev = NONE;
        b.next = NONE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_freed_least_recently_used_first() {
        let mut c = Cache::new(3);
        let a = c.reserve(10, State::Clean).unwrap();
        let b = c.reserve(11, State::Clean).unwrap();
        let d = c.reserve(12, State::Clean).unwrap();
        assert_eq!(c.reserve(13, State::Clean), None);
        c.touch(a);
        assert_eq!(c.lru_tail(3), vec![b, d, a]);
        c.evict(b);
        assert_eq!((c.available(), c.lookup(11)), (1, None));
        assert!(c.reserve(13, State::Clean).is_some());
    }

    #[test]
    fn dirty_pages_age_in_log_order_and_a_rewrite_during_a_write_keeps_them_dirty() {
        let mut c = Cache::new(4);
        let a = c.reserve(1, State::Clean).unwrap();
        let b = c.reserve(2, State::Clean).unwrap();
        c.dirty(a, 100);
        c.dirty(b, 200);
        c.dirty(a, 300); // already dirty: keeps its first position
        assert_eq!(c.oldest_dirty(), Some(100));
        assert_eq!(c.aged_before(150, u64::MAX), Some(a));
        assert_eq!(c.aged_before(50, u64::MAX), None);
        // Write-ahead logging: a's latest change (300) is not durable until the log passes it.
        assert_eq!(c.aged_before(150, 300), None);
        assert_eq!((c.writable(1, 300), c.writable(1, 301)), (None, Some(a)));
        assert!(!c.logged(a, 300) && c.logged(b, 201));
        c.start_write(a, false);
        assert_eq!(c.oldest_dirty(), Some(200));
        c.dirty(a, 400); // changed while its write is in flight
        assert!(!c.written(a), "not a victim");
        assert_eq!(c.state(a), State::Dirty);
        assert_eq!(c.dirty, 2);
    }

    #[test]
    fn a_victim_written_for_the_avail_pool_is_freed_when_its_write_completes() {
        let mut c = Cache::new(2);
        let a = c.reserve(5, State::Clean).unwrap();
        c.dirty(a, 1);
        c.start_write(a, true);
        assert_eq!(c.lru_tail(2), Vec::<u32>::new());
        assert!(c.written(a));
        assert_eq!((c.available(), c.dirty, c.lookup(5)), (2, 0, None));
        // A victim changed while being written is no longer pending, but stays cached.
        let b = c.reserve(6, State::Clean).unwrap();
        c.dirty(b, 2);
        c.start_write(b, true);
        c.dirty(b, 3);
        assert!(c.written(b));
        assert_eq!((c.lookup(6), c.state(b)), (Some(b), State::Dirty));
    }
}
