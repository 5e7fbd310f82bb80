//! integrity's registry entry: what a plan and an evaluation need of an integrity workload.

use crate::args::IntegrityArgs;
use crate::measure::Ran;
use crate::plan::{Configuration, Method};
use crate::registry::{Kind, OfKind, Options};
use anyhow::Result;
use std::path::Path;
use std::time::Duration;
use storbench_bench::run::StopFlag;

pub static KIND: Kind = Kind::of::<IntegrityArgs>(
    "integrity",
    "an integrity workload",
    &["target", "allow_device", "force", "journal_dir"],
);

impl OfKind for IntegrityArgs {
    const KIND: &'static Kind = &KIND;
}

impl Options for IntegrityArgs {
    /// The stress has no warm-up: an error counts whenever it happens.
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options> {
        Box::new(IntegrityArgs {
            target: Some(c.target.join("storbench-integrity")),
            duration: self.duration.or(m.measure),
            seed: self.seed.or(m.seed),
            out: c.output(&self.out),
            ..self.clone()
        })
    }

    fn expected(&self) -> Duration {
        self.duration.map_or(IntegrityArgs::DURATION, |d| d.0)
    }

    fn will_write(&self) -> Option<String> {
        let spec = super::validate::validate(self).ok()?;
        let most = crate::units::human_bytes(spec.sizes.max_bytes());
        if let Some(device) = &spec.device {
            return Some(format!(
                "overwrites the device {}: a data file and a log of up to {most}",
                device.display()
            ));
        }
        let kept = if self.keep { "kept for `integrity verify`" } else { "removed after the run" };
        Some(format!("a data file and a log of up to {most} in all in {}, {kept}", spec.dir.display()))
    }

    fn check(&self) -> Result<()> {
        super::validate::validate(self).map(drop)
    }

    fn keeps_files(&self) -> bool {
        self.keep
    }

    fn name(&mut self, name: String) {
        self.out.name = Some(name);
    }

    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran> {
        super::measure(self, Some(bundle), stop)
    }
}
