//! The sessions' side of an instance: stepping each ready session through its operation
//! (fetching pages into the cache, applying the change, committing to the log), waking the
//! sessions an event concerns, and pacing new operations under a target rate: the run's
//! pacer (`run::pace`) at a transaction rate retuned from the I/Os per transaction, never
//! catching up more than `CATCH_UP` behind, each operation's lag recorded as it begins.

use super::*;
use crate::run::pace::CatchUp;

impl Instance {
    /// Steps the sessions that are ready (those that became ready before this call; one that
    /// finishes and starts again waits for the next loop), then the paced ones that are due.
    pub(super) fn step_sessions(&mut self) {
        let shared = self.shared.clone();
        let mut rec = shared.recorder.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..self.queues.ready.len() {
            let Some(i) = self.queues.ready.pop_front() else { break };
            self.step(i as usize, &mut rec);
            self.park(i);
        }
        while self.pacer_due() {
            let Some(i) = self.queues.idle.pop_front() else { break };
            self.step(i as usize, &mut rec);
            self.park(i);
        }
    }

    /// Whether an idle session may start an operation now.
    pub(super) fn pacer_due(&self) -> bool {
        self.pacer.as_ref().is_some_and(|p| p.due(self.now)) && !self.queues.idle.is_empty() && !self.ending()
    }

    /// Files session `i` under what it now waits for.
    pub(super) fn park(&mut self, i: u32) {
        let unpaced = self.pacer.is_none() && !self.ending();
        let q = &mut self.queues;
        match self.sessions[i as usize].wait {
            Wait::Idle if unpaced => q.ready.push_back(i),
            Wait::Idle => q.idle.push_back(i),
            Wait::Ready => q.ready.push_back(i),
            Wait::Read => {}
            Wait::Commit(lgpos) => q.commits.push_back((lgpos, i)),
            Wait::Page | Wait::FreeBuffer | Wait::LogRoom => q.blocked.push(i),
        }
    }

    /// Something that blocked sessions wait for may have changed: let them look again.
    pub(super) fn wake_blocked(&mut self) {
        let q = &mut self.queues;
        q.ready.extend(q.blocked.drain(..));
    }

    /// Commits now in the log release their sessions.
    pub(super) fn wake_committed(&mut self) {
        while let Some(&(lgpos, i)) = self.queues.commits.front() {
            if lgpos > self.log.flushed {
                break;
            }
            self.queues.commits.pop_front();
            self.queues.ready.push_back(i);
        }
    }

    /// Moves session `i` on as far as it can go now.
    pub(super) fn step(&mut self, i: usize, rec: &mut MailboxRecorder) {
        loop {
            let s = self.sessions[i];
            match s.wait {
                Wait::Idle => {
                    if self.ending() || !self.pace_allows(rec) {
                        return;
                    }
                    self.begin(i);
                }
                Wait::Ready | Wait::Page | Wait::FreeBuffer => {
                    if s.have < s.n {
                        if !self.fetch(i, rec) {
                            return;
                        }
                    } else if !self.apply(i, rec) {
                        return;
                    }
                }
                Wait::Commit(lgpos) => {
                    if self.log.flushed < lgpos {
                        return;
                    }
                    rec.sync_commits += 1;
                    self.finish(i, rec);
                    return;
                }
                Wait::LogRoom => {
                    if self.log.unflushed() >= self.log_room() {
                        return;
                    }
                    self.sessions[i].wait = Wait::Ready;
                }
                Wait::Read => return,
            }
        }
    }

    /// Whether an operation may begin now; under a target one begins when the pacer has a
    /// start due, and its lag is recorded.
    pub(super) fn pace_allows(&mut self, rec: &mut MailboxRecorder) -> bool {
        match &mut self.pacer {
            None => true,
            Some(p) if !p.due(self.now) => false,
            Some(p) => {
                p.start(self.now, &mut rec.lag);
                true
            }
        }
    }

    /// Under a target, sets the transaction rate from the I/Os per transaction seen lately:
    /// the counts halve every second, so the last few seconds weigh most (writes start late,
    /// once the cache fills) while low rates still have enough to go on.
    pub(super) fn retune_pace(&mut self) {
        let (Some(target), Some(pacer)) = (self.cfg.target_iops, &mut self.pacer) else { return };
        let (ios, ops) = self.paced_counts;
        if ops >= 20 && ios > 0 {
            pacer.set_rate(transaction_rate(target * ops as f64 / ios as f64));
            self.paced_counts = (ios / 2, ops / 2);
        }
    }

    /// Picks the next operation and the pages it needs (mailbox.md §2.8).
    pub(super) fn begin(&mut self, i: usize) {
        let mix = self.cfg.profile.mix;
        let roll = below(&mut self.rng, u64::from(mix.total())) as u32;
        let op = if roll < mix.insert {
            Op::Insert
        } else if roll < mix.insert + mix.delete {
            Op::Delete
        } else if roll < mix.insert + mix.delete + mix.replace {
            Op::Replace
        } else {
            Op::Read
        };
        let mut s = self.sessions[i];
        s.op = op;
        s.have = 0;
        s.stalled = false;
        s.append = false;
        let leaf = self.random_page();
        s.pages = [leaf, 0];
        s.n = 1;
        match op {
            Op::Replace => {
                s.pages[1] = self.random_page();
                s.n = 2;
            }
            // Inserts beyond what deletes free go to the end of the table and grow it; the
            // rest reuse space in an existing leaf and put their long value in an existing
            // long-value page (mailbox.md §2.8: an insert dirties its leaf and LV pages).
            Op::Insert => {
                let grow = mix.insert.saturating_sub(mix.delete) as f64 / mix.insert.max(1) as f64;
                if unit(&mut self.rng) < grow {
                    s.append = true;
                    s.pages[0] = self.tail_page;
                } else {
                    s.pages[1] = self.random_page();
                    s.n = 2;
                }
            }
            _ => {}
        }
        s.wait = Wait::Ready;
        self.sessions[i] = s;
        self.queues.active += 1;
    }

