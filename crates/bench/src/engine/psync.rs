//! The psync engine: one pread/pwrite per request, so the queue depth is 1. Used where
//! io_uring is unavailable, and as the baseline a synchronous database sees.

use super::{AlignedBuf, Capabilities, Completion, Dir, EngineKind, IoEngine, Request};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

pub struct PsyncEngine {
    fd: RawFd,
    // Keeps the descriptor open for as long as the engine lives.
    _file: File,
    pool: AlignedBuf,
    max_len: usize,
    queued: Vec<Request>,
}

impl PsyncEngine {
    pub fn new(file: &File, pool: AlignedBuf, max_len: u32) -> io::Result<Self> {
        let file = file.try_clone()?;
        Ok(PsyncEngine {
            fd: file.as_raw_fd(),
            _file: file,
            pool,
            max_len: max_len as usize,
            queued: Vec::with_capacity(4),
        })
    }

    fn execute(&mut self, req: Request) -> i32 {
        let max_len = self.max_len;
        let buf = self.pool.piece(req.slot as usize, max_len);
        let ptr = buf.as_mut_ptr().cast::<libc::c_void>();
        let off = req.offset as libc::off_t;
        // SAFETY: ptr is valid for max_len >= req.len bytes; fd stays open while self lives.
        let n = unsafe {
            match req.dir {
                Dir::Read => libc::pread(self.fd, ptr, req.len as usize, off),
                Dir::Write => libc::pwrite(self.fd, ptr, req.len as usize, off),
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
        self.pool.piece(slot as usize, self.max_len)
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
