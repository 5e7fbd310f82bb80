//! Writing dirty pages back (the checkpoint and the refill of free buffers, both as coalesced
//! runs of pages) and the background database maintenance reads.

use super::*;

impl Instance {
    pub(super) fn issue_background(&mut self) {
        self.issue_log_write();
        self.checkpoint();
        self.refill_avail_pool();
        self.create_next_log();
        self.background_read();
    }

    /// Writes dirty pages whose first change is older than the checkpoint depth.
    pub(super) fn checkpoint(&mut self) {
        let depth = self.cfg.profile.checkpoint_depth;
        let before = self.log.lgpos.saturating_sub(depth);
        if self.log.lgpos < depth {
            return;
        }
        while !self.free_write_slots.is_empty() && self.checkpoint_writes < CHECKPOINT_SLOTS {
            let Some(buf) = self.cache.aged_before(before, self.log.flushed) else { return };
            self.write_run(buf, false);
        }
    }

    /// Keeps between 1 % and 2 % of the buffers free: clean pages from the LRU tail are freed
    /// at once, dirty ones are written and freed when the write completes.
    pub(super) fn refill_avail_pool(&mut self) {
        let cap = self.cache.capacity();
        let (start, stop) = ((cap / 100).max(1), (cap / 50).max(2));
        if self.cache.available() + self.pending_evictions >= start {
            return;
        }
        let before = self.cache.available();
        for buf in self.cache.lru_tail(2 * stop as usize) {
            if self.cache.available() + self.pending_evictions >= stop {
                break;
            }
            // A buffer may have joined a write of one of the victims before it in this list.
            if self.cache.writing(buf) {
                continue;
            }
            match self.cache.state(buf) {
                State::Clean => self.cache.evict(buf),
                // Write-ahead logging: a page whose latest change is not yet durable waits.
                State::Dirty
                    if !self.free_write_slots.is_empty() && self.cache.logged(buf, self.log.flushed) =>
                {
                    self.pending_evictions += 1;
                    self.write_run(buf, true);
                }
                _ => {}
            }
        }
        if self.cache.available() > before {
            self.wake_blocked();
        }
    }

    /// Writes the dirty page in `buf` with its dirty neighbours, up to the coalescing limit.
    pub(super) fn write_run(&mut self, buf: u32, evict: bool) {
        let Some(slot) = self.free_write_slots.pop() else { return };
        let page = self.cache.page_of(buf);
        let max = u64::from((COALESCE_BYTES / self.cfg.profile.page_size).max(1));
        let (mut lo, mut hi) = (page, page);
        let flushed = self.log.flushed;
        while hi - lo + 1 < max && self.cache.writable(hi + 1, flushed).is_some() {
            hi += 1;
        }
        while hi - lo + 1 < max && lo > 0 && self.cache.writable(lo - 1, flushed).is_some() {
            lo -= 1;
        }
        let ps = self.cfg.profile.page_size as usize;
        let db = self.cfg.db;
        for p in lo..=hi {
            let b = self.cache.writable(p, flushed).expect("checked above");
            self.cache.start_write(b, evict && b == buf);
            self.stamp += 1;
            let off = (p - lo) as usize * ps;
            let out = &mut self.engine.buffer(slot)[off..off + ps];
            write_page(out, db, p, self.stamp, &mut self.filler);
        }
        let n = (hi - lo + 1) as u32;
        self.checkpoint_writes += u32::from(!evict);
        self.issue(
            slot,
            InFlight::Write { first: lo, pages: n, checkpoint: !evict },
            Dir::Write,
            DB,
            lo * ps as u64,
            n * ps as u32,
        );
    }

    /// Background database maintenance: a sequential read of the whole file at a set rate.
    pub(super) fn background_read(&mut self) {
        let rate = self.cfg.profile.bdm_bytes_per_sec;
        if rate == 0
            || self.now < self.bdm_next_ns
            || !matches!(self.slots[self.bdm_slot as usize].0, InFlight::Free)
        {
            return;
        }
        let ps = u64::from(self.cfg.profile.page_size);
        let end = self.pages * ps;
        if self.bdm_at >= end {
            self.bdm_at = 0;
        }
        let len = u64::from(COALESCE_BYTES.max(self.cfg.profile.page_size)).min(end - self.bdm_at);
        self.bdm_next_ns = self.now + len * 1_000_000_000 / rate;
        let slot = self.bdm_slot;
        self.issue(slot, InFlight::Bdm, Dir::Read, DB, self.bdm_at, len as u32);
        self.bdm_at += len;
    }

    pub(super) fn flush_all(&mut self) {
        while !self.free_write_slots.is_empty() {
            let Some(buf) = self.cache.aged_before(u64::MAX, self.log.flushed) else { return };
            self.write_run(buf, false);
        }
    }
}
