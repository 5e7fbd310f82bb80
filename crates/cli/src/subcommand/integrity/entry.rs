//! integrity's registry entry: what a plan and an evaluation need of an integrity workload.

use crate::args::integrity::{IntegrityCommand, IntegrityJob};
use crate::measure::Ran;
use crate::plan::configuration::Configuration;
use crate::plan::method::Method;
use crate::registry::kind::{CommandLine, Kind, OfKind, Options};
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::integrity::IntegrityOptions;

pub static KIND: Kind = Kind::of::<IntegrityJob, IntegrityCommand>(
    &storbench_bench::workload::integrity::entry::WORKLOAD,
    &["target", "allow_device", "force", "journal_dir"],
);

impl CommandLine for IntegrityCommand {
    fn command() -> clap::Command {
        let about = "Integrity: a SQLIOSim-class stress that proves the storage keeps what it acknowledged";
        let long = "\
Integrity: a SQLIOSim-class stress that proves the storage keeps what it acknowledged. A data file
and a log file driven as a database server drives them (random user I/O, read-ahead, bulk writes,
the lazy writer, the log writer, growth and shrink), every page checked when read and audited at
the end against a journal of acknowledged writes. Errors by class (lost writes, stale reads, torn
and misplaced pages, checksum, read and write errors) go to errors.jsonl in the bundle; any error
fails the run (exit 1).

Examples:
  storbench integrity --target /data                 # 004's small set, 5 minutes
  storbench integrity --preset big --duration 20m --target /data
  storbench integrity --data-size 64MB --data-max 128MB --data-growth 16MB --log-size 8MB
  storbench integrity --keep && storbench integrity verify --target .";
        // After the options: their struct's doc comment would be the command's help.
        IntegrityCommand::augment_args(clap::Command::new(KIND.name)).about(about).long_about(long)
    }

    /// A run measures; verifying does not.
    fn power(&self) -> Option<Option<&str>> {
        self.sub.is_none().then_some(self.run.out.power.as_deref())
    }

    fn run(self, stop: &StopFlag) -> Result<Ending> {
        super::run(self, stop)
    }

    fn table(s: &storbench_report::Summary) -> String {
        super::table::integrity_table(s)
    }
}

impl OfKind for IntegrityJob {
    const KIND: &'static Kind = &KIND;
}

impl crate::registry::kind::Flagged for IntegrityJob {
    type Flags = crate::args::integrity::IntegrityArgs;
}

impl Options for IntegrityJob {
    /// The stress has no warm-up: an error counts whenever it happens.
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        let o = &self.options;
        let options = IntegrityOptions {
            target: Some(c.target.join(storbench_bench::target::own_name("storbench-integrity"))),
            duration: o.duration.or(m.measure),
            seed: o.seed.or(m.seed),
            ..o.clone()
        };
        Box::new(self.on(c, options))
    }

    fn expected(&self) -> Duration {
        self.options.duration()
    }

    fn will_write(&self) -> Option<String> {
        let spec = super::validate::validate(self).ok()?;
        let most = storbench_bench::units::human_bytes(spec.sizes.max_bytes());
        if let Some(device) = &spec.device {
            return Some(format!(
                "overwrites the device {}: a data file and a log of up to {most}",
                device.display()
            ));
        }
        let kept = if self.options.keep { "kept for `integrity verify`" } else { "removed after the run" };
        Some(format!("a data file and a log of up to {most} in all in {}, {kept}", spec.dir.display()))
    }

    fn check(&self) -> Result<()> {
        super::validate::validate(self).map(drop)
    }

    fn keeps_files(&self) -> bool {
        self.options.keep
    }

    fn name(&mut self, name: String) {
        self.out.name = Some(name);
    }

    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        super::measure(self, Some(bundle), stop)
    }
}
