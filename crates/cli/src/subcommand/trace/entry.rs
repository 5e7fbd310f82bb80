//! replay-trace's registry entry: its subcommand, and what a plan and an evaluation need of
//! a replay of a block trace.

use crate::args::trace::{ReplayTraceArgs, ReplayTraceJob};
use crate::measure::Ran;
use crate::plan::configuration::Configuration;
use crate::plan::method::Method;
use crate::registry::kind::{CommandLine, Kind, OfKind, Options};
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::time::Duration;
use storbench_bench::blocktrace::options::ReplayTraceOptions;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;

pub static KIND: Kind = Kind::of::<ReplayTraceJob, ReplayTraceArgs>(
    &storbench_bench::blocktrace::entry::WORKLOAD,
    &["target", "allow_device", "force"],
);

impl CommandLine for ReplayTraceArgs {
    fn command() -> clap::Command {
        let about =
            "Replay a block trace's requests on candidate storage, without the database that made them";
        let long = "\
Issue a trace's reads, writes and flushes again on candidate storage, without the database that
made them: as recorded (each at its time, --speed to scale; latency from that intended time, the
lateness as schedule lag), or --fast at the recorded queue depth; --footprint folds the offsets
into a smaller target. A run like any io job's: its bundle, per-second series, summary and
report. --check captures the replay itself and compares its fingerprint with the trace's.
Discards are counted, not replayed.

Examples:
  storbench replay-trace prod.sbtrace --target /dev/nvme1n1 --allow-device --check
  storbench replay-trace prod.sbtrace --target /mnt/candidate --speed 2 --footprint 10GiB
  storbench replay-trace prod.sbtrace --target /dev/sdc --allow-device --fast --iodepth 32 --json";
        // After the options: their struct's doc comment would be the command's help.
        ReplayTraceArgs::augment_args(clap::Command::new(KIND.name)).about(about).long_about(long)
    }

    fn power(&self) -> Option<Option<&str>> {
        Some(self.out.power.as_deref())
    }

    fn run(self, stop: &StopFlag) -> Result<Ending> {
        super::replay::run(&self.job(), stop)
    }

    fn table(s: &storbench_report::Summary) -> String {
        super::replay::table(s)
    }
}

impl OfKind for ReplayTraceJob {
    const KIND: &'static Kind = &KIND;
}

impl crate::registry::kind::Flagged for ReplayTraceJob {
    type Flags = ReplayTraceArgs;
}

impl Options for ReplayTraceJob {
    fn for_configuration(&self, c: &Configuration, _m: &Method) -> Box<dyn Options> {
        let options = ReplayTraceOptions {
            target: Some(c.target.clone()),
            allow_device: c.allow_device,
            force: c.force,
            ..self.options.clone()
        };
        Box::new(self.on(c, options))
    }

    /// As recorded: the trace's span at its speed; fast: as long as the target takes, guessed
    /// as the same.
    fn expected(&self) -> Duration {
        let o = &self.options;
        let Ok((_, f)) = storbench_bench::blocktrace::job::read_trace(&o.trace) else {
            return Duration::from_secs(60);
        };
        let speed = if o.fast { 1.0 } else { o.speed.unwrap_or(1.0).max(1e-3) };
        Duration::from_secs_f64((f.duration_s / speed).clamp(0.0, 1e7))
    }

    fn label(&self, _swept: Option<&str>) -> String {
        format!("{}-{}{}", KIND.name, self.options.stem(), if self.options.fast { "-fast" } else { "" })
    }

    fn will_write(&self) -> Option<String> {
        let c = super::replay::check(self).ok()?;
        Some(c.will_write())
    }

    fn check(&self) -> Result<()> {
        super::replay::check(self).map(drop)
    }

    /// A block device will do.
    fn needs_files(&self, _c: &Configuration) -> bool {
        false
    }

    fn prepare(&self, stop: &StopFlag) -> Result<()> {
        super::replay::prepare_target(self, stop)
    }

    fn name(&mut self, name: String) {
        self.out.name = Some(name);
    }

    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        super::replay::measure(self, Some(bundle), stop)
    }
}
