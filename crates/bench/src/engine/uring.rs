//! The io_uring engine: one ring per worker, its buffers and file registered with the kernel
//! so that each request skips the page pinning and file lookup it would otherwise cost.

use super::{Capabilities, Completion, Dir, EngineKind, IoEngine, Request, SlotPool};
use io_uring::{IoUring, opcode, types};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

pub struct UringEngine {
    ring: IoUring,
    // Keep the registered descriptors open for as long as the ring uses them.
    files: Vec<File>,
    pool: SlotPool,
    fixed_buffers: bool,
    /// Created disabled (single issuer): `start` enables it on the worker's thread.
    disabled: bool,
    pending: u32,
}

impl UringEngine {
    pub fn new(files: &[&File], mut pool: SlotPool) -> io::Result<Self> {
        let files = files.iter().map(|f| f.try_clone()).collect::<io::Result<Vec<File>>>()?;
        let (ring, disabled) = build_ring(pool.slots() as u32)?;
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        ring.submitter().register_files(&fds)?;
        let iov = libc::iovec { iov_base: pool.as_mut_ptr().cast(), iov_len: pool.len() };
        // SAFETY: the pool outlives the ring's use of it: both live in self, and the ring is
        // dropped (unregistering) before the pool since it is declared first.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok();
        Ok(UringEngine { ring, files, pool, fixed_buffers, disabled, pending: 0 })
    }

    fn entry(&mut self, req: Request) -> io_uring::squeue::Entry {
        let ptr = self.pool.piece(req.slot).as_mut_ptr();
        let fd = types::Fixed(req.file as u32);
        let entry = match (req.dir, self.fixed_buffers) {
            (Dir::Read, true) => opcode::ReadFixed::new(fd, ptr, req.len, 0).offset(req.offset).build(),
            (Dir::Write, true) => opcode::WriteFixed::new(fd, ptr, req.len, 0).offset(req.offset).build(),
            (Dir::Read, false) => opcode::Read::new(fd, ptr, req.len).offset(req.offset).build(),
            (Dir::Write, false) => opcode::Write::new(fd, ptr, req.len).offset(req.offset).build(),
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
