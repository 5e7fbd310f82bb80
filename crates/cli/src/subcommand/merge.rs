//! `storbench merge BUNDLE... --out DIR`: one bundle from the bundles of one run's shards
//! (`storbench_bench::merge`), written beside its reports, said on the terminal; a merge with a
//! shard missing is kept and fails (exit 1).

use crate::args::report::MergeArgs;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};
use storbench_bench::run::Ending;
use storbench_report::{ShardsFile, Summary, export};

pub fn run(args: &MergeArgs) -> Result<Ending> {
    if args.bundles.len() < 2 {
        bail!(
            "merge needs the bundles of two or more shards; {} alone is already one bundle",
            args.bundles[0].display()
        );
    }
    let (summary, shards_file) = merge_into(&args.bundles, &args.out)?;
    show(args, &summary, &shards_file);
    // A merge with a shard missing is kept, and fails: it is not the run's whole load.
    Ok(if shards_file.complete { Ending::Ok } else { Ending::CheckFailed })
}

/// Merges the shards' `bundles` into the bundle `out` (made when missing): its summary and
/// what each shard did. Also how an evaluation on a cluster engine makes a run of its shards.
pub fn merge_into(bundles: &[PathBuf], out: &Path) -> Result<(Summary, ShardsFile)> {
    let merged = storbench_bench::merge::merge_bundles(bundles)?;
    if !merged.unknown_columns.is_empty() {
        alert!(
            "the merged timeseries.csv leaves out {}: columns this storbench does not know how to add up \
             (a newer storbench's); merge with the storbench that wrote the shards",
            merged.unknown_columns.join(", ")
        );
    }
    crate::subcommand::report::write_reports(out, &merged.files)?;
    Ok((merged.summary, merged.shards))
}

fn show(args: &MergeArgs, summary: &Summary, file: &ShardsFile) {
    if args.json {
        tell_raw!("{}", export::summary_json(summary));
    } else if let Some(k) = crate::registry::by_name(&summary.workload) {
        tell_raw!("{}\n", (k.table)(summary));
    }
    for missing in &file.missing {
        alert!("incomplete merge: {missing}");
    }
    say!("merged bundle: {}", args.out.display());
}
