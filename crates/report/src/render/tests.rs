//! The reports from fixed inputs: two configurations of three runs each, with series.

use super::compare::{Side, compare_markdown, compare_text};
use super::*;
use crate::evaluation::{Headline, Method, RunRecord, SweepPoint};
use crate::model::{DirectionResult, Host, IoResults, LatencyNs, Phases, TargetInfo, Tool};
use crate::summary::Summary;
use crate::workloads::Results;
use std::collections::BTreeMap;

fn summary(iops: f64) -> Summary {
    let lat = LatencyNs { p50: 200_000, p99: 900_000, ..LatencyNs::default() };
    let read = DirectionResult {
        iops,
        bytes_per_sec: iops * 8192.0,
        lat_ns: Some(lat),
        ..DirectionResult::default()
    };
    Summary {
        schema_version: 1,
        tool: Tool { name: "storbench".into(), version: "0.1.0".into() },
        workload: "io".into(),
        name: "randread".into(),
        complete: true,
        started_at: "2026-01-01T00:00:00Z".into(),
        ended_at: None,
        seed: 1,
        host: Host { hostname: "lab1".into(), ..Host::default() },
        parameters: serde_json::Value::Null,
        target: TargetInfo { path: "/data".into(), ..TargetInfo::default() },
        engine: "io_uring".into(),
        phases: Phases { ramp_s: 1.0, measured_s: 2.0 },
        results: Results::Io(IoResults { read, ..IoResults::default() }),
        cpu: Default::default(),
        warnings: vec![],
        steady_state: None,
        background: Vec::new(),
        search: None,
        shard: None,
    }
}

fn series(iops: f64) -> Series {
    let csv = format!(
        "t_s,phase,read_iops,write_iops,read_lat_p99_us,disk_busy_pct,cpu_user_pct,cpu_system_pct,power_watts\n\
         1.000,ramp,{},0,800,90,10,5,\n2.000,measure,{iops},0,900,95,20,10,\n3.000,measure,{iops},0,950,97,30,10,\n",
        iops / 2.0
    );
    Series::parse(&csv).unwrap()
}

fn run(config: &str, rep: u32, iops: f64, watts: Option<f64>, sweep: Option<u32>) -> RunRecord {
    let sweep = sweep.map(|v| SweepPoint { param: "iodepth".into(), value: v.into() });
    let point = sweep.as_ref().map(|s| format!(".iodepth-{}", s.value)).unwrap_or_default();
    RunRecord {
        id: format!("randread.{config}{point}.r{rep}"),
        workload: "randread".into(),
        kind: "io".into(),
        configuration: config.into(),
        sweep,
        repetition: rep,
        status: RunStatus::Done,
        headline: Some(Headline {
            metric: "IOPS".into(),
            value: iops,
            higher_is_better: true,
            error_rate_pct: None,
        }),
        active_watts: watts,
        idle_watts: watts.map(|w| w * 0.8),
        per_watt: watts.map(|w| iops / w),
        ..RunRecord::default()
    }
}

/// ssd: 1300/1350/1400 IOPS; hdd: 950/1000/1040; power where `watts`.
fn input(runs: Vec<RunRecord>) -> ReportInput {
    let mut evaluation = Evaluation {
        name: "ssd-vs-hdd".into(),
        tool_version: "0.1.0".into(),
        complete: true,
        method: Method { repetitions: 3, window: "fixed".into(), ..Method::default() },
        runs,
        ..Evaluation::default()
    };
    evaluation.mark_reported();
    let runs = evaluation
        .runs
        .iter()
        .filter_map(|r| {
            let v = r.headline.as_ref()?.value;
            Some((r.id.clone(), RunData { summary: summary(v), series: Some(series(v)), database: None }))
        })
        .collect();
    ReportInput { evaluation, runs, ..ReportInput::default() }
}

fn two_configs(hdd: [f64; 3], watts: bool) -> ReportInput {
    let w = |x: f64| watts.then_some(x);
    let mut runs: Vec<RunRecord> =
        [1300.0, 1400.0, 1350.0].iter().zip(1..).map(|(v, i)| run("ssd", i, *v, w(100.0), None)).collect();
    runs.extend(hdd.iter().zip(1..).map(|(v, i)| run("hdd", i, *v, w(150.0), None)));
    input(runs)
}

fn finding_texts(i: &ReportInput) -> Vec<String> {
    findings::of(i).into_iter().map(|f| f.text).collect()
}

#[test]
fn findings_name_the_better_configuration_with_power_and_per_watt() {
    let f = finding_texts(&two_configs([1000.0, 950.0, 1040.0], true));
    assert_eq!(
        f[0],
        "ssd delivered 35 % more IOPS than hdd on randread: 1,350.0 vs 1,000.0 IOPS (medians of 3 and 3 runs)."
    );
    assert_eq!(f[1], "ssd used 33 % less power when active than hdd: 100.0 vs 150.0 W.");
    assert_eq!(f[2], "ssd used 33 % less power when idle than hdd: 80.00 vs 120.0 W.");
    assert_eq!(f[3], "ssd delivered 102 % more IOPS per watt than hdd: 13.50 vs 6.67 IOPS/W.");
}

#[test]
fn runs_that_disagree_widely_are_flagged_unstable_with_the_cause_they_measured() {
    let runs: Vec<RunRecord> =
        [1000.0, 2000.0, 1500.0].iter().zip(1..).map(|(v, i)| run("ssd", i, *v, None, None)).collect();
    let mut i = input(runs);
    // storbench used 3.4 CPU-seconds of the 2 CPUs' 4 over the 2 s measured: 85 %.
    for d in i.runs.values_mut() {
        (d.summary.host.cpus, d.summary.cpu.user_s, d.summary.cpu.sys_s) = (2, 3.0, 0.4);
    }
    let f = findings::of(&i);
    assert!(
        f[0].text.starts_with(
            "ssd on randread is unstable: its 3 runs range 1,000.0–2,000.0 IOPS, 67 % of their median"
        ),
        "{f:?}"
    );
    assert!(f[0].text.contains("likely storbench itself used up to 85 % of the machine's CPU"), "{f:?}");
    assert!(!f[0].claim, "a warning, never a claim");
    // Without a CPU count nothing says why: it says so, and what to do.
    for d in i.runs.values_mut() {
        d.summary.host.cpus = 0;
    }
    let f = findings::of(&i);
    assert!(f[0].text.contains("no cause was measured"), "{f:?}");
    // Runs within a few percent of each other are not flagged.
    let f = findings::of(&two_configs([1000.0, 950.0, 1040.0], true));
    assert!(!f.iter().any(|f| f.text.contains("unstable")), "{f:?}");
}

/// `i` with every run's target on a partition of `disk` (as two directories of one disk).
fn on_one_disk(mut i: ReportInput, disk: &str) -> ReportInput {
    for (n, data) in i.runs.values_mut().enumerate() {
        let device = crate::model::DeviceInfo {
            name: format!("{disk}{}", n % 2 + 1),
            parent: Some(disk.into()),
            ..crate::model::DeviceInfo::default()
        };
        data.summary.target.device = Some(device);
    }
    i
}

#[test]
fn configurations_on_one_disk_are_said_to_share_it_and_their_difference_is_no_finding() {
    let i = on_one_disk(two_configs([1000.0, 950.0, 1040.0], true), "vda");
    let f = findings::of(&i);
    assert_eq!(
        f[0].text,
        "ssd and hdd ran on one disk (vda): they measured the same storage, so no difference \
         between them is a finding (35 % on 1 workload point); give each configuration its own \
         device to compare them."
    );
    assert!(!f[0].claim, "never a claim");
    assert!(!f.iter().any(|f| f.text.contains("delivered")), "no winner: {f:?}");
    let d = crate::decision::decide(&i, &[]);
    assert!(
        d.comparisons[0].ends_with("(both on one disk, vda: not a difference of storage)"),
        "{:?}",
        d.comparisons
    );
    // On disks of their own, the same figures are a finding.
    let f = findings::of(&two_configs([1000.0, 950.0, 1040.0], true));
    assert!(f[0].text.starts_with("ssd delivered 35 % more IOPS than hdd") && f[0].claim, "{f:?}");
}

