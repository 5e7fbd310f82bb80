//! The null engine: every request completes at once, successfully, without touching a device.

use super::{AlignedBuf, Capabilities, Completion, EngineKind, IoEngine, Request};
use std::io;
use std::time::Duration;

pub struct NullEngine {
    pool: AlignedBuf,
    max_len: usize,
    queued: Vec<Completion>,
}

impl NullEngine {
    pub fn new(pool: AlignedBuf, max_len: u32) -> Self {
        NullEngine { pool, max_len: max_len as usize, queued: Vec::with_capacity(256) }
    }
}

impl IoEngine for NullEngine {
    fn capabilities(&self) -> Capabilities {
        Capabilities { kind: EngineKind::Null, synchronous: false, timed_wait: false }
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.pool.piece(slot as usize, self.max_len)
    }

    fn queue(&mut self, req: Request) {
        self.queued.push(Completion { slot: req.slot, result: req.len as i32 });
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
        out.append(&mut self.queued);
        Ok(())
    }
}
