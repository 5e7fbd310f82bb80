//! The decision from fixed inputs: an io workload on two priced configurations.

use super::requirement::parse;
use super::*;
use crate::evaluation::{Configuration, Headline};
use crate::model::{DirectionResult, IoResults, LatencyNs};
use crate::render::RunData;
use crate::workloads::Results;

pub(crate) use crate::testing::summary;

/// A run of `randread` on `config` at `iops` with a read p99 of `p99_ms` and `watts` active.
fn run(config: &str, rep: u32, iops: f64, p99_ms: f64, watts: f64) -> (RunRecord, RunData) {
    let lat = LatencyNs { p99: (p99_ms * 1e6) as u64, ..LatencyNs::default() };
    let read = DirectionResult { iops, lat_ns: Some(lat), ..DirectionResult::default() };
    let summary = summary("io", Results::Io(IoResults { read, ..IoResults::default() }), true);
    let record = RunRecord {
        id: format!("randread.{config}.r{rep}"),
        workload: "randread".into(),
        kind: "io".into(),
        configuration: config.into(),
        repetition: rep,
        status: RunStatus::Done,
        headline: Some(Headline::new("IOPS", iops, true)),
        active_watts: Some(watts),
        per_watt: Some(iops / watts),
        ..RunRecord::default()
    };
    (record, RunData { summary, series: None, database: None })
}

fn config(name: &str, price: Option<f64>) -> Configuration {
    Configuration {
        name: name.into(),
        target: format!("/mnt/{name}"),
        price,
        currency: price.map(|_| "USD".into()),
        capacity_bytes: Some(2_000_000_000_000),
        ..Configuration::default()
    }
}

/// ssd (12,000 USD): 1,300-1,400 IOPS at p99 0.8 ms, 100 W; hdd (8,000 USD): the IOPS given,
/// p99 4 ms, 150 W.
fn evaluation(hdd_iops: [f64; 3]) -> ReportInput {
    let mut runs: Vec<(RunRecord, RunData)> =
        [1300.0, 1400.0, 1350.0].iter().zip(1..).map(|(v, i)| run("ssd", i, *v, 0.8, 100.0)).collect();
    runs.extend(hdd_iops.iter().zip(1..).map(|(v, i)| run("hdd", i, *v, 4.0, 150.0)));
    let mut evaluation = Evaluation {
        configurations: vec![config("ssd", Some(12_000.0)), config("hdd", Some(8_000.0))],
        runs: runs.iter().map(|r| r.0.clone()).collect(),
        ..Evaluation::default()
    };
    evaluation.mark_reported();
    let runs = runs.into_iter().map(|(r, d)| (r.id, d)).collect();
    ReportInput { evaluation, runs, ..ReportInput::default() }
}

fn reqs(lines: &[(&str, &str)]) -> Vec<Requirement> {
    lines.iter().map(|(k, v)| parse(k, v).unwrap()).collect()
}

#[test]
fn the_configuration_that_meets_every_requirement_is_chosen_and_the_other_says_why_not() {
    let d = decide(
        &evaluation([950.0, 1000.0, 1040.0]),
        &reqs(&[("randread.iops", ">= 1200"), ("io.read_p99_ms", "<= 5")]),
    );
    assert_eq!(d.chosen.as_deref(), Some("ssd"));
    let [ssd, hdd] = &d.configurations[..] else { panic!("{d:?}") };
    assert_eq!((ssd.meets, hdd.meets), (Some(true), Some(false)));
    // The ssd's binding requirement is the one with the least headroom: IOPS 12.5 % above
    // 1,200, against a p99 84 % under 5 ms.
    assert_eq!(ssd.binding.as_deref(), Some("randread.iops >= 1200"));
    assert!((ssd.verdicts[0].margin_pct.unwrap() - 12.5).abs() < 1e-9);
    assert_eq!(hdd.binding.as_deref(), Some("randread.iops >= 1200"));
    assert!(
        d.why.starts_with("ssd meets every requirement, the only one that does, at 12,000 USD."),
        "{}",
        d.why
    );
    assert!(
        d.why.contains("hdd fails randread.iops >= 1200: 1,000.0 IOPS, 17 % short of 1,200"),
        "{}",
        d.why
    );
    assert_eq!(ssd.costs, ["8,888.9 USD per 1,000 IOPS (randread)", "6,000.0 USD per TB"]);
    // The kind names the workload where no label is `io`.
    assert_eq!(ssd.verdicts[1].workload, "randread");
}

