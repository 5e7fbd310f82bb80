//! What a report and a decision are made from: an evaluation with each run's bundle as the
//! caller read it (its summary and per-second series, its latency spectra, the disclosure),
//! or one run's bundle made a one-run evaluation.

use crate::disclosure::Disclosure;
use crate::evaluation::{self, Configuration, Evaluation, Method, RunRecord};
use crate::latency::Spectrum;
use crate::render::timeseries::Series;
use crate::summary::Summary;
use std::collections::BTreeMap;

/// Everything a report is made from, read from a bundle by the caller.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportInput {
    pub evaluation: Evaluation,
    /// Each run's own bundle, by run id; runs without one (pending, failed, unreadable) are
    /// reported from `evaluation.json` alone.
    pub runs: BTreeMap<String, RunData>,
    pub disclosure: Option<Disclosure>,
    /// What could not be read (a run's missing file), shown with the notes.
    pub problems: Vec<String>,
    /// By run id, the measured phase's latency spectra by histogram tag (`read`, `order`) of
    /// the runs whose histograms the caller read (each group's shown run); a run without
    /// them has no line in the latency pictures.
    pub spectra: BTreeMap<String, BTreeMap<String, Spectrum>>,
    /// A merged bundle's shards (`shards.json`); None for any other bundle.
    pub shards: Option<crate::ShardsFile>,
    /// The part of each run its figures stand on (`--window`), seconds from the run's start;
    /// None for the whole measured phase.
    pub window: Option<(f64, f64)>,
}

impl ReportInput {
    /// The window the figures stand on, as the pages and the decision say it first; None for
    /// the whole measured phase.
    pub fn window_said(&self) -> Option<String> {
        let (from, to) = self.window?;
        Some(format!(
            "Every figure stands on seconds {}–{} of each run, counted from its start (its warm-up \
             included), the whole measured intervals inside them (--window), not on the whole \
             measured phase.",
            crate::format::num(from),
            crate::format::num(to)
        ))
    }
}

/// One run's bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct RunData {
    pub summary: Summary,
    /// None where `timeseries.csv` is missing: the run then has no charts.
    pub series: Option<Series>,
    /// The database the run used, as its own disclosure states it (its server's settings:
    /// the setup checks read its cache sizes); None without one.
    pub database: Option<crate::disclosure::DatabaseInfo>,
}

impl ReportInput {
    /// The whole disk under configuration `name`'s runs, as their summaries found it (a
    /// partition's disk), where one was found.
    pub fn disk_of(&self, name: &str) -> Option<&str> {
        let runs = self.evaluation.runs.iter().filter(|r| r.configuration == name);
        let devices = runs.filter_map(|r| self.runs.get(&r.id)?.summary.target.device.as_ref());
        devices.map(|d| d.parent.as_deref().unwrap_or(&d.name)).next()
    }

    /// The one disk configurations `a` and `b` both ran on, where they did: they measured the
    /// same storage, so no difference between them is a finding about storage.
    pub fn one_disk(&self, a: &str, b: &str) -> Option<&str> {
        let disk = self.disk_of(a)?;
        (a != b && self.disk_of(b) == Some(disk)).then_some(disk)
    }

    /// Every pair of configurations that ran on one disk, in plan order, with the disk.
    pub fn shared_disks(&self) -> Vec<(&str, &str, &str)> {
        let mut names: Vec<&str> = Vec::new();
        for r in &self.evaluation.runs {
            if !names.contains(&r.configuration.as_str()) {
                names.push(&r.configuration);
            }
        }
        let mut out = Vec::new();
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                out.extend(self.one_disk(a, b).map(|d| (*a, *b, d)));
            }
        }
        out
    }

    /// One run's bundle as a one-run evaluation: the configuration is the host and target,
    /// active power the mean of `power_watts` over the seconds its results cover.
    pub fn single_run(id: &str, data: RunData, disclosure: Option<Disclosure>) -> ReportInput {
        let s = &data.summary;
        let headline = evaluation::headline(s);
        let active_watts = data.series.as_ref().and_then(|x| x.active_watts(s));
        let per_watt =
            headline.as_ref().zip(active_watts).and_then(|(h, w)| evaluation::perf_per_watt(h.value, w));
        let configuration = format!("{}:{}", s.host.hostname, s.target.path);
        let run = RunRecord {
            id: id.to_string(),
            workload: s.name.clone(),
            kind: s.workload.clone(),
            configuration: configuration.clone(),
            repetition: 1,
            status: evaluation::status(s),
            error: s.failed_ios().map(|e| e.to_string()),
            bundle: Some(".".into()),
            headline,
            active_watts,
            per_watt,
            reported: true,
            started_at: Some(s.started_at.clone()),
            seconds: Some(s.phases.measured_s),
            ..RunRecord::default()
        };
        let method = Method {
            repetitions: 1,
            window: "fixed".into(),
            power_source: active_watts.map(|_| "the run's power_watts column".into()),
            seed: s.seed,
            ..Method::default()
        };
        let evaluation = Evaluation {
            evaluation_version: evaluation::EVALUATION_VERSION,
            tool_version: s.tool.version.clone(),
            name: s.name.clone(),
            complete: s.complete,
            started_at: s.started_at.clone(),
            ended_at: s.ended_at.clone(),
            method,
            configurations: vec![Configuration {
                name: configuration,
                target: s.target.path.clone(),
                description: None,
                own_values: Vec::new(),
                background: s.background.iter().map(|b| b.spec.clone()).collect(),
                ..Configuration::default()
            }],
            runs: vec![run],
            notes: s.warnings.clone(),
            requirements: Vec::new(),
        };
        let runs = BTreeMap::from([(id.to_string(), data)]);
        ReportInput { evaluation, runs, disclosure, ..ReportInput::default() }
    }
}
