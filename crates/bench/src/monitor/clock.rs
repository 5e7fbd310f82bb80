//! The host clock's discipline, as the kernel reports it to `adjtimex` (read only): whether
//! an NTP client keeps it synchronised and the error bounds it keeps. Shards started on many
//! hosts are only as aligned as their clocks; each shard's summary says so.

use storbench_report::ClockState;

/// The clock's state now; all unknown where the kernel does not answer.
pub fn state() -> ClockState {
    // SAFETY: timex is plain data; zeroed, its modes are 0, so adjtimex only reads.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid timex the call fills in.
    let state = unsafe { libc::adjtimex(&mut t) };
    if state < 0 {
        return ClockState::default();
    }
    ClockState {
        synchronized: Some(state != libc::TIME_ERROR && t.status & libc::STA_UNSYNC == 0),
        max_error_us: Some(t.maxerror as i64),
        est_error_us: Some(t.esterror as i64),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_kernel_answers_with_error_bounds() {
        let s = super::state();
        assert!(s.synchronized.is_some() && s.max_error_us.is_some_and(|e| e >= 0), "{s:?}");
    }
}
