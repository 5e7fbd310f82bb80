//! Block-device counters from `/proc/diskstats` and the iostat-style rates between two readings.
//!
//! A line is `major minor name` followed by 11 fields (kernels before 4.18), 15 (4.18 added
//! discards) or 17 (5.5 added flushes); see the kernel's `iostats.rst`. Every field but
//! "I/Os in flight" is cumulative, so rates come from the difference of two readings. The
//! formulas are sysstat's (`iostat -x`): r/s, w/s, rkB/s, wkB/s, r_await, w_await, aqu-sz, %util.

use std::io;
use std::time::Duration;

use storbench_report::DiskSample;

/// Where the kernel publishes the counters of every block device.
const DISKSTATS: &str = "/proc/diskstats";

/// `/proc/diskstats` counts sectors of 512 bytes whatever the device's sector size.
const SECTOR_BYTES: f64 = 512.0;

/// A counter that goes backwards by less than this, modulo 2^32, is taken for a 32-bit
/// counter that wrapped (32-bit kernels use `unsigned long`). A larger jump backwards is a
/// reset (device removed and added again, stats cleared). 2^30 sectors in one interval would
/// be 512 GiB, far beyond what one interval sees, so a real wrap is always under it.
const WRAP_LIMIT: u64 = 1 << 30;

/// Discard counters, present from Linux 4.18 (fields 12 to 15).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiscardCounters {
    pub completed: u64,
    pub merged: u64,
    pub sectors: u64,
    pub ms: u64,
}

/// Flush counters, present from Linux 5.5 (fields 16 and 17; always zero for partitions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlushCounters {
    pub completed: u64,
    pub ms: u64,
}

/// The raw counters of one `/proc/diskstats` line, in the kernel's units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub reads: u64,
    pub reads_merged: u64,
    /// 512-byte sectors.
    pub sectors_read: u64,
    /// Total time reads spent queued and in service, ms.
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    /// 512-byte sectors.
    pub sectors_written: u64,
    /// Total time writes spent queued and in service, ms.
    pub write_ms: u64,
    /// Requests in flight at the moment of reading; the only field that is not cumulative.
    pub in_flight: u64,
    /// Time with at least one request in flight, ms.
    pub io_ticks_ms: u64,
    /// Sum over time of the number of requests in flight, ms (gives the mean queue size).
    pub weighted_ms: u64,
    pub discard: Option<DiscardCounters>,
    pub flush: Option<FlushCounters>,
}

/// Parses one `/proc/diskstats` line into the device name and its counters.
///
/// Returns `None` for a line with fewer than 11 counters (the 4-field partition lines of
/// pre-2.6.25 kernels carry no timing, so no sample could be computed from them) or with a
/// field that is not a number. Fields beyond the 17th, from a future kernel, are ignored.
pub fn parse_line(line: &str) -> Option<(&str, DiskCounters)> {
    let mut tokens = line.split_whitespace();
    let _major: u32 = tokens.next()?.parse().ok()?;
    let _minor: u32 = tokens.next()?.parse().ok()?;
    let name = tokens.next()?;
    let f = tokens.map(|t| t.parse::<u64>().ok()).collect::<Option<Vec<u64>>>()?;
    if f.len() < 11 {
        return None;
    }
    let discard = (f.len() >= 15).then(|| DiscardCounters {
        completed: f[11],
        merged: f[12],
        sectors: f[13],
        ms: f[14],
    });
    let flush = (f.len() >= 17).then(|| FlushCounters { completed: f[15], ms: f[16] });
    let counters = DiskCounters {
        reads: f[0],
        reads_merged: f[1],
        sectors_read: f[2],
        read_ms: f[3],
        writes: f[4],
        writes_merged: f[5],
        sectors_written: f[6],
        write_ms: f[7],
        in_flight: f[8],
        io_ticks_ms: f[9],
        weighted_ms: f[10],
        discard,
        flush,
    };
    Some((name, counters))
}

/// Finds the counters of the device called `name` in the text of `/proc/diskstats`.
pub fn find_device(text: &str, name: &str) -> Option<DiskCounters> {
    text.lines().filter_map(parse_line).find(|(n, _)| *n == name).map(|(_, c)| c)
}

