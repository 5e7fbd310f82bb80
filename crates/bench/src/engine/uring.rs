//! The io_uring engine: one ring per worker, its buffers and file registered with the kernel
//! so that each request skips the page pinning and file lookup it would otherwise cost.
//!
//! The kernel writes into a request's buffer until the request completes, whatever happens to
//! the ring in between; so the buffers are freed only once every request handed to the kernel
//! has completed (see `drain`), and are leaked when that cannot be known.

use super::{Capabilities, Completion, Dir, EngineKind, IoEngine, Request, SlotPool};
use io_uring::{IoUring, opcode, types};
use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// user_data of the cancel requests `drain` sends; request user_data are slot numbers.
const CANCEL_TAG: u64 = u64::MAX;

/// How long a dropped engine waits for requests that cannot be cancelled (already at the
/// device) before it gives their buffers up for lost.
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

pub struct UringEngine {
    ring: IoUring,
    // Keep the registered descriptors open for as long as the ring uses them.
    files: Vec<File>,
    /// Freed by `drop` only when no request that may write into it is left with the kernel.
    pool: ManuallyDrop<SlotPool>,
    fixed_buffers: bool,
    /// Created disabled (single issuer): `start` enables it on the worker's thread.
    disabled: bool,
    /// Requests queued and not yet reaped: those the kernel may still be writing into.
    pending: u32,
    /// Test hook: `submit_and_reap` submits, then fails as a broken ring would.
    #[cfg(test)]
    fail_after_submit: bool,
}

impl UringEngine {
    pub fn new(files: &[&File], mut pool: SlotPool) -> io::Result<Self> {
        let files = files.iter().map(|f| f.try_clone()).collect::<io::Result<Vec<File>>>()?;
        let (ring, disabled) = build_ring(pool.slots() as u32)?;
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        ring.submitter().register_files(&fds)?;
        let iov = libc::iovec { iov_base: pool.as_mut_ptr().cast(), iov_len: pool.len() };
        // SAFETY: the pool outlives the ring's use of it: `drop` frees it only after every
        // request completed and the buffers were unregistered, and otherwise never.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok();
        Ok(UringEngine {
            ring,
            files,
            pool: ManuallyDrop::new(pool),
            fixed_buffers,
            disabled,
            pending: 0,
            #[cfg(test)]
            fail_after_submit: false,
        })
    }

    /// Ends every request still with the kernel: asks it to cancel them all, then reaps until
    /// each has completed (one already at the device completes in its own time). Returns
    /// whether none is left, that is whether the buffers may be freed. Only called on the way
    /// out, so the I/O path pays nothing for it.
    fn drain(&mut self) -> bool {
        if self.disabled || self.pending == 0 {
            // A disabled ring never took a request.
            return true;
        }
        let _ = self.ring.submit();
        for slot in 0..self.pool.slots() as u64 {
            let cancel = opcode::AsyncCancel::new(slot).build().user_data(CANCEL_TAG);
            // SAFETY: a cancel names no buffer. A full queue only means fewer cancels: the
            // loop below still waits for every request.
            if unsafe { self.ring.submission().push(&cancel) }.is_err() {
                break;
            }
        }
        let deadline = Instant::now() + DRAIN_LIMIT;
        while self.pending > 0 && Instant::now() < deadline {
            let ts = types::Timespec::from(Duration::from_millis(100));
            let waited = self.ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&ts));
            if let Err(e) = waited
                && !matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR | libc::EBUSY))
            {
                return false;
            }
            let requests = self.ring.completion().filter(|c| c.user_data() != CANCEL_TAG).count();
            self.pending -= requests as u32;
        }
        self.pending == 0
    }

    fn entry(&mut self, req: Request) -> io_uring::squeue::Entry {
        let ptr = self.pool.piece(req.slot).as_mut_ptr();
        let fd = types::Fixed(req.file as u32);
        let entry = match (req.dir, self.fixed_buffers) {
            (Dir::Read, true) => opcode::ReadFixed::new(fd, ptr, req.len, 0).offset(req.offset).build(),
            (Dir::Write, true) => opcode::WriteFixed::new(fd, ptr, req.len, 0).offset(req.offset).build(),
            (Dir::Read, false) => opcode::Read::new(fd, ptr, req.len).offset(req.offset).build(),
            (Dir::Write, false) => opcode::Write::new(fd, ptr, req.len).offset(req.offset).build(),
            (Dir::Flush, _) => opcode::Fsync::new(fd).flags(types::FsyncFlags::DATASYNC).build(),
            (Dir::Fsync, _) => opcode::Fsync::new(fd).build(),
        };
        entry.user_data(req.slot as u64)
    }
}

/// A ring sized for `slots` requests, with the flags that cut per-request kernel work where
/// the kernel has them (single issuer, deferred task work), plain otherwise. A single-issuer
/// ring belongs to the thread that enables it, so it is created disabled here (on the
/// coordinating thread) and enabled by the worker; the flag says whether that is needed.
fn build_ring(slots: u32) -> io::Result<(IoUring, bool)> {
    let entries = slots.max(2).next_power_of_two();
    let tuned = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_coop_taskrun()
        .setup_submit_all()
        .setup_r_disabled()
        .build(entries);
    match tuned {
        Ok(ring) => Ok((ring, true)),
        Err(_) => Ok((IoUring::new(entries)?, false)),
    }
}

