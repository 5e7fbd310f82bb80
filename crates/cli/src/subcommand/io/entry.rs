//! io's registry entry: what a plan and an evaluation need of an io workload.

use crate::measure::Ran;
use crate::plan::configuration::Configuration;
use crate::plan::method::Method;
use crate::registry::kind::{CommandLine, Kind, OfKind, Options};
use crate::subcommand::io::args::{IoCommand, IoJob};
use anyhow::Result;
use clap::Args;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::io::options::IoOptions;

pub static KIND: Kind = Kind::of::<IoJob, IoCommand>(
    &storbench_bench::workload::io::entry::WORKLOAD,
    &["target", "allow_device", "force"],
);

impl CommandLine for IoCommand {
    fn command() -> clap::Command {
        let about = "Synthetic I/O: one fio-style job, or a profile set such as the six SQLIO profiles";
        let examples = "\
Examples:
  storbench io --profile sqlio                      # the six SQLIO profiles, 30 s each
  storbench io --rw randread --bs 4k --iodepth 32 --runtime 60s --target /data
  storbench io --rw randrw --rwmix-read 70 --bs 8k/70:64k/30 --random-distribution zipf:1.1
  storbench io --engine null --iodepth 128 --runtime 10s   # the engine's own cost
  storbench io ssd-test.fio --target /mnt/ssd       # fio's job file, on /mnt/ssd";
        // After the options: their struct's doc comment would be the command's help.
        IoCommand::augment_args(clap::Command::new(KIND.name))
            .about(about)
            .long_about(format!("{about}.\n\n{examples}"))
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
        super::table::job_table(s)
    }
}

impl OfKind for IoJob {
    const KIND: &'static Kind = &KIND;
}

impl crate::registry::kind::Flagged for IoJob {
    type Flags = crate::subcommand::io::args::IoArgs;
}

impl Options for IoJob {
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        let o = &self.options;
        let options = IoOptions {
            target: Some(c.target.clone()),
            steady_state: m.steady_state(o.steady_state),
            allow_device: c.allow_device,
            force: c.force,
            runtime: o.runtime.or(m.measure),
            ramp: o.ramp.or(m.warmup),
            seed: o.seed.or(m.seed),
            ..o.clone()
        };
        Box::new(self.on(c, options))
    }

    fn expected(&self) -> Duration {
        let o = &self.options;
        let runtime = o.runtime.map(|r| r.0);
        let steady = super::validate::steady(o).expected(runtime);
        steady.unwrap_or_else(|| runtime.unwrap_or(IoOptions::RUNTIME)) + o.ramp_or_default()
    }

    /// `io-randread-8k-qd4`, or the profile set's name.
    fn label(&self, swept: Option<&str>) -> String {
        let o = &self.options;
        if let Some(profile) = &o.profile {
            return profile.clone();
        }
        let depth = if swept == Some("iodepth") {
            String::new()
        } else {
            format!("-qd{}", o.iodepth.unwrap_or(IoOptions::IODEPTH))
        };
        let rw = o.rw.unwrap_or(IoOptions::RW);
        let bs = o.bs.as_ref().map_or(IoOptions::BS.to_string(), ToString::to_string);
        format!("io-{rw}-{bs}{depth}").replace(['/', ':'], "_")
    }

    fn will_write(&self) -> Option<String> {
        use storbench_bench::target::Action;
        let (v, plan) = super::check(self).ok()?;
        let plan = plan?;
        let writes = v.jobs.iter().any(|j| j.spec.reads.writes());
        let (path, size) = (plan.path.display(), storbench_bench::units::human_bytes(plan.size));
        Some(match plan.action {
            Action::CreateFile => format!("creates and fills {path}, {size}, kept for later runs"),
            Action::RefillPartial => format!("fills {path} again, {size} (a fill was cut short)"),
            Action::ReuseFile if writes => format!("writes into its own {path}, {size}"),
            Action::ReuseFile => return None,
            Action::UseForeignFile if writes => {
                format!("writes into {path}, a file it did not create, {size}")
            }
            Action::UseDevice if writes => format!("overwrites the device {path}, {size}"),
            Action::UseForeignFile | Action::UseDevice => return None,
        })
    }

    fn check(&self) -> Result<()> {
        super::check(self).map(drop)
    }

    /// A block device will do.
    fn needs_files(&self, _c: &Configuration) -> bool {
        false
    }

    fn prepare(&self, stop: &StopFlag) -> Result<()> {
        super::prepare_target(self, stop)
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
