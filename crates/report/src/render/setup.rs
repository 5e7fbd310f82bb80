//! The "Setup checks" section: per configuration, what [`crate::setup`] finds in the
//! disclosed storage setup, warnings first as a table (what it found, why it matters, what to
//! change), then the checks that passed and those the disclosure could not answer, compactly.
//!
//! This file also says what the runs of a configuration used (database page sizes, data
//! sets), read from their summaries, which is what the checks need besides the disclosure.

use super::doc::{Block, Table};
use super::{ReportInput, RunData};
use crate::disclosure::{Disclosure, TargetPath};
use crate::evaluation::Configuration;
use crate::setup::{self, DataSet, PageSize, ServerCache, SetupCheck, Status};

/// The section; nothing without a disclosure (the appendix says it is missing).
pub(super) fn blocks(input: &ReportInput) -> Vec<Block> {
    // A null engine's run has no target, so its disclosure none.
    if input.disclosure.as_ref().is_none_or(|d| d.targets.is_empty()) {
        return Vec::new();
    }
    let configs = &input.evaluation.configurations;
    if configs.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(2, "Setup checks".into()),
        Block::Para(
            "What the disclosure shows about each configuration's storage stack that is known to cost \
             performance or durability: partition alignment to 1 MiB and the RAID stripe, the \
             filesystem's block size against the database's page size, the md chunk, cache flushes, \
             the I/O scheduler, TRIM, access-time updates, data that fits in memory and where a \
             database server keeps its data. Warnings first; the checks that passed follow."
                .into(),
        ),
    ];
    for c in configs {
        // A single run's configuration is named after its host and target already.
        let named = c.name.contains(&c.target);
        out.push(Block::Heading(
            3,
            if named { c.name.clone() } else { format!("{} ({})", c.name, c.target) },
        ));
        match checks_of(input, c) {
            Some(checks) => out.extend(configuration(&checks)),
            None => out.push(Block::Para(format!(
                "{} is not in the disclosure: its setup is not checked.",
                c.target
            ))),
        }
    }
    out
}

/// Configuration `c`'s setup checks; None where the disclosure does not hold its target.
pub(super) fn checks_of(input: &ReportInput, c: &Configuration) -> Option<Vec<SetupCheck>> {
    let d = input.disclosure.as_ref()?;
    let target = target_of(d, c, input.evaluation.configurations.len())?;
    let (pages, data) = (page_sizes(input, d, c), data_sets(input, c));
    Some(setup::check(&setup::SetupInput { disclosure: d, target, page_sizes: &pages, data: &data }))
}

/// The RAID under configuration `c`'s target, as the disclosure shows it.
pub(super) fn raid_of(input: &ReportInput, c: &Configuration) -> Option<(String, String)> {
    let d = input.disclosure.as_ref()?;
    setup::raid_under(d, target_of(d, c, input.evaluation.configurations.len())?)
}

/// One configuration's checks: the warnings' table, then the rest in a sentence each.
fn configuration(checks: &[SetupCheck]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut warnings = Table::new(&["check", "on", "found", "why it matters", "what to change"]);
    for c in checks.iter().filter(|c| c.status == Status::Warn) {
        warnings.push(vec![
            c.check.into(),
            c.subject.clone(),
            c.found.clone(),
            c.why.clone(),
            c.change.clone(),
        ]);
    }
    if warnings.rows.is_empty() {
        out.push(Block::Para("No warnings.".into()));
    } else {
        out.push(Block::Table(warnings));
    }
    let listed = |status: Status| -> Vec<String> {
        checks
            .iter()
            .filter(|c| c.status == status)
            .map(|c| format!("{} on {}: {}", c.check, c.subject, c.found))
            .collect()
    };
    let (passed, unknown) = (listed(Status::Ok), listed(Status::Unknown));
    if !passed.is_empty() {
        out.push(Block::Para(format!("Passed: {}.", passed.join("; "))));
    }
    if !unknown.is_empty() {
        out.push(Block::Para(format!("Not known from the disclosure: {}.", unknown.join("; "))));
    }
    out
}

/// The configuration's target in the disclosure: by its path, or the only one there is for
/// a one-configuration report (a single run's bundle names its files, not the configuration's).
fn target_of<'a>(d: &'a Disclosure, c: &Configuration, configurations: usize) -> Option<&'a TargetPath> {
    let by_path = d.targets.iter().find(|t| t.path == c.target);
    by_path.or_else(|| d.targets.first().filter(|_| configurations == 1))
}