    pub(super) fn random_page(&mut self) -> u64 {
        below(&mut self.rng, self.pages.max(1))
    }

    /// Brings the session's next page into the cache; false when it has to wait.
    pub(super) fn fetch(&mut self, i: usize, rec: &mut MailboxRecorder) -> bool {
        let s = self.sessions[i];
        let page = s.pages[s.have as usize];
        if let Some(buf) = self.cache.lookup(page) {
            if self.cache.state(buf) == State::Reading {
                self.sessions[i].wait = Wait::Page;
                return false;
            }
            self.cache.touch(buf);
            let s = &mut self.sessions[i];
            s.have += 1;
            s.wait = Wait::Ready;
            return true;
        }
        let Some(buf) = self.cache.reserve(page, State::Reading) else {
            if !s.stalled {
                rec.page_fault_stalls += 1;
                self.sessions[i].stalled = true;
            }
            self.sessions[i].wait = Wait::FreeBuffer;
            return false;
        };
        let slot = i as u32;
        let len = self.cfg.profile.page_size;
        self.issue(
            slot,
            InFlight::SessionRead { session: i as u32, buf, page },
            Dir::Read,
            DB,
            page * u64::from(len),
            len,
        );
        self.sessions[i].wait = Wait::Read;
        false
    }

    /// Changes the pages, logs the change and commits; false when it has to wait.
    pub(super) fn apply(&mut self, i: usize, rec: &mut MailboxRecorder) -> bool {
        let s = self.sessions[i];
        if s.op == Op::Read {
            self.finish(i, rec);
            return false;
        }
        if self.log.unflushed() >= self.log_room() {
            rec.log_stalls += 1;
            self.sessions[i].wait = Wait::LogRoom;
            return false;
        }
        let p = self.cfg.profile;
        let lgpos = self.log.lgpos;
        let (kind, len) = match s.op {
            Op::Insert => (RecordKind::Insert, p.record_bytes + p.long_value_bytes),
            Op::Delete => (RecordKind::Delete, 64),
            _ => (RecordKind::Replace, p.short_pad_bytes + p.long_value_bytes),
        };
        let mut touched = [s.pages[0], s.pages[1], 0];
        let mut n = s.n as usize;
        if s.append {
            match self.append_to_tail(u64::from(len), lgpos) {
                Some(Some(new_page)) => {
                    touched[n] = new_page;
                    n += 1;
                }
                Some(None) => {}
                None => {
                    if !s.stalled {
                        rec.page_fault_stalls += 1;
                    }
                    let s = &mut self.sessions[i];
                    s.stalled = true;
                    s.wait = Wait::FreeBuffer;
                    return false;
                }
            }
        }
        for &page in &touched[..s.n as usize] {
            if let Some(buf) = self.cache.lookup(page) {
                self.cache.dirty(buf, lgpos);
            }
        }
        self.log.append(kind, &touched[..n], len as usize);
        let end = self.log.append(RecordKind::Commit, &[], 32);
        if below(&mut self.rng, 100) < u64::from(p.lazy_commit_pct) {
            rec.lazy_commits += 1;
            self.oldest_lazy_ns.get_or_insert(self.now);
            self.finish(i, rec);
            return false;
        }
        self.sessions[i].wait = Wait::Commit(end);
        false
    }

    /// Adds `bytes` to the table's last page; when it is full, a new page is allocated at the
    /// end (Some(Some(page))). None when no buffer is free for the new page.
    pub(super) fn append_to_tail(&mut self, bytes: u64, lgpos: u64) -> Option<Option<u64>> {
        self.tail_fill += bytes;
        if self.tail_fill < u64::from(self.cfg.profile.page_size) {
            return Some(None);
        }
        let page = self.pages;
        let Some(buf) = self.cache.reserve(page, State::Clean) else {
            self.tail_fill -= bytes;
            return None;
        };
        self.cache.dirty(buf, lgpos);
        self.pages += 1;
        self.tail_page = page;
        self.tail_fill %= u64::from(self.cfg.profile.page_size);
        Some(Some(page))
    }

    pub(super) fn finish(&mut self, i: usize, rec: &mut MailboxRecorder) {
        rec.ops[self.sessions[i].op.index()] += 1;
        self.paced_counts.1 += 1;
        self.sessions[i].wait = Wait::Idle;
        self.queues.active -= 1;
    }
}

/// How far behind its schedule the pacer may fall: starts older than this are dropped, so
/// that a stall is not followed by a burst of more than a second's transactions.
const CATCH_UP: Duration = Duration::from_secs(1);

/// The pacer of a run under `target_iops`: a third under the target until the I/Os per
/// transaction are known (`retune_pace`).
pub(super) fn target_pacer(target_iops: f64) -> Pacer {
    Pacer::at_rate(transaction_rate(target_iops / 1.5), CatchUp::Within(CATCH_UP))
}

/// The transaction rate to pace at for `tps`: at least one every 100 s.
fn transaction_rate(tps: f64) -> f64 {
    tps.max(0.01)
}
