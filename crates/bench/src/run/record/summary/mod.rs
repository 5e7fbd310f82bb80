//! What every workload's summary shares: each workload builds its own from its outcome by one
//! pure function in its folder (`workload/<kind>/summary.rs`), at the end of a run from the
//! driver's outcome and from a bundle's stored record (`rebuild`, through the workload's
//! [`Rebuild`]) by the same function, so that the two agree field for field. This module
//! names no workload: it holds the run's common fields, the background streams' figures and
//! the rebuild from a record.

pub mod background;

use super::{RecordError, StoredRecord};
use crate::metrics::{ErrorTally, LatencyHistogram};
use crate::run::Outcome;
use std::path::Path;
use storbench_report::{CpuUsage, ErrorCounts, LatenessMs, Summary};

/// How one workload's summary is built again from its record: the summary the run started
/// with, over `window` (seconds since the run's start) where one is given, ended at `at`.
/// Each workload has one (`io::rebuilt`, ...); the caller picks it by the record's workload.
pub type Rebuild = fn(&StoredRecord, Summary, Option<(f64, f64)>, &str) -> Result<Summary, RecordError>;

/// The summary of the bundle in `dir`, built again from its record alone by its workload's
/// `Rebuild` (`rebuild_of` the workload's name; None for a workload this storbench lacks).
pub fn rebuild(dir: &Path, rebuild_of: impl Fn(&str) -> Option<Rebuild>) -> Result<Summary, RecordError> {
    rebuild_over(dir, None, rebuild_of)
}

/// As `rebuild`, with every figure over `window` (seconds since the run's start) where one is
/// given: the whole measured intervals inside it.
pub fn rebuild_over(
    dir: &Path,
    window: Option<(f64, f64)>,
    rebuild_of: impl Fn(&str) -> Option<Rebuild>,
) -> Result<Summary, RecordError> {
    rebuild_record(&StoredRecord::read(dir)?, window, rebuild_of)
}

/// As `rebuild_over`, of a record already read (a merged one, before it is written).
pub fn rebuild_record(
    record: &StoredRecord,
    window: Option<(f64, f64)>,
    rebuild_of: impl Fn(&str) -> Option<Rebuild>,
) -> Result<Summary, RecordError> {
    let end = record.end()?;
    let workload = record.start.workload.as_str();
    let Some(rebuild) = rebuild_of(workload) else {
        return Err(RecordError::Read(format!(
            "the record is of workload {workload:?}, which this storbench does not know"
        )));
    };
    let mut s = rebuild(record, record.start.summary.clone(), window, &end.ended_at)?;
    s.background = streams(record, end, window)?;
    s.warnings.extend(end.added_warnings.iter().cloned());
    Ok(s)
}

/// Each background stream's figures from its measured intervals (those inside `window` where
/// one is given), as the stream built them when the run ended.
fn streams(
    record: &StoredRecord,
    end: &super::End,
    window: Option<(f64, f64)>,
) -> Result<Vec<storbench_report::BackgroundResult>, RecordError> {
    use super::IntervalLine;
    use storbench_report::series::Phase;
    let (from, to) =
        window.map_or((0, u64::MAX), |(a, b)| ((a * 1e9).round() as u64, (b * 1e9).round() as u64));
    let counted =
        |i: &IntervalLine| i.phase == Phase::Measure && !i.tail && i.start_ns >= from && i.end_ns <= to;
    let mut results = Vec::new();
    for entry in &record.start.streams {
        let measured_ns: u64 = record
            .intervals
            .iter()
            .filter(|i| i.stream == entry.name && counted(i))
            .map(|i| i.end_ns.saturating_sub(i.start_ns))
            .sum();
        let measured_s = measured_ns as f64 / 1e9;
        let result = match entry.kind.as_str() {
            kind @ ("io" | "rebuild") => {
                background::of(kind, &record.merged(&entry.name, counted)?, measured_s)
            }
            "cmd" => {
                let finding = end.streams.get(&entry.name).cloned().unwrap_or_default();
                let run = serde_json::from_value(finding).map_err(|e| {
                    RecordError::Read(format!("background command {}'s finding: {e}", entry.name))
                })?;
                background::command(&run)
            }
            "capture" => {
                let finding = end.streams.get(&entry.name).cloned();
                let capture = finding.map(serde_json::from_value).transpose().map_err(|e| {
                    RecordError::Read(format!("background capture {}'s finding: {e}", entry.name))
                })?;
                crate::blocktrace::stream::result(capture)
            }
            other => {
                return Err(RecordError::Read(format!(
                    "background stream {} is of kind {other:?}, which this storbench does not know",
                    entry.name
                )));
            }
        };
        results.push(storbench_report::BackgroundResult {
            name: entry.name.clone(),
            spec: entry.spec.clone(),
            ..result
        });
    }
    Ok(results)
}