#[test]
fn each_table_ends_with_its_runs_median_idle_power_where_it_was_measured() {
    let md = report_markdown(&two_configs([1000.0, 950.0, 1040.0], true));
    // ssd's runs idled at 80 W, hdd's at 120 W (each run's idle window before it).
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| median idle (3 runs) |")).collect();
    assert_eq!(rows.len(), 2, "{md}");
    assert!(rows[0].contains("| 80.00 |") && rows[1].contains("| 120.0 |"), "{rows:?}");
    // Without a meter there is no such row.
    let md = report_markdown(&two_configs([1000.0, 950.0, 1040.0], false));
    assert!(!md.contains("median idle"), "{md}");
}

#[test]
fn with_fewer_than_three_runs_the_per_watt_line_carries_the_headlines_caveat() {
    // Two runs each, ranges apart: the headline says it cannot be told from chance, and so
    // does the per-watt figure made of it; neither is claimed. Power itself is read, not
    // derived, and keeps no caveat.
    let mut runs: Vec<RunRecord> =
        [1300.0, 1400.0].iter().zip(1..).map(|(v, i)| run("ssd", i, *v, Some(100.0), None)).collect();
    runs.extend([950.0, 1000.0].iter().zip(1..).map(|(v, i)| run("hdd", i, *v, Some(150.0), None)));
    let f = findings::of(&input(runs));
    let per_watt = f.iter().find(|f| f.text.contains("IOPS per watt")).expect("a per-watt line");
    assert!(
        per_watt.text.ends_with("Fewer than 3 runs each cannot tell this from chance: repeat to confirm.")
    );
    assert!(!per_watt.claim && !f[0].claim, "{f:?}");
    let active = f.iter().find(|f| f.text.contains("power when active")).unwrap();
    assert!(!active.text.contains("Fewer than 3"), "{}", active.text);
}

#[test]
fn a_group_of_one_run_or_of_failed_runs_says_so_instead_of_a_spread() {
    let mut failed = run("hdd", 1, 900.0, None, None);
    failed.status = RunStatus::CheckFailed;
    let md = report_markdown(&input(vec![run("ssd", 1, 1300.0, None, None), failed]));
    assert!(md.contains("One measured run: 1,300.0; with one run its spread is unknown"), "{md}");
    assert!(!md.contains("a range of 0.0 %"), "{md}");
    assert!(md.contains("No run passed: 1 of 1 failed"), "{md}");
}

#[test]
fn a_difference_within_the_spread_is_not_a_finding() {
    let i = two_configs([1290.0, 1330.0, 1380.0], false);
    let f = findings::of(&i);
    assert_eq!(f.len(), 1);
    assert!(!f[0].claim);
    assert!(
        f[0].text.contains("within the run-to-run spread") && f[0].text.ends_with("not a finding."),
        "{}",
        f[0].text
    );
}

#[test]
fn one_configuration_states_its_median_and_spread() {
    let runs = [1300.0, 1400.0, 1350.0].iter().zip(1..).map(|(v, i)| run("ssd", i, *v, None, None)).collect();
    let f = finding_texts(&input(runs));
    assert_eq!(
        f,
        ["ssd on randread: 1,350.0 IOPS (median of 3 runs; min–max 1,300.0–1,400.0, a range of 7.4 %)."]
    );
}

#[test]
fn the_html_report_has_every_repetition_charts_method_and_no_fetches() {
    let html = report_html(&two_configs([1000.0, 950.0, 1040.0], true));
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains(html::GENERATOR));
    // Two reported runs, each with IOPS, latency, disk busy, CPU; no power column values.
    assert_eq!(html.matches("<svg class=\"chart\"").count(), 8, "{html}");
    assert!(html.contains("<body data-charts=\"8\">"));
    assert_eq!(html.matches("<tr class=\"reported\">").count(), 2);
    assert_eq!(html.matches("<td>r").count(), 6);
    assert!(html.contains("Spread over 3 measured runs: median 1,350.0, min–max 1,300.0–1,400.0"));
    assert!(html.contains("No power source: power not measured."));
    assert!(html.contains("class=\"window\""), "the measured phase is shaded");
    for fetch in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(fetch), "the page fetches something: {fetch}");
    }
}

#[test]
fn the_markdown_report_has_the_same_tables_without_charts() {
    let md = report_markdown(&two_configs([1000.0, 950.0, 1040.0], true));
    assert!(md.starts_with(markdown::GENERATOR));
    assert!(!md.contains("<svg"));
    assert!(md.contains("## Key findings\n\n- ssd delivered 35 % more IOPS than hdd"));
    // MB/s beside IOPS, as 002's tables have it.
    assert!(md.contains("| run | status | IOPS | MB/s | read p50 ms | read p99 ms | CPU % | idle W | active W | IOPS/W | reported |"), "{md}");
    assert!(
        md.contains(
            "| r3 | done | 1,350.0 | 11.06 | 0.200 | 0.900 | 35.00 | 80.00 | 100.0 | 13.50 | ◀ median |"
        ),
        "{md}"
    );
    // 002's "% of best" for the test.
    assert!(md.contains("| ssd | 1,350.0 | 100.0 % |\n| hdd | 1,000.0 | 74.1 % |"), "{md}");
    assert!(md.contains("## Appendix: the system under test"));
    assert!(is_own_report(&md) && !is_own_report("# my notes\n"));
}

#[test]
fn a_sweep_gets_a_scaling_curve_per_configuration() {
    let mut runs = Vec::new();
    for (qd, ssd, hdd) in [(1, 100.0, 90.0), (4, 380.0, 200.0), (16, 1200.0, 260.0)] {
        runs.push(run("ssd", 1, ssd, None, Some(qd)));
        runs.push(run("hdd", 1, hdd, None, Some(qd)));
    }
    let i = input(runs);
    let html = report_html(&i);
    assert!(html.contains("randread: median IOPS by iodepth"), "{html}");
    let curve = html.split("randread: median IOPS by iodepth").nth(1).unwrap();
    assert_eq!(curve.split("</svg>").next().unwrap().matches("<circle").count(), 6);
    let f = finding_texts(&i);
    assert!(f[0].starts_with("ssd delivered 11 % more IOPS than hdd on randread at iodepth = 1"), "{f:?}");
    let pairs: Vec<&String> = f.iter().filter(|t| t.contains(" than ")).collect();
    assert!(pairs.len() == 3 && pairs.iter().all(|t| t.contains("Fewer than 3 runs each")), "{f:?}");
    assert!(
        f.contains(
            &"ssd on randread went from 100.0 IOPS at iodepth = 1 to 1,200.0 at iodepth = 16 (12.00x)."
                .to_string()
        ),
        "{f:?}"
    );
    assert!(
        f.iter().any(|t| t.starts_with("hdd on randread went from 90.00 IOPS at iodepth = 1 to 260.0")),
        "{f:?}"
    );
}

#[test]
fn a_single_run_renders_as_a_one_run_evaluation() {
    let data = RunData { summary: summary(500.0), series: Some(series(500.0)), database: None };
    let i = ReportInput::single_run("20260101-randread", data, None);
    assert_eq!(i.evaluation.runs[0].configuration, "lab1:/data");
    assert!(i.evaluation.runs[0].reported);
    let md = report_markdown(&i);
    assert!(
        md.contains("lab1:/data on randread: 500.0 IOPS (one run, so the run-to-run spread is unknown)."),
        "{md}"
    );
    assert!(md.contains("No disclosure.json in the bundle"));
}

