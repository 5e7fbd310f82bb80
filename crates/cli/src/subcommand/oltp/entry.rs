//! oltp's registry entry: what a plan and an evaluation need of a DVD Store workload.

use crate::args::{OltpCommand, OltpRunArgs};
use crate::measure::Ran;
use crate::plan::{Configuration, Method};
use crate::registry::{CommandLine, Kind, OfKind, Options, Targets};
use crate::subcommand::Ending;
use anyhow::Result;
use clap::Subcommand;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::StopFlag;
use storbench_bench::units::Minutes;

pub static KIND: Kind = Kind::of::<OltpRunArgs, OltpCommand>(
    &storbench_bench::workload::oltp::entry::WORKLOAD,
    &["path", "url", "backend", "no_reset"],
)
.sweeping(Targets::Configurations);

impl CommandLine for OltpCommand {
    fn command() -> clap::Command {
        let about = "OLTP: the DVD Store 3 e-commerce workload (orders per minute) on SQLite, PostgreSQL or MariaDB/MySQL";
        let examples = "\
Examples:
  storbench oltp load --db-size S                     # SQLite file ./storbench-ds3.db
  storbench oltp run --n-threads 8 --run-time 5 --warmup-time 1
  storbench oltp load --url postgres://postgres@127.0.0.1/ds3 --db-size 1GB
  storbench oltp run --url postgres://postgres@127.0.0.1/ds3 --db-size 1GB --n_threads=16
  storbench oltp check
  storbench oltp gen --db-size M --out ./ds3-data    # DS3's CSV files";
        let oltp = clap::Command::new(KIND.name).about(about).long_about(format!("{about}.\n\n{examples}"));
        OltpCommand::augment_subcommands(oltp).subcommand_required(true).arg_required_else_help(true)
    }

    /// `oltp run` measures; loading and checking do not.
    fn power(&self) -> Option<Option<&str>> {
        match self {
            OltpCommand::Run(a) => Some(a.run.out.power.as_deref()),
            _ => None,
        }
    }

    fn run(self, stop: &StopFlag) -> Result<Ending> {
        super::run(self, stop)
    }

    fn table(s: &storbench_report::Summary) -> String {
        super::table::oltp_table(s)
    }
}

impl OfKind for OltpRunArgs {
    const KIND: &'static Kind = &KIND;
}

impl Options for OltpRunArgs {
    /// SQLite in the configuration's target, or its database servers.
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        let mut out = OltpRunArgs {
            run_time: self.run_time.or(m.measure.map(|s| Minutes(s.0))),
            steady: self.steady.for_method(m),
            warmup_time: self.warmup_time.or(m.warmup.map(|s| Minutes(s.0))),
            seed: self.seed.or(m.seed),
            settle_time: self.settle_time.or(m.idle_settle),
            out: c.output(&self.out),
            ..self.clone()
        };
        if c.url.is_empty() {
            out.db.path = Some(c.target.join(storbench_bench::target::own_name("storbench-ds3.db")));
        } else {
            out.db.url = c.url.clone();
        }
        Box::new(out)
    }

    fn expected(&self) -> Duration {
        let measured = self.steady.expected(self.run_time.map(|m| m.0));
        measured.unwrap_or_else(|| self.run_time_or_default()) + self.warmup_time_or_default()
    }

    fn will_write(&self) -> Option<String> {
        let size = self.db_size.as_deref().unwrap_or(OltpRunArgs::DB_SIZE);
        let place = match &self.db.path {
            Some(path) => format!("{} (SQLite, with a pristine copy beside it)", path.display()),
            None => {
                self.db.url.iter().map(|u| storbench_bench::secret::redact(u)).collect::<Vec<_>>().join(", ")
            }
        };
        Some(format!("loads DVD Store ({size}) into {place} once, kept; resets it before each run"))
    }

    fn check(&self) -> Result<()> {
        super::check_run_args(self).and_then(|()| super::check_loadable(self))
    }

    /// Its SQLite database stays loaded for the next run (and for a replay on it).
    fn leaves(&self) -> Option<std::path::PathBuf> {
        self.db.path.clone()
    }

    /// Only SQLite needs one; a server keeps its own files.
    fn needs_files(&self, c: &Configuration) -> bool {
        c.url.is_empty()
    }

    fn targets_on(&self, c: &Configuration) -> Option<usize> {
        Some(c.url.len())
    }

    fn use_targets(&mut self, n: usize) {
        self.db.url.truncate(n);
    }

    fn prepare(&self, stop: &StopFlag) -> Result<()> {
        super::ensure_loaded(self, stop)
    }

    /// After its reset to the loaded state.
    fn settles_itself(&self) -> bool {
        true
    }

    fn name(&mut self, name: String) {
        self.out.name = Some(name);
    }

    fn searching(&self) -> Option<&dyn crate::search::Searching> {
        Some(self)
    }

    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        super::measure(self, Some(bundle), stop)
    }
}
