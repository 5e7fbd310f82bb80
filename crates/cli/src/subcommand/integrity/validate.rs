//! The options of `storbench integrity` into the library's `IntegritySpec` (which checks the
//! options themselves, fills in the defaults and finds the files' place: `integrity::place`)
//! beside the results folder. Nothing is written here.

use crate::args::integrity::IntegrityJob;
use anyhow::Result;
use storbench_bench::workload::integrity::{IntegritySpec, place};

/// The run the options describe: the library's checks of them, then where the files go.
pub fn validate(a: &IntegrityJob) -> Result<IntegritySpec> {
    let spec = a.options.spec().map_err(anyhow::Error::msg)?;
    crate::preflight::results_root(a.out.output_dir.as_deref())?;
    let (dir, device) = place::place(&a.options)?;
    Ok(IntegritySpec { dir, device, ..spec })
}
