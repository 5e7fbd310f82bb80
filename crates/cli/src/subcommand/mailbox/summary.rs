//! A mailbox test's summary as it starts (what was run); every test's finished summary is
//! built in the library from what the record holds
//! (`storbench_bench::workload::mailbox::summary`).

use super::validate::MailboxSetup;
use storbench_report::{DeviceInfo, MailboxResults, Results, Summary, TargetInfo};

pub fn started(plan: &MailboxSetup, name: &str, device: Option<DeviceInfo>, started_at: &str) -> Summary {
    Summary {
        name: name.into(),
        seed: plan.seed,
        parameters: parameters(plan),
        target: TargetInfo {
            path: plan.db_dir.display().to_string(),
            kind: "files".into(),
            size_bytes: plan.db_bytes() * u64::from(plan.databases),
            direct: true,
            device,
        },
        engine: plan.engine.name().into(),
        ..crate::measure::started_summary(
            super::entry::KIND.name,
            started_at,
            Results::Mailbox(base_results(plan)),
        )
    }
}

/// The results every test type shares: what was run.
pub fn base_results(plan: &MailboxSetup) -> MailboxResults {
    let m = plan.profile.mix;
    MailboxResults {
        test: serde_json::to_value(plan.test)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        preset: plan.preset.name().into(),
        target_iops: plan.target_iops,
        mailboxes: plan.mailboxes,
        threads: plan.threads,
        mix: [("insert", m.insert), ("delete", m.delete), ("replace", m.replace), ("read", m.read)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        lazy_commit_pct: plan.profile.lazy_commit_pct,
        ..Default::default()
    }
}

fn parameters(plan: &MailboxSetup) -> serde_json::Value {
    serde_json::json!({
        "target": plan.db_dir.display().to_string(),
        "log_target": plan.log_dir.display().to_string(),
        "preset": plan.preset.name(),
        "test": plan.test,
        "mailboxes": plan.mailboxes,
        "mailbox_size": plan.mailbox_bytes,
        "databases": plan.databases,
        "threads": plan.threads,
        "target_iops": plan.target_iops,
        "duration_s": plan.duration.as_secs_f64(),
        "steady_state_s": plan.steady_state.map(|r| r.as_secs_f64()),
        "max_warmup_s": plan.max_warmup.as_secs_f64(),
        "sample_window_s": plan.sample_window.as_secs_f64(),
        "profile": plan.profile,
        "thresholds": plan.thresholds,
        "engine": plan.engine.name(),
        "seed": plan.seed,
    })
}
