//! What to change, as 004 ends its report: for each configuration, each change the evidence
//! supports, with the figure or the setting that supports it, and none where the evidence is
//! missing. The setup checks that warned (alignment, stripe, block and allocation unit, write
//! cache and flushes, ...), the RAID level against the read/write mix its disks measured, and
//! what a workload's own results show (`Shown::recommendations`: wal's commits too fast to be
//! durable).

use super::ReportInput;
use super::doc::Block;
use super::workload::{Recommendation, present};
use crate::columns::system;
use crate::evaluation::{Configuration, RunStatus};
use crate::setup::Status;

/// The share of writes among the disks' I/Os from which a parity RAID's write penalty
/// dominates (each small write costs RAID 5 four device I/Os, RAID 10 two).
const WRITE_HEAVY: f64 = 0.30;

/// The section, headed at `level`; none where nothing is to change.
pub(super) fn blocks(input: &ReportInput, level: u8) -> Vec<Block> {
    let all = of(input);
    if all.is_empty() {
        return Vec::new();
    }
    let lines = all.iter().map(|r| format!("{}: {} (because {})", r.configuration, r.change, r.because));
    vec![
        Block::Heading(level, "What to change".into()),
        Block::Para(
            "Each change the measurements or the disclosed setup support, with what supports it; a \
             configuration whose setup or runs say nothing on a point gets no advice on it."
                .into(),
        ),
        Block::List(lines.collect()),
    ]
}

/// Every recommendation, configuration by configuration in plan order.
pub(super) fn of(input: &ReportInput) -> Vec<Recommendation> {
    let mut out: Vec<Recommendation> = Vec::new();
    for c in &input.evaluation.configurations {
        out.extend(from_setup(input, c));
        out.extend(raid_for_mix(input, c));
    }
    for w in present(input) {
        out.extend(w.recommendations(input));
    }
    let order =
        |r: &Recommendation| input.evaluation.configurations.iter().position(|c| c.name == r.configuration);
    out.sort_by_key(order);
    out
}

/// The setup checks that warned, each its own change.
fn from_setup(input: &ReportInput, c: &Configuration) -> Vec<Recommendation> {
    let checks = super::setup::checks_of(input, c).unwrap_or_default();
    checks
        .into_iter()
        .filter(|k| k.status == Status::Warn && !k.change.is_empty())
        .map(|k| Recommendation {
            configuration: c.name.clone(),
            change: k.change,
            because: format!("{} on {}: {}", k.check, k.subject, k.found),
        })
        .collect()
}

/// RAID 10 instead of a parity RAID under a write-heavy mix, as its disks measured it.
fn raid_for_mix(input: &ReportInput, c: &Configuration) -> Option<Recommendation> {
    let (array, level) = super::setup::raid_of(input, c)?;
    let parity = matches!(level.as_str(), "raid4" | "raid5" | "raid6");
    let (reads, writes) = disk_mix(input, c)?;
    let share = writes / (reads + writes);
    let cost = if level == "raid6" {
        "six device I/Os (data and both parities"
    } else {
        "four device I/Os (data and parity"
    };
    (parity && share >= WRITE_HEAVY).then(|| Recommendation {
        configuration: c.name.clone(),
        change: format!(
            "RAID 10 rather than {level} for this mix: each small write costs {level} {cost} read, then \
             written), RAID 10 two writes"
        ),
        because: format!(
            "{array} is {level}, and the runs' disks did {:.0} % writes ({writes:.0} writes and {reads:.0} \
             reads a second on average)",
            share * 100.0
        ),
    })
}

