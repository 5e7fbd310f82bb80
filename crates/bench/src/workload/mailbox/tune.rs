//! Finding the most threads that pass (methodology.md §4, 003's procedure): start from an
//! estimate; while trials pass, go up; when one fails, the last pass is the maximum; when the
//! first fails, go down until one passes; when even one thread fails, use fewer mailboxes.
//! Then the best setting runs three times at full length and the median run is reported.
//!
//! Going up one thread per trial, as the report did by hand, takes dozens of trials on fast
//! storage; this tuner doubles while trials pass and then bisects between the last pass and
//! the first failure. Where pass/fail is monotonic in the thread count it ends at the same
//! count as one-by-one steps, in a logarithmic number of trials.

/// What to run next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuneStep {
    /// A trial at this setting.
    Trial { threads: u32, mailboxes: u64 },
    /// One of the full-length runs of the best setting (`n` of 3).
    Repeat { threads: u32, mailboxes: u64, n: u32 },
    /// Finished: the best setting (its three runs are done).
    Done { threads: u32, mailboxes: u64 },
    /// Even one thread failed with the fewest mailboxes.
    Impossible,
}

#[derive(Debug, Clone)]
pub struct Tuner {
    mailboxes: u64,
    min_mailboxes: u64,
    max_threads: u32,
    /// Highest passing and lowest failing thread counts so far (at the current mailboxes).
    pass: Option<u32>,
    fail: Option<u32>,
    next: u32,
    repeats_done: u32,
    /// Trials run: (threads, mailboxes, pass).
    pub history: Vec<(u32, u64, bool)>,
}

impl Tuner {
    pub fn new(start_threads: u32, mailboxes: u64, max_threads: u32) -> Self {
        Tuner {
            mailboxes,
            min_mailboxes: 50.min(mailboxes),
            max_threads: max_threads.max(1),
            pass: None,
            fail: None,
            next: start_threads.clamp(1, max_threads.max(1)),
            repeats_done: 0,
            history: Vec::new(),
        }
    }

    /// The step to run now.
    pub fn step(&self) -> TuneStep {
        if let Some(best) = self.settled() {
            return if self.repeats_done < 3 {
                TuneStep::Repeat { threads: best, mailboxes: self.mailboxes, n: self.repeats_done + 1 }
            } else {
                TuneStep::Done { threads: best, mailboxes: self.mailboxes }
            };
        }
        if self.fail == Some(1) && self.mailboxes <= self.min_mailboxes {
            return TuneStep::Impossible;
        }
        TuneStep::Trial { threads: self.next, mailboxes: self.mailboxes }
    }

    /// The best count, once the search has closed in on it.
    fn settled(&self) -> Option<u32> {
        match (self.pass, self.fail) {
            (Some(p), Some(f)) if f == p + 1 => Some(p),
            (Some(p), None) if p >= self.max_threads => Some(p),
            _ => None,
        }
    }

    /// Records how the step returned by `step` went.
    pub fn record(&mut self, passed: bool) {
        match self.step() {
            TuneStep::Repeat { .. } => {
                self.repeats_done += 1;
                return;
            }
            TuneStep::Done { .. } | TuneStep::Impossible => return,
            TuneStep::Trial { threads, mailboxes } => self.history.push((threads, mailboxes, passed)),
        }
        let t = self.next;
        if passed {
            self.pass = Some(self.pass.map_or(t, |p| p.max(t)));
        } else {
            self.fail = Some(self.fail.map_or(t, |f| f.min(t)));
        }
        if self.fail == Some(1) && self.pass.is_none() {
            // Even one thread fails: fewer mailboxes (Jetstress sizes in steps of 50).
            if self.mailboxes > self.min_mailboxes {
                self.mailboxes = ((self.mailboxes * 3 / 4) / 50 * 50).max(self.min_mailboxes);
                self.fail = None;
                self.next = 1;
            }
            return;
        }
        self.next = match (self.pass, self.fail) {
            (Some(p), None) => (p * 2).min(self.max_threads),
            (None, Some(f)) => (f / 2).max(1),
            (Some(p), Some(f)) => p + (f - p) / 2,
            (None, None) => t,
        };
    }
}

/// The median of three or more figures' index (the run to report).
pub fn median_index(values: &[f64]) -> Option<usize> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    idx.get(values.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the tuner against a storage that passes up to `limit` threads (0: never).
    fn tune(start: u32, limit: u32, mailboxes: u64) -> (TuneStep, usize) {
        let mut t = Tuner::new(start, mailboxes, 1024);
        for trials in 0..100 {
            match t.step() {
                TuneStep::Trial { threads, .. } => t.record(threads <= limit),
                TuneStep::Repeat { .. } => t.record(true),
                done => return (done, trials),
            }
        }
        panic!("no end");
    }

    #[test]
    fn it_finds_the_same_maximum_as_one_thread_steps_in_few_trials() {
        // 003: 73 threads for 24 HDDs, 17 for 3 SSDs.
        for (start, limit) in [(8, 73), (8, 17), (100, 17), (17, 17), (1, 1)] {
            let (done, trials) = tune(start, limit, 200);
            assert_eq!(done, TuneStep::Done { threads: limit, mailboxes: 200 }, "start {start}");
            assert!(trials <= 16, "{trials} trials from {start} to {limit}");
        }
    }

    #[test]
    fn when_one_thread_fails_it_tries_fewer_mailboxes_and_gives_up_at_fifty() {
        let mut t = Tuner::new(4, 200, 1024);
        let mut seen = Vec::new();
        while let TuneStep::Trial { threads, mailboxes } = t.step() {
            seen.push((threads, mailboxes));
            t.record(false);
        }
        assert_eq!(t.step(), TuneStep::Impossible);
        assert_eq!(seen.first(), Some(&(4, 200)));
        assert!(seen.contains(&(1, 150)) && seen.contains(&(1, 50)), "{seen:?}");
    }

    #[test]
    fn the_median_run_is_the_middle_figure() {
        assert_eq!(median_index(&[3.0, 1.0, 2.0]), Some(2));
        assert_eq!(median_index(&[]), None);
    }
}