/// Reads the current counters of `name`; `Ok(None)` when the kernel lists no such device.
pub fn read_device(name: &str) -> io::Result<Option<DiskCounters>> {
    Ok(find_device(&read_text()?, name))
}

/// The whole of `/proc/diskstats`, for the counters of several devices at one moment.
pub fn read_text() -> io::Result<String> {
    std::fs::read_to_string(DISKSTATS)
}

/// Several devices' figures over the same interval as one: rates and queue sizes added up,
/// awaits over every completion (each device's await weighted by its completions), and the
/// busiest device's busy share (a sum would pass 100 % and say nothing). `None` for none.
pub fn combined(samples: &[DiskSample]) -> Option<DiskSample> {
    let sum = |f: fn(&DiskSample) -> f64| samples.iter().map(f).sum::<f64>();
    let await_ms = |ms: fn(&DiskSample) -> Option<f64>, done: fn(&DiskSample) -> f64| {
        mean_ms(samples.iter().map(|s| ms(s).unwrap_or(0.0) * done(s)).sum(), sum(done))
    };
    (!samples.is_empty()).then(|| DiskSample {
        reads_per_sec: sum(|s| s.reads_per_sec),
        writes_per_sec: sum(|s| s.writes_per_sec),
        read_bytes_per_sec: sum(|s| s.read_bytes_per_sec),
        write_bytes_per_sec: sum(|s| s.write_bytes_per_sec),
        read_await_ms: await_ms(|s| s.read_await_ms, |s| s.reads_per_sec),
        write_await_ms: await_ms(|s| s.write_await_ms, |s| s.writes_per_sec),
        queue_size: sum(|s| s.queue_size),
        busy_pct: samples.iter().map(|s| s.busy_pct).fold(0.0, f64::max),
    })
}

/// How much a cumulative counter grew from `prev` to `cur`.
///
/// A counter never legitimately goes backwards, so a decrease is either a 32-bit wrap (the
/// true growth is the distance modulo 2^32) or a reset to zero inside the interval (then
/// `cur` is what happened since the reset). Either way the result is never negative, and a
/// reset never turns into a near-2^64 growth.
pub fn counter_delta(prev: u64, cur: u64) -> u64 {
    if cur >= prev {
        return cur - prev;
    }
    let fits_u32 = prev <= u64::from(u32::MAX);
    let wrapped = (cur as u32).wrapping_sub(prev as u32) as u64;
    if fits_u32 && cur <= u64::from(u32::MAX) && wrapped < WRAP_LIMIT { wrapped } else { cur }
}

/// Computes iostat's figures from two readings taken `interval` apart.
///
/// Returns `None` for an empty interval, where no rate can be defined. Await is `None` in a
/// direction where no request completed; busy percent is clamped to 0..=100 because io_ticks
/// is accounted in jiffies and can slightly exceed the wall time between two reads.
pub fn disk_sample(prev: &DiskCounters, cur: &DiskCounters, interval: Duration) -> Option<DiskSample> {
    let secs = interval.as_secs_f64();
    if secs <= 0.0 {
        return None;
    }
    let d = |f: fn(&DiskCounters) -> u64| counter_delta(f(prev), f(cur)) as f64;
    let reads = d(|c| c.reads);
    let writes = d(|c| c.writes);
    Some(DiskSample {
        reads_per_sec: reads / secs,
        writes_per_sec: writes / secs,
        read_bytes_per_sec: d(|c| c.sectors_read) * SECTOR_BYTES / secs,
        write_bytes_per_sec: d(|c| c.sectors_written) * SECTOR_BYTES / secs,
        read_await_ms: mean_ms(d(|c| c.read_ms), reads),
        write_await_ms: mean_ms(d(|c| c.write_ms), writes),
        queue_size: d(|c| c.weighted_ms) / (secs * 1000.0),
        busy_pct: (d(|c| c.io_ticks_ms) / (secs * 1000.0) * 100.0).clamp(0.0, 100.0),
    })
}