/// The mean disk reads and writes a second over the measured seconds of configuration `c`'s
/// runs that passed, from their series; None where none has the disk counters or did any I/O.
fn disk_mix(input: &ReportInput, c: &Configuration) -> Option<(f64, f64)> {
    let (mut reads, mut writes, mut rows) = (0.0, 0.0, 0usize);
    let passed =
        input.evaluation.runs.iter().filter(|r| r.configuration == c.name && r.status == RunStatus::Done);
    for series in passed.filter_map(|r| input.runs.get(&r.id)?.series.as_ref()) {
        let (Some(r), Some(w)) =
            (series.column(system::DISK_READS_PER_SEC), series.column(system::DISK_WRITES_PER_SEC))
        else {
            continue;
        };
        for i in (0..series.t_s.len()).filter(|&i| series.phase[i] == "measure") {
            if let (Some(r), Some(w)) = (r[i], w[i]) {
                (reads, writes, rows) = (reads + r, writes + w, rows + 1);
            }
        }
    }
    (rows > 0 && reads + writes > 0.0).then(|| (reads / rows as f64, writes / rows as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disclosure::BlockDevice;
    use crate::model::DeviceInfo;
    use crate::render::timeseries::Series;

    /// setup's two configurations, ssd's target on an md `level` array whose passed run's
    /// disks did `reads` and `writes` a second over three measured seconds.
    fn on_raid(level: &str, (reads, writes): (f64, f64), status: RunStatus) -> ReportInput {
        let mut input = super::super::setup::tests::input();
        let d = input.disclosure.as_mut().unwrap();
        d.devices.push(BlockDevice {
            layer: DeviceInfo {
                name: "md0".into(),
                kind: "md".into(),
                raid_level: Some(level.into()),
                ..DeviceInfo::default()
            },
            built_from: vec!["nvme0n1".into()],
            ..BlockDevice::default()
        });
        d.targets[0].device = Some("md0".into());
        d.targets[0].devices = vec!["md0".into()];
        let run = input.evaluation.runs.iter_mut().find(|r| r.configuration == "ssd").unwrap();
        run.status = status;
        let column = |c: crate::columns::Column, v: f64| (c.name.to_string(), vec![Some(v); 4]);
        input.runs.get_mut("oltp.ssd.r1").unwrap().series = Some(Series {
            t_s: vec![1.0, 2.0, 3.0, 4.0],
            // The warm-up's second is not the run's mix.
            phase: ["ramp", "measure", "measure", "measure"].map(String::from).to_vec(),
            columns: vec![
                column(system::DISK_READS_PER_SEC, reads),
                column(system::DISK_WRITES_PER_SEC, writes),
            ],
        });
        input
    }

    fn of_config<'a>(all: &'a [Recommendation], name: &str) -> Vec<&'a Recommendation> {
        all.iter().filter(|r| r.configuration == name).collect()
    }

    #[test]
    fn a_parity_raid_under_a_write_heavy_mix_is_advised_raid_10_with_the_measured_share() {
        let all = of(&on_raid("raid5", (150.0, 150.0), RunStatus::Done));
        let raid: Vec<_> = all.iter().filter(|r| r.change.starts_with("RAID 10")).collect();
        assert_eq!(raid.len(), 1, "{all:?}");
        assert_eq!(raid[0].configuration, "ssd");
        assert!(
            raid[0].because.contains("md0 is raid5") && raid[0].because.contains("50 % writes"),
            "{:?}",
            raid[0]
        );
        assert!(raid[0].because.contains("150 writes and 150 reads a second"), "{:?}", raid[0]);
    }

    #[test]
    fn no_raid_advice_without_its_evidence_a_read_mostly_mix_or_a_mirror() {
        let raid =
            |input: &ReportInput| of(input).into_iter().filter(|r| r.change.starts_with("RAID 10")).count();
        assert_eq!(raid(&on_raid("raid5", (900.0, 100.0), RunStatus::Done)), 0, "10 % writes is read-mostly");
        assert_eq!(raid(&on_raid("raid10", (100.0, 900.0), RunStatus::Done)), 0, "already a mirror");
        // A failed run's mix is not the configuration's evidence, nor is a run without series.
        assert_eq!(raid(&on_raid("raid5", (100.0, 900.0), RunStatus::Failed)), 0);
        let mut no_series = on_raid("raid5", (100.0, 900.0), RunStatus::Done);
        no_series.runs.get_mut("oltp.ssd.r1").unwrap().series = None;
        assert_eq!(raid(&no_series), 0);
        let mut undisclosed = on_raid("raid5", (100.0, 900.0), RunStatus::Done);
        undisclosed.disclosure = None;
        assert!(of(&undisclosed).is_empty(), "without a disclosure nothing is known of the setup");
    }

    #[test]
    fn each_setup_warning_is_a_change_of_its_configuration_with_what_was_found() {
        let all = of(&super::super::setup::tests::input());
        assert!(of_config(&all, "ssd").is_empty(), "a clean setup gets no advice: {all:?}");
        let hdd = of_config(&all, "hdd");
        assert!(
            hdd.iter().any(|r| r.because.starts_with("data-location on oltp: the server's data is on vda")),
            "{hdd:?}"
        );
        assert!(hdd.iter().any(|r| r.because.starts_with("fits-in-memory on oltp")), "{hdd:?}");
        assert!(hdd.iter().all(|r| !r.change.is_empty()));
    }

    #[test]
    fn the_section_is_on_the_decision_screen_where_there_is_one_else_after_the_findings() {
        let input = on_raid("raid6", (100.0, 300.0), RunStatus::Done);
        let md = crate::render::report_markdown(&input);
        let at = md.find("## What to change").expect(&md);
        assert!(at > md.find("## Key findings").unwrap(), "after the findings without a decision");
        assert!(md.contains("ssd: RAID 10 rather than raid6 for this mix"), "{md}");
        let mut decided = input;
        decided.evaluation.requirements = vec!["oltp.opm >= 1".into()];
        let md = crate::render::report_markdown(&decided);
        let at = md.find("### What to change").expect(&md);
        assert!(at > md.find("## Decision").unwrap() && at < md.find("## Key findings").unwrap(), "{md}");
    }
}