#[test]
fn compare_matches_configurations_by_name_and_flags_the_spread() {
    let a = two_configs([1000.0, 950.0, 1040.0], false);
    let b = two_configs([1290.0, 1330.0, 1380.0], false);
    let (sa, sb) = (
        Side { input: &a, name: "A", source: "lab1/eval" },
        Side { input: &b, name: "B", source: "lab2/eval" },
    );
    let text = compare_text(&sa, &sb);
    assert!(text.contains("A = lab1/eval (ssd-vs-hdd, 6 run(s), storbench 0.1.0)"), "{text}");
    // ssd vs ssd is the same; hdd on B is faster than on A by more than the spread.
    assert!(text.contains("A ssd and B ssd differ by 0.0 % in IOPS"), "{text}");
    assert!(text.contains("B hdd delivered 33 % more IOPS than A hdd on randread"), "{text}");
    assert!(text.lines().any(|l| l.contains("-24.8 %") && l.ends_with("B hdd better")), "{text}");
    assert!(compare_markdown(&sa, &sb).contains("| randread (IOPS) | A ssd |"));
}

#[test]
fn two_single_runs_of_one_kind_compare_directly() {
    let one = |v: f64, name: &str| {
        let mut s = summary(v);
        s.name = name.into();
        ReportInput::single_run(name, RunData { summary: s, series: None, database: None }, None)
    };
    let (a, b) = (one(800.0, "qd8"), one(400.0, "qd1"));
    let text = compare_text(
        &Side { input: &a, name: "A", source: "a" },
        &Side { input: &b, name: "B", source: "b" },
    );
    assert!(text.contains("A lab1:/data delivered 100 % more IOPS than B lab1:/data on qd8 / qd1"), "{text}");
    // One run each: the verdict says what the finding says, that it cannot be told from chance.
    assert!(text.contains("A lab1:/data ahead, too few runs to tell") && !text.contains(" better"), "{text}");
}

#[test]
fn oltp_and_mailbox_series_get_their_own_charts() {
    let titles = |results: Results, csv: &str| -> Vec<String> {
        let series = Series::parse(csv).unwrap();
        charts::of(shown(&results), &series, None).into_iter().map(|c| c.title).collect()
    };
    let (oltp, mailbox) = (Results::Oltp(Default::default()), Results::Mailbox(Default::default()));
    let oltp = titles(
        oltp,
        "t_s,phase,opm,order_rt_p50_ms,order_rt_p99_ms,cpu_user_pct\n1,measure,6000,2.5,9.1,40\n",
    );
    assert_eq!(oltp, ["Orders per minute", "Order response time", "CPU"]);
    let csv = "t_s,phase,transactional_iops,db_read_avg_ms,power_watts\n1,measure,300,8.2,95\n";
    assert_eq!(titles(mailbox.clone(), csv), ["Mailbox I/O per second", "Mailbox latency", "Power"]);
    // Mailbox counts its failed I/Os in a column named as integrity's errors: not an integrity chart.
    let failing = titles(mailbox, "t_s,phase,transactional_iops,errors\n1,measure,300,7\n");
    assert_eq!(failing, ["Mailbox I/O per second"]);
}

#[test]
fn an_unfinished_evaluation_lists_pending_and_failed_runs() {
    let mut runs = vec![run("ssd", 1, 1300.0, None, None)];
    runs.push(RunRecord {
        status: RunStatus::Failed,
        error: Some("target full".into()),
        headline: None,
        ..run("ssd", 2, 0.0, None, None)
    });
    runs.push(RunRecord { status: RunStatus::Pending, headline: None, ..run("ssd", 3, 0.0, None, None) });
    runs.push(RunRecord { status: RunStatus::Pending, headline: None, ..run("hdd", 1, 0.0, None, None) });
    let mut i = input(runs);
    i.evaluation.complete = false;
    let md = report_markdown(&i);
    assert!(md.contains("| r2 | failed: target full |"), "{md}");
    assert!(md.contains("| r3 | pending |"), "{md}");
    assert!(md.contains("hdd\n\n| run | status |") && md.contains("No measured run yet."), "{md}");
    assert!(md.contains("incomplete: it shows what finished"), "{md}");
}

/// An integrity evaluation: ssd clean in its three runs, hdd with lost writes and a delayed
/// I/O in one of them.
fn integrity_input() -> ReportInput {
    use crate::model::{AuditResult, IntegrityActivity, IntegrityErrors, IntegrityResults};
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut data = std::collections::BTreeMap::new();
    for (config, iops) in [("ssd", [4000.0, 4100.0, 4200.0]), ("hdd", [300.0, 320.0, 310.0])] {
        for (rep, v) in (1..).zip(iops) {
            let mut r = run(config, rep, v, None, None);
            r.id = format!("integrity.{config}.r{rep}");
            r.workload = "integrity".into();
            r.kind = "integrity".into();
            let bad = config == "hdd" && rep == 2;
            if bad {
                r.status = RunStatus::CheckFailed;
            }
            let results = IntegrityResults {
                pass: !bad,
                iops: v,
                total_io_time_s: if config == "ssd" { 25.5 } else { 880.0 },
                throttled_ios: if config == "ssd" { 0 } else { 12 },
                delayed_ios: u64::from(bad),
                delay_threshold_s: 15.0,
                errors: IntegrityErrors {
                    lost_writes: if bad { 3 } else { 0 },
                    ..IntegrityErrors::default()
                },
                activities: vec![IntegrityActivity {
                    name: "random".into(),
                    reads: 100,
                    ..Default::default()
                }],
                audit: Some(AuditResult {
                    pages_checked: 64_000,
                    seconds: 1.0,
                    bytes_per_sec: 5.0e8,
                    complete: true,
                }),
                data_initial_bytes: 500 << 20,
                data_max_bytes: 1000 << 20,
                ..IntegrityResults::default()
            };
            let mut s = summary(v);
            s.workload = "integrity".into();
            s.results = Results::Integrity(results);
            data.insert(r.id.clone(), RunData { summary: s, series: None, database: None });
            runs.push(r);
        }
    }
    evaluation_of("qualify", 3, runs, data)
}

/// An evaluation `name` of `repetitions` per configuration: `runs`, with the bundles `data`.
fn evaluation_of(
    name: &str,
    repetitions: u32,
    runs: Vec<RunRecord>,
    data: BTreeMap<String, RunData>,
) -> ReportInput {
    let mut evaluation = Evaluation {
        name: name.into(),
        tool_version: "0.1.0".into(),
        complete: true,
        method: Method { repetitions, window: "fixed".into(), ..Method::default() },
        runs,
        ..Evaluation::default()
    };
    evaluation.mark_reported();
    ReportInput { evaluation, runs: data, ..ReportInput::default() }
}

#[test]
fn an_integrity_evaluation_flags_lost_writes_first_and_tabulates_each_configuration() {
    let input = integrity_input();
    let md = report_markdown(&input);
    let findings = &md[md.find("Key findings").unwrap()..md.find("## Results").unwrap()];
    let first = findings.lines().find(|l| l.starts_with("- ")).unwrap();
    assert!(
        first.contains(
            "FAILED: hdd on integrity lost or damaged data it acknowledged: 3 damaged pages (3 lost_writes) \
             in 1 of 3 runs"
        ),
        "{first}"
    );
    assert!(findings.contains("hdd on integrity: 1 I/O outstanding longer than 15 s"), "{findings}");
    assert!(!findings.contains("FAILED: ssd"), "{findings}");
    // The workload's own rule is said for the configuration that passed it too.
    assert!(
        findings.contains("ssd on integrity passed its checks: no lost, stale, torn or misplaced page"),
        "{findings}"
    );
    let section = &md[md.find("## Integrity").expect("an Integrity section")..];
    let row =
        |config: &str| section.lines().find(|l| l.starts_with(&format!("| {config} "))).unwrap().to_string();
    let ssd = row("ssd");
    assert!(ssd.starts_with("| ssd | integrity | 3 |"), "the workload beside the configuration: {ssd}");
    assert!(
        ssd.contains("| 500 → 1000 | 4,100.0 | 25.50 | 0 | 0 (over 15 s) | 0 | 64000 | 500.0 |")
            && ssd.ends_with("| pass |"),
        "{ssd}"
    );
    let hdd = row("hdd");
    assert!(
        hdd.contains("| 880.0 |") && hdd.contains("3 (3 lost_writes)") && hdd.ends_with("| FAIL |"),
        "{hdd}"
    );
    assert!(section.contains("activities of run integrity.ssd.r2"), "{section}");
    // The run with errors is never the reported one.
    assert!(
        section.contains("activities of run integrity.hdd.r") && !section.contains("run integrity.hdd.r2")
    );
    assert!(md.contains("| r2 | check failed: 3 damaged pages (3 lost_writes) |"), "{md}");
}

