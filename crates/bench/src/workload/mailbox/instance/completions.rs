//! Issuing requests to the engine and handling what completes: reads into the cache,
//! written runs, log writes and file creation; and the clean shutdown.

use super::*;

impl Instance {
    pub(super) fn issue(&mut self, slot: u32, what: InFlight, dir: Dir, file: u16, offset: u64, len: u32) {
        self.slots[slot as usize] = (what, self.now);
        self.in_flight += 1;
        self.engine.queue(Request { slot, file, dir, offset, len });
    }

    pub(super) fn complete(&mut self, c: Completion, rec: &mut MailboxRecorder) {
        let (what, issued) = std::mem::replace(&mut self.slots[c.slot as usize], (InFlight::Free, 0));
        self.in_flight -= 1;
        let lat = self.now.saturating_sub(issued);
        // A short transfer is as much an error as a failed one; neither counts as an I/O of
        // its stream (only completed transfers are throughput).
        let failure = c.failure(expected_len(&what, self));
        if let Some(kind) = failure {
            rec.errors.count(kind);
        }
        let failed = failure.is_some();
        if matches!(what, InFlight::SessionRead { .. } | InFlight::Write { .. }) {
            self.paced_counts.0 += 1;
        }
        match what {
            InFlight::SessionRead { session, buf, page } => self.read_done(c, session, buf, page, lat, rec),
            InFlight::Write { first, pages, checkpoint } => {
                self.checkpoint_writes -= u32::from(checkpoint);
                if !failed {
                    rec.db_writes.record(c.result as u64, lat);
                }
                self.write_done(first, pages, failed);
                self.free_write_slots.push(c.slot);
            }
            InFlight::Log(w) => {
                if failed {
                    self.log.failed();
                    return;
                }
                rec.log_writes.record(w.len as u64, lat);
                self.log.completed();
                self.wake_committed();
                self.wake_blocked();
                if w.closes_file {
                    self.log_needs_roll = true;
                    self.shared.log_files_done.fetch_add(1, Relaxed);
                }
            }
            InFlight::CreateLog => {
                if !failed {
                    rec.log_creates.record(c.result as u64, lat);
                }
                if let NextLog::Creating(f) = std::mem::replace(&mut self.next_log, NextLog::None) {
                    self.next_log = if failed { NextLog::None } else { NextLog::Ready(f) };
                }
            }
            InFlight::Bdm if !failed => rec.bdm_reads.record(c.result as u64, lat),
            InFlight::Bdm => {}
            InFlight::Free => {}
        }
    }

    pub(super) fn read_done(
        &mut self,
        c: Completion,
        session: u32,
        buf: u32,
        page: u64,
        lat: u64,
        rec: &mut MailboxRecorder,
    ) {
        self.queues.ready.push_back(session);
        // Sessions waiting for this page (or for anything) look again.
        self.wake_blocked();
        if c.result != self.cfg.profile.page_size as i32 {
            // A failed read fails the operation; the session starts another.
            self.cache.abandon(buf);
            self.sessions[session as usize].wait = Wait::Idle;
            self.queues.active -= 1;
            return;
        }
        rec.db_reads.record(c.result as u64, lat);
        let ps = self.cfg.profile.page_size as usize;
        if let Err(fault) = check_page(&self.engine.buffer(c.slot)[..ps], self.cfg.db, page) {
            let file = self.cfg.files.db.display().to_string();
            rec.corrupt(&file, page * ps as u64, fault.to_string());
        }
        self.cache.loaded(buf);
        let s = &mut self.sessions[session as usize];
        s.have += 1;
        s.wait = Wait::Ready;
    }

    pub(super) fn write_done(&mut self, first: u64, pages: u32, failed: bool) {
        for p in first..first + u64::from(pages) {
            let Some(buf) = self.cache.lookup(p) else { continue };
            if failed {
                // Not on disk: the page stays dirty and is written again.
                self.cache.dirty_again(buf, self.log.lgpos);
            }
            if self.cache.written(buf) {
                self.pending_evictions = self.pending_evictions.saturating_sub(1);
            }
        }
        // Freed buffers may unblock stalled sessions.
        self.wake_blocked();
    }

    /// Lets operations in progress finish, then (unless crashing) writes every dirty page and
    /// the rest of the log, as a clean database shutdown does.
    pub(super) fn shut_down(&mut self, done: &mut Vec<Completion>) {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut finished = false;
        while Instant::now() < deadline {
            if self.failure.is_some() {
                // Nothing more is written, but requests in flight must complete before their
                // buffers go away.
                if self.in_flight == 0 {
                    break;
                }
                self.wait(done);
                continue;
            }
            self.now = self.clock();
            self.step_sessions();
            // Sessions waiting for a free buffer finish only if the pool is refilled.
            self.refill_avail_pool();
            let sessions_busy = self.queues.active > 0;
            if !self.cfg.crash_at_end {
                self.issue_log_write();
                self.create_next_log();
                if !sessions_busy {
                    self.flush_all();
                }
            }
            let log_busy = !self.cfg.crash_at_end && self.log.unflushed() > 0;
            // A crash abandons the sessions (their commits never reach the log); only the
            // I/O in flight is waited for.
            let idle = if self.cfg.crash_at_end {
                self.in_flight == 0
            } else {
                !sessions_busy && self.in_flight == 0 && !log_busy && self.cache.dirty == 0
            };
            if idle {
                finished = true;
                break;
            }
            self.wait(done);
        }
        if !finished && self.failure.is_none() {
            self.failure = Some(format!(
                "database {} did not shut down within 120 s ({} I/Os in flight, {} dirty pages)",
                self.cfg.db, self.in_flight, self.cache.dirty
            ));
        }
        let _ = crate::files::remove_own(&self.cfg.files.tmp_log_path());
    }
}

/// Bytes a request of this kind asks for (0 where any count is fine).
pub(super) fn expected_len(what: &InFlight, inst: &Instance) -> u32 {
    let ps = inst.cfg.profile.page_size;
    match what {
        InFlight::SessionRead { .. } => ps,
        InFlight::Write { pages, .. } => pages * ps,
        InFlight::Log(w) => w.len as u32,
        InFlight::CreateLog => inst.cfg.profile.log_file_size,
        InFlight::Bdm | InFlight::Free => 0,
    }
}
