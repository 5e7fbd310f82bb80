//! The psync engine: one pread/pwrite (or fdatasync) per request, so the queue depth is 1. Used where
//! io_uring is unavailable, and as the baseline a synchronous database sees.

use super::{Capabilities, Completion, Dir, EngineKind, IoEngine, Request, SlotPool};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

pub struct PsyncEngine {
    /// Descriptors by request file index; the clones keep them open while the engine lives.
    fds: Vec<RawFd>,
    files: Vec<File>,
    pool: SlotPool,
    queued: Vec<Request>,
}

impl PsyncEngine {
    pub fn new(files: &[&File], pool: SlotPool) -> io::Result<Self> {
        let files = files.iter().map(|f| f.try_clone()).collect::<io::Result<Vec<File>>>()?;
        let fds = files.iter().map(|f| f.as_raw_fd()).collect();
        Ok(PsyncEngine { fds, files, pool, queued: Vec::with_capacity(4) })
    }

    fn execute(&mut self, req: Request) -> i32 {
        let fd = self.fds[req.file as usize];
        let buf = self.pool.piece(req.slot);
        debug_assert!(req.len as usize <= buf.len());
        let ptr = buf.as_mut_ptr().cast::<libc::c_void>();
        let off = req.offset as libc::off_t;
        // SAFETY: ptr is valid for the slot's length >= req.len bytes; fd stays open while self
        // lives (self.files holds it).
        let n = unsafe {
            match req.dir {
                Dir::Read => libc::pread(fd, ptr, req.len as usize, off),
                Dir::Write => libc::pwrite(fd, ptr, req.len as usize, off),
                Dir::Flush => libc::fdatasync(fd) as isize,
                Dir::Fsync => libc::fsync(fd) as isize,
            }
        };
        if n < 0 { -io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) } else { n as i32 }
    }
}

impl IoEngine for PsyncEngine {
    fn capabilities(&self) -> Capabilities {
        Capabilities { kind: EngineKind::Psync, synchronous: true, timed_wait: false }
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.pool.piece(slot)
    }

    fn replace_file(&mut self, index: u16, file: &File) -> io::Result<()> {
        let file = file.try_clone()?;
        self.fds[index as usize] = file.as_raw_fd();
        self.files[index as usize] = file;
        Ok(())
    }

    fn queue(&mut self, req: Request) {
        self.queued.push(req);
    }

    fn submit_and_reap(
        &mut self,
        _min: u32,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        if self.queued.is_empty() {
            super::idle(timeout);
        }
        let queued = std::mem::take(&mut self.queued);
        for req in &queued {
            let result = self.execute(*req);
            out.push(Completion { slot: req.slot, result });
        }
        self.queued = queued;
        self.queued.clear();
        Ok(())
    }
}