#[test]
fn an_integrity_summary_round_trips_as_integrity_and_the_other_workloads_do_not_become_it() {
    let input = integrity_input();
    let s = &input.runs["integrity.hdd.r2"].summary;
    let text = serde_json::to_string(s).unwrap();
    let back: Summary = serde_json::from_str(&text).unwrap();
    assert!(matches!(back.results, Results::Integrity(ref r) if r.errors.lost_writes == 3));
    let io: Summary = serde_json::from_str(&serde_json::to_string(&summary(5.0)).unwrap()).unwrap();
    assert!(matches!(io.results, Results::Io(_)));
    // The variants are tried in order and untagged: each must keep its own.
    let others = [
        Results::Oltp(crate::model::OltpResults { opm: 60.0, ..Default::default() }),
        Results::Mailbox(crate::model::MailboxResults { pass: true, ..Default::default() }),
    ];
    for results in others {
        let s = Summary { results: results.clone(), ..summary(5.0) };
        let back: Summary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.results, results);
    }
}

#[test]
fn integrity_results_as_the_file_spells_them_read_back_as_integrity() {
    let results = r#"{"pass": false, "ios": 1000, "iops": 50.0, "bytes": 8192000,
        "total_io_time_s": 12.5, "throttled_ios": 4, "delayed_ios": 1, "delay_threshold_s": 15.0,
        "target_io_ms": 100.0, "lat_ns": null,
        "errors": {"lost_writes": 2, "stale_reads": 0, "torn_pages": 1, "misplaced_pages": 0,
                   "checksum": 0, "read_errors": 0, "write_errors": 0},
        "pages_checked": 900, "activities": [], "audit": null, "data_initial_bytes": 1,
        "data_final_bytes": 1, "data_max_bytes": 2, "log_bytes": 1, "grows": 0, "shrinks": 0}"#;
    let r: Results = serde_json::from_str(results).unwrap();
    let Results::Integrity(r) = r else { panic!("read as another workload: {r:?}") };
    assert_eq!((r.errors.total(), r.throttled_ios, r.crash), (3, 4, None));
}

/// One integrity run of its own: 2 lost writes, a torn page and a delayed I/O where `bad`.
fn integrity_run(bad: bool) -> ReportInput {
    use crate::model::{AuditResult, IntegrityActivity, IntegrityErrors, IntegrityResults};
    let lat = LatencyNs { mean: 2_500_000.0, p99: 40_000_000, ..LatencyNs::default() };
    let activity = |name: &str, reads, writes| IntegrityActivity {
        name: name.into(),
        reads,
        writes,
        iops: (reads + writes) as f64 / 60.0,
        io_time_s: 30.0,
        lat_ns: Some(lat.clone()),
        throttled_ios: 2,
        ..IntegrityActivity::default()
    };
    let errors = IntegrityErrors {
        lost_writes: if bad { 2 } else { 0 },
        torn_pages: u64::from(bad),
        ..IntegrityErrors::default()
    };
    let results = IntegrityResults {
        pass: !bad,
        ios: 12_000,
        iops: 200.0,
        total_io_time_s: 1234.5,
        throttled_ios: 4,
        delayed_ios: u64::from(bad),
        delay_threshold_s: 15.0,
        lat_ns: Some(lat.clone()),
        errors,
        activities: vec![activity("random", 6000, 3000), activity("log_writer", 0, 3000)],
        audit: Some(AuditResult {
            pages_checked: 128_000,
            seconds: 2.0,
            bytes_per_sec: 524.3e6,
            complete: true,
        }),
        data_initial_bytes: 64 << 20,
        data_max_bytes: 128 << 20,
        ..IntegrityResults::default()
    };
    let mut s = summary(200.0);
    s.workload = "integrity".into();
    s.name = "qualify".into();
    s.results = Results::Integrity(results);
    let csv = "t_s,phase,iops,avg_ms,random_iops,random_avg_ms,log_iops,log_avg_ms,data_file_bytes,\
               errors,throttled_ios,delayed_ios,cpu_user_pct\n\
               1,measure,200,2.5,150,3.1,50,0.4,67108864,0,1,0,20\n\
               2,measure,210,2.4,160,3.0,50,0.4,70000000,3,3,1,21\n";
    let data = RunData { summary: s, series: Some(Series::parse(csv).unwrap()), database: None };
    ReportInput::single_run("20260101-qualify", data, None)
}

#[test]
fn a_clean_integrity_run_has_its_sqliosim_row_activities_and_charts() {
    let input = integrity_run(false);
    assert_eq!(input.evaluation.runs[0].status, RunStatus::Done);
    let md = report_markdown(&input);
    assert!(
        md.contains(
            "| lab1:/data | qualify | 1 | 64 → 128 | 200.0 | 1,234.5 | 4 | 0 (over 15 s) | 0 | 128000 | 524.3 | pass |"
        ),
        "{md}"
    );
    assert!(md.contains("| random | 6000 | 3000 | 150.0 | 2.50 | 40.00 | 30.00 | 2 | 0 |"), "{md}");
    assert!(md.contains("| log_writer | 0 | 3000 | 50.00 |"), "{md}");
    assert!(!md.contains("FAILED") && !md.contains("message 833"), "{md}");
    let html = report_html(&input);
    for title in ["Integrity I/O per second", "Integrity latency (mean)", "Integrity data file"] {
        assert!(html.contains(title), "no chart {title}");
    }
}

#[test]
fn an_integrity_run_with_errors_is_flagged_first_and_its_check_failed() {
    let input = integrity_run(true);
    assert_eq!(input.evaluation.runs[0].status, RunStatus::CheckFailed);
    let md = report_markdown(&input);
    let findings = &md[md.find("## Key findings").unwrap()..md.find("## Results").unwrap()];
    let items: Vec<&str> = findings.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(
        items[0].starts_with(
            "- FAILED: lab1:/data on qualify lost or damaged data it acknowledged: 3 damaged pages \
             (2 lost_writes, 1 torn_pages) in 1 of 1 run"
        ),
        "{findings}"
    );
    assert!(
        items[1].contains("1 I/O outstanding longer than 15 s")
            && items[1].contains("I/O requests taking longer than 15 seconds"),
        "{findings}"
    );
    assert!(
        md.contains("| r1 | check failed: 3 damaged pages (2 lost_writes, 1 torn_pages) | 200.0 |"),
        "{md}"
    );
    assert!(md.contains("| 3 (2 lost_writes, 1 torn_pages) | 128000 | 524.3 | FAIL |"), "{md}");
    let html = report_html(&input);
    assert!(html.contains("Integrity errors, throttled and delayed I/Os"), "{html}");
    assert!(html.contains("FAILED: lab1:/data on qualify"));
}

