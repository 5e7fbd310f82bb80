//! Named sets of jobs. `sqlio`: the six SQLIO profiles of the SATA study (MSR-TR-2003-70):
//! 8 KB random reads and writes at 4 and 1 outstanding I/Os, 64 KB sequential at 4.

use super::offsets::{Distribution, Pattern};

/// One job of a profile set; the rest of the job (target, duration, engine) comes from the
/// user's options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SqlioProfile {
    /// Short name, used for the bundle directory and the JSON.
    pub name: &'static str,
    /// What the study called it.
    pub title: &'static str,
    pub pattern: Pattern,
    pub read_pct: u8,
    pub block_size: u32,
    pub iodepth: u32,
}

const RANDOM: Pattern = Pattern::Random(Distribution::Uniform);

/// In the study's order.
pub const SQLIO_PROFILES: [SqlioProfile; 6] = [
    profile("randread-8k-qd4", "random read, 4-deep", RANDOM, 100, 8192, 4),
    profile("randwrite-8k-qd4", "random write, 4-deep", RANDOM, 0, 8192, 4),
    profile("read-64k-qd4", "sequential read, 4-deep", Pattern::Sequential, 100, 65536, 4),
    profile("write-64k-qd4", "sequential write, 4-deep", Pattern::Sequential, 0, 65536, 4),
    profile("randread-8k-qd1", "random read, 1-deep", RANDOM, 100, 8192, 1),
    profile("randwrite-8k-qd1", "random write, 1-deep", RANDOM, 0, 8192, 1),
];

const fn profile(
    name: &'static str,
    title: &'static str,
    pattern: Pattern,
    read_pct: u8,
    block_size: u32,
    iodepth: u32,
) -> SqlioProfile {
    SqlioProfile { name, title, pattern, read_pct, block_size, iodepth }
}
