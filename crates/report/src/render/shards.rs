//! A merged bundle's shards (`storbench merge`, its `shards.json`): per shard its headline,
//! its measured phase on the merged clock, whether it started late, its errors and whether it
//! was whole, and first, where any is missing or failed, which.

use super::ReportInput;
use super::doc::{Block, Table, num};
use crate::ShardsFile;

/// The shards' section; nothing for a bundle that is not a merge.
pub fn blocks(input: &ReportInput) -> Vec<Block> {
    let Some(file) = &input.shards else { return Vec::new() };
    let (from, to) = file.window_s;
    let mut d = vec![
        Block::Heading(2, "Shards".into()),
        Block::Para(format!(
            "This run is {} shards merged: counts summed and latency histograms merged exactly over \
             their common measured window, seconds {} to {} of the merged run.",
            file.shards.len(),
            num(from),
            num(to)
        )),
    ];
    if !file.complete {
        let mut missing =
            vec!["Incomplete: the merged figures lack what these shards did not measure.".into()];
        missing.extend(file.missing.iter().cloned());
        d.push(Block::List(missing));
    }
    d.push(Block::Table(table(file)));
    d
}

fn table(file: &ShardsFile) -> Table {
    let mut t = Table::new(&[
        "shard",
        "bundle",
        "headline",
        "measured (s)",
        "intervals merged",
        "late start",
        "errors",
        "whole",
    ]);
    for s in &file.shards {
        let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
        t.push(vec![
            s.name.clone(),
            s.bundle.clone(),
            s.headline.clone().unwrap_or_else(|| "-".into()),
            format!("{}–{}", num(s.measured_s.0), num(s.measured_s.1)),
            s.intervals.to_string(),
            yes_no(s.late),
            s.errors.to_string(),
            yes_no(s.complete),
        ]);
    }
    t
}
