//! `storbench plan init`: writes the commented example plan, never over an existing file;
//! `storbench plan check`: everything a run checks first, nothing run.

use crate::root::PlanCommand;
use anyhow::{Context, Result};
use std::io::Write;
use storbench_bench::run::Ending;

pub fn run(c: PlanCommand) -> Result<Ending> {
    match c {
        PlanCommand::Init { file } => {
            let path = storbench_bench::files::resolve_parent(&file)?;
            let mut f = storbench_bench::files::create(&path, storbench_bench::files::How::WRITE)
                .with_context(|| {
                    format!(
                        "creating {} (an existing file is never overwritten; give another name)",
                        file.display()
                    )
                })?;
            f.write_all(crate::plan::init::example().as_bytes())
                .with_context(|| format!("writing {}", file.display()))?;
            say!(
                "wrote {}: set each configuration's target, then: storbench run {}",
                file.display(),
                file.display()
            );
            Ok(Ending::Ok)
        }
        PlanCommand::Check { file } => super::evaluation::check(&file),
    }
}
