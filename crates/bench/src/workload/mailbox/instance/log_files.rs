//! The log stream's I/O: writing the log buffer with group commit, rolling to the next log
//! file, creating that file ahead of need and deleting the files a checkpoint has passed.

use super::*;

impl Instance {
    /// Unwritten log the buffer can hold: the log file less its header.
    pub(super) fn log_room(&self) -> u64 {
        self.log.geo.payload_per_file()
    }

    pub(super) fn issue_log_write(&mut self) {
        if self.log.write_in_flight() || self.log.unflushed() == 0 {
            return;
        }
        let waiting = !self.queues.commits.is_empty()
            || self.queues.blocked.iter().any(|&i| self.sessions[i as usize].wait == Wait::LogRoom);
        let lazy_due = self.oldest_lazy_ns.is_some_and(|t| self.now >= t + LAZY_FLUSH_NS);
        let full = self.log.unflushed() >= self.log_room() / 2;
        if !(waiting || lazy_due || full || self.ending()) {
            return;
        }
        if self.log_needs_roll && !self.roll_log() {
            return;
        }
        let slot = self.log_slot;
        let Some((w, bytes)) = self.log.next_write() else { return };
        self.engine.buffer(slot)[..w.len].copy_from_slice(bytes);
        self.oldest_lazy_ns = None;
        self.issue(slot, InFlight::Log(w), Dir::Write, LOG, w.offset as u64, w.len as u32);
    }

    /// Moves the log to its next file, once that file exists; false while it is being made.
    pub(super) fn roll_log(&mut self) -> bool {
        let NextLog::Ready(file) = std::mem::replace(&mut self.next_log, NextLog::None) else {
            return false;
        };
        let generation = self.log.writing_generation();
        let files = &self.cfg.files;
        if let Err(e) = crate::files::rename(&files.tmp_log_path(), &files.log_path(generation))
            .map_err(std::io::Error::from)
            .and_then(|_| self.engine.replace_file(LOG, &file))
        {
            self.failure = Some(format!("moving to log generation {generation}: {e}"));
            return false;
        }
        self.log_needs_roll = false;
        self.delete_passed_logs();
        true
    }

    /// Circular logging: files wholly before the checkpoint are no longer needed.
    pub(super) fn delete_passed_logs(&mut self) {
        if self.cfg.keep_logs {
            return;
        }
        let checkpoint = self.cache.oldest_dirty().unwrap_or(self.log.flushed);
        let keep_from = self.log.generation_of(checkpoint);
        let mut g = keep_from.saturating_sub(1);
        while g >= self.cfg.first_generation {
            // Only the files this run made: a name holding another file stops the deletion.
            if !matches!(crate::files::remove_own(&self.cfg.files.log_path(g)), Ok(true)) {
                break;
            }
            g = match g.checked_sub(1) {
                Some(x) => x,
                None => break,
            };
        }
    }

    pub(super) fn create_next_log(&mut self) {
        if !matches!(self.next_log, NextLog::None)
            || matches!(self.slots[self.create_slot as usize].0, InFlight::CreateLog)
        {
            return;
        }
        let path = self.cfg.files.tmp_log_path();
        let created = remove_stale_log(&path, 0, self.cfg.log_block)
            .and_then(|_| open_direct(&path, true).map_err(std::io::Error::other))
            .and_then(|f| self.engine.replace_file(NEXT_LOG, &f).map(|_| f));
        match created {
            Ok(file) => {
                let slot = self.create_slot;
                let len = self.cfg.profile.log_file_size;
                unused_log_pattern(self.engine.buffer(slot), self.cfg.log_block);
                self.next_log = NextLog::Creating(file);
                self.issue(slot, InFlight::CreateLog, Dir::Write, NEXT_LOG, 0, len);
            }
            Err(e) => self.failure = Some(format!("creating the next log file {}: {e}", path.display())),
        }
    }
}

/// A new log file's content before use: blocks of generation 0 holding nothing.
pub(crate) fn unused_log_pattern(buf: &mut [u8], block: usize) {
    for (i, b) in buf.chunks_exact_mut(block).enumerate() {
        b.fill(0x5A);
        crate::workload::mailbox::format::seal_log_block(b, 0, i as u32, 0);
    }
}

/// Removes a log file an earlier run left at `path` (of `generation`) when it is storbench's;
/// nothing there is fine.
fn remove_stale_log(path: &std::path::Path, generation: u32, block: usize) -> std::io::Result<()> {
    match crate::files::entry(path)? {
        None => Ok(()),
        Some(_) => DbFiles::remove_log_file(path, generation, block),
    }
}

/// Creates a log file filled with the unused pattern (the first file of a stream), in place of
/// one of storbench's an earlier run left there.
pub(super) fn create_log_file(
    path: &std::path::Path,
    generation: u32,
    size: u32,
    block: usize,
) -> crate::Result<File> {
    use std::os::unix::fs::FileExt;
    remove_stale_log(path, generation, block).map_err(|source| crate::Error::Io {
        op: "replacing",
        path: path.to_path_buf(),
        source,
    })?;
    let file = open_direct(path, true)?;
    let mut buf = engine::AlignedBuf::new(size as usize)
        .map_err(|source| crate::Error::Setup { what: "allocating a log buffer", source })?;
    unused_log_pattern(buf.as_mut_slice(), block);
    file.write_all_at(buf.as_mut_slice(), 0).map_err(|source| crate::Error::Io {
        op: "writing",
        path: path.to_path_buf(),
        source,
    })?;
    Ok(file)
}