#[test]
fn an_interrupted_integrity_run_that_found_nothing_is_interrupted_not_failed() {
    let mut input = integrity_run(false);
    let data = input.runs.values_mut().next().unwrap();
    let Results::Integrity(r) = &mut data.summary.results else { unreachable!() };
    (r.pass, r.interrupted, r.audit) = (false, true, None);
    data.summary.complete = false;
    let summary = data.summary.clone();
    let input =
        ReportInput::single_run("20260101-qualify", RunData { summary, series: None, database: None }, None);
    assert_eq!(input.evaluation.runs[0].status, RunStatus::Interrupted);
    let md = report_markdown(&input);
    assert!(md.contains("| r1 | interrupted | 200.0 |"), "{md}");
    assert!(!md.contains("FAIL"), "{md}");
    // The same run with damage found before the stop fails; a run that failed without damage
    // (no progress, a damaged journal) fails too, though it is incomplete.
    for (errors, interrupted) in [(1, true), (0, false)] {
        let mut input = integrity_run(false);
        let data = input.runs.values_mut().next().unwrap();
        let Results::Integrity(r) = &mut data.summary.results else { unreachable!() };
        (r.pass, r.interrupted, r.errors.checksum) = (false, interrupted, errors);
        data.summary.complete = false;
        let summary = data.summary.clone();
        let input = ReportInput::single_run(
            "20260101-qualify",
            RunData { summary, series: None, database: None },
            None,
        );
        assert_eq!(input.evaluation.runs[0].status, RunStatus::CheckFailed, "{errors} {interrupted}");
        assert!(report_markdown(&input).contains("| FAIL |"));
    }
}

#[test]
fn control_characters_from_a_bundle_reach_neither_report_raw() {
    let mut i = two_configs([1000.0, 950.0, 1040.0], false);
    i.evaluation.name = "eval\u{1b}[2J".into();
    i.evaluation.configurations = vec![crate::evaluation::Configuration {
        name: "ssd".into(),
        target: "/mnt/t\u{0}x".into(),
        description: Some("RAID\u{0} 10\u{7}".into()),
        own_values: vec!["oltp: n_threads = 73".into()],
        background: vec![],
        ..Default::default()
    }];
    for (what, text) in [("html", report_html(&i)), ("markdown", report_markdown(&i))] {
        assert!(!text.contains(['\u{0}', '\u{1b}', '\u{7}']), "{what} holds a raw control character");
        assert!(text.contains("RAID\\u{0} 10\\u{7}"), "{what}: the description is shown escaped\n{text}");
        assert!(text.contains("its own workload values") && text.contains("oltp: n_threads = 73"), "{what}");
    }
}

#[test]
fn a_run_with_a_background_stream_shows_what_the_stream_did_and_a_run_without_shows_no_section() {
    let mut input = input(vec![run("ssd", 1, 1300.0, None, None)]);
    assert!(!report_markdown(&input).contains("Background streams"));
    let data = input.runs.values_mut().next().unwrap();
    data.summary.background.push(crate::BackgroundResult {
        name: "bg1".into(),
        kind: "io".into(),
        spec: "io:rate=10MiB".into(),
        measured_s: 60.0,
        write_bytes_per_sec: 10_485_760.0,
        write_lat_p99_us: Some(2500.0),
        ..Default::default()
    });
    input.evaluation.configurations = vec![crate::evaluation::Configuration {
        name: "ssd".into(),
        background: vec!["io:rate=10MiB".into()],
        ..Default::default()
    }];
    let md = report_markdown(&input);
    assert!(md.contains("| configuration | target | description | background streams |"), "{md}");
    assert!(md.contains("| ssd |   |   | io:rate=10MiB |"), "{md}");
    assert!(md.contains("## Background streams"), "{md}");
    assert!(
        md.contains("| ssd · randread | bg1 | io:rate=10MiB | 60.00 | 0 | 10.49 | 2.50 ms | 0 |   |"),
        "{md}"
    );
    let data = input.runs.values_mut().next().unwrap();
    let run = |exit_code, stopped| crate::CommandRun {
        command: "mdadm --add".into(),
        exit_code,
        seconds: 42.0,
        stopped,
    };
    for (name, run) in [("bg2", run(Some(3), false)), ("bg3", run(None, true))] {
        let spec = "cmd:mdadm --add".to_string();
        let b = crate::BackgroundResult {
            name: name.into(),
            kind: "cmd".into(),
            spec,
            command: Some(run),
            ..Default::default()
        };
        data.summary.background.push(b);
    }
    let md = report_markdown(&input);
    assert!(md.contains("| bg2 | cmd:mdadm --add | 42.00 | — | — | — | — | exit 3 |"), "{md}");
    assert!(
        md.contains("| bg3 | cmd:mdadm --add | 42.00 | — | — | — | — | stopped at the run's end |"),
        "{md}"
    );
}

/// A replay evaluation: two configurations, two runs each, two request types and two sources.
fn replay_input() -> ReportInput {
    use crate::model::{ReplayResults, ReplaySourceResult, ReplayTypeResult};
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut data = std::collections::BTreeMap::new();
    for (config, max_ms) in [("ssd", [40.0, 60.0]), ("hdd", [400.0, 1000.0])] {
        for (rep, max) in (1..).zip(max_ms) {
            let mut r = run(config, rep, 100.0, None, None);
            r.id = format!("replay.{config}.r{rep}");
            (r.workload, r.kind) = ("replay".into(), "replay".into());
            let login = ReplayTypeResult {
                calls: 100,
                mean_ms: Some(2.0 * f64::from(rep)),
                p99_ms: Some(max / 2.0),
                max_ms: Some(max),
                ..Default::default()
            };
            let browse =
                ReplayTypeResult { calls: 300, mean_ms: Some(1.0), max_ms: Some(5.0), ..Default::default() };
            let source = |name: &str, calls| ReplaySourceResult {
                name: name.into(),
                calls,
                calls_per_sec: calls as f64 / 10.0,
                errors: 0,
            };
            let results = ReplayResults {
                mode: "fire-hose".into(),
                calls: 400,
                calls_per_sec: 40.0,
                by_type: [
                    ("login".to_string(), login),
                    ("browse".to_string(), browse),
                    ("broken".to_string(), ReplayTypeResult { calls: 5, errors: 5, ..Default::default() }),
                ]
                .into(),
                by_source: vec![source("web1.log", 150), source("web2.log", 250)],
                cold_start_s: (config == "hdd" && rep == 2).then_some(3.0),
                ..Default::default()
            };
            let mut s = summary(40.0);
            s.workload = "replay".into();
            s.results = Results::Replay(results);
            data.insert(r.id.clone(), RunData { summary: s, series: None, database: None });
            runs.push(r);
        }
    }
    evaluation_of("replay", 2, runs, data)
}

#[test]
fn a_replay_evaluation_has_002s_tables_per_configuration_with_the_maximum_and_the_mean_of_maxima() {
    let input = replay_input();
    let md = report_markdown(&input);
    let section = &md[md.find("## Replay").expect("a replay section")..];
    let row = |config: &str, name: &str| -> String {
        let at = section.find(&format!("### replay on {config}, 2 runs\n")).unwrap();
        section[at..].lines().find(|l| l.starts_with(&format!("| {name} "))).unwrap().to_string()
    };
    // Table 8: calls per run, the calls-weighted mean, the worst p99, the maximum over the runs
    // and the mean of each run's maximum.
    assert_eq!(row("hdd", "login"), "| login | 100 | 0 | 3.00 | 500.0 | 1,000.0 | 700.0 |");
    assert_eq!(row("ssd", "login"), "| login | 100 | 0 | 3.00 | 30.00 | 60.00 | 50.00 |");
    let part = |config: &str| -> &str {
        let from = section.find(&format!("### replay on {config}")).unwrap();
        let rest = &section[from + 4..];
        &rest[..rest.find("### ").unwrap_or(rest.len())]
    };
    assert!(part("hdd").contains("Cold start in 1 of 2 run(s), up to the first 3.00 s"), "{section}");
    assert!(!part("ssd").contains("Cold start"), "ssd began warm: {section}");
    assert_eq!(row("ssd", "broken"), "| broken | 5 | 5 | — | — | — | — |", "every call failed: no times");
    // Table 7: each source's calls per second and calls, per run.
    assert_eq!(row("ssd", "web2.log"), "| web2.log | 25.00 | 250 | 0 |");
    let back: Summary =
        serde_json::from_str(&serde_json::to_string(&input.runs["replay.ssd.r1"].summary).unwrap()).unwrap();
    assert!(matches!(back.results, Results::Replay(ref r) if r.by_source.len() == 2), "read back as replay");
    // A run that did not pass is in no table, and the heading counts the runs that are.
    let mut failed = replay_input();
    let r2 = failed.evaluation.runs.iter_mut().find(|r| r.id == "replay.hdd.r2").unwrap();
    r2.status = RunStatus::CheckFailed;
    let md = report_markdown(&failed);
    let section = &md[md.find("## Replay").unwrap()..];
    let at = section.find("### replay on hdd, 1 run\n").expect(section);
    let part = &section[at..];
    assert!(
        part.contains("Not in these tables, as they did not pass: replay.hdd.r2 (check failed)."),
        "{part}"
    );
    assert!(!part.contains("Cold start"), "only r2 began cold: {part}");
}

