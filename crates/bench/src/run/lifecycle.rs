//! The one way a workload runs: the background streams armed, `start` sets its workers
//! going, the driver (`drive`) closes the intervals and keeps the schedule, `finish` ends the
//! workers and adds what only the workload knows. A workload implements [`Lifecycle`]; [`Lifecycle::run`] is its run, so
//! no workload calls the driver itself, and every one is started, driven and finished alike.

use super::{Beside, Closed, Outcome, RunShape, StopFlag, Workload, drive};
use std::time::Instant;

/// A workload whose workers are running: what the driver needs of it.
pub struct Started<W> {
    /// Warm-up, length, interval and rounds.
    pub plan: RunShape,
    /// What the driver asks for each interval.
    pub work: W,
    /// The instant the workers count their schedule from.
    pub at: Instant,
}

/// The interval data of lifecycle `L`'s workload.
pub type DataOf<L> = <<L as Lifecycle>::Work as Workload>::Data;

/// How lifecycle `L` ends: its outcome with its detail, or why it could not run.
pub type Ended<L> = Result<Outcome<DataOf<L>, <L as Lifecycle>::Detail>, <L as Lifecycle>::Error>;

/// A workload's start and finish around the driver.
pub trait Lifecycle: Sized {
    type Work: Workload;
    /// What only this workload has in its outcome.
    type Detail;
    /// Why it could not start or finish.
    type Error;

    /// Starts the workers (and waits, bounded and stoppable, until they can run).
    fn start(&mut self, stop: &StopFlag) -> Result<Started<Self::Work>, Self::Error>;

    /// Ends the workers after the driver returned `driven`, and adds the detail.
    fn finish(self, work: Self::Work, driven: Outcome<DataOf<Self>>) -> Ended<Self>;

    /// A flag the workload sets when its work is done, which ends the measured phase as a
    /// stop request would (finite work: a backup's last database read); None where the
    /// phase ends by time or by the user's stop only.
    fn done(&self) -> Option<StopFlag> {
        None
    }

    /// The run: start, the driver, finish. `on_interval` sees each closed interval.
    fn run(
        mut self,
        sampler: &mut dyn Beside,
        stop: &StopFlag,
        on_interval: &mut dyn FnMut(&Closed<'_, DataOf<Self>>),
    ) -> Ended<Self> {
        if let Some(streams) = sampler.streams() {
            streams.arm();
        }
        let Started { plan, mut work, at } = self.start(stop)?;
        let ends = self.done().unwrap_or_else(|| stop.clone());
        let driven = drive(&plan, &mut work, at, sampler, &ends, on_interval);
        self.finish(work, driven)
    }
}
