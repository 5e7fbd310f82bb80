//! `storbench io`'s options → the library's jobs (`workload::io::validate`), after `--like`
//! filled them in from a trace; what the library has to say before the run is said here.

use crate::args::SteadyArgs;
use crate::subcommand::io::args::IoJob;
use anyhow::Result;
use storbench_bench::workload::io::options::IoOptions;
pub use storbench_bench::workload::io::validate::{DEFAULT_SIZE, Job, Validated};

/// The job's options as jobs, `--like` filled in first.
pub fn validate(job: &IoJob) -> Result<Validated> {
    let filled;
    let args = match &job.options.like {
        Some(trace) => {
            let fp = crate::subcommand::trace::read_fingerprint(trace)?;
            filled = storbench_bench::workload::io::like::like(&job.options, &fp)
                .map_err(|e| anyhow::anyhow!("--like {}: {e}", trace.display()))?;
            &filled
        }
        None => &job.options,
    };
    let v = storbench_bench::workload::io::validate::validate(args, job.out.name.as_deref())
        .map_err(anyhow::Error::msg)?;
    for note in &v.notes {
        say!("{note}");
    }
    Ok(v)
}

/// io's --steady-state as the other workloads hold theirs.
pub fn steady(args: &IoOptions) -> SteadyArgs {
    SteadyArgs { steady_state: args.steady_state }
}