/// Two storages, each normal and during a rebuild (002's Tables 1-6): ssd keeps 30 % of its
/// IOPS (1,050 normal, 315 rebuilding), hdd 93 % (200 and 186), within the runs' spread.
fn normal_and_degraded() -> ReportInput {
    let mut runs = Vec::new();
    let figures = [
        ("ssd", [1000.0, 1100.0, 1050.0]),
        ("ssd-rebuild", [300.0, 330.0, 315.0]),
        ("hdd", [200.0, 210.0, 190.0]),
        ("hdd-rebuild", [186.0, 181.0, 191.0]),
    ];
    for (config, values) in figures {
        runs.extend(values.iter().zip(1..).map(|(v, i)| run(config, i, *v, None, None)));
    }
    let mut i = input(runs);
    i.evaluation.configurations = figures
        .iter()
        .map(|(name, _)| {
            let (storage, condition) = name.split_once('-').unwrap_or((name, "normal"));
            crate::evaluation::Configuration {
                name: name.to_string(),
                condition: Some(condition.into()),
                storage: Some(storage.into()),
                ..Default::default()
            }
        })
        .collect();
    // The rebuilding ssd's reads wait longer.
    for (id, data) in &mut i.runs {
        if let (true, Results::Io(r)) = (id.contains("ssd-rebuild"), &mut data.summary.results) {
            r.read.lat_ns.as_mut().unwrap().p99 = 3_100_000;
        }
    }
    i
}

#[test]
fn a_storage_measured_normal_and_degraded_gets_002s_table_with_percent_of_best() {
    let i = normal_and_degraded();
    let md = report_markdown(&i);
    assert!(md.contains("## Normal and degraded"), "{md}");
    assert!(
        md.contains("ssd: normal (ssd), rebuild (ssd-rebuild); hdd: normal (hdd), rebuild (hdd-rebuild).")
    );
    // io's MB/s beside its IOPS, each condition's from its reported run (8 KiB reads).
    let table = "| storage | normal IOPS | rebuild IOPS | normal % of best | rebuild % of best | normal MB/s | rebuild MB/s |\n\
                 | --- | --- | --- | --- | --- | --- | --- |\n\
                 | ssd | 1,050.0 | 315.0 | 100 % | 30 % | 8.60 | 2.58 |\n\
                 | hdd | 200.0 | 186.0 | 100 % | 93 % | 1.64 | 1.52 |";
    assert!(md.contains(table), "{md}");
    let html = report_html(&i);
    assert!(html.contains("Normal and degraded") && html.contains("<td class=\"n\">30 %</td>"), "{html}");
}

#[test]
fn a_rebuild_finding_says_what_share_was_kept_and_when_it_lies_within_the_spread() {
    let i = normal_and_degraded();
    let f = conditions::findings(&i);
    assert_eq!(f.len(), 2, "{f:?}");
    assert_eq!(
        f[0].text,
        "During rebuild, ssd kept 30 % of its normal IOPS on randread: 315.0 vs 1,050.0 IOPS (medians of 3 \
         and 3 runs). In the reported runs, read p99 went from 0.900 ms to 3.10 ms."
    );
    assert!(f[0].claim);
    assert_eq!(
        f[1].text,
        "During rebuild, hdd kept 93 % of its normal IOPS on randread (186.0 vs 200.0 IOPS), a difference \
         within the runs' spread (rebuild: 181.0–191.0, normal: 190.0–210.0): not a finding. In the \
         reported runs, read p99 went from 0.900 ms to 0.900 ms."
    );
    assert!(!f[1].claim);
    // The storages are compared condition by condition, never a storage with its own rebuild.
    let pairs = finding_texts(&i);
    assert!(pairs[0].starts_with("ssd delivered 425 % more IOPS than hdd on randread"), "{pairs:?}");
    assert!(pairs[1].starts_with("ssd-rebuild delivered 69 % more IOPS than hdd-rebuild"), "{pairs:?}");
    assert_eq!(pairs.len(), 2, "{pairs:?}");
    let md = report_markdown(&i);
    assert!(md.contains(&format!("- {}", f[0].text)), "the findings reach the report: {md}");
}

#[test]
fn without_two_conditions_of_one_storage_the_report_has_no_degraded_section() {
    let mut i = two_configs([1000.0, 950.0, 1040.0], false);
    assert!(!report_markdown(&i).contains("Normal and degraded"));
    // Two storages each in its own condition compare nothing normal with degraded.
    i.evaluation.configurations = ["ssd", "hdd"]
        .map(|name| crate::evaluation::Configuration {
            name: name.into(),
            condition: Some(if name == "ssd" { "normal" } else { "rebuild" }.into()),
            ..Default::default()
        })
        .to_vec();
    let md = report_markdown(&i);
    assert!(!md.contains("Normal and degraded") && !md.contains("During "), "{md}");
    assert!(md.contains("ssd delivered 35 % more IOPS than hdd"), "{md}");
}

#[test]
fn a_swept_workload_has_a_degraded_row_per_storage_and_point() {
    let mut runs = Vec::new();
    for (qd, normal, rebuild) in [(1, 100.0, 40.0), (4, 400.0, 100.0)] {
        runs.push(run("ssd", 1, normal, None, Some(qd)));
        runs.push(run("ssd-rebuild", 1, rebuild, None, Some(qd)));
    }
    let mut i = input(runs);
    i.evaluation.configurations = vec![
        crate::evaluation::Configuration { name: "ssd".into(), ..Default::default() },
        crate::evaluation::Configuration {
            name: "ssd-rebuild".into(),
            condition: Some("rebuild".into()),
            storage: Some("ssd".into()),
            ..Default::default()
        },
    ];
    let md = report_markdown(&i);
    assert!(md.contains("| ssd at iodepth = 1 | 100.0 | 40.00 | 100 % | 40 % |"), "{md}");
    assert!(md.contains("| ssd at iodepth = 4 | 400.0 | 100.0 | 100 % | 25 % |"), "{md}");
    let f = conditions::findings(&i);
    assert!(
        f[1].text
            .starts_with("During rebuild, ssd kept 25 % of its normal IOPS on randread at iodepth = 4: ")
    );
    assert!(f.iter().all(|f| !f.claim && f.text.contains("Fewer than 3 runs each")), "{f:?}");
}

