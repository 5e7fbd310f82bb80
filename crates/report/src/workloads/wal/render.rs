//! The commit path (`storbench wal`) in the report: commits a second as its headline, commit
//! latency beside it, and a section with one row per wal workload and configuration (its
//! method, write size and writers, commits a second, p50 and p99, bytes a second), the fastest
//! method whose commits are plausible for each size and writer count, and each point that was
//! too fast to have been durable, said as a warning.

use super::columns as wal;
use super::results::WalResults;
use crate::decision::figures::{Figure, Value, ms, n, names, read};
use crate::evaluation::Headline;
use crate::latency::LatencyTypes;
use crate::model::IoErrors;
use crate::render::ReportInput;
use crate::render::charts::{Spec, spec};
use crate::render::doc::{Block, Table, given, num};
use crate::render::workload::{Recommendation, Shown, groups_of};
use crate::workload::{OwnCheck, Reported, WorkloadResults};

const CHARTS: &[Spec] = &[
    spec("Commits per second", &[(wal::COMMITS_PER_SEC, "commits/s")]),
    spec("Commit latency", &[(wal::COMMIT_P50_US, "p50"), (wal::COMMIT_P99_US, "p99")]),
];

/// The figures a requirement may name (`wal.commit_p99_ms`).
pub(crate) const FIGURES: &[Figure<WalResults>] = &[
    Figure {
        name: "commits_per_sec",
        unit: "commits/s",
        get: |r| r.measured().and_then(|r| n(r.commits_per_sec)),
    },
    Figure {
        name: "commit_p50_ms",
        unit: "ms commit p50",
        get: |r| r.commit_lat_ns.as_ref().and_then(|l| ms(l.p50)),
    },
    Figure {
        name: "commit_p99_ms",
        unit: "ms commit p99",
        get: |r| r.commit_lat_ns.as_ref().and_then(|l| ms(l.p99)),
    },
    Figure {
        name: "commit_errors",
        unit: "failed commits",
        get: |r| r.measured().and_then(|r| n(r.errors as f64)),
    },
];

/// What wal reports (its registry entry's `reported`).
pub const REPORTED: Reported =
    Reported { figures: || names(FIGURES), latency_types: LatencyTypes::Tags(&[("commit", "commits")]) };

impl WalResults {
    /// The results where the point ran (not where the platform did not offer it).
    fn measured(&self) -> Option<&WalResults> {
        self.not_offered.is_none().then_some(self)
    }

    /// `fdatasync 8,192 B x1 (preallocated)`.
    pub fn point(&self) -> String {
        format!(
            "{} {} B x{} ({})",
            self.sync_method,
            given(f64::from(self.bytes_per_commit)),
            self.writers,
            self.layout
        )
    }

    /// Its commits can be trusted as durable: it ran, no commit failed, and it was not too fast
    /// for the device.
    pub fn trusted(&self) -> bool {
        self.not_offered.is_none() && self.errors == 0 && self.commits > 0 && self.implausible.is_none()
    }
}

impl WorkloadResults for WalResults {
    fn reported(&self) -> Reported {
        REPORTED
    }

    fn figure(&self, name: &str) -> Option<Option<Value>> {
        read(FIGURES, self, name)
    }

    fn headline(&self) -> Option<Headline> {
        (self.commits > 0).then(|| Headline::new("commits/s", self.commits_per_sec, true))
    }

    fn io_errors(&self) -> Option<IoErrors<'_>> {
        None
    }

    /// Every commit made durable: a failed write or sync fails the run.
    fn checks(&self) -> Vec<OwnCheck> {
        let measured = self
            .not_offered
            .is_none()
            .then(|| format!("{} failed of {}", self.errors, self.commits + self.errors));
        vec![OwnCheck {
            name: "commits".into(),
            measured: measured.clone(),
            limit: "none fails".into(),
            held: measured.map(|_| self.errors == 0),
        }]
        .into_iter()
        .filter(|c| c.measured.is_some())
        .collect()
    }
}

impl Shown for WalResults {
    fn latencies(&self) -> Vec<(&'static str, Option<f64>)> {
        let l = self.commit_lat_ns.as_ref();
        vec![("p50", l.map(|l| l.p50 as f64 / 1e6)), ("p99", l.map(|l| l.p99 as f64 / 1e6))]
    }

