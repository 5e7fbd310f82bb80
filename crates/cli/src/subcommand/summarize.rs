//! `storbench summarize BUNDLE`: the run's summary built again from the bundle's record alone
//! (`storbench_bench::run::record`), shown as a table (or JSON), and compared with the
//! `summary.json` the run wrote; `--check` exits 1 naming the first field that differs.

use crate::args::report::SummarizeArgs;
use anyhow::{Context, Result};
use storbench_bench::input::{DATA_LIMIT, read_text};
use storbench_bench::run::Ending;
use storbench_bench::run::record::summary::{first_difference, rebuild};
use storbench_report::{Summary, export};

pub fn run(args: &SummarizeArgs) -> Result<Ending> {
    let dir = &args.bundle;
    let rebuilt = rebuild(dir, storbench_bench::workload::registry::rebuild_of)
        .with_context(|| format!("rebuilding the summary of {} from its record", dir.display()))?;
    let text = export::summary_json(&rebuilt);
    let path = dir.join("summary.json");
    let stored = read_text(&path, DATA_LIMIT).with_context(|| format!("reading {}", path.display()))?;
    let stored: serde_json::Value =
        serde_json::from_str(&stored).with_context(|| format!("reading {}", path.display()))?;
    let again: serde_json::Value = serde_json::from_str(&text).context("the rebuilt summary")?;
    if args.json {
        tell_raw!("{text}");
    } else if !args.check {
        tell_raw!("{}\n", table(&rebuilt));
    }
    match first_difference(&stored, &again) {
        None => {
            say!("{}: the record rebuilds summary.json field for field", dir.display());
            Ok(Ending::Ok)
        }
        Some((field, was, now)) => {
            say!("{}: {field} differs: summary.json has {was}, the record gives {now}", dir.display());
            Ok(if args.check { Ending::CheckFailed } else { Ending::Ok })
        }
    }
}

/// The run's table as its command shows it.
fn table(s: &Summary) -> String {
    crate::registry::by_name(&s.workload).map_or_else(String::new, |k| (k.table)(s))
}
