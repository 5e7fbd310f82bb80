//! Per workload: a run that failed (its own check where the workload has one, else its I/Os,
//! else cut short) is never a median, never a met requirement and never the choice, however
//! good its headline figure. Each workload's results go through the one status
//! (`evaluation::status`) and the decision as a real run's would.

use super::requirement::parse;
use super::tests::summary;
use super::*;
use crate::evaluation::{Configuration, headline, status};
use crate::model::*;
use crate::render::RunData;
use crate::summary::Summary;
use crate::workloads::Results;
use crate::workloads::wal::results::WalResults;

/// Each workload: (kind, its headline figure's key, a run that passed at `good`, one that
/// failed by its own verdict at `failed`, both complete unless the workload's only way to
/// fail is to be cut short).
type Case = (&'static str, &'static str, Summary, Summary);

fn cases(good: f64, failed: f64) -> Vec<Case> {
    let io = |iops: f64, errors: u64| {
        let read = DirectionResult { ios: 1000, iops, ..DirectionResult::default() };
        let errors = ErrorCounts { total: errors, ..ErrorCounts::default() };
        Results::Io(IoResults { read, errors, ..IoResults::default() })
    };
    let oltp = |opm: f64| Results::Oltp(OltpResults { opm, orders: 100, ..OltpResults::default() });
    let mailbox = |iops: f64, pass: bool| {
        Results::Mailbox(MailboxResults { transactional_iops: iops, pass, ..MailboxResults::default() })
    };
    let integrity = |iops: f64, pass: bool| {
        let mut r = IntegrityResults { iops, pass, ..IntegrityResults::default() };
        if !pass {
            r.errors.lost_writes = 1;
        }
        Results::Integrity(r)
    };
    let replay = |rate: f64| {
        Results::Replay(ReplayResults { calls: 100, calls_per_sec: rate, ..ReplayResults::default() })
    };
    let wal = |rate: f64, errors: u64| {
        Results::Wal(WalResults { commits: 100, commits_per_sec: rate, errors, ..WalResults::default() })
    };
    vec![
        ("io", "iops", summary("io", io(good, 0), true), summary("io", io(failed, 10), true)),
        ("oltp", "opm", summary("oltp", oltp(good), true), summary("oltp", oltp(failed), false)),
        (
            "mailbox",
            "transactional_iops",
            summary("mailbox", mailbox(good, true), true),
            summary("mailbox", mailbox(failed, false), true),
        ),
        (
            "integrity",
            "iops",
            summary("integrity", integrity(good, true), true),
            summary("integrity", integrity(failed, false), true),
        ),
        (
            "replay",
            "calls_per_sec",
            summary("replay", replay(good), true),
            summary("replay", replay(failed), false),
        ),
        ("wal", "commits_per_sec", summary("wal", wal(good, 0), true), summary("wal", wal(failed, 3), true)),
    ]
}

/// Configuration `fast`: three runs that failed at ten times the figure; `slow`: three that
/// passed.
fn evaluation(kind: &str, good: &Summary, failed: &Summary) -> ReportInput {
    let mut runs = Vec::new();
    for (config, s) in [("fast", failed), ("slow", good)] {
        for rep in 1..=3 {
            let record = RunRecord {
                id: format!("{kind}.{config}.r{rep}"),
                workload: kind.into(),
                kind: kind.into(),
                configuration: config.into(),
                repetition: rep,
                status: status(s),
                headline: headline(s),
                ..RunRecord::default()
            };
            runs.push((record, RunData { summary: s.clone(), series: None, database: None }));
        }
    }
    let config = |name: &str| Configuration {
        name: name.into(),
        target: format!("/mnt/{name}"),
        ..Configuration::default()
    };
    let mut evaluation = Evaluation {
        configurations: vec![config("fast"), config("slow")],
        runs: runs.iter().map(|r| r.0.clone()).collect(),
        ..Evaluation::default()
    };
    evaluation.mark_reported();
    ReportInput {
        evaluation,
        runs: runs.into_iter().map(|(r, d)| (r.id, d)).collect(),
        ..ReportInput::default()
    }
}

#[test]
fn for_every_workload_a_failed_run_is_never_a_median_a_met_requirement_or_the_choice() {
    let all = cases(100.0, 1000.0);
    // Every workload the report knows has its case.
    let kinds: Vec<&str> = all.iter().map(|c| c.0).collect();
    assert_eq!(kinds, ["io", "oltp", "mailbox", "integrity", "replay", "wal"]);
    for (kind, figure, good, failed) in &all {
        assert_eq!(status(good), RunStatus::Done, "{kind}: the good run");
        assert_ne!(status(failed), RunStatus::Done, "{kind}: the failed run");
        let input = evaluation(kind, good, failed);
        // No median and no spread from the failed runs; the passed ones have theirs.
        let groups = input.evaluation.groups();
        let fast = groups.iter().find(|g| g.runs[0].configuration == "fast").unwrap();
        assert_eq!((fast.reported().map(|r| r.id.clone()), fast.spread().is_some()), (None, false), "{kind}");
        let slow = groups.iter().find(|g| g.runs[0].configuration == "slow").unwrap();
        assert!(slow.reported().is_some(), "{kind}");
        // A requirement both figures clear: the failed runs meet nothing, the others meet it.
        let required = [parse(&format!("{kind}.{figure}"), ">= 50").unwrap()];
        let d = decide(&input, &required);
        let meets = |name: &str| d.configurations.iter().find(|c| c.name == name).unwrap().meets;
        // A run that failed meets nothing; one cut short leaves the requirement not shown either way.
        let unmet = if status(failed) == RunStatus::Interrupted { None } else { Some(false) };
        assert_eq!((meets("fast"), meets("slow")), (unmet, Some(true)), "{kind}: {d:#?}");
        assert_eq!(d.chosen.as_deref(), Some("slow"), "{kind}: {}", d.why);
        // Without requirements too, the failed configuration is never the choice.
        let d = decide(&input, &[]);
        assert_ne!(d.chosen.as_deref(), Some("fast"), "{kind}: {}", d.why);
    }
}
