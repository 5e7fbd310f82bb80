//! oltp's registry entry: what a plan and an evaluation need of a DVD Store workload.

use crate::args::SteadyArgs;
use crate::args::oltp::{OltpCommand, OltpJob};
use crate::measure::Ran;
use crate::plan::configuration::Configuration;
use crate::plan::method::Method;
use crate::registry::kind::{CommandLine, Kind, OfKind, Options, Targets};
use anyhow::Result;
use clap::Subcommand;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::units::Minutes;
use storbench_bench::workload::oltp::options::OltpOptions;

pub static KIND: Kind = Kind::of::<OltpJob, OltpCommand>(
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

impl OfKind for OltpJob {
    const KIND: &'static Kind = &KIND;
}

impl crate::registry::kind::Flagged for OltpJob {
    type Flags = crate::args::oltp::OltpRunArgs;
}

impl Options for OltpJob {
    /// SQLite in the configuration's target, or its database servers.
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        let o = &self.options;
        let mut options = OltpOptions {
            run_time: o.run_time.or(m.measure.map(|s| Minutes(s.0))),
            steady_state: m.steady_state(o.steady_state),
            warmup_time: o.warmup_time.or(m.warmup.map(|s| Minutes(s.0))),
            seed: o.seed.or(m.seed),
            settle_time: o.settle_time.or(m.idle_settle),
            ..o.clone()
        };
        if c.url.is_empty() {
            options.path = Some(c.target.join(storbench_bench::target::own_name("storbench-ds3.db")));
        } else {
            options.url = c.url.clone();
        }
        Box::new(self.on(c, options))
    }

    fn expected(&self) -> Duration {
        let o = &self.options;
        let measured = SteadyArgs { steady_state: o.steady_state }.expected(o.run_time.map(|m| m.0));
        measured.unwrap_or_else(|| o.run_time_or_default()) + o.warmup_time_or_default()
    }

    fn will_write(&self) -> Option<String> {
        let o = &self.options;
        let size = o.db_size();
        let place = match &o.path {
            Some(path) => format!("{} (SQLite, with a pristine copy beside it)", path.display()),
            None => o.url.iter().map(|u| storbench_bench::secret::redact(u)).collect::<Vec<_>>().join(", "),
        };
        Some(format!("loads DVD Store ({size}) into {place} once, kept; resets it before each run"))
    }

    fn check(&self) -> Result<()> {
        super::check_run_args(self).and_then(|()| super::check_loadable(self))
    }

    /// Its SQLite database stays loaded for the next run (and for a replay on it).
    fn leaves(&self) -> Option<std::path::PathBuf> {
        self.options.path.clone()
    }

    /// Only SQLite needs one; a server keeps its own files.
    fn needs_files(&self, c: &Configuration) -> bool {
        c.url.is_empty()
    }

    fn targets_on(&self, c: &Configuration) -> Option<usize> {
        Some(c.url.len())
    }

    fn use_targets(&mut self, n: usize) {
        self.options.url.truncate(n);
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

    fn searching(&self) -> Option<&dyn crate::search::args::Searching> {
        Some(self)
    }

    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        super::measure(self, Some(bundle), stop)
    }
}
