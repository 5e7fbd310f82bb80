//! Merges the workers' interval reports into one report per interval, in order.
//!
//! A worker sends interval `i` once it has moved past it, then sends nothing older. Interval
//! `i` is complete when every worker has sent it or finished before reaching it.

use std::collections::BTreeMap;

/// What a worker reports for an interval; merging must be exact and order-independent.
pub trait IntervalData: Default {
    /// The workload's headline figure as `ops` counts it: what steady-state rounds judge.
    const HEADLINE: Headline = Headline { name: "operations/s", per_op_per_s: 1.0 };

    fn merge(&mut self, other: &Self);
    /// Operations completed (their rate, as `HEADLINE`, is what steady-state rounds judge).
    fn ops(&self) -> u64;
}

/// A workload's headline figure, from the operations its intervals count (`IntervalData::ops`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Headline {
    /// As the summary names it: `IOPS`, `OPM`, `transactional IOPS`, `calls/s`.
    pub name: &'static str,
    /// The figure of one operation a second (60 for a per-minute figure such as OPM).
    pub per_op_per_s: f64,
}

impl IntervalData for crate::metrics::Recorder {
    const HEADLINE: Headline = Headline { name: "IOPS", per_op_per_s: 1.0 };

    fn merge(&mut self, other: &Self) {
        crate::metrics::Recorder::merge(self, other)
    }
    fn ops(&self) -> u64 {
        self.ios()
    }
}

struct Pending<T> {
    reports: usize,
    end_ns: u64,
    data: T,
}

/// Pending intervals of all workers.
pub struct Collector<T> {
    /// Next interval each worker will report; `None` once it finished.
    next_index: Vec<Option<u64>>,
    pending: BTreeMap<u64, Pending<T>>,
}

impl<T: IntervalData> Collector<T> {
    pub fn new(workers: usize) -> Self {
        Collector { next_index: vec![Some(0); workers], pending: BTreeMap::new() }
    }

    /// Takes worker `worker`'s report of interval `index`, which ended at `end_ns`.
    pub fn report(&mut self, worker: usize, index: u64, end_ns: u64, data: &T) {
        let p = self.pending.entry(index).or_insert_with(|| Pending {
            reports: 0,
            end_ns: 0,
            data: T::default(),
        });
        p.reports += 1;
        p.end_ns = p.end_ns.max(end_ns);
        p.data.merge(data);
        self.next_index[worker] = Some(index + 1);
    }

    /// Worker `worker` will report nothing more.
    pub fn finish(&mut self, worker: usize) {
        self.next_index[worker] = None;
    }

    pub fn all_finished(&self) -> bool {
        self.next_index.iter().all(Option::is_none)
    }

    /// Intervals every worker has accounted for, oldest first: (index, end_ns, merged data).
    pub fn take_complete(&mut self) -> Vec<(u64, u64, T)> {
        let mut out = Vec::new();
        while let Some(entry) = self.pending.first_entry() {
            let index = *entry.key();
            let waiting = self.next_index.iter().any(|n| matches!(n, Some(next) if *next <= index));
            if waiting {
                break;
            }
            let p = entry.remove();
            out.push((index, p.end_ns, p.data));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::run::Count;

    #[test]
    fn an_interval_is_emitted_only_when_every_live_worker_reported_it() {
        let mut c = Collector::<Count>::new(2);
        c.report(0, 0, 1_000, &Count(5));
        assert!(c.take_complete().is_empty());
        c.report(1, 0, 1_002, &Count(7));
        assert_eq!(c.take_complete(), vec![(0, 1_002, Count(12))]);
    }

    #[test]
    fn a_finished_worker_no_longer_holds_back_later_intervals() {
        let mut c = Collector::<Count>::new(2);
        c.report(0, 0, 10, &Count(1));
        c.report(1, 0, 10, &Count(1));
        c.finish(1);
        c.report(0, 1, 20, &Count(3));
        c.report(0, 2, 30, &Count(4));
        let got: Vec<u64> = c.take_complete().into_iter().map(|(i, _, d)| i * 100 + d.0).collect();
        assert_eq!(got, vec![2, 103, 204]);
        c.finish(0);
        assert!(c.all_finished());
    }
}
