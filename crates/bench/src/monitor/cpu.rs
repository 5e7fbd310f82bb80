//! Host CPU from the aggregate `cpu` line of `/proc/stat`, and storbench's own CPU time.
//!
//! `/proc/stat` counts time in USER_HZ ticks summed over all CPUs, so shares of the summed
//! difference are percentages of the whole machine (100 = every core busy). Our own time comes
//! from `getrusage(RUSAGE_SELF)` and is given as a percentage of one core, as `top` shows it.

use std::io;
use std::time::Duration;

use storbench_report::CpuSample;

/// Where the kernel publishes its CPU time counters.
const PROC_STAT: &str = "/proc/stat";

/// The aggregate CPU times of `/proc/stat`, in USER_HZ ticks.
///
/// `guest` and `guest_nice` are left out: the kernel already counts them inside `user` and
/// `nice`, so adding them would count that time twice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// Parses the aggregate `cpu` line (not the per-CPU `cpuN` ones) out of `/proc/stat` text.
///
/// Old kernels print fewer columns (iowait from 2.5.41, steal from 2.6.11); missing columns
/// count as zero. `None` when there is no such line or it has fewer than the first four.
pub fn parse_stat(text: &str) -> Option<HostCpuTicks> {
    let line = text.lines().find(|l| l.split_whitespace().next() == Some("cpu"))?;
    let f = line.split_whitespace().skip(1).map(|t| t.parse::<u64>().ok()).collect::<Option<Vec<u64>>>()?;
    if f.len() < 4 {
        return None;
    }
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    Some(HostCpuTicks {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    })
}

/// Reads the current aggregate CPU times; `Ok(None)` when the text has no usable `cpu` line.
pub fn read_stat() -> io::Result<Option<HostCpuTicks>> {
    Ok(parse_stat(&std::fs::read_to_string(PROC_STAT)?))
}

/// Host CPU shares between two readings, as percentages of all CPUs.
///
/// Each column's growth is floored at zero on its own (iowait is known to step backwards on
/// tickless kernels) and the total is the sum of those growths, so every share stays within
/// 0..=100 and they never add up to more than 100. No time elapsed gives all zeros.
pub fn cpu_sample(prev: &HostCpuTicks, cur: &HostCpuTicks) -> CpuSample {
    let d = |f: fn(&HostCpuTicks) -> u64| f(cur).saturating_sub(f(prev)) as f64;
    let user = d(|c| c.user) + d(|c| c.nice);
    let system = d(|c| c.system) + d(|c| c.irq) + d(|c| c.softirq);
    let iowait = d(|c| c.iowait);
    let total = user + system + iowait + d(|c| c.idle) + d(|c| c.steal);
    if total <= 0.0 {
        return CpuSample::default();
    }
    CpuSample {
        user_pct: user / total * 100.0,
        system_pct: system / total * 100.0,
        iowait_pct: iowait / total * 100.0,
    }
}

/// User plus system CPU time this process has used so far, all threads included.
///
/// Falls back to zero if the call fails, which it cannot with `RUSAGE_SELF` and a valid
/// pointer; a zero makes the next percentage zero rather than stopping a run.
pub fn self_cpu_time() -> Duration {
    let (user, sys) = self_cpu_times();
    user + sys
}

/// storbench's own (user, system) CPU time so far, all threads; zero if getrusage fails.
pub fn self_cpu_times() -> (Duration, Duration) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` points to writable memory the size of a `rusage`, which is all
    // getrusage needs; RUSAGE_SELF is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    // SAFETY: getrusage returned 0, so it filled the struct (it was zeroed before anyway).
    let usage = unsafe { usage.assume_init() };
    (timeval(usage.ru_utime), timeval(usage.ru_stime))
}

/// A `timeval` from the kernel as a `Duration`; negative fields (never produced) become zero.
fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(micros)
}

/// Our CPU time between two readings as a percentage of one core over `wall` time.
///
/// Above 100 when several threads were busy at once; zero for an empty interval.
pub fn self_cpu_pct(prev: Duration, cur: Duration, wall: Duration) -> f64 {
    let wall = wall.as_secs_f64();
    if wall <= 0.0 {
        return 0.0;
    }
    cur.saturating_sub(prev).as_secs_f64() / wall * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_A: &str = "cpu  13645 0 3977 266078 703 0 96 26 0 0\n\
                          cpu0 6000 0 2000 133000 300 0 50 10 0 0\n\
                          cpu1 7645 0 1977 133078 403 0 46 16 0 0\n\
                          intr 123 4 5\nctxt 999\n";
    /// 1000 ticks later: user +300, nice +100, system +150, idle +300, iowait +80, irq +20,
    /// softirq +30, steal +20; guest +50 (already inside user).
    const STAT_B: &str = "cpu  13945 100 4127 266378 783 20 126 46 50 0\n\
                          cpu0 6100 0 2050 133100 350 0 60 10 0 0\n";

    #[test]
    fn parses_the_aggregate_line_not_a_per_cpu_one() {
        let t = parse_stat(STAT_A).unwrap();
        assert_eq!(
            t,
            HostCpuTicks {
                user: 13645,
                nice: 0,
                system: 3977,
                idle: 266078,
                iowait: 703,
                irq: 0,
                softirq: 96,
                steal: 26,
            }
        );
    }

    #[test]
    fn accepts_old_kernels_with_fewer_columns_and_rejects_garbage() {
        let t = parse_stat("cpu 1 2 3 4\n").unwrap();
        assert_eq!((t.user, t.nice, t.system, t.idle, t.iowait, t.steal), (1, 2, 3, 4, 0, 0));
        assert_eq!(parse_stat("cpu 1 2 3\n"), None);
        assert_eq!(parse_stat("cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_stat("cpu 1 2 x 4\n"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn percentages_of_all_cpus_from_two_readings() {
        let a = parse_stat(STAT_A).unwrap();
        let b = parse_stat(STAT_B).unwrap();
        let s = cpu_sample(&a, &b);
        // Total 1000 ticks (guest not counted again): user+nice 400, system+irq+softirq 200.
        assert!((s.user_pct - 40.0).abs() < 1e-9, "{s:?}");
        assert!((s.system_pct - 20.0).abs() < 1e-9, "{s:?}");
        assert!((s.iowait_pct - 8.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn a_counter_going_backwards_keeps_shares_within_bounds() {
        let a = HostCpuTicks { user: 100, idle: 100, iowait: 50, ..HostCpuTicks::default() };
        let b = HostCpuTicks { user: 200, idle: 200, iowait: 40, ..HostCpuTicks::default() };
        let s = cpu_sample(&a, &b);
        assert_eq!(s.iowait_pct, 0.0);
        assert_eq!(s.user_pct, 50.0);
        assert_eq!(cpu_sample(&a, &a), CpuSample::default());
    }

    #[test]
    fn own_cpu_as_percent_of_one_core() {
        let pct =
            self_cpu_pct(Duration::from_millis(100), Duration::from_millis(400), Duration::from_millis(200));
        assert!((pct - 150.0).abs() < 1e-9);
        assert_eq!(self_cpu_pct(Duration::ZERO, Duration::from_secs(1), Duration::ZERO), 0.0);
    }

    #[test]
    fn own_cpu_time_grows_while_we_spin() {
        let before = self_cpu_time();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        assert!(self_cpu_time() > before);
    }
}
