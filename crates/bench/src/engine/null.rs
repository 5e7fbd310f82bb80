//! The null engine: every request completes at once, successfully, without touching a device.

use super::{Capabilities, Completion, EngineKind, IoEngine, Request, SlotPool};
use std::io;
use std::time::Duration;

pub struct NullEngine {
    pool: SlotPool,
    queued: Vec<Completion>,
}

impl NullEngine {
    pub fn new(pool: SlotPool) -> Self {
        NullEngine { pool, queued: Vec::with_capacity(256) }
    }
}

impl IoEngine for NullEngine {
    fn capabilities(&self) -> Capabilities {
        Capabilities { kind: EngineKind::Null, synchronous: false, timed_wait: false }
    }

    fn buffer(&mut self, slot: u32) -> &mut [u8] {
        self.pool.piece(slot)
    }

    fn replace_file(&mut self, _index: u16, _file: &std::fs::File) -> io::Result<()> {
        Ok(())
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