#[test]
fn among_several_that_meet_everything_the_cheapest_is_chosen() {
    let d = decide(&evaluation([1250.0, 1300.0, 1280.0]), &reqs(&[("randread.iops", ">= 1200")]));
    assert_eq!(d.chosen.as_deref(), Some("hdd"));
    assert!(d.why.contains("hdd meets every requirement, at the lowest price, 8,000 USD"), "{}", d.why);
    assert!(d.why.contains("ssd also meets every requirement"), "{}", d.why);
    let best: Vec<(&str, &str)> =
        d.best.iter().map(|b| (b.what.as_str(), b.configuration.as_str())).collect();
    assert_eq!(
        best,
        [("lowest price", "hdd"), ("lowest active power", "ssd"), ("best IOPS per watt on randread", "ssd")]
    );
    // The seeds' sentence for the pair; the IOPS ranges overlap here.
    assert_eq!(d.comparisons.len(), 1);
    assert!(
        d.comparisons[0].starts_with("ssd vs hdd on randread: +5.5 % IOPS (not distinguishable"),
        "{:?}",
        d.comparisons
    );
    // Per watt is made of the IOPS: it carries their caveat, in the pair and among the best.
    assert!(
        d.comparisons[0].ends_with(
            "-33 % active power, +58 % IOPS per watt (not distinguishable: the runs' ranges overlap)"
        ),
        "{:?}",
        d.comparisons
    );
    assert!(
        d.best[2].value.ends_with("IOPS/W (not distinguishable: the runs' ranges overlap)"),
        "{:?}",
        d.best
    );
}

/// The evaluation with no price and no power: only headroom can rank.
fn unpriced(hdd_iops: [f64; 3]) -> ReportInput {
    let mut input = evaluation(hdd_iops);
    input.evaluation.configurations.iter_mut().for_each(|c| c.price = None);
    input.evaluation.runs.iter_mut().for_each(|r| (r.active_watts, r.per_watt) = (None, None));
    input
}

#[test]
fn a_lead_in_headroom_within_the_runs_spread_is_a_tie_said_so_and_never_a_win() {
    let needs = reqs(&[("randread.iops", ">= 1200")]);
    // hdd's median (1,390) is above ssd's (1,350), but their ranges overlap: a tie, broken by
    // plan order (ssd first), and said to be one.
    let d = decide(&unpriced([1380.0, 1390.0, 1420.0]), &needs);
    assert_eq!(d.chosen.as_deref(), Some("ssd"), "{}", d.why);
    assert!(d.why.contains("ssd meets every requirement, equal within the runs' spread to hdd"), "{}", d.why);
    assert!(d.why.contains("named first in plan order"), "{}", d.why);
    // Apart beyond the spread, with three runs each: the most headroom wins, as before.
    let d = decide(&unpriced([1500.0, 1520.0, 1510.0]), &needs);
    assert_eq!(d.chosen.as_deref(), Some("hdd"), "{}", d.why);
    assert!(d.why.contains("hdd meets every requirement, with the most headroom"), "{}", d.why);
}

#[test]
fn a_spread_across_the_limit_chooses_nothing_it_cannot_show() {
    // ssd's runs (1,300-1,400) lie either side of 1,380; hdd's are all short of it.
    let d = decide(&evaluation([1150.0, 1210.0, 1250.0]), &reqs(&[("randread.iops", ">= 1380")]));
    assert_eq!(d.chosen, None);
    assert_eq!((d.configurations[0].meets, d.configurations[1].meets), (None, Some(false)));
    assert!(d.why.starts_with("No configuration meets every requirement."), "{}", d.why);
    assert!(
        d.why
            .contains("ssd: randread.iops >= 1380 is not shown either way: 1,300.0–1,400.0 IOPS over 3 runs"),
        "{}",
        d.why
    );
    assert!(d.why.contains("hdd fails randread.iops >= 1380"), "{}", d.why);
}

