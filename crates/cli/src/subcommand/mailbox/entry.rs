//! mailbox's registry entry: what a plan and an evaluation need of a mailbox workload.

use crate::args::SteadyArgs;
use crate::args::mailbox::{MailboxCommand, MailboxJob};
use crate::measure::Ran;
use crate::plan::configuration::Configuration;
use crate::plan::method::Method;
use crate::registry::kind::{CommandLine, Kind, OfKind, Options, Targets};
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::mailbox::MailboxOptions;

pub static KIND: Kind = Kind::of::<MailboxJob, MailboxCommand>(
    &storbench_bench::workload::mailbox::entry::WORKLOAD,
    &["target", "log_target"],
)
.sweeping(Targets::Key("databases"));

impl CommandLine for MailboxCommand {
    fn command() -> clap::Command {
        let about = "Mailbox: the I/O of Exchange's database engine as Jetstress drives it, judged by Jetstress's thresholds";
        let long = "\
Mailbox: the I/O of Exchange's database engine as Jetstress drives it (database reads and writes,
log writes, background maintenance), judged by Jetstress's thresholds.

Examples:
  storbench mailbox --mailboxes 200 --mailbox-size 250MB --threads 16 --duration 30m
  storbench mailbox --preset 2007 --mailboxes 200 --iops-per-mailbox 0.5 --keep
  storbench mailbox --mailboxes 200 --tune --keep     # the most threads that pass
  storbench mailbox --test backup                     # reuses kept databases
  storbench mailbox verify --target ./storbench-mailbox";
        // After the options: their struct's doc comment would be the command's help.
        MailboxCommand::augment_args(clap::Command::new(KIND.name)).about(about).long_about(long)
    }

    /// A test measures; verifying and recovering do not.
    fn power(&self) -> Option<Option<&str>> {
        self.sub.is_none().then_some(self.run.out.power.as_deref())
    }

    fn run(self, stop: &StopFlag) -> Result<Ending> {
        super::run(self, stop)
    }

    fn table(s: &storbench_report::Summary) -> String {
        super::table::mailbox_table(s)
    }
}

impl OfKind for MailboxJob {
    const KIND: &'static Kind = &KIND;
}

impl crate::registry::kind::Flagged for MailboxJob {
    type Flags = crate::args::mailbox::MailboxArgs;
}

impl Options for MailboxJob {
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        let o = &self.options;
        let options = MailboxOptions {
            target: Some(c.target.join(storbench_bench::target::own_name("storbench-mailbox"))),
            log_target: c.log_target.clone(),
            duration: o.duration.or(m.measure),
            // A test without rounds (a backup, soft recovery, --tune) keeps its fixed window.
            steady_state: if o.has_rounds() { m.steady_state(o.steady_state) } else { o.steady_state },
            max_warmup: o.max_warmup.or(m.warmup),
            seed: o.seed.or(m.seed),
            ..o.clone()
        };
        Box::new(self.on(c, options))
    }

    /// The warm-up usually ends well before its limit; count half of it.
    fn expected(&self) -> Duration {
        let o = &self.options;
        let measured = SteadyArgs { steady_state: o.steady_state }.expected(o.duration.map(|d| d.0));
        measured.unwrap_or_else(|| o.duration_or_default()) + o.max_warmup_or_default() / 2
    }

    fn will_write(&self) -> Option<String> {
        let plan = super::validate::validate(self).ok()?;
        let (data, logs) = plan.space_needed();
        let kept = if plan.keep { "kept" } else { "removed after each run" };
        Some(format!(
            "{} database(s), up to {} with room to grow, in {} and up to {} of logs in {}, {kept}",
            plan.databases,
            storbench_bench::units::human_bytes(data),
            plan.db_dir.display(),
            storbench_bench::units::human_bytes(logs),
            plan.log_dir.display()
        ))
    }

    fn check(&self) -> Result<()> {
        super::check(self)
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