#[test]
fn a_mailbox_evaluation_says_jetstresss_verdict_per_configuration_failures_first() {
    use crate::model::{MailboxResults, ThresholdCheck};
    let mut runs = Vec::new();
    let mut data = BTreeMap::new();
    for (config, reps) in [("ssd", [true, true]), ("hdd", [true, false])] {
        for (rep, pass) in (1..).zip(reps) {
            let mut r = run(config, rep, 1000.0, Some(50.0), None);
            (r.id, r.workload, r.kind) =
                (format!("mailbox.{config}.r{rep}"), "mailbox".into(), "mailbox".into());
            let limit = ThresholdCheck {
                name: "db_read_avg_ms".into(),
                database: Some(1),
                value: Some(31.5),
                limit: 20.0,
                pass,
            };
            let results = MailboxResults {
                pass,
                test: "performance".into(),
                checks: vec![limit],
                db_reads_per_sec: 600.0,
                db_writes_per_sec: 400.0,
                log_writes_per_sec: 200.0,
                // 600 reads and 400 writes of 32 KiB, 200 log writes of 4 KiB a second: 33.6 MB/s.
                databases: vec![crate::model::MailboxDbResult {
                    database: 1,
                    db_reads: stream(600.0, 32768.0),
                    db_writes: stream(400.0, 32768.0),
                    log_writes: stream(200.0, 4096.0),
                    ..Default::default()
                }],
                ..Default::default()
            };
            let mut s = summary(1000.0);
            (s.workload, s.results) = ("mailbox".into(), Results::Mailbox(results));
            data.insert(r.id.clone(), RunData { summary: s, series: None, database: None });
            runs.push(r);
        }
    }
    let input = evaluation_of("jet", 2, runs, data);
    let texts: Vec<String> =
        workload::present(&input).iter().flat_map(|w| w.findings(&input)).map(|f| f.text).collect();
    assert_eq!(
        texts,
        [
            "FAILED: hdd on mailbox failed Jetstress's checks in 1 of 2 runs: db_read_avg_ms 31.50 over 20.00 on database 1.",
            "ssd on mailbox passed Jetstress's checks (latency thresholds held, checksums verified, no I/O error) in 2 runs."
        ]
    );
    // 003's count of IOPS beside the transactional ones, and per watt on both.
    let md = report_markdown(&input);
    assert!(md.contains("| run | status | IOPS | DB + log IOPS | MB/s | idle W | active W |"), "{md}");
    assert!(md.contains("| IOPS/W | DB + log IOPS/W | reported |"), "{md}");
    assert!(
        md.contains("| r1 | done | 1,000.0 | 1,200.0 | 33.59 |") && md.contains("| 20.00 | 24.00 |"),
        "{md}"
    );
}

#[test]
fn a_failed_check_is_named_with_what_was_measured_and_one_that_measured_nothing_is_not_judged() {
    use crate::model::{MailboxResults, ThresholdCheck};
    let limit = |name: &str, database, value, pass| ThresholdCheck {
        name: name.into(),
        database,
        value,
        limit: 20.0,
        pass,
    };
    let results = MailboxResults {
        pass: false,
        checks: vec![
            limit("db_read_avg_ms", Some(1), None, true),
            limit("db_read_avg_ms", Some(2), Some(31.5), false),
            limit("log_write_avg_ms", None, Some(3.0), true),
        ],
        ..Default::default()
    };
    let r = Results::Mailbox(results);
    let held: Vec<Option<bool>> = r.workload().checks().iter().map(|c| c.held).collect();
    assert_eq!(held, [None, Some(false), Some(true)], "no read reached storage on database 1: not judged");
    // Not judged is never a pass: the failure names it beside the check that failed.
    assert_eq!(
        r.workload().failure().as_deref(),
        Some(
            "db_read_avg_ms (database 1): not judged, no sample (at most 20.00); db_read_avg_ms (database 2): 31.50 (at most 20.00)"
        )
    );
}

/// A mailbox stream of `per_sec` I/Os of `bytes` each.
fn stream(per_sec: f64, bytes: f64) -> crate::model::StreamResult {
    crate::model::StreamResult { per_sec, bytes_per_io: Some(bytes), ..Default::default() }
}

#[test]
fn an_oltp_run_on_several_databases_gets_each_ones_opm_as_001s_figure_7() {
    use crate::model::{OltpResults, OltpTargetResult};
    let target = |t: &str, opm| OltpTargetResult { target: t.into(), opm, orders: 10, ..Default::default() };
    let (mut runs, mut data) = (Vec::new(), BTreeMap::new());
    // Three runs: r1 and r2 passed, r3 failed its check.
    for (rep, vm1) in [(1, 1400.0), (2, 1500.0), (3, 100.0)] {
        let mut r = run("ssd", rep, vm1 + 1600.0, None, None);
        (r.id, r.workload, r.kind) = (format!("oltp.ssd.r{rep}"), "oltp".into(), "oltp".into());
        if rep == 3 {
            r.status = RunStatus::CheckFailed;
        }
        let results = OltpResults {
            opm: vm1 + 1600.0,
            orders: 20,
            targets: vec![target("postgres://vm1/ds3", vm1), target("postgres://vm2/ds3", 1600.0)],
            ..Default::default()
        };
        let mut s = summary(vm1 + 1600.0);
        (s.workload, s.results) = ("oltp".into(), Results::Oltp(results));
        data.insert(r.id.clone(), RunData { summary: s, series: None, database: None });
        runs.push(r);
    }
    let md = report_markdown(&evaluation_of("vms", 3, runs, data));
    let section = &md[md.find("## OLTP per database").expect("a per-database section")..];
    // Every run that passed, a column each; the failed one in no column, named under it.
    assert!(section.contains("| database | oltp.ssd.r1 OPM | oltp.ssd.r2 OPM |\n"), "{section}");
    assert!(section.contains("| postgres://vm1/ds3 | 1,400.0 | 1,500.0 |"), "{section}");
    assert!(section.contains("| total | 3,000.0 | 3,100.0 |"), "{section}");
    assert!(section.contains("did not pass: oltp.ssd.r3 (check failed)"), "{section}");
    // Then the reported run's orders per database.
    let reported = &section[section.find("The reported run").expect("the reported run")..];
    assert!(reported.contains("| postgres://vm1/ds3 | "), "{reported}");
    assert!(reported.contains(" | 10 | 0 | 0 |"), "{reported}");
}

#[test]
fn the_searched_load_is_read_from_the_summarys_search() {
    // Which workloads have it: the library's registry test holds it to each one's loads.
    let mut s = summary(5.0);
    assert_eq!(summary_figure(&s, SEARCH_LOAD), Some(None), "a run without a search has no searched load");
    s.search = Some(crate::model::SearchResult { chosen: Some(16.0), ..Default::default() });
    assert_eq!(summary_figure(&s, SEARCH_LOAD), Some(Some(crate::decision::figures::Value::Num(16.0))));
    s.search = Some(crate::model::SearchResult { chosen: None, ..Default::default() });
    assert_eq!(summary_figure(&s, SEARCH_LOAD), Some(None), "no load held");
    assert_eq!(summary_figure(&s, "iops"), None, "the results' figures are the workload's tables'");
}

/// `two_configs` with each shown run's read latencies: `ms` at every percentile, ssd's a tenth
/// of hdd's.
fn with_spectra(mut i: ReportInput) -> ReportInput {
    for g in i.evaluation.groups() {
        let run = g.shown().unwrap();
        let ms = if g.configuration == "ssd" { 0.2 } else { 2.0 };
        let count = 20_000;
        let points = spectrum::quantiles(count).into_iter().map(|q| (q, (ms * 1e6 * (1.0 + q)) as u64));
        let read = Spectrum { count, points: points.collect() };
        i.spectra.insert(run.id.clone(), BTreeMap::from([("read".to_string(), read)]));
    }
    i
}