/// Mean time per completed request, or `None` when nothing completed.
fn mean_ms(total_ms: f64, completed: f64) -> Option<f64> {
    (completed > 0.0).then(|| total_ms / completed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vda line of the development VM (kernel with flush counters).
    const LINE_17: &str = " 254       0 vda 57423 9510 4227746 22026 28012 16382 2742136 9679 0 10968 33068 10121 11 1021728 837 5794 525";
    /// A line as printed by kernels before 4.18.
    const LINE_11: &str = "   8       0 sda 1000 20 80000 500 2000 30 160000 4000 2 3000 4600";

    /// Counters from `[reads, sectors_read, read_ms, writes, sectors_written, write_ms,
    /// io_ticks_ms, weighted_ms]`, the fields the rates use.
    fn counters(f: [u64; 8]) -> DiskCounters {
        let [reads, sectors_read, read_ms, writes, sectors_written, write_ms, ticks, weighted] = f;
        DiskCounters {
            reads,
            sectors_read,
            read_ms,
            writes,
            sectors_written,
            write_ms,
            io_ticks_ms: ticks,
            weighted_ms: weighted,
            ..DiskCounters::default()
        }
    }

    #[test]
    fn parses_a_17_field_line() {
        let (name, c) = parse_line(LINE_17).unwrap();
        assert_eq!(name, "vda");
        assert_eq!(c.reads, 57423);
        assert_eq!(c.reads_merged, 9510);
        assert_eq!(c.sectors_read, 4227746);
        assert_eq!(c.read_ms, 22026);
        assert_eq!(c.writes, 28012);
        assert_eq!(c.writes_merged, 16382);
        assert_eq!(c.sectors_written, 2742136);
        assert_eq!(c.write_ms, 9679);
        assert_eq!(c.in_flight, 0);
        assert_eq!(c.io_ticks_ms, 10968);
        assert_eq!(c.weighted_ms, 33068);
        assert_eq!(
            c.discard,
            Some(DiscardCounters { completed: 10121, merged: 11, sectors: 1021728, ms: 837 })
        );
        assert_eq!(c.flush, Some(FlushCounters { completed: 5794, ms: 525 }));
    }

    #[test]
    fn parses_an_11_field_line_without_discards_or_flushes() {
        let (name, c) = parse_line(LINE_11).unwrap();
        assert_eq!(name, "sda");
        assert_eq!((c.reads, c.sectors_read, c.writes, c.write_ms), (1000, 80000, 2000, 4000));
        assert_eq!((c.in_flight, c.io_ticks_ms, c.weighted_ms), (2, 3000, 4600));
        assert_eq!(c.discard, None);
        assert_eq!(c.flush, None);
    }

    #[test]
    fn parses_a_15_field_line_with_discards_only() {
        let (_, c) = parse_line("8 1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").unwrap();
        assert_eq!(c.discard.map(|d| d.ms), Some(15));
        assert_eq!(c.flush, None);
    }

    #[test]
    fn rejects_short_or_garbled_lines() {
        assert_eq!(parse_line("   8       1 sda1 100 200 300 400"), None);
        assert_eq!(parse_line("8 0 sda 1 2 3 4 5 6 7 8 9 10 x"), None);
        assert_eq!(parse_line(""), None);
        assert_eq!(parse_line("eight 0 sda 1 2 3 4 5 6 7 8 9 10 11"), None);
    }

    #[test]
    fn finds_a_device_by_exact_name() {
        let text = format!("{LINE_11}\n   8       1 sda1 1 0 8 0 0 0 0 0 0 1 0\n{LINE_17}\n");
        assert_eq!(find_device(&text, "vda").map(|c| c.reads), Some(57423));
        assert_eq!(find_device(&text, "sda1").map(|c| c.reads), Some(1));
        assert_eq!(find_device(&text, "sd"), None);
    }

    #[test]
    fn rates_and_await_from_two_readings() {
        let prev = counters([1000, 80_000, 500, 2000, 160_000, 4000, 3000, 4600]);
        // Over 2 s: 200 reads of 8 sectors taking 1000 ms in all, 100 writes of 16 sectors
        // taking 300 ms, busy 1500 ms, 3000 ms of queue time.
        let cur = counters([1200, 81_600, 1500, 2100, 161_600, 4300, 4500, 7600]);
        let s = disk_sample(&prev, &cur, Duration::from_secs(2)).unwrap();
        assert_eq!(s.reads_per_sec, 100.0);
        assert_eq!(s.writes_per_sec, 50.0);
        assert_eq!(s.read_bytes_per_sec, 1600.0 * 512.0 / 2.0);
        assert_eq!(s.write_bytes_per_sec, 1600.0 * 512.0 / 2.0);
        assert_eq!(s.read_await_ms, Some(5.0));
        assert_eq!(s.write_await_ms, Some(3.0));
        assert_eq!(s.queue_size, 1.5);
        assert_eq!(s.busy_pct, 75.0);
    }

    #[test]
    fn await_is_none_without_completions_and_busy_is_clamped() {
        let prev = counters([10, 80, 5, 10, 80, 5, 0, 0]);
        // io_ticks grew by more than the interval (jiffy rounding): clamp to 100 %.
        let cur = counters([10, 80, 5, 10, 80, 5, 1100, 0]);
        let s = disk_sample(&prev, &cur, Duration::from_secs(1)).unwrap();
        assert_eq!(s.read_await_ms, None);
        assert_eq!(s.write_await_ms, None);
        assert_eq!(s.reads_per_sec, 0.0);
        assert_eq!(s.busy_pct, 100.0);
    }

    #[test]
    fn devices_combined_add_their_rates_and_weigh_their_awaits_by_completions() {
        let prev = counters([0; 8]);
        // 100 reads at 1 ms and 300 reads at 3 ms: 2.5 ms over the 400; busy 20 % and 60 %.
        let a = disk_sample(&prev, &counters([100, 800, 100, 0, 0, 0, 200, 100]), Duration::from_secs(1));
        let b = disk_sample(&prev, &counters([300, 2400, 900, 0, 0, 0, 600, 900]), Duration::from_secs(1));
        let c = combined(&[a.unwrap(), b.unwrap()]).unwrap();
        assert_eq!((c.reads_per_sec, c.read_bytes_per_sec), (400.0, 3200.0 * 512.0));
        assert_eq!((c.read_await_ms, c.write_await_ms), (Some(2.5), None));
        assert_eq!((c.queue_size, c.busy_pct), (1.0, 60.0));
        assert_eq!(combined(&[]), None);
    }

    #[test]
    fn an_empty_interval_gives_no_sample() {
        let c = counters([1, 1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(disk_sample(&c, &c, Duration::ZERO), None);
    }

    #[test]
    fn a_wrapped_32_bit_counter_gives_its_true_growth() {
        let max = u64::from(u32::MAX);
        assert_eq!(counter_delta(max - 9, 20), 30);
        let prev = counters([max - 49, 0, 0, 0, 0, 0, 0, 0]);
        let cur = counters([50, 0, 0, 0, 0, 0, 0, 0]);
        let s = disk_sample(&prev, &cur, Duration::from_secs(1)).unwrap();
        assert_eq!(s.reads_per_sec, 100.0);
    }

    #[test]
    fn a_reset_counter_gives_no_negative_or_huge_rate() {
        // 64-bit counters going backwards: a reset; count only what followed it.
        let prev = counters([
            5_000_000_000,
            9_000_000_000,
            80_000,
            7_000_000_000,
            9_000_000_000,
            90_000,
            1_000_000,
            2_000_000,
        ]);
        let cur = counters([100, 800, 50, 10, 80, 5, 200, 300]);
        let s = disk_sample(&prev, &cur, Duration::from_secs(1)).unwrap();
        assert_eq!(s.reads_per_sec, 100.0);
        assert_eq!(s.writes_per_sec, 10.0);
        assert_eq!(s.read_bytes_per_sec, 800.0 * 512.0);
        assert_eq!(s.read_await_ms, Some(0.5));
        assert_eq!(s.queue_size, 0.3);
        assert_eq!(s.busy_pct, 20.0);
        // A 32-bit counter falling far back is a reset too, not a 3-billion jump.
        assert_eq!(counter_delta(3_000_000_000, 10), 10);
    }
}