    fn charts(&self) -> &'static [Spec] {
        CHARTS
    }

    fn section(&self, input: &ReportInput) -> Vec<Block> {
        let groups = groups_of::<WalResults>(input);
        if groups.is_empty() {
            return Vec::new();
        }
        let mut t = Table {
            header: ["configuration", "workload", "point", "commits/s", "p50 ms", "p99 ms", "MB/s", "runs"]
                .map(String::from)
                .to_vec(),
            rows: Vec::new(),
        };
        let mut warnings = Vec::new();
        let mut rows: Vec<(&str, &WalResults)> = Vec::new();
        for (g, runs) in &groups {
            // The group's reported (median) run stands for it, as in every table of the report.
            let shown =
                g.shown().and_then(|run| input.runs.get(&run.id)?.summary.results.get::<WalResults>());
            let Some(r) = shown else { continue };
            let lat = r.latencies();
            let cell = |v: Option<f64>| v.map_or_else(|| "—".into(), num);
            let figures = match &r.not_offered {
                Some(why) => vec![format!("not offered: {why}"), "—".into(), "—".into(), "—".into()],
                None => {
                    vec![num(r.commits_per_sec), cell(lat[0].1), cell(lat[1].1), num(r.bytes_per_sec / 1e6)]
                }
            };
            let mut row = vec![g.configuration.to_string(), g.workload.to_string(), r.point()];
            row.extend(figures);
            row.push(runs.len().to_string());
            t.push(row);
            warnings.extend(
                runs.iter()
                    .filter_map(|x| x.implausible.clone())
                    .map(|w| format!("{}: {w}", g.configuration)),
            );
            rows.push((g.configuration, r));
        }
        warnings.dedup();
        let mut out = vec![
            Block::Heading(2, "Commit path".into()),
            Block::Para(
                "Each point's commits: writes of its size, each made durable by its method before the next \
                 (the write and its sync timed together, from HDR histograms), its writers committing at once; \
                 each configuration's reported (median) run."
                    .into(),
            ),
            Block::Table(t),
        ];
        out.extend(fastest(&rows).into_iter().map(Block::Para));
        out.extend(warnings.into_iter().map(|w| Block::Para(format!("Warning: {w}"))));
        out
    }

    fn recommendations(&self, input: &ReportInput) -> Vec<Recommendation> {
        let mut out: Vec<Recommendation> = Vec::new();
        for (g, runs) in groups_of::<WalResults>(input) {
            for r in runs {
                let Some(why) = &r.implausible else { continue };
                out.push(Recommendation {
                    configuration: g.configuration.to_string(),
                    change: "turn the device's volatile write cache off (hdparm -W 0, or the controller's \
                             setting), or choose a device with power-loss protection: a database's commits \
                             must reach stable storage"
                        .into(),
                    because: format!("{}: {why}", r.point()),
                });
            }
        }
        out.dedup_by(|a, b| a.configuration == b.configuration && a.change == b.change);
        out
    }
}

/// The point with the most commits a second among those whose commits can be trusted as
/// durable (`WalResults::trusted`): the fastest safe method, where there is one.
pub fn fastest_safe<'a>(results: &[&'a WalResults]) -> Option<&'a WalResults> {
    results
        .iter()
        .copied()
        .filter(|r| r.trusted())
        .max_by(|a, b| a.commits_per_sec.total_cmp(&b.commits_per_sec))
}

/// For each configuration, size, writer count and layout measured under more than one
/// method: the method with the most commits a second among the trusted ones.
fn fastest(rows: &[(&str, &WalResults)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: Vec<(&str, u32, u32, &str)> = Vec::new();
    for (c, r) in rows {
        let key = (*c, r.bytes_per_commit, r.writers, r.layout.as_str());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let same: Vec<&WalResults> = rows
            .iter()
            .filter(|(c2, r2)| (*c2, r2.bytes_per_commit, r2.writers, r2.layout.as_str()) == key)
            .map(|(_, r2)| *r2)
            .collect();
        if same.len() < 2 {
            continue;
        }
        out.push(match fastest_safe(&same) {
            Some(b) => format!(
                "{c}, {} B commits x{} ({}): the fastest safe method is {} at {} commits/s.",
                given(f64::from(b.bytes_per_commit)),
                b.writers,
                b.layout,
                b.sync_method,
                num(b.commits_per_sec)
            ),
            None => format!(
                "{c}, {} B commits x{} ({}): no method's commits can be trusted as durable here, so none is named.",
                given(f64::from(r.bytes_per_commit)),
                r.writers,
                r.layout
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation::{Configuration, Evaluation, RunRecord, RunStatus};
    use crate::render::RunData;
    use crate::workloads::Results;

    /// One configuration's wal run of `results`.
    fn input(results: WalResults) -> ReportInput {
        let mut summary = crate::testing::summary("wal", Results::Wal(results), true);
        summary.name = "commit".into();
        let record = RunRecord {
            id: "commit.hdd.r1".into(),
            workload: "commit".into(),
            kind: "wal".into(),
            configuration: "hdd".into(),
            repetition: 1,
            status: RunStatus::Done,
            ..RunRecord::default()
        };
        let configuration =
            Configuration { name: "hdd".into(), target: "/hdd".into(), ..Configuration::default() };
        ReportInput {
            evaluation: Evaluation {
                configurations: vec![configuration],
                runs: vec![record],
                ..Evaluation::default()
            },
            runs: [("commit.hdd.r1".to_string(), RunData { summary, series: None, database: None })].into(),
            ..ReportInput::default()
        }
    }

    #[test]
    fn commits_too_fast_to_be_durable_advise_turning_the_volatile_cache_off_and_say_why() {
        let point = WalResults {
            sync_method: "fdatasync".into(),
            layout: "preallocated".into(),
            bytes_per_commit: 8192,
            writers: 1,
            commits: 90_000,
            commits_per_sec: 30_000.0,
            ..WalResults::default()
        };
        let durable = input(point.clone());
        assert!(point.recommendations(&durable).is_empty(), "plausible commits need no change");
        let lying = WalResults { implausible: Some("30,000 commits/s on a rotating disk".into()), ..point };
        let said = lying.recommendations(&input(lying.clone()));
        assert_eq!(said.len(), 1, "{said:?}");
        assert_eq!(said[0].configuration, "hdd");
        assert!(said[0].change.contains("volatile write cache off"), "{said:?}");
        assert!(
            said[0].because.starts_with("fdatasync 8,192 B x1 (preallocated): 30,000 commits/s"),
            "{said:?}"
        );
        let md = crate::render::report_markdown(&input(lying));
        assert!(
            md.contains("## What to change")
                && md.contains("hdd: turn the device's volatile write cache off"),
            "{md}"
        );
    }
}
