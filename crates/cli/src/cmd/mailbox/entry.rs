//! mailbox's registry entry: what a plan and an evaluation need of a mailbox workload.

use crate::args::MailboxArgs;
use crate::measure::Ran;
use crate::plan::{Configuration, Method};
use crate::registry::{Kind, OfKind, Options};
use anyhow::Result;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::StopFlag;

pub static KIND: Kind = Kind::of::<MailboxArgs>("mailbox", "a mailbox workload", &["target", "log_target"]);

impl OfKind for MailboxArgs {
    const KIND: &'static Kind = &KIND;
}

impl Options for MailboxArgs {
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        Box::new(MailboxArgs {
            target: Some(c.target.join("storbench-mailbox")),
            log_target: c.log_target.clone(),
            duration: self.duration.or(m.measure),
            max_warmup: self.max_warmup.or(m.warmup),
            seed: self.seed.or(m.seed),
            out: c.output(&self.out),
            ..self.clone()
        })
    }

    /// The warm-up usually ends well before its limit; count half of it.
    fn expected(&self) -> Duration {
        self.duration_or_default() + self.max_warmup_or_default() / 2
    }

    fn will_write(&self) -> Option<String> {
        let plan = super::validate::validate(self).ok()?;
        let (data, logs) = plan.space_needed();
        let kept = if plan.keep { "kept" } else { "removed after each run" };
        Some(format!(
            "{} database(s), up to {} with room to grow, in {} and up to {} of logs in {}, {kept}",
            plan.databases,
            crate::units::human_bytes(data),
            plan.db_dir.display(),
            crate::units::human_bytes(logs),
            plan.log_dir.display()
        ))
    }

    fn check(&self) -> Result<()> {
        super::check(self)
    }

    fn name(&mut self, name: String) {
        self.out.name = Some(name);
    }

    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        super::measure(self, Some(bundle), stop)
    }
}