/// The data of the configuration's runs that have a bundle, one per workload label.
fn summaries<'a>(input: &'a ReportInput, c: &Configuration) -> Vec<(&'a str, &'a RunData)> {
    let mut out: Vec<(&str, &RunData)> = Vec::new();
    for r in input.evaluation.runs.iter().filter(|r| r.configuration == c.name) {
        let Some(data) = input.runs.get(&r.id) else { continue };
        if !out.iter().any(|(label, _)| *label == r.workload) {
            out.push((&r.workload, data));
        }
    }
    out
}

/// The page sizes of the databases the configuration's runs used, each as its workload's
/// results say (`Shown::page_size`).
fn page_sizes(input: &ReportInput, d: &Disclosure, c: &Configuration) -> Vec<PageSize> {
    let mut out: Vec<PageSize> = Vec::new();
    for (_, data) in summaries(input, c) {
        let s = &data.summary;
        if let Some(page) = crate::render::shown(&s.results).page_size(s, d).filter(|p| !out.contains(p)) {
            out.push(page);
        }
    }
    out
}

/// Each workload's data as the checks need it; a null engine's none.
fn data_sets(input: &ReportInput, c: &Configuration) -> Vec<DataSet> {
    summaries(input, c)
        .into_iter()
        .filter(|(_, data)| data.summary.target.kind != "none")
        .map(|(label, data)| {
            let s = &data.summary;
            // Any workload's database on a server (an oltp run's, a replay's) keeps its data there.
            let on_server = matches!(s.target.kind.as_str(), "postgres" | "mysql");
            let server_cache = data
                .database
                .as_ref()
                .filter(|_| on_server)
                .and_then(|db| ServerCache::of(db.kind.as_deref()?, &db.non_default_settings));
            DataSet {
                workload: label.into(),
                bytes: s.target.size_bytes,
                cached: !s.target.direct,
                server_device: s.target.device.as_ref().map(|dev| dev.name.clone()),
                on_server,
                server_cache,
            }
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::Summary;
    use crate::disclosure::{BlockDevice, DatabaseInfo, MemoryInventory};
    use crate::evaluation::{Evaluation, RunRecord};
    use crate::model::{DeviceInfo, MailboxResults, OltpResults, TargetInfo, Tool};
    use crate::render::RunData;
    use crate::workloads::Results;

    fn oltp_summary(backend: &str, size_bytes: u64, device: &str) -> Summary {
        let device = Some(DeviceInfo { name: device.into(), ..DeviceInfo::default() });
        Summary {
            tool: Tool { name: "storbench".into(), version: "0.1.0".into() },
            target: TargetInfo { path: "db".into(), kind: backend.into(), size_bytes, direct: false, device },
            engine: backend.into(),
            ..crate::testing::summary("oltp", Results::Oltp(OltpResults::default()), true)
        }
    }

    /// Two configurations: `ssd` (clean) and `hdd`, whose PostgreSQL keeps its data on
    /// another disk than its target and fits in memory.
    pub(crate) fn input() -> ReportInput {
        let target = |path: &str, dev: &str| TargetPath {
            path: path.into(),
            mount_point: Some(path.into()),
            fstype: Some("ext4".into()),
            mount_options: Some("rw,relatime".into()),
            device: Some(dev.into()),
            devices: vec![dev.into()],
            block_size: Some(4096),
            ..TargetPath::default()
        };
        let disk = |name: &str| BlockDevice {
            layer: DeviceInfo { name: name.into(), kind: "disk".into(), ..DeviceInfo::default() },
            ..BlockDevice::default()
        };
        let mut disclosure = Disclosure {
            schema_version: 1,
            storbench_version: "0.1.0".into(),
            cpu: Default::default(),
            memory: MemoryInventory { total_bytes: Some(16 << 30), dimms: Vec::new() },
            targets: Vec::new(),
            devices: vec![disk("nvme0n1"), disk("sdb")],
            kernel: Default::default(),
            distribution: None,
            database: DatabaseInfo { kind: Some("postgres".into()), ..DatabaseInfo::default() },
        };
        disclosure.targets = vec![target("/ssd", "nvme0n1"), target("/hdd", "sdb")];
        let config = |name: &str, target: &str| Configuration {
            name: name.into(),
            target: target.into(),
            ..Configuration::default()
        };
        let run = |config: &str| RunRecord {
            id: format!("oltp.{config}.r1"),
            workload: "oltp".into(),
            kind: "oltp".into(),
            configuration: config.into(),
            ..RunRecord::default()
        };
        let evaluation = Evaluation {
            configurations: vec![config("ssd", "/ssd"), config("hdd", "/hdd")],
            runs: vec![run("ssd"), run("hdd")],
            ..Evaluation::default()
        };
        let data = |s| RunData { summary: s, series: None, database: None };
        let runs = [
            ("oltp.ssd.r1".to_string(), data(oltp_summary("postgres", 64 << 30, "nvme0n1"))),
            ("oltp.hdd.r1".to_string(), data(oltp_summary("postgres", 1 << 30, "vda"))),
        ];
        ReportInput { evaluation, runs: runs.into(), disclosure: Some(disclosure), ..ReportInput::default() }
    }

    #[test]
    fn each_configuration_gets_its_own_checks_with_warnings_in_a_table() {
        let md = crate::render::report_markdown(&input());
        let section = &md[md.find("## Setup checks").expect(&md)..];
        let ssd = &section[section.find("### ssd (/ssd)").unwrap()..section.find("### hdd").unwrap()];
        assert!(ssd.contains("No warnings."), "{ssd}");
        assert!(
            ssd.contains("block-vs-page on /ssd (ext4): PostgreSQL (default) pages of 8 KiB on 4 KiB blocks"),
            "{ssd}"
        );
        let hdd = &section[section.find("### hdd (/hdd)").unwrap()..];
        assert!(hdd.contains("| check | on | found | why it matters | what to change |"), "{hdd}");
        assert!(hdd.contains("| data-location | oltp | the server's data is on vda;"), "{hdd}");
        assert!(hdd.contains("| fits-in-memory | oltp | 1.0 GiB of data"), "{hdd}");
        let html = crate::render::report_html(&input());
        assert!(html.contains("Setup checks") && html.contains("data-location"));
    }

    #[test]
    fn a_servers_cache_from_the_runs_own_disclosure_is_weighed_against_its_data() {
        // The ssd's 64 GiB passed against 16 GiB of memory; its server's own settings (the
        // run's disclosure) say InnoDB keeps a 128 GiB pool: all of it then sits in memory.
        let mut input = input();
        let settings = [("innodb_buffer_pool_size", "137438953472"), ("innodb_flush_method", "O_DIRECT")];
        let db = DatabaseInfo {
            kind: Some("mysql".into()),
            non_default_settings: settings.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..DatabaseInfo::default()
        };
        let ssd = input.runs.get_mut("oltp.ssd.r1").unwrap();
        ssd.summary.target.kind = "mysql".into();
        ssd.database = Some(db);
        let md = crate::render::report_markdown(&input);
        let section = &md[md.find("### ssd (/ssd)").unwrap()..md.find("### hdd").unwrap()];
        assert!(
            section.contains("| fits-in-memory | oltp | 64.0 GiB of data, innodb_buffer_pool_size 128.0 GiB (read with O_DIRECT"),
            "{section}"
        );
        assert!(section.contains("lower innodb_buffer_pool_size"), "{section}");
    }

    #[test]
    fn the_mailbox_page_size_comes_from_the_profile_it_ran() {
        let mut s = oltp_summary("files", 1 << 30, "sdb");
        s.workload = "mailbox".into();
        s.results = Results::Mailbox(MailboxResults::default());
        s.parameters = serde_json::json!({"preset": "exchange2007", "profile": {"page_size": 32768}});
        let disclosure = input().disclosure.unwrap();
        let page_of = |s: &Summary| crate::render::shown(&s.results).page_size(s, &disclosure);
        let page = page_of(&s).unwrap();
        assert_eq!((page.owner.as_str(), page.bytes), ("the mailbox databases", 32 << 10));
        s.parameters = serde_json::Value::Null;
        assert_eq!(page_of(&s), None);
    }

    #[test]
    fn without_a_disclosure_there_is_no_section() {
        let mut i = input();
        i.disclosure = None;
        assert!(blocks(&i).is_empty());
    }
}
