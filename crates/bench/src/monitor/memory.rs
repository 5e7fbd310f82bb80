//! Memory available to new work, from `/proc/meminfo`.
//!
//! `MemAvailable` (Linux 3.14+) is the kernel's estimate of what can be allocated without
//! swapping, page cache that can be dropped included; it is what shrinks when a benchmark's
//! file pages or a database's buffers fill memory.

use std::io;

/// Where the kernel publishes its memory counters.
const MEMINFO: &str = "/proc/meminfo";

/// Value of one `Key:   123 kB` line, converted to bytes.
pub(crate) fn field_bytes(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, rest) = line.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let mut parts = rest.split_whitespace();
        let value: u64 = parts.next()?.parse().ok()?;
        // meminfo prints "kB" (meaning KiB) for sizes; bare numbers are page counts we do not use.
        match parts.next() {
            Some("kB") => value.checked_mul(1024),
            _ => None,
        }
    })
}

/// Memory available in bytes, from the text of `/proc/meminfo`.
///
/// Kernels before 3.14 have no `MemAvailable`; there `MemFree + Buffers + Cached` stands in,
/// the estimate `free` used before the kernel gave one. `None` when neither can be read.
pub fn parse_mem_available(text: &str) -> Option<u64> {
    if let Some(bytes) = field_bytes(text, "MemAvailable") {
        return Some(bytes);
    }
    let free = field_bytes(text, "MemFree")?;
    let buffers = field_bytes(text, "Buffers").unwrap_or(0);
    let cached = field_bytes(text, "Cached").unwrap_or(0);
    Some(free.saturating_add(buffers).saturating_add(cached))
}

/// Refuses options that would need more memory than the machine has available: `what` names
/// the option and its value, `fix` says what to give instead; `needed` None is more than any
/// machine has. Passes where the memory cannot be read.
pub fn check_memory(what: &str, needed: Option<u64>, fix: &str) -> Result<(), String> {
    let Some(limit) = memory_limit() else { return Ok(()) };
    let h = crate::units::human_bytes;
    match needed {
        Some(n) if n <= limit => Ok(()),
        Some(n) => {
            Err(format!("{what} needs {} of memory but this machine has {} available; {fix}", h(n), h(limit)))
        }
        None => {
            Err(format!("{what} needs more memory than any machine has ({} available here); {fix}", h(limit)))
        }
    }
}

/// The most memory a run may ask for: what is available now (`MemAvailable`, or its stand-in),
/// else all of it (`MemTotal`); None when /proc/meminfo cannot be read.
pub fn memory_limit() -> Option<u64> {
    let text = std::fs::read_to_string(MEMINFO).ok()?;
    parse_mem_available(&text).or_else(|| field_bytes(&text, "MemTotal"))
}

/// The system's memory page, in bytes (4096 where it cannot be read).
pub fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system and has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).unwrap_or(4096)
}

/// The machine's memory (`MemTotal`), in bytes; None when /proc/meminfo cannot be read.
pub fn total_bytes() -> Option<u64> {
    field_bytes(&std::fs::read_to_string(MEMINFO).ok()?, "MemTotal")
}

/// Reads the memory available now, in bytes; `Ok(None)` when meminfo has no usable field.
pub fn read_mem_available() -> io::Result<Option<u64>> {
    Ok(parse_mem_available(&std::fs::read_to_string(MEMINFO)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO_TEXT: &str = "MemTotal:       49368168 kB\n\
                                MemFree:        22000000 kB\n\
                                MemAvailable:   24125212 kB\n\
                                Buffers:          100000 kB\n\
                                Cached:          2000000 kB\n\
                                SwapCached:            0 kB\n\
                                HugePages_Total:       0\n";

    #[test]
    fn mem_available_in_bytes() {
        assert_eq!(parse_mem_available(MEMINFO_TEXT), Some(24_125_212 * 1024));
    }

    #[test]
    fn old_kernels_fall_back_to_free_plus_buffers_plus_cached() {
        let old = "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\nSwapCached: 7 kB\n";
        assert_eq!(parse_mem_available(old), Some(420 * 1024));
    }

    #[test]
    fn nothing_usable_gives_none() {
        assert_eq!(parse_mem_available(""), None);
        assert_eq!(parse_mem_available("MemAvailable: lots kB\n"), None);
        assert_eq!(parse_mem_available("HugePages_Total: 5\n"), None);
    }

    #[test]
    fn this_machine_reports_some_memory() {
        let bytes = read_mem_available().unwrap().unwrap();
        assert!(bytes > 0);
    }
}