impl IoEngine for UringEngine {
    fn capabilities(&self) -> Capabilities {
        Capabilities { kind: EngineKind::IoUring, synchronous: false, timed_wait: true }
    }

    fn start(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.disabled) {
            self.ring.submitter().register_enable_rings()?;
        }
        Ok(())
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.pool.piece(slot)
    }

    fn replace_file(&mut self, index: u16, file: &File) -> io::Result<()> {
        let file = file.try_clone()?;
        self.ring.submitter().register_files_update(index as u32, &[file.as_raw_fd()])?;
        self.files[index as usize] = file;
        Ok(())
    }

    fn queue(&mut self, req: Request) {
        let entry = self.entry(req);
        // SAFETY: the buffer and file the entry names live as long as the ring. The ring has
        // one entry per slot and a slot is queued only when its previous request completed,
        // so the submission queue cannot be full.
        unsafe { self.ring.submission().push(&entry) }.expect("submission queue sized for every slot");
        self.pending += 1;
        // Hand each request to the kernel at once (fio's iodepth_batch_submit=1). Queued in a
        // batch, the first requests wait for the last to be prepared, and the device sees
        // bursts: on this machine's virtio disk that cost 16 % of 4k random-read IOPS at QD32
        // (bench/compare-fio.sh job a: 70k batched, 82k submitted one by one, fio 81k). A
        // failed submit leaves the entry queued; submit_and_reap submits it and reports.
        let _ = self.ring.submit();
    }

    fn submit_and_reap(
        &mut self,
        min: u32,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        if self.pending == 0 && self.ring.submission().is_empty() {
            super::idle(timeout);
            return Ok(());
        }
        let want = min.min(self.pending) as usize;
        let result = match timeout {
            Some(t) if want > 0 => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(want, &args)
            }
            _ => self.ring.submit_and_wait(want),
        };
        #[cfg(test)]
        if self.fail_after_submit {
            return Err(io::Error::from_raw_os_error(libc::EBADF));
        }
        match result {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR | libc::EBUSY)) => {}
            Err(e) => return Err(e),
        }
        for cqe in self.ring.completion() {
            out.push(Completion { slot: cqe.user_data() as u32, result: cqe.result() });
            self.pending -= 1;
        }
        Ok(())
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        if self.drain() {
            let _ = self.ring.submitter().unregister_buffers();
            // SAFETY: dropped once, here; no request that may use the pool is left.
            unsafe { ManuallyDrop::drop(&mut self.pool) }
        }
        // Otherwise the pool is leaked: the kernel may still write into it, and memory that
        // is never freed cannot be reused for anything else.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::FromRawFd;

    /// A pipe's read and write ends; a read of the empty pipe stays with the kernel.
    fn pipe() -> (File, File) {
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors pipe2 returns, which we then own.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) }, 0);
        unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    #[test]
    fn after_a_failed_submit_a_read_in_flight_is_cancelled_and_reaped_before_its_buffer_is_freed() {
        let (mut rx, mut tx) = pipe();
        let mut e = match UringEngine::new(&[&rx], SlotPool::uniform(4, 4096).unwrap()) {
            Ok(e) => e,
            Err(err) => {
                let missing = format!("io_uring is unavailable here ({err})");
                return crate::testing::skip(&missing, "run on Linux 5.6 or later with io_uring enabled");
            }
        };
        e.start().unwrap();
        e.fail_after_submit = true;
        // Offset -1: the pipe's current position.
        e.queue(Request { slot: 1, file: 0, dir: Dir::Read, offset: u64::MAX, len: 4096 });
        let mut out = Vec::new();
        let failed = e.submit_and_reap(1, Some(Duration::from_millis(20)), &mut out);
        assert!(failed.is_err() && out.is_empty(), "{failed:?} {out:?}");
        assert_eq!(e.pending, 1, "the read waits in the kernel on the empty pipe");
        assert!(e.drain(), "a read waiting on a pipe can be cancelled");
        assert_eq!(e.pending, 0, "its completion was reaped before the buffers may go");

        // The same failure, then the engine dropped as the worker's error path drops it.
        e.queue(Request { slot: 2, file: 0, dir: Dir::Read, offset: u64::MAX, len: 4096 });
        assert!(e.submit_and_reap(1, Some(Duration::from_millis(20)), &mut out).is_err());
        assert_eq!(e.pending, 1);
        drop(e);
        // No request of ours is left reading the pipe: a byte written now is still there.
        tx.write_all(b"x").unwrap();
        let mut got = [0u8; 8];
        assert_eq!(rx.read(&mut got).unwrap(), 1, "the dropped engine's read did not take it");
        assert_eq!(got[0], b'x');
    }
}
