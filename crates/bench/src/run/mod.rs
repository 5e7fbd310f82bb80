//! The run lifecycle every workload shares, driven by `drive` (driver.rs): a warm-up that is
//! excluded from the results (ended by time or by the workload's own test), a measured phase
//! ended by time, by work done or by a stop request, intervals aligned to the start of the
//! measured phase, storbench's own CPU time, steady state (SNIA PTS rounds), the no-progress
//! rule (a run whose workers get nothing done for a stated limit ends as failed), one
//! `Outcome`, settling the device before a run, the one pacer of every paced workload and its
//! schedule lag (`pace`), and the exact record of a run with the summaries built from it
//! (`record`), one run into its bundle, the same for every workload (`measure`), and one
//! planned run of an evaluation, from its empty record to its figures (`planned`).

pub mod bundle;
mod clock;
mod collector;
mod command_stream;
mod cpu;
mod driver;
mod lifecycle;
pub mod measure;
pub mod pace;
mod parts;
pub mod planned;
pub mod record;
mod schedule;
pub mod search;
mod settle;
pub mod steady;
pub mod stream;

pub use collector::{Collector, Headline, IntervalData};
pub use command_stream::CommandStream;
pub use cpu::{OwnCpuTime, process_cpu};
pub use driver::{
    Closed, Interval, Length, NO_PROGRESS_LIMIT, Outcome, Pace, Progress, RunShape, SeriesColumn, Take,
    Warmup, Workload, drive,
};
pub use lifecycle::{Lifecycle, Started};
pub use parts::Parts;
pub use planned::{Ending, Ran};
pub use schedule::{IntervalClock, Schedule};
pub use settle::{Settled, settle};
pub use steady::{Rounds, Rule};
pub use stream::{Stream, StreamInterval, Streams, WithStreams};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Asks a running workload to stop; it finishes within about a second, keeping what it
/// measured. Cloned into every thread; checked with a relaxed load on the hot path.
#[derive(Clone, Debug, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    #[inline]
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// What the driver reads beside the workload at each interval boundary: the host's sample
/// (`monitor::SystemSampler` is the real one), and the background streams that run with it.
pub trait Beside {
    fn sample(&mut self) -> storbench_report::SystemSample;

    /// The run's background streams, where it has any.
    fn streams(&mut self) -> Option<&mut Streams> {
        None
    }
}

impl Beside for crate::monitor::SystemSampler {
    fn sample(&mut self) -> storbench_report::SystemSample {
        crate::monitor::SystemSampler::sample(self)
    }
}

/// Interval data for tests: a count of operations.
#[cfg(test)]
#[derive(Default, Debug, PartialEq, Clone)]
pub(crate) struct Count(pub u64);

#[cfg(test)]
impl IntervalData for Count {
    fn merge(&mut self, other: &Self) {
        self.0 += other.0;
    }
    fn ops(&self) -> u64 {
        self.0
    }
}
