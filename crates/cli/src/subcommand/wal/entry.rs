//! wal's registry entry: its subcommand, and what a plan and an evaluation need of a commit
//! path workload.

use super::args::{WalCommand, WalJob};
use crate::measure::Ran;
use crate::plan::configuration::Configuration;
use crate::plan::method::Method;
use crate::registry::kind::{CommandLine, Kind, OfKind, Options};
use anyhow::{Result, bail};
use clap::Args;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::wal::WalOptions;

pub static KIND: Kind =
    Kind::of::<WalJob, WalCommand>(&storbench_bench::workload::wal::entry::WORKLOAD, &["target"]);

impl CommandLine for WalCommand {
    fn command() -> clap::Command {
        let about = "The commit path: small sequential writes, each made durable before the next";
        let long = "\
The commit path of a database: writes of --bs to a log file, each made durable by the sync method
before the next (the write and its sync timed together, in HDR histograms), from --writers at once,
as pg_test_fsync and fio's --fdatasync=1 measure it. Every sync method in turn by default, a bundle
each; then the fastest method whose commits are plausible as durable. A method far faster than
the device can make a write durable (a volatile cache answered) is named in a warning and never
chosen. A failed commit fails the run (exit 1).

Examples:
  storbench wal --target /mnt/log                            # every method, 8k commits, 1 writer
  storbench wal --target /mnt/log --sync-method fdatasync --bs 4k --writers 8
  storbench wal --target /mnt/log --layout growing --runtime 30s --json
  storbench wal --target /mnt/log --sync-method fdatasync --search threads --latency-limit p99<=2ms";
        // After the options: their struct's doc comment would be the command's help.
        WalCommand::augment_args(clap::Command::new(KIND.name)).about(about).long_about(long)
    }

    fn power(&self) -> Option<Option<&str>> {
        Some(self.run.out.power.as_deref())
    }

    fn run(self, stop: &StopFlag) -> Result<Ending> {
        match self.search.search {
            Some(_) => crate::search::run(&self.run.job(), &self.search, stop),
            None => super::run(&self.run.job(), stop),
        }
    }

    fn table(s: &storbench_report::Summary) -> String {
        super::table(s)
    }
}

impl OfKind for WalJob {
    const KIND: &'static Kind = &KIND;
}

impl crate::registry::kind::Flagged for WalJob {
    type Flags = super::args::WalArgs;
}

impl Options for WalJob {
    /// The log file goes in the configuration's directory; the method's measured time and seed
    /// where the workload gives none; fdatasync where it names no method.
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        let o = &self.options;
        let options = WalOptions {
            target: Some(c.target.clone()),
            sync_method: o.sync_method.clone().or_else(|| Some("fdatasync".into())),
            runtime: o.runtime.or(m.measure),
            seed: o.seed.or(m.seed),
            ..o.clone()
        };
        Box::new(self.on(c, options))
    }

    fn expected(&self) -> Duration {
        self.options.expected()
    }

    fn label(&self, swept: Option<&str>) -> String {
        match (&self.options.sync_method, swept) {
            (Some(m), s) if s != Some("sync_method") => format!("{}-{m}", KIND.name),
            _ => KIND.name.into(),
        }
    }

    fn check(&self) -> Result<()> {
        if self.options.sync_method.as_deref() == Some("all") {
            bail!(
                "sync_method = \"all\" runs a bundle per method; in a plan give one, or sweep it with sweep = {{ sync_method = [...] }}"
            );
        }
        super::validate(self).map(drop)
    }

    fn will_write(&self) -> Option<String> {
        let spec = super::validate(self).ok()?;
        Some(format!(
            "a log file of {} in {}, removed after the run",
            storbench_bench::units::human_bytes(spec.file_bytes),
            spec.dir.display()
        ))
    }

    fn name(&mut self, name: String) {
        self.out.name = Some(name);
    }

    fn searching(&self) -> Option<&dyn crate::search::args::Searching> {
        Some(self)
    }

    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        super::measure(self, Some(bundle), stop)
    }
}