/// The outcome of the run's workload, over `window` where one is given.
pub fn outcome<T: super::Recordable, D: serde::de::DeserializeOwned>(
    record: &StoredRecord,
    window: Option<(f64, f64)>,
) -> Result<Outcome<T, D>, RecordError> {
    stream_outcome(record, &record.start.workload, window)
}

/// The outcome of the run's workload stream `stream`, over `window` where one is given.
pub fn stream_outcome<T: super::Recordable, D: serde::de::DeserializeOwned>(
    record: &StoredRecord,
    stream: &str,
    window: Option<(f64, f64)>,
) -> Result<Outcome<T, D>, RecordError> {
    match window {
        Some(w) => record.stream_outcome_in(stream, w),
        None => record.stream_outcome(stream),
    }
}

/// `started` marked as ended at `ended_at`.
pub(crate) fn ended(mut started: Summary, ended_at: &str) -> Summary {
    started.ended_at = Some(ended_at.into());
    started
}

pub(crate) fn error_counts(e: &ErrorTally) -> ErrorCounts {
    ErrorCounts { total: e.total(), by_kind: e.by_kind.iter().map(|(k, v)| (k.to_string(), *v)).collect() }
}

/// A paced run's schedule lag (`run::pace`): p50, p99 and max in ms; None where nothing was
/// paced (an unpaced run has no lag fields).
pub(crate) fn schedule_lag_ms(lag: &LatencyHistogram) -> Option<LatenessMs> {
    use crate::run::pace::lag_ms;
    Some(LatenessMs { p50: lag_ms(lag, 0.5)?, p99: lag_ms(lag, 0.99)?, max: lag_ms(lag, 1.0)? })
}

/// storbench's CPU over what the outcome's totals cover, per operation of `ops`.
pub(crate) fn cpu_usage<T, D>(out: &Outcome<T, D>, ops: u64) -> CpuUsage {
    CpuUsage {
        user_s: out.cpu.user.as_secs_f64(),
        sys_s: out.cpu.sys.as_secs_f64(),
        ns_per_io: (ops > 0).then(|| out.cpu.total().as_secs_f64() * 1e9 / ops as f64),
    }
}

/// Where two summaries differ: the field's path, then each side's value as JSON text.
pub type Difference = (String, String, String);

/// Where two summaries first differ, walking both as `summary.json` holds them (objects key by
/// key in sorted order, arrays item by item), or None when they are equal. Numbers are equal
/// when they are the same JSON number: a float is written in the shortest form that reads
/// back as the same `f64`, so equal text is equal bits.
pub fn first_difference(stored: &serde_json::Value, rebuilt: &serde_json::Value) -> Option<Difference> {
    walk("", stored, rebuilt)
}

fn walk(path: &str, a: &serde_json::Value, b: &serde_json::Value) -> Option<Difference> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            let field = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
            keys.into_iter().find_map(|k| pair(&field(k), x.get(k), y.get(k)))
        }
        (Value::Array(x), Value::Array(y)) => {
            (0..x.len().max(y.len())).find_map(|i| pair(&format!("{path}[{i}]"), x.get(i), y.get(i)))
        }
        _ if a == b => None,
        _ => differ(path, Some(a), Some(b)),
    }
}

/// Two sides of a field, either of which may be missing.
fn pair(path: &str, a: Option<&serde_json::Value>, b: Option<&serde_json::Value>) -> Option<Difference> {
    match (a, b) {
        (Some(a), Some(b)) => walk(path, a, b),
        _ => differ(path, a, b),
    }
}

fn differ(path: &str, a: Option<&serde_json::Value>, b: Option<&serde_json::Value>) -> Option<Difference> {
    let show = |v: Option<&serde_json::Value>| v.map_or_else(|| "nothing".to_string(), |v| v.to_string());
    Some((path.to_string(), show(a), show(b)))
}
