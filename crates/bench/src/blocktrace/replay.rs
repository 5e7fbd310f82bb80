//! A trace's reads and writes issued again on a target, through the same I/O engines as
//! `storbench io`: as recorded (each request at its recorded time, scaled by a speed; its
//! latency counted from that intended time, so a target that falls behind shows it as
//! latency and lateness rather than hiding it), or as fast as possible at a queue depth.
//! Offsets beyond the target, or beyond a smaller footprint, fold back into it. Flushes are
//! replayed as flushes (fdatasync of the target); discards are counted, not replayed.

use super::format::{Op, Record};
use crate::engine::{Completion, Dir, IoEngine, Request};
use crate::metrics::LatencyHistogram;
use crate::run::StopFlag;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// At the recorded times divided by `speed` (2.0: twice as fast).
    AsRecorded { speed: f64 },
    /// Each as soon as fewer than `depth` are in flight.
    Fast { depth: u32 },
}

/// What to replay on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    pub pace: Pace,
    /// Bytes of the target the offsets fold into (the target's size, or less).
    pub span: u64,
    /// O_DIRECT's alignment: offsets and lengths are rounded to it.
    pub align: u32,
    /// The engine's slots (requests in flight at most) and their buffer size.
    pub slots: u32,
    pub max_len: u32,
}

/// What a replay did.
#[derive(Debug, Default)]
pub struct Replayed {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub flushes: u64,
    /// Requests not replayed, by kind (discard, other).
    pub skipped: BTreeMap<&'static str, u64>,
    /// Requests that failed, by error kind.
    pub errors: BTreeMap<&'static str, u64>,
    /// From the first issue to the last completion.
    pub elapsed: Duration,
    /// The recorded time from the first request to the last, scaled by the speed.
    pub recorded: Duration,
    pub read_latency: LatencyHistogram,
    pub write_latency: LatencyHistogram,
    pub flush_latency: LatencyHistogram,
    /// How late each request was issued after its intended time (as recorded only).
    pub lateness: LatencyHistogram,
}

/// A request in flight.
#[derive(Clone, Copy)]
struct InFlight {
    from: Instant,
    dir: Dir,
    len: u32,
}

/// Replays `records` (in issue order) with `engine` on file 0.
pub fn replay<E>(
    records: impl Iterator<Item = Result<Record, E>>,
    engine: &mut dyn IoEngine,
    spec: &Spec,
    stop: &StopFlag,
) -> Result<Replayed, E>
where
    E: From<std::io::Error>,
{
    engine.start()?;
    for slot in 0..spec.slots {
        crate::workload::io::verify::fill_random(engine.buffer(slot), u64::from(slot));
    }
    let mut out = Replayed::default();
    let mut flight: Vec<Option<InFlight>> = vec![None; spec.slots as usize];
    let mut free: Vec<u32> = (0..spec.slots).rev().collect();
    let mut done = Vec::new();
    let start = Instant::now();
    let (mut first_ns, mut last_ns) = (None, 0u64);
    for record in records {
        let r = record?;
        if stop.is_stopped() {
            break;
        }
        let dir = match r.op {
            Op::Read => Dir::Read,
            Op::Write => Dir::Write,
            Op::Flush => Dir::Flush,
            other => {
                *out.skipped.entry(super::fingerprint::op_name(other)).or_default() += 1;
                continue;
            }
        };
        let first = *first_ns.get_or_insert(r.issue_ns);
        last_ns = r.issue_ns;
        let intended = match spec.pace {
            Pace::AsRecorded { speed } => Some(start + scaled(r.issue_ns - first, speed)),
            Pace::Fast { .. } => None,
        };
        let depth = match spec.pace {
            Pace::Fast { depth } => depth.min(spec.slots),
            Pace::AsRecorded { .. } => spec.slots,
        };
        // Wait for the request's time, reaping meanwhile, and for a free slot.
        loop {
            let wait = intended.map(|t| t.saturating_duration_since(Instant::now()));
            let in_flight = spec.slots - free.len() as u32;
            let must_reap = in_flight >= depth;
            if !must_reap && wait.is_none_or(|w| w.is_zero()) {
                break;
            }
            let timeout = if must_reap { None } else { wait };
            engine.submit_and_reap(u32::from(must_reap || in_flight > 0), timeout, &mut done)?;
            reaped(&mut done, &mut flight, &mut free, &mut out);
            if in_flight == 0 && !must_reap {
                std::thread::sleep(wait.unwrap_or_default().min(Duration::from_millis(1)));
            }
        }
        let now = Instant::now();
        if let Some(t) = intended {
            out.lateness.record(now.saturating_duration_since(t).as_nanos() as u64);
        }
        let slot = free.pop().expect("a free slot after the wait");
        let (len, offset) = match dir {
            Dir::Flush => (0, 0),
            _ => {
                let len = round_up(r.bytes.max(1), spec.align).min(spec.max_len);
                (len, fold(r.offset(), len, spec))
            }
        };
        flight[slot as usize] = Some(InFlight { from: intended.unwrap_or(now), dir, len });
        engine.queue(Request { slot, file: 0, dir, offset, len });
        engine.submit_and_reap(0, Some(Duration::ZERO), &mut done)?;
        reaped(&mut done, &mut flight, &mut free, &mut out);
    }
    while free.len() < spec.slots as usize {
        engine.submit_and_reap(1, None, &mut done)?;
        reaped(&mut done, &mut flight, &mut free, &mut out);
    }
    out.elapsed = start.elapsed();
    let speed = match spec.pace {
        Pace::AsRecorded { speed } => speed,
        Pace::Fast { .. } => 1.0,
    };
    out.recorded = scaled(last_ns.saturating_sub(first_ns.unwrap_or(0)), speed);
    Ok(out)
}

