//! storbench's own CPU time over a phase: what the tool itself costs per operation.

use std::time::Duration;

/// User and system CPU time of the whole process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OwnCpuTime {
    pub user: Duration,
    pub sys: Duration,
}

impl OwnCpuTime {
    /// CPU used between `earlier` and `self`.
    pub fn since(&self, earlier: &OwnCpuTime) -> OwnCpuTime {
        OwnCpuTime { user: self.user.saturating_sub(earlier.user), sys: self.sys.saturating_sub(earlier.sys) }
    }

    pub fn total(&self) -> Duration {
        self.user + self.sys
    }
}

/// CPU time used by every thread of this process so far.
pub fn process_cpu() -> OwnCpuTime {
    let (user, sys) = crate::monitor::cpu::self_cpu_times();
    OwnCpuTime { user, sys }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_user_time() {
        // Spin until the process's user time has grown by 30 ms: on a loaded machine that
        // takes longer in wall time, never less CPU. A counter that does not count never gets
        // there, and the limit ends the test as failed.
        let before = process_cpu();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        let used = loop {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            let used = process_cpu().since(&before);
            if used.user >= Duration::from_millis(30) || start.elapsed() > Duration::from_secs(30) {
                break used;
            }
        };
        std::hint::black_box(x);
        assert!(used.user >= Duration::from_millis(30), "30 s of spinning showed as {used:?}");
    }
}