#[test]
fn the_latency_spectrum_overlays_the_configurations_in_the_report_and_in_a_comparison() {
    let i = with_spectra(two_configs([1000.0, 950.0, 1040.0], false));
    let md = report_markdown(&i);
    let section = &md[md.find("## Latency spectrum").expect("a Latency spectrum section")..];
    assert!(
        section.contains("| ssd | reads | 20,000 | 0.300 | 0.380 | 0.398 | 0.400 | 0.400 | 0.400 |"),
        "{md}"
    );
    assert!(section.contains("| hdd | reads | 20,000 | 3.00 |"), "{md}");
    let html = report_html(&i);
    let at = html.find("<h2>Latency spectrum</h2>").expect("the section in report.html");
    let svg = &html[at..];
    let svg = &svg[svg.find("<svg").unwrap()..svg.find("</svg>").unwrap()];
    assert_eq!(svg.matches("<path ").count(), 2, "a line per configuration: {svg}");
    let files = spectrum::report_pictures(&i);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0, "latency-randread-read.svg");
    assert!(files[0].1.starts_with("<svg") && files[0].1.contains("<title>hdd</title>"));
    // Without spectra (a bundle whose histograms were not read) there is no section.
    assert!(!report_markdown(&two_configs([1000.0, 950.0, 1040.0], false)).contains("Latency spectrum"));

    let b = with_spectra(two_configs([1290.0, 1330.0, 1380.0], false));
    let (sa, sb) = (Side { input: &i, name: "A", source: "a" }, Side { input: &b, name: "B", source: "b" });
    let pictures = super::compare::compare_pictures(&sa, &sb);
    assert_eq!(pictures.len(), 1);
    for line in ["A ssd", "B ssd", "A hdd", "B hdd"] {
        assert!(pictures[0].1.contains(&format!("<title>{line}</title>")), "{line}: {}", pictures[0].1);
    }
    assert!(super::compare::compare_html(&sa, &sb).contains("<h2>Latency spectrum</h2>"));
    assert!(!compare_text(&sa, &sb).contains("Latency spectrum"), "the terminal shows no pictures");
}

#[test]
fn a_trace_replay_has_its_section_and_a_failed_fidelity_check_fails_the_run() {
    use crate::fingerprint::{FidelityCheck, FidelityFigure, TraceReplay};
    let figure = |name: &str, replayed: f64, pass: bool| FidelityFigure {
        name: name.into(),
        original: 1000.0,
        replayed,
        distance: (replayed - 1000.0).abs() / 10.0,
        unit: "%".into(),
        limit: 2.0,
        pass,
        held: true,
    };
    let replay = |pass: bool| {
        let mut s = summary(2000.0);
        s.workload = "replay-trace".into();
        let check = FidelityCheck {
            figures: vec![
                figure("reads and writes", 1000.0, true),
                figure("rate (IOPS)", if pass { 1010.0 } else { 900.0 }, pass),
                FidelityFigure { held: false, ..figure("flushes at the device", 800.0, true) },
            ],
            pass,
        };
        let trace = TraceReplay {
            trace: "prod.sbtrace".into(),
            mode: "as_recorded".into(),
            speed: Some(1.0),
            recorded_requests: 1000,
            recorded_s: 0.5,
            recorded_iops: 2000.0,
            not_replayed: [("discard".to_string(), 3)].into(),
            check: Some(check),
        };
        if let Results::Io(r) = &mut s.results {
            r.trace = Some(Box::new(trace));
        }
        ReportInput::single_run("20260101-replay", RunData { summary: s, series: None, database: None }, None)
    };
    let good = replay(true);
    assert_eq!(good.evaluation.runs[0].status, RunStatus::Done);
    let md = report_markdown(&good);
    assert!(md.contains("## Trace replays"), "{md}");
    assert!(md.contains("prod.sbtrace, as recorded at speed 1: 1000 requests over 0.500 s"), "{md}");
    assert!(md.contains("not replayed: 3 discard(s)") && md.contains("| rate (IOPS) |"), "{md}");
    // A figure told beside the check has no limit and no verdict of its own.
    assert!(md.contains("| flushes at the device | 1,000.0 | 800.0 | 20.00 % | — | told |"), "{md}");
    let bad = replay(false);
    assert_eq!(bad.evaluation.runs[0].status, RunStatus::CheckFailed);
    let md = report_markdown(&bad);
    assert!(md.contains("FAIL"), "{md}");
    // The status says which check failed, with what was measured and its limit.
    assert!(
        md.contains("check failed: the replay's rate (IOPS): 10.00 % from the trace's (at most 2.00 %)"),
        "{md}"
    );
    // A job of drawn requests has no such section.
    let plain = ReportInput::single_run(
        "20260101-randread",
        RunData { summary: summary(500.0), series: None, database: None },
        None,
    );
    assert!(!report_markdown(&plain).contains("Trace replays"));
}

#[test]
fn each_volume_of_each_run_that_passed_has_its_disk_counters_as_001s_figures_8_and_9() {
    let mut input = two_configs([1000.0, 950.0, 1040.0], false);
    // ssd's first run counted two devices on their own; hdd's first, one device (the run's
    // totals); ssd's second failed its check and is left out.
    let two = "t_s,phase,disk.nvme0n1.reads_per_sec,disk.nvme0n1.read_bytes_per_sec,disk.nvme1n1.reads_per_sec,\
               disk.nvme1n1.read_bytes_per_sec,disk_reads_per_sec\n\
               1,ramp,999,0,999,0,1998\n2,measure,100,1000000,300,3000000,400\n3,measure,200,3000000,500,5000000,700\n";
    let one = "t_s,phase,disk_reads_per_sec,disk_read_await_ms\n1,measure,50,4\n2,measure,70,6\n";
    let id = |config: &str, rep: u32| format!("randread.{config}.r{rep}");
    input.runs.get_mut(&id("ssd", 1)).unwrap().series = Some(Series::parse(two).unwrap());
    input.runs.get_mut(&id("ssd", 2)).unwrap().series = Some(Series::parse(two).unwrap());
    let hdd = input.runs.get_mut(&id("hdd", 1)).unwrap();
    hdd.series = Some(Series::parse(one).unwrap());
    hdd.summary.target.device = Some(crate::model::DeviceInfo { name: "sdb".into(), ..Default::default() });
    input.evaluation.runs.iter_mut().find(|r| r.id == id("ssd", 2)).unwrap().status = RunStatus::CheckFailed;
    let md = report_markdown(&input);
    let section = &md[md.find("## Disk counters per volume").expect("the section")..];
    // The measured seconds only: the ramp's 999 reads a second are not in the means.
    assert!(section.contains("| randread.ssd.r1 | nvme0n1 | 150.0 | — | 2.00 | — |"), "{section}");
    assert!(section.contains("| randread.ssd.r1 | nvme1n1 | 400.0 | — | 4.00 | — |"), "{section}");
    assert!(section.contains("| randread.hdd.r1 | sdb | 60.00 | — | — | — | 5.00 |"), "{section}");
    assert!(!section.contains("randread.ssd.r2"), "a run that did not pass: {section}");
}

#[test]
fn slow_log_writes_with_the_logs_beside_the_databases_advise_a_log_volume_and_only_then() {
    use crate::model::{MailboxResults, ThresholdCheck};
    let with = |log_target: &str, pass: bool| {
        let mut r = run("hdd", 1, 1000.0, Some(50.0), None);
        (r.id, r.workload, r.kind) = ("mailbox.hdd.r1".into(), "mailbox".into(), "mailbox".into());
        let check = ThresholdCheck {
            name: "log_write_avg_ms".into(),
            database: Some(1),
            value: Some(14.5),
            limit: 10.0,
            pass,
        };
        let results = MailboxResults { pass, checks: vec![check], ..Default::default() };
        let mut s = summary(1000.0);
        (s.workload, s.results) = ("mailbox".into(), Results::Mailbox(results));
        s.parameters = serde_json::json!({"target": "/hdd/db", "log_target": log_target});
        let data = BTreeMap::from([(r.id.clone(), RunData { summary: s, series: None, database: None })]);
        evaluation_of("jet", 1, vec![r], data)
    };
    let advice = |input: &ReportInput| {
        workload::present(input).iter().flat_map(|w| w.recommendations(input)).collect::<Vec<_>>()
    };
    let shared = advice(&with("/hdd/db", false));
    assert_eq!(shared.len(), 1, "{shared:?}");
    assert!(shared[0].change.starts_with("the logs on a volume of their own"), "{shared:?}");
    assert_eq!(
        shared[0].because,
        "run mailbox.hdd.r1: log writes averaged 14.50 ms (at most 10.00 ms) with the logs in the databases' directory"
    );
    assert!(advice(&with("/hdd/db", true)).is_empty(), "log writes within their limit");
    assert!(advice(&with("/log", false)).is_empty(), "the logs already have a place of their own");
}