fn scaled(ns: u64, speed: f64) -> Duration {
    Duration::from_nanos((ns as f64 / speed) as u64)
}

fn round_up(x: u32, align: u32) -> u32 {
    x.div_ceil(align.max(1)) * align.max(1)
}

/// `offset` folded into the span, aligned, with room for `len`.
fn fold(offset: u64, len: u32, spec: &Spec) -> u64 {
    let align = u64::from(spec.align.max(1));
    let room = spec.span.saturating_sub(u64::from(len)).max(1);
    let at = if offset + u64::from(len) <= spec.span { offset } else { offset % room };
    at / align * align
}

/// Counts the completions in `done` and frees their slots.
fn reaped(
    done: &mut Vec<Completion>,
    flight: &mut [Option<InFlight>],
    free: &mut Vec<u32>,
    out: &mut Replayed,
) {
    let now = Instant::now();
    for c in done.drain(..) {
        let Some(f) = flight[c.slot as usize].take() else { continue };
        free.push(c.slot);
        if let Some(kind) = c.failure(f.len) {
            *out.errors.entry(kind).or_default() += 1;
            continue;
        }
        let ns = now.saturating_duration_since(f.from).as_nanos() as u64;
        match f.dir {
            Dir::Read => {
                out.reads += 1;
                out.bytes_read += u64::from(f.len);
                out.read_latency.record(ns);
            }
            Dir::Write => {
                out.writes += 1;
                out.bytes_written += u64::from(f.len);
                out.write_latency.record(ns);
            }
            Dir::Flush => {
                out.flushes += 1;
                out.flush_latency.record(ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineKind, open};

    fn rec(issue_ms: u64, offset_kib: u64, kib: u32, op: Op) -> Result<Record, std::io::Error> {
        Ok(Record {
            issue_ns: issue_ms * 1_000_000,
            sector: offset_kib * 2,
            bytes: kib * 1024,
            latency_us: 10,
            op,
            flags: 0,
            pid: 0,
        })
    }

    fn spec(pace: Pace) -> Spec {
        Spec { pace, span: 1 << 20, align: 512, slots: 8, max_len: 64 << 10 }
    }

    #[test]
    fn as_recorded_keeps_the_recorded_timing_scaled_by_the_speed() {
        let trace = || {
            vec![
                rec(0, 0, 4, Op::Read),
                rec(100, 8, 4, Op::Write),
                rec(200, 16, 4, Op::Read),
                rec(200, 0, 0, Op::Flush),
            ]
        };
        let mut e = open(EngineKind::Null, None, 8, 64 << 10).unwrap().engine;
        let out =
            replay(trace().into_iter(), e.as_mut(), &spec(Pace::AsRecorded { speed: 2.0 }), &StopFlag::new())
                .unwrap();
        assert_eq!((out.reads, out.writes, out.bytes_written, out.flushes), (2, 1, 4096, 1));
        assert!(out.skipped.is_empty(), "{:?}", out.skipped);
        assert_eq!(out.recorded, Duration::from_millis(100));
        assert!(
            out.elapsed >= Duration::from_millis(100) && out.elapsed < Duration::from_millis(400),
            "{:?}",
            out.elapsed
        );
        let mut e = open(EngineKind::Null, None, 8, 64 << 10).unwrap().engine;
        let fast = replay(trace().into_iter(), e.as_mut(), &spec(Pace::Fast { depth: 4 }), &StopFlag::new())
            .unwrap();
        assert!(fast.elapsed < Duration::from_millis(50), "{:?}", fast.elapsed);
    }

    #[test]
    fn offsets_past_the_span_fold_into_it_aligned() {
        let s = spec(Pace::Fast { depth: 1 });
        assert_eq!(fold(4096, 4096, &s), 4096);
        let folded = fold((5 << 20) + 4096 + 100, 4096, &s);
        assert!(folded + 4096 <= 1 << 20 && folded.is_multiple_of(512), "{folded}");
        assert_eq!(round_up(1000, 512), 1024);
    }
}
