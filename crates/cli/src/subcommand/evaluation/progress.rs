//! The evaluation's progress line: which run of how many, elapsed time and an ETA from the
//! runs' planned lengths, corrected by how long the finished ones really took.

use super::short;
use crate::plan::configuration::Configuration;
use crate::plan::expand::PlannedRun;
use crate::plan::method::Method;
use std::time::{Duration, Instant};

pub struct Eta {
    started: Instant,
    /// Planned seconds of each run still to do, by run index.
    remaining: Vec<(usize, f64)>,
    /// Settle and idle-power time added to every run.
    overhead_s: f64,
    /// Actual / planned seconds over the finished runs.
    planned_done_s: f64,
    actual_done_s: f64,
    total: usize,
    done: usize,
}

impl Eta {
    pub fn new(runs: &[PlannedRun], todo: &[usize], m: &Method) -> Eta {
        let idle = m.idle_power_or_default().as_secs_f64();
        let idle = if crate::power::describe().is_some() { idle } else { 0.0 };
        Eta {
            started: Instant::now(),
            remaining: todo.iter().map(|&i| (i, runs[i].expected.as_secs_f64())).collect(),
            overhead_s: idle + 2.0,
            planned_done_s: 0.0,
            actual_done_s: 0.0,
            total: todo.len(),
            done: 0,
        }
    }

    /// `[3/27, 1m10s elapsed, about 12m left] randread.ssd.r2: randread on ssd, repetition 2`.
    pub fn line(&self, run: &PlannedRun, c: &Configuration) -> String {
        let sweep = run.sweep.as_ref().map(|(k, v)| format!(", {k} = {v}")).unwrap_or_default();
        format!(
            "[{}/{}, {} elapsed, about {} left] {}: {} on {}{sweep}, repetition {}",
            self.done + 1,
            self.total,
            short(self.started.elapsed()),
            short(self.left()),
            run.id,
            run.workload,
            c.name,
            run.repetition
        )
    }

    fn left(&self) -> Duration {
        let planned: f64 = self.remaining.iter().map(|(_, s)| s + self.overhead_s).sum();
        let ratio = if self.planned_done_s > 0.0 { self.actual_done_s / self.planned_done_s } else { 1.0 };
        Duration::from_secs_f64((planned * ratio).max(0.0))
    }

    pub fn done(&mut self, index: usize, took: Duration) {
        if let Some(pos) = self.remaining.iter().position(|(i, _)| *i == index) {
            let (_, planned) = self.remaining.remove(pos);
            self.planned_done_s += planned + self.overhead_s;
            self.actual_done_s += took.as_secs_f64();
        }
        self.done += 1;
    }
}
