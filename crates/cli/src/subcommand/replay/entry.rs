//! replay's registry entry: its subcommand, and what a plan and an evaluation need of a replay.

use super::args::{ReplayCommand, ReplayJob};
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
use storbench_bench::workload::replay::options::{Pacing, ReplayOptions};

pub static KIND: Kind = Kind::of::<ReplayJob, ReplayCommand>(
    &storbench_bench::workload::replay::entry::WORKLOAD,
    &["url", "backend", "password_file"],
);

/// What a fire-hose replay is counted as in an ETA: its length is the database's to decide.
const FIRE_HOSE_GUESS: Duration = Duration::from_secs(60);

impl CommandLine for ReplayCommand {
    fn command() -> clap::Command {
        let about = "Replay: the requests of production logs against a database, fire-hose or paced by the logs' times";
        let long = "\
Replay: the requests of production logs against a database, fire-hose (as fast as it answers, a
bounded number in flight per log) or time-synchronized (at the logs' own times, or faster), each
session on a connection of its own in its order. Reports each request type's calls and response
times and each log's calls per second, as a replay of a site's web servers does.

Examples:
  storbench replay postgresql.csv --url postgres://app@127.0.0.1/shop_copy
  storbench replay web1.csv web2.csv --url postgres://app@db/shop --mode time-sync --speed 2
  storbench replay general.log --url mysql://root@127.0.0.1/shop --database shop --limit 100000
  storbench replay server.log --format pg-stderr --log-line-prefix '%m [%p] %u@%d ' --path shop.db";
        // After the options: their struct's doc comment would be the command's help.
        ReplayCommand::augment_args(clap::Command::new(KIND.name)).about(about).long_about(long)
    }

    fn power(&self) -> Option<Option<&str>> {
        Some(self.args.out.power.as_deref())
    }

    fn run(self, stop: &StopFlag) -> Result<Ending> {
        match self.search.search {
            Some(_) => crate::search::run(&self.args.job(), &self.search, stop),
            None => super::run(&self.args.job(), stop),
        }
    }

    fn table(s: &storbench_report::Summary) -> String {
        super::table::replay_table(s)
    }
}

impl OfKind for ReplayJob {
    const KIND: &'static Kind = &KIND;
}

impl crate::registry::kind::Flagged for ReplayJob {
    type Flags = super::args::ReplayArgs;
}

impl Options for ReplayJob {
    /// The configuration's database servers, or a SQLite file (`path`, relative to its target).
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        let o = &self.options;
        // Time-sync's rate is the log's: it keeps the log's own window.
        let fire_hose = o.pacing() == Pacing::FireHose;
        let steady_state = if fire_hose { m.steady_state(o.steady_state) } else { o.steady_state };
        let mut options = ReplayOptions { steady_state, ..o.clone() };
        if c.url.is_empty() {
            options.path = o.path.as_ref().map(|p| c.target.join(p));
        } else {
            options.url = c.url.clone();
        }
        Box::new(self.on(c, options))
    }

    /// Time-sync: the logs' span at its speed; fire-hose lasts as long as the database takes.
    fn expected(&self) -> Duration {
        // Only time-sync's length follows from the logs: read them for nothing else.
        if self.options.pacing() != Pacing::TimeSync {
            return FIRE_HOSE_GUESS;
        }
        let Ok(checked) = super::validate(self) else { return FIRE_HOSE_GUESS };
        super::preview(&checked, &StopFlag::new())
            .ok()
            .flatten()
            .and_then(|p| p.seconds(checked.spec.mode))
            .map_or(FIRE_HOSE_GUESS, Duration::from_secs_f64)
    }

    fn label(&self, _swept: Option<&str>) -> String {
        format!("{}-{}", KIND.name, self.options.pacing().name())
    }

    fn will_write(&self) -> Option<String> {
        let checked = super::validate(self).ok()?;
        let p = super::preview(&checked, &StopFlag::new()).ok()??;
        let db = super::database(self).ok()?;
        Some(format!(
            "sends {} to {}, which they change as they changed the original",
            super::will_send(&p),
            db.describe()
        ))
    }

    fn check(&self) -> Result<()> {
        super::validate(self)?;
        super::database(self).map(drop)
    }

    /// A SQLite database an earlier workload (oltp) will have loaded is not there yet: only
    /// the logs and options are checked.
    fn check_after(&self, made: &[std::path::PathBuf]) -> Result<()> {
        match &self.options.path {
            Some(path) if made.contains(path) => super::validate(self).map(drop),
            _ => self.check(),
        }
    }

    /// A server needs no filesystem of the configuration's.
    fn needs_files(&self, c: &Configuration) -> bool {
        c.url.is_empty()
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