#[test]
fn the_json_names_the_choice_and_each_verdict() {
    let d = decide(&evaluation([950.0, 1000.0, 1040.0]), &reqs(&[("randread.iops", ">= 1200")]));
    let j = serde_json::to_value(&d).unwrap();
    assert_eq!(j["chosen"], "ssd");
    let v = &j["configurations"][1]["verdicts"][0];
    assert_eq!(
        (&v["requirement"], &v["value"], &v["limit"], &v["met"]),
        (&"randread.iops >= 1200".into(), &1000.0.into(), &1200.0.into(), &false.into())
    );
    assert!((v["margin_pct"].as_f64().unwrap() + 16.666).abs() < 0.01);
    assert_eq!(j["configurations"][0]["meets"], true);
}

#[test]
fn a_storage_during_a_rebuild_is_judged_but_never_chosen() {
    let mut input = evaluation([1250.0, 1300.0, 1280.0]);
    // hdd is ssd's storage during a rebuild (cheaper on paper, as the plan gave no other price).
    let hdd = &mut input.evaluation.configurations[1];
    (hdd.storage, hdd.condition) = (Some("ssd".into()), Some("rebuild".into()));
    let d = decide(&input, &reqs(&[("randread.iops", ">= 1200")]));
    assert_eq!(d.chosen.as_deref(), Some("ssd"));
    assert_eq!(d.configurations[1].meets, Some(true));
    assert!(d.why.contains("hdd (ssd during rebuild) also meets every requirement"), "{}", d.why);
}

/// The evaluation with hdd's runs given these statuses (ssd's all done).
fn hdd_ending(statuses: [RunStatus; 3]) -> ReportInput {
    let mut input = evaluation([1250.0, 1300.0, 1280.0]);
    for (r, s) in input.evaluation.runs.iter_mut().filter(|r| r.configuration == "hdd").zip(statuses) {
        r.status = s;
    }
    input.evaluation.mark_reported();
    input
}

#[test]
fn runs_that_failed_their_own_check_meet_nothing_and_are_never_chosen() {
    // hdd is cheaper and its figures would meet the limit, but every run failed its check.
    let input = hdd_ending([RunStatus::CheckFailed; 3]);
    let d = decide(&input, &reqs(&[("randread.iops", ">= 1200")]));
    assert_eq!(d.chosen.as_deref(), Some("ssd"));
    let hdd = &d.configurations[1];
    assert_eq!(hdd.meets, Some(false));
    assert_eq!(
        hdd.verdicts[0].text,
        "not met: 3 of 3 runs failed (their I/Os or their own check), and meet nothing"
    );
    assert!(d.why.contains("hdd fails: randread: every run failed"), "{}", d.why);
    // Without requirements too: a configuration whose runs all failed is not chosen.
    let d = decide(&input, &[]);
    assert_eq!((d.chosen.as_deref(), d.configurations[1].meets), (Some("ssd"), Some(false)));
    assert!(!d.unmet());
}

#[test]
fn an_incomplete_evaluation_says_so_first_and_chooses_nothing_it_did_not_measure() {
    // hdd, the cheaper, has one run done and two never run: it cannot be chosen.
    let input = hdd_ending([RunStatus::Done, RunStatus::Pending, RunStatus::Interrupted]);
    let d = decide(&input, &reqs(&[("randread.iops", ">= 1200")]));
    assert!(d.why.starts_with("The evaluation is incomplete: 2 of 6 runs did not finish"), "{}", d.why);
    assert_eq!(d.configurations[1].meets, None);
    assert!(d.why.contains("hdd is not shown either way: randread: 2 of 3 runs did not finish"), "{}", d.why);
    assert_eq!(d.chosen.as_deref(), Some("ssd"));
    // Nothing measured in full: nothing chosen, and the requirements are unmet (exit 1).
    let mut none = hdd_ending([RunStatus::Pending; 3]);
    none.evaluation.runs.iter_mut().for_each(|r| r.status = RunStatus::Pending);
    let d = decide(&none, &reqs(&[("randread.iops", ">= 1200")]));
    assert_eq!(d.chosen, None);
    assert!(d.unmet());
}

/// ssd's runs (1,300-1,400 IOPS) with `degraded`'s IOPS as the same storage during vol-rebuild.
fn with_rebuild(degraded: [f64; 3]) -> ReportInput {
    let mut input = evaluation([950.0, 1000.0, 1040.0]);
    let e = &mut input.evaluation;
    let mut rebuild = config("ssd-rebuild", None);
    (rebuild.storage, rebuild.condition) = (Some("ssd".into()), Some("vol-rebuild".into()));
    e.configurations.push(rebuild);
    for (i, v) in degraded.iter().enumerate() {
        let (record, data) = run("ssd-rebuild", i as u32 + 1, *v, 0.8, 100.0);
        e.runs.push(record.clone());
        input.runs.insert(record.id, data);
    }
    input.evaluation.mark_reported();
    input
}

