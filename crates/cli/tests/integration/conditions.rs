//! Conditions in a plan: one storage measured normally and during an emulated rebuild (a
//! background stream on the same target), end to end, and the report's "Normal and degraded"
//! section checked against the medians evaluation.json holds.

use crate::support::{disk_tempdir, json, only_bundle, refused, storbench};
use std::path::Path;

/// A plan on the directory `t` under `dir`: `ssd` as it is and `ssd-rebuild` beside a 4 MiB/s
/// stream, each running `workload`, with `extra` in ssd-rebuild's table.
fn write_plan(dir: &Path, extra: &str, workload: &str) -> std::path::PathBuf {
    let target = dir.join("t");
    std::fs::create_dir_all(&target).unwrap();
    let text = format!(
        "name = \"degraded\"\n[method]\nidle_settle = 0\npower = \"none\"\nrepetitions = 3\n\
         [[configuration]]\nname = \"ssd\"\ntarget = \"{t}\"\n\
         [[configuration]]\nname = \"ssd-rebuild\"\ntarget = \"{t}\"\n{extra}\n\
         background = [\"io:rate=4MiB,size=8MiB\"]\n{workload}",
        t = target.display()
    );
    let path = dir.join("plan.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const NULL_IO: &str = "[[workload]]\nkind = \"io\"\nlabel = \"nul\"\nengine = \"null\"\nrw = \"randread\"\nruntime = 1\nramp = 0\n";

/// A percentage as the report writes it: one decimal below 10, none above.
fn pct(v: f64) -> String {
    if v.abs() < 10.0 { format!("{:.1} %", v.abs()) } else { format!("{:.0} %", v.abs()) }
}

/// The reported (median) run's headline of `configuration`.
fn median(e: &serde_json::Value, configuration: &str) -> f64 {
    let runs = e["runs"].as_array().unwrap();
    let reported: Vec<&serde_json::Value> =
        runs.iter().filter(|r| r["configuration"] == configuration && r["reported"] == true).collect();
    assert_eq!(reported.len(), 1, "{configuration}: {runs:?}");
    reported[0]["headline"]["value"].as_f64().unwrap()
}

#[test]
fn a_storage_measured_normally_and_during_a_rebuild_is_reported_side_by_side_with_percent_of_best() {
    let tmp = disk_tempdir();
    let plan = write_plan(tmp.path(), "condition = \"vol-rebuild\"", NULL_IO);
    let results = tmp.path().join("results");
    storbench().arg("run").arg(&plan).arg("--output-dir").arg(&results).assert().success();
    let eval = only_bundle(&results);
    let e = json(&std::fs::read(eval.join("evaluation.json")).unwrap());
    let configurations: Vec<(&str, &str)> = e["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["storage"].as_str().unwrap(), c["condition"].as_str().unwrap()))
        .collect();
    assert_eq!(configurations, [("ssd", "normal"), ("ssd", "vol-rebuild")], "{}", e["configurations"]);
    let (normal, degraded) = (median(&e, "ssd"), median(&e, "ssd-rebuild"));
    let best = normal.max(degraded);
    let md = std::fs::read_to_string(eval.join("report.md")).unwrap();
    assert!(md.contains("## Normal and degraded"), "{md}");
    assert!(
        md.contains(
            "| storage | normal IOPS | vol-rebuild IOPS | normal % of best | vol-rebuild % of best | \
             normal MB/s | vol-rebuild MB/s |"
        ),
        "{md}"
    );
    let row = md.lines().find(|l| l.starts_with("| ssd | ")).unwrap_or_else(|| panic!("no ssd row: {md}"));
    let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
    let figure = |cell: &str| cell.replace(',', "").parse::<f64>().unwrap();
    for (cell, median) in [(cells[1], normal), (cells[2], degraded)] {
        assert!((figure(cell) / median - 1.0).abs() < 1e-3, "{cell} is the median {median}: {row}");
    }
    assert_eq!(cells[3..5], [pct(100.0 * normal / best), pct(100.0 * degraded / best)], "{row}");
    assert!(cells[5..].iter().all(|c| figure(c) > 0.0), "each condition's MB/s: {row}");
    let finding = format!("{} of its normal IOPS on nul", pct(100.0 * degraded / normal));
    let said =
        md.lines().find(|l| l.starts_with("- During vol-rebuild, ssd ")).unwrap_or_else(|| panic!("{md}"));
    assert!(said.contains(&finding), "{said}\nwants {finding}");
    let html = std::fs::read_to_string(eval.join("report.html")).unwrap();
    assert!(html.contains("<h2>Normal and degraded</h2>") && html.contains("During vol-rebuild, ssd "));
}

#[test]
fn a_bad_condition_is_refused_naming_the_key_before_anything_is_written() {
    let tmp = disk_tempdir();
    let results = tmp.path().join("results");
    let plan = write_plan(tmp.path(), "condition = \"\"", NULL_IO);
    let said =
        refused(storbench().arg("run").arg(&plan).arg("--output-dir").arg(&results), "condition is empty");
    assert!(said.contains("plan.toml:12:") && said.contains("hint: write a short label"), "{said}");
    let plan = write_plan(tmp.path(), "condition = \"normal\"", NULL_IO);
    let said = refused(
        storbench().arg("run").arg(&plan).arg("--output-dir").arg(&results),
        "configurations `ssd` and `ssd-rebuild` both measure storage `ssd` in condition `normal`",
    );
    assert!(said.contains("give each its own condition"), "{said}");
    assert!(!results.exists() && !tmp.path().join("t/storbench-bg1.dat").exists(), "nothing is written");
}