#[test]
fn a_degraded_condition_is_a_requirement_of_the_storage_judged_on_paired_repetitions() {
    let keeps = |pct: &str| reqs(&[("randread.iops", &format!(">= {pct} % of normal during vol-rebuild"))]);
    // Pairs by repetition: 800/1,300, 700/1,400, 900/1,350: 61.5 %, 50 %, 66.7 %.
    let input = with_rebuild([800.0, 700.0, 900.0]);
    let d = decide(&input, &keeps("50"));
    let ssd = &d.configurations[0];
    assert_eq!(ssd.meets, Some(true), "{ssd:?}");
    assert_eq!(ssd.verdicts[0].value, Some(Value::Num(100.0 * 800.0 / 1300.0)), "the median pair");
    assert!(ssd.verdicts[0].text.starts_with("61.54 % of normal, 23 % above 50"), "{}", ssd.verdicts[0].text);
    // A storage nothing measured in that condition does not meet it: a limit nothing measured
    // is not a pass.
    let hdd = &d.configurations[1];
    assert_eq!(hdd.meets, Some(false));
    assert!(hdd.verdicts[0].text.contains("no configuration measured hdd during vol-rebuild"), "{hdd:?}");
    // The degraded configuration is judged by its own requirements, not this one.
    assert!(d.configurations[2].verdicts.is_empty(), "{:?}", d.configurations[2]);
    assert_eq!(d.chosen.as_deref(), Some("ssd"));
    // At 60 %, one pair (50 %) falls short and two hold: not shown either way, so not chosen.
    let d = decide(&input, &keeps("60"));
    assert_eq!(d.configurations[0].meets, None, "{:?}", d.configurations[0]);
    assert_eq!(d.chosen, None);
}

#[test]
fn a_ratio_between_workloads_and_a_condition_read_back_as_they_were_written() {
    for (key, rule, line) in [
        ("oltp.opm", ">= 50 % of normal during vol-rebuild", "oltp.opm >= 50 % of normal during vol-rebuild"),
        ("fire-hose.iops", ">= 4 x time-sync", "fire-hose.iops >= 4 x time-sync"),
    ] {
        let r = parse(key, rule).unwrap();
        assert_eq!(r.to_string(), line);
        assert_eq!(super::requirement::parse_line(line).unwrap(), r, "evaluation.json's line reads back");
    }
    for (rule, says) in [
        ("= 50 % of normal during rebuild", "at least or at most"),
        (">= 50 % of rebuild", "of the normal condition"),
        (">= 4 x time sync", "not a workload label"),
    ] {
        let e = parse("oltp.opm", rule).unwrap_err();
        assert!(e.contains(says), "{rule}: {e}");
    }
}

#[test]
fn a_ratio_between_two_workloads_is_judged_per_configuration_on_paired_repetitions() {
    // On each configuration a second workload, `trickle`, at a quarter of randread's IOPS
    // (ssd) or a half (hdd).
    let mut input = evaluation([950.0, 1000.0, 1040.0]);
    let extra: Vec<(RunRecord, RunData)> = input
        .evaluation
        .runs
        .iter()
        .map(|r| {
            let share = if r.configuration == "ssd" { 0.25 } else { 0.5 };
            let v = r.headline.as_ref().unwrap().value * share;
            let (mut record, data) = run(&r.configuration, r.repetition, v, 1.0, 100.0);
            record.workload = "trickle".into();
            record.id = format!("trickle.{}.r{}", r.configuration, r.repetition);
            (record, data)
        })
        .collect();
    for (record, data) in extra {
        input.evaluation.runs.push(record.clone());
        input.runs.insert(record.id, data);
    }
    input.evaluation.mark_reported();
    let d = decide(&input, &reqs(&[("randread.iops", ">= 3 x trickle")]));
    let [ssd, hdd] = &d.configurations[..] else { panic!("{d:?}") };
    assert_eq!((ssd.meets, hdd.meets), (Some(true), Some(false)), "{d:?}");
    assert_eq!(ssd.verdicts[0].value, Some(Value::Num(4.0)));
    assert_eq!(hdd.verdicts[0].value, Some(Value::Num(2.0)));
}
