//! The exact record of a run: what a bundle keeps so that every figure of its summary can be
//! built again from the bundle alone, and bundles can be merged or cut to a window.
//!
//! # Format, version 1
//!
//! `record.jsonl` beside `latency.hlog`, one JSON object a line, written as the run goes (an
//! interrupted or killed run keeps its intervals; only the `end` line is missing):
//!
//! - `{"start": {"version": 1, "workload": "io", "epoch_ns": N, "summary": {...}, "streams":
//!   [...]}}`, first:
//!   the workload, the wall clock when the run started in UTC nanoseconds since 1970 (read once
//!   per run), and the summary as it stood before anything was measured (what was asked, where).
//! - `{"interval": {"stream": "io", "index": 3, "phase": "measure", "start_ns": N, "end_ns": N,
//!   "counts": {"read.ios": 812, ...}, "hists": ["read", "write", ...]}}`, one per interval and
//!   stream: where the interval lies in nanoseconds after `epoch_ns` (its wall-clock start is
//!   `epoch_ns + start_ns`), the stream's integer counts by name (a count absent is 0), and
//!   the tags of its histograms in `latency.hlog`, in the order they were written there, and
//!   the host's power over it (`power_watts`, where a meter was read), storbench's CPU
//!   time when it closed (`cpu_user_ns`, `cpu_sys_ns`, since the process started) and, on the
//!   workload's line where the targets are on md or btrfs, what each array or filesystem was
//!   doing at its end (`rebuild`: `stack`, `action`, `paused`, `pct_done`, `bytes_done`,
//!   `bytes_total`, `speed_bytes_per_sec`, `degraded_devices`; `storbench_report::RebuildSample`).
//!   The warnings those say (a rebuild during the run) are in the end's `added_warnings`.
//!   Counts merge by adding; histograms merge exactly (HDR). A last line with `"tail": true`
//!   holds what the workers counted after the last interval closed, as they stopped (the
//!   run's totals include it; integrity has one).
//! - `{"end": {"ended_at": "...", "facts": {...}, "detail": {...}, "added_warnings": [...]}}`,
//!   last: what the run knows that is not an interval's count: the lengths of its phases, its
//!   own CPU time in nanoseconds, whether it completed, failures and warnings, steady state,
//!   the workload's own findings (`detail`: an audit, a verification), the warnings added
//!   after the summary was built, and each background stream's finding that no interval
//!   holds (`streams`: a command's `{"command", "exit_code", "seconds", "stopped"}` by the
//!   stream's name).
//!
//! The run's workload is the stream named after it (`io`); its histograms keep the tags
//! bundles always had (`read`, `order`, `db_read`). A background stream beside it (`bg1`,
//! listed in the start's `streams` with its kind and spec) has interval lines of its own, after
//! the workload's line of the same interval, and carries its name in its histograms' tags
//! (`bg1.write`). A part of a stream (an OLTP target, a mailbox database) has its counts and
//! histograms under `p<index>.`.
//!
//! `latency.hlog`'s interval lines pair with the record's intervals in file order: each
//! interval's tags are the next lines of the log (its `-total` lines are skipped).
//!
//! A summary rebuilt from the record (`summary::rebuild`) equals the run's own field for field:
//! the run's summary is built by the same function from the same values (the measured phase's
//! merged intervals, which the driver's totals are; every float of the facts is written in
//! the shortest form that reads back as the same `f64`). What the summary says beyond counts
//! (an audit's findings, a verification, a mailbox verdict) is the record's `end`, read back
//! as it was; what the intervals hold is rebuilt from them, so an edited count shows.
//! `StoredRecord::outcome_in` cuts the run to a window of its measured phase (`report
//! --window`).
//!
//! A mailbox backup test's workload stream is `backup` (its record's workload is `mailbox`):
//! per database `p<index>.reads`, `.bytes`, `.pages`, `.corruptions` and `.failed_reads`, no
//! histograms; its end's `detail` holds each database's reading time and the first
//! corruptions (`summary::mailbox::BackupFacts`).
//!
//! A mailbox soft recovery test has two workload streams: its log generation's `mailbox`
//! intervals, then its replay's `recovery` intervals (per database `p<index>.logs`,
//! `.records`, `.pages_read`, `.pages_written` and `.corruptions`, no histograms), which
//! follow the generation's on the run's timeline: the replay's first interval starts where the
//! generation's last ended (the moments between, the crash and the replay's setup, are not on
//! it). Its end's facts are the replay's; its `detail` holds the generation's facts and
//! findings and the replay's (each database's replay time, the first corruptions, the
//! verification: `summary::mailbox::RecoveryFacts`). A generation cut short has no replay:
//! no `recovery` intervals, default facts and no replay in the detail.
//!
//! Integrity's crash cycles (their start's summary has a `crash` result) have no `integrity`
//! stream: each cycle's writer process hands its closed intervals over as it closes them
//! (`HandedInterval`), and they are recorded as the cycle's stream `cycle1`, `cycle2`, ...,
//! numbered from 0 as the writer numbered them, where they ran on the run's timeline; their CPU
//! times are the writer's since its activities started. The end's facts hold the seconds and
//! CPU time of every cycle's intervals; its `detail` holds each cycle's crash and what the
//! audits found (`summary::integrity::crash::CrashFacts`). A crash bundle written before
//! storbench recorded the cycles has a start and no end.

pub mod merge;
mod name;
pub mod summary;
mod tally;

pub use name::{Counts, Name};
pub use tally::{Recordable, Tally};

use super::{Outcome, OwnCpuTime};
use crate::metrics::{EncodedLog, histogram_from_text, histogram_text};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use storbench_report::series::Phase;
use storbench_report::{SteadyState, Summary};

/// The record's file name in a bundle.
pub const RECORD_FILE: &str = "record.jsonl";
/// The histograms' file name in a bundle.
pub const HLOG_FILE: &str = "latency.hlog";
/// The format this code writes and reads.
pub const RECORD_VERSION: u32 = 1;

/// One line of `record.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    Start(Box<Start>),
    Interval(IntervalLine),
    End(End),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Start {
    pub version: u32,
    pub workload: String,
    /// The run's start on the wall clock, UTC nanoseconds since 1970.
    pub epoch_ns: i128,
    /// The summary before anything was measured.
    pub summary: Summary,
    /// The background streams beside the workload, each with its own intervals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<StreamEntry>,
}

/// A background stream as the record's start lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEntry {
    /// Its name in its interval lines and histogram tags (`bg1`).
    pub name: String,
    /// What it is (`io`).
    pub kind: String,
    /// As it was asked for.
    pub spec: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntervalLine {
    pub stream: String,
    pub index: u64,
    pub phase: Phase,
    /// Nanoseconds after the run's epoch.
    pub start_ns: u64,
    pub end_ns: u64,
    pub counts: Counts,
    /// Tags of the interval's lines in `latency.hlog`, in their order there.
    #[serde(deserialize_with = "name::names")]
    pub hists: Vec<Name>,
    /// Counts made after the last interval closed (as the workers stopped), which the run's
    /// totals include: an interval of no length at the end, after the series' last row.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tail: bool,
    /// storbench's CPU time so far when the interval closed, ns.
    #[serde(default)]
    pub cpu_user_ns: u64,
    #[serde(default)]
    pub cpu_sys_ns: u64,
    /// The host's power over the interval, watts, where a meter was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_watts: Option<f64>,
    /// What each md array and btrfs filesystem under the run's targets was doing at the
    /// interval's end (on the workload's lines; none where nothing can rebuild).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rebuild: Vec<storbench_report::RebuildSample>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct End {
    pub ended_at: String,
    pub facts: Facts,
    /// The workload's own findings (see each workload's builder in `summary`).
    pub detail: serde_json::Value,
    /// Warnings added after the summary was built (the power meter's, the terminal's).
    #[serde(default)]
    pub added_warnings: Vec<String>,
    /// Each background stream's finding that no interval holds (a command's exit status and
    /// seconds), by the stream's name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub streams: BTreeMap<String, serde_json::Value>,
}

impl End {
    /// The end of a run that ended at `ended_at` with `out`, whose own findings are `detail`;
    /// the added warnings come when the summary is written.
    pub fn of<T, D>(ended_at: &str, out: &Outcome<T, D>, detail: &impl Serialize) -> End {
        End {
            ended_at: ended_at.into(),
            facts: Facts::of(out),
            detail: serde_json::to_value(detail).expect("a workload's findings serialize"),
            added_warnings: Vec::new(),
            streams: BTreeMap::new(),
        }
    }
}

/// What an `Outcome` holds besides its interval data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    pub warmup_s: f64,
    pub measured_s: f64,
    pub cpu_user_ns: u64,
    pub cpu_sys_ns: u64,
    pub complete: bool,
    pub failures: Vec<String>,
    pub warnings: Vec<String>,
    pub steady: Option<SteadyState>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Facts {
    pub fn of<T, D>(out: &Outcome<T, D>) -> Facts {
        let ns = nanos;
        Facts {
            warmup_s: out.warmup_s,
            measured_s: out.measured_s,
            cpu_user_ns: ns(out.cpu.user),
            cpu_sys_ns: ns(out.cpu.sys),
            complete: out.complete,
            failures: out.failures.clone(),
            warnings: out.warnings.clone(),
            steady: out.steady.clone(),
        }
    }

    /// The outcome these facts and the given data make.
    pub fn outcome<T, D>(&self, totals: T, all: T, detail: D) -> Outcome<T, D> {
        Outcome {
            totals,
            all,
            warmup_s: self.warmup_s,
            measured_s: self.measured_s,
            cpu: OwnCpuTime {
                user: Duration::from_nanos(self.cpu_user_ns),
                sys: Duration::from_nanos(self.cpu_sys_ns),
            },
            complete: self.complete,
            failures: self.failures.clone(),
            warnings: self.warnings.clone(),
            steady: self.steady.clone(),
            detail,
        }
    }

    /// The measured phase's bounds in ns, as the driver's totals cover it: the steady-state
    /// window when there is one, else from the end of the warm-up.
    fn window_ns(&self) -> (u64, u64) {
        let ns = |s: f64| (s * 1e9).round() as u64;
        match &self.steady {
            Some(st) => (ns(st.window_start_s), ns(st.window_end_s)),
            None => (ns(self.warmup_s), u64::MAX),
        }
    }
}

/// The interval line for `stream` from a closed interval and its tally: the histogram tags as
/// `latency.hlog` will hold them.
pub fn interval_line(
    stream: &str,
    i: &super::Interval<'_, impl Sized>,
    tally: &Tally<'_>,
    power_watts: Option<f64>,
) -> IntervalLine {
    IntervalLine {
        stream: stream.into(),
        index: i.index,
        phase: i.phase,
        start_ns: i.start_ns,
        end_ns: i.end_ns,
        counts: tally.counts.iter().map(|(k, n)| (name::name(k), *n)).collect(),
        hists: tally.hists.iter().map(|(tag, _)| name::name(tag)).collect(),
        tail: false,
        cpu_user_ns: nanos(i.cpu.user),
        cpu_sys_ns: nanos(i.cpu.sys),
        power_watts,
        rebuild: Vec::new(),
    }
}

/// The tail of `stream` (see `IntervalLine::tail`), after the interval `last`.
pub fn tail_line(stream: &str, last: &IntervalLine, tally: &Tally<'_>) -> IntervalLine {
    IntervalLine {
        stream: stream.into(),
        index: last.index + 1,
        phase: last.phase,
        start_ns: last.end_ns,
        end_ns: last.end_ns,
        counts: tally.counts.iter().map(|(k, n)| (name::name(k), *n)).collect(),
        hists: tally.hists.iter().map(|(tag, _)| name::name(tag)).collect(),
        tail: true,
        cpu_user_ns: last.cpu_user_ns,
        cpu_sys_ns: last.cpu_sys_ns,
        power_watts: None,
        rebuild: Vec::new(),
    }
}

/// An interval line with its histograms in it, each encoded as `latency.hlog` holds it: how a
/// process that measures for the run (a crash cycle's writer) hands an interval over, one JSON
/// object a line, for the run to record as its own.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HandedInterval {
    pub line: IntervalLine,
    /// The histograms `line.hists` names, in its order.
    pub hists: Vec<String>,
}

impl HandedInterval {
    /// `line` with the histograms of `tally`, which it was made from.
    pub fn of(line: IntervalLine, tally: &Tally<'_>) -> HandedInterval {
        HandedInterval { hists: tally.hists.iter().map(|(_, h)| histogram_text(h)).collect(), line }
    }

    /// The line and its tally, read back.
    pub fn into_parts(self) -> Result<(IntervalLine, Tally<'static>), String> {
        if self.hists.len() != self.line.hists.len() {
            return Err(format!(
                "the interval names {} histograms and holds {}",
                self.line.hists.len(),
                self.hists.len()
            ));
        }
        let hists = self.line.hists.iter().zip(&self.hists).map(|(tag, text)| {
            histogram_from_text(text).map(|h| (tag.to_string(), std::borrow::Cow::Owned(h)))
        });
        let tally = Tally { counts: name::owned(&self.line.counts), hists: hists.collect::<Result<_, _>>()? };
        Ok((self.line, tally))
    }
}

/// A record read back from a bundle.
#[derive(Debug)]
pub struct StoredRecord {
    pub start: Start,
    pub intervals: Vec<IntervalLine>,
    pub end: Option<End>,
    /// `latency.hlog`'s interval histograms in file order, encoded (decoded when used);
    /// empty where the log was left on disk (`read_without_log`).
    hlog: EncodedLog,
    /// The log's file, where it was left on disk.
    log_file: Option<std::path::PathBuf>,
}

/// Why a bundle's record cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{0}")]
    Read(String),
    #[error("{file} line {line}: {why}")]
    Bad { file: &'static str, line: usize, why: String },
}

/// The most a record or histogram log may hold: 4 GiB.
const READ_LIMIT: u64 = 4 << 30;

impl StoredRecord {
    /// Reads `record.jsonl` and `latency.hlog` of the bundle in `dir`.
    pub fn read(dir: &Path) -> Result<StoredRecord, RecordError> {
        Self::from_text(&bundle_text(dir, RECORD_FILE)?, &bundle_text(dir, HLOG_FILE)?)
    }

    /// Reads `record.jsonl` of the bundle in `dir`, leaving its `latency.hlog` on disk for the
    /// caller to read forward (`log_file`, `metrics::LogCursor`): a merge of many shards holds
    /// none of their logs. Such a record's histograms are not checked against its intervals
    /// until they are read, and it merges no intervals itself (`merged` refuses).
    pub fn read_without_log(dir: &Path) -> Result<StoredRecord, RecordError> {
        let mut out = Self::parse(&bundle_text(dir, RECORD_FILE)?, None)?;
        out.log_file = Some(dir.join(HLOG_FILE));
        Ok(out)
    }

    /// The log's file, where the record left it on disk (`read_without_log`).
    pub fn log_file(&self) -> Option<&Path> {
        self.log_file.as_deref()
    }

    /// A record from the text of its `record.jsonl` and `latency.hlog` (a merged record, before
    /// it is written).
    pub fn from_text(record: &str, hlog: &str) -> Result<StoredRecord, RecordError> {
        let hlog = EncodedLog::read(hlog, |tag| !tag.ends_with("-total"))
            .map_err(|why| RecordError::Bad { file: HLOG_FILE, line: 0, why })?;
        Self::parse(record, Some(hlog))
    }

    /// The record `record`, with its log `hlog` where it was read (checked to hold every
    /// histogram the intervals name).
    fn parse(record: &str, hlog: Option<EncodedLog>) -> Result<StoredRecord, RecordError> {
        let checked = hlog.is_some();
        let bad = |line: usize, why: String| RecordError::Bad { file: RECORD_FILE, line, why };
        let mut lines = record.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, first)) = lines.next() else { return Err(bad(1, "the record is empty".into())) };
        let start = match serde_json::from_str(first).map_err(|e| bad(1, e.to_string()))? {
            Line::Start(s) if s.version == RECORD_VERSION => *s,
            Line::Start(s) => {
                return Err(bad(
                    1,
                    format!("record version {} (this storbench reads {RECORD_VERSION})", s.version),
                ));
            }
            _ => return Err(bad(1, "the record does not begin with its start".into())),
        };
        let hlog = hlog.unwrap_or_default();
        // As long as it needs to be: a merge holds a hundred shards' records.
        let intervals = Vec::with_capacity(record.lines().count());
        let mut out = StoredRecord { start, intervals, end: None, hlog, log_file: None };
        for (n, text) in lines {
            if out.end.is_some() {
                return Err(bad(n + 1, "a line after the record's end".into()));
            }
            match serde_json::from_str(text).map_err(|e| bad(n + 1, e.to_string()))? {
                Line::Interval(i) => out.intervals.push(i),
                Line::End(e) => out.end = Some(e),
                Line::Start(_) => return Err(bad(n + 1, "a second start".into())),
            }
        }
        let listed: usize = out.intervals.iter().map(|i| i.hists.len()).sum();
        if checked && listed > out.hlog.len() {
            return Err(RecordError::Bad {
                file: HLOG_FILE,
                line: 0,
                why: format!(
                    "the record lists {listed} interval histograms; the log holds {}",
                    out.hlog.len()
                ),
            });
        }
        Ok(out)
    }

    /// The end line, or why there is none.
    pub fn end(&self) -> Result<&End, RecordError> {
        self.end.as_ref().ok_or_else(|| {
            RecordError::Read(
                "the record has no end: the run was killed before it finished, or it is of integrity \
                 crash cycles run by a storbench that did not record them"
                    .into(),
            )
        })
    }

    /// That the log holds the histograms interval `n` (`i`) names from its `first` on.
    fn check_tags(&self, n: usize, i: &IntervalLine, first: usize) -> Result<(), RecordError> {
        for (k, tag) in (first..).zip(&i.hists) {
            let there = self.hlog.tag(k);
            if there != Some(&**tag) {
                return Err(RecordError::Bad {
                    file: HLOG_FILE,
                    line: 0,
                    why: format!(
                        "interval {n} of the record names the histogram {tag}; the log has {} there",
                        there.unwrap_or("nothing")
                    ),
                });
            }
        }
        Ok(())
    }

    /// Each interval with the indexes of its histograms in the log, the tags checked (where
    /// the log was read; one left on disk is checked as it is read).
    pub fn with_hists(&self) -> Result<Vec<(&IntervalLine, std::ops::Range<usize>)>, RecordError> {
        let mut at = 0;
        let mut out = Vec::with_capacity(self.intervals.len());
        for (n, i) in self.intervals.iter().enumerate() {
            if self.log_file.is_none() {
                self.check_tags(n, i, at)?;
            }
            out.push((i, at..at + i.hists.len()));
            at += i.hists.len();
        }
        Ok(out)
    }

    /// The log's interval histograms, encoded.
    pub fn hlog(&self) -> &EncodedLog {
        &self.hlog
    }

    /// `stream`'s intervals `select` takes, each with its histograms, merged into one `T`.
    pub fn merged<T: Recordable>(
        &self,
        stream: &str,
        select: impl Fn(&IntervalLine) -> bool,
    ) -> Result<T, RecordError> {
        if T::ADDS_UP {
            return self.summed(stream, select);
        }
        let mut merged = T::default();
        self.each(stream, select, |_, data: T| merged.merge(&data))?;
        Ok(merged)
    }

    /// As `merged`, for data whose counts and histograms add up (`Recordable::ADDS_UP`): the
    /// counts added and each tag's histograms summed bucket by bucket from their encoding,
    /// read back once, no histogram decoded whole per interval.
    fn summed<T: Recordable>(
        &self,
        stream: &str,
        select: impl Fn(&IntervalLine) -> bool,
    ) -> Result<T, RecordError> {
        let [sums] = self.sums_by(stream, |i| select(i).then_some(0))?;
        sums.read()
    }

    /// `stream`'s intervals added up by class (`class` gives an interval's, None leaves it
    /// out): each class's counts and histograms' buckets, for data that adds up.
    fn sums_by<const N: usize>(
        &self,
        stream: &str,
        class: impl Fn(&IntervalLine) -> Option<usize>,
    ) -> Result<[Sums; N], RecordError> {
        let own = format!("{stream}.");
        let mut out: [Sums; N] = std::array::from_fn(|_| Sums::default());
        let mut scratch = crate::metrics::Inflater::default();
        let mut at = 0;
        for (n, i) in self.intervals.iter().enumerate() {
            let first = at;
            at += i.hists.len();
            self.check_tags(n, i, first)?;
            let Some(sums) = class(i).filter(|_| i.stream == stream).and_then(|c| out.get_mut(c)) else {
                continue;
            };
            for (name, v) in &i.counts {
                *sums.counts.entry(name.to_string()).or_default() += v;
            }
            for (k, tag) in (first..at).zip(&i.hists) {
                let sum = sums.hists.of(tag.strip_prefix(&own).unwrap_or(tag));
                self.hlog.add_to(k, sum, &mut scratch).map_err(|why| RecordError::Bad {
                    file: HLOG_FILE,
                    line: 0,
                    why,
                })?;
            }
        }
        Ok(out)
    }

    /// Each of `stream`'s intervals `select` takes, read back as a `T` (its histograms decoded)
    /// and given to `take` in order.
    fn each<T: Recordable>(
        &self,
        stream: &str,
        select: impl Fn(&IntervalLine) -> bool,
        mut take: impl FnMut(&IntervalLine, T),
    ) -> Result<(), RecordError> {
        let mut at = 0;
        for (n, i) in self.intervals.iter().enumerate() {
            let first = at;
            at += i.hists.len();
            self.check_tags(n, i, first)?;
            if i.stream != stream || !select(i) {
                continue;
            }
            // A background stream's tags carry its name; its data reads back without it.
            let own = format!("{stream}.");
            let hists = (first..at)
                .zip(&i.hists)
                .map(|(k, tag)| {
                    let h = self.hlog.decode(k).map_err(|why| RecordError::Bad {
                        file: HLOG_FILE,
                        line: 0,
                        why,
                    })?;
                    let tag = tag.strip_prefix(&own).unwrap_or(tag).to_string();
                    Ok((tag, std::borrow::Cow::Owned(h)))
                })
                .collect::<Result<_, RecordError>>()?;
            let tally = Tally { counts: name::owned(&i.counts), hists };
            let data = T::from_tally(&tally).map_err(|why| RecordError::Bad {
                file: RECORD_FILE,
                line: n + 2,
                why,
            })?;
            take(i, data);
        }
        Ok(())
    }

    /// The outcome of the run's one stream over the seconds `from_s..to_s` of the run (its
    /// whole measured intervals there, and the tail when the window reaches the run's end):
    /// the warm-up reaches to the window's first interval, the measured phase is the window,
    /// the CPU time is between the closes of the intervals around it; no steady state.
    pub fn outcome_in<T: Recordable, D: serde::de::DeserializeOwned>(
        &self,
        window: (f64, f64),
    ) -> Result<Outcome<T, D>, RecordError> {
        self.stream_outcome_in(&self.start.workload, window)
    }

    /// As `outcome_in`, of the run's workload stream `stream` (a mailbox backup's `backup`).
    pub fn stream_outcome_in<T: Recordable, D: serde::de::DeserializeOwned>(
        &self,
        stream: &str,
        (from_s, to_s): (f64, f64),
    ) -> Result<Outcome<T, D>, RecordError> {
        let mut out: Outcome<T, D> = self.stream_outcome(stream)?;
        let (from, to) = ((from_s * 1e9).round() as u64, (to_s * 1e9).round() as u64);
        let inside = |i: &IntervalLine| {
            i.stream == stream
                && (i.tail || i.phase == Phase::Measure)
                && i.start_ns >= from
                && i.end_ns <= to
        };
        let lines: Vec<&IntervalLine> = self.intervals.iter().filter(|i| inside(i)).collect();
        let (Some(first), Some(last)) = (lines.iter().find(|i| !i.tail), lines.last()) else {
            return Err(RecordError::Read(format!(
                "the window {from_s} s..{to_s} s holds no whole measured interval of the run"
            )));
        };
        let before = self.intervals.iter().rev().find(|i| i.stream == stream && i.end_ns <= first.start_ns);
        let cpu = |i: Option<&&IntervalLine>| (i.map_or(0, |i| i.cpu_user_ns), i.map_or(0, |i| i.cpu_sys_ns));
        let ((u0, s0), (u1, s1)) = (cpu(before.as_ref()), cpu(Some(last)));
        out.totals = self.merged(stream, inside)?;
        out.warmup_s = first.start_ns as f64 / 1e9;
        out.measured_s = (last.end_ns - first.start_ns) as f64 / 1e9;
        out.cpu = OwnCpuTime {
            user: Duration::from_nanos(u1.saturating_sub(u0)),
            sys: Duration::from_nanos(s1.saturating_sub(s0)),
        };
        out.steady = None;
        out.warnings.push(format!(
            "figures over seconds {:.0}-{:.0} of the run, rebuilt from its record",
            out.warmup_s,
            last.end_ns as f64 / 1e9
        ));
        Ok(out)
    }

    /// The outcome of the run's one stream (named after its workload): the measured phase's
    /// intervals merged (`totals`), every interval merged (`all`), the facts and `detail`.
    pub fn outcome<T: Recordable, D: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<Outcome<T, D>, RecordError> {
        self.stream_outcome(&self.start.workload)
    }

    /// As `outcome`, of the run's workload stream `stream` (a mailbox backup's `backup`).
    pub fn stream_outcome<T: Recordable, D: serde::de::DeserializeOwned>(
        &self,
        stream: &str,
    ) -> Result<Outcome<T, D>, RecordError> {
        self.stream_outcome_of(stream, &self.end()?.facts, self.detail()?)
    }

    /// The end's `detail`: the workload's own findings.
    pub fn detail<D: serde::de::DeserializeOwned>(&self) -> Result<D, RecordError> {
        serde_json::from_value(self.end()?.detail.clone()).map_err(|e| RecordError::Bad {
            file: RECORD_FILE,
            line: 0,
            why: format!("the end's detail: {e}"),
        })
    }

    /// The outcome of `stream` as a run with `facts` and `detail` had it: a stream whose facts
    /// the end's detail keeps (a mailbox soft recovery's log generation, before the replay the
    /// end's facts are of).
    pub fn stream_outcome_of<T: Recordable, D>(
        &self,
        stream: &str,
        facts: &Facts,
        detail: D,
    ) -> Result<Outcome<T, D>, RecordError> {
        let (from, to) = facts.window_ns();
        // The tail counts in the totals whatever the phase, as the run counted it.
        let counted =
            |i: &IntervalLine| i.tail || (i.phase == Phase::Measure && i.start_ns >= from && i.end_ns <= to);
        if T::ADDS_UP {
            let [inside, mut all] = self.sums_by(stream, |i| Some(usize::from(!counted(i))))?;
            let totals = inside.read()?;
            all.add(&inside);
            return Ok(facts.outcome(totals, all.read()?, detail));
        }
        // Both sums in one pass: each interval decoded once.
        let (mut totals, mut all) = (T::default(), T::default());
        self.each(
            stream,
            |_| true,
            |i, data: T| {
                if counted(i) {
                    totals.merge(&data);
                }
                all.merge(&data);
            },
        )?;
        Ok(facts.outcome(totals, all, detail))
    }
}

/// Intervals added up: their counts, and each tag's histograms bucket by bucket.
#[derive(Default)]
struct Sums {
    counts: BTreeMap<String, u64>,
    hists: crate::metrics::TagSums,
}

impl Sums {
    fn add(&mut self, other: &Sums) {
        for (name, v) in &other.counts {
            *self.counts.entry(name.clone()).or_default() += v;
        }
        self.hists.add(&other.hists);
    }

    /// The sums read back as the data they add up to.
    fn read<T: Recordable>(&self) -> Result<T, RecordError> {
        let hists =
            self.hists.iter().map(|(t, s)| (t.to_string(), std::borrow::Cow::Owned(s.histogram()))).collect();
        let tally = Tally { counts: self.counts.clone(), hists };
        T::from_tally(&tally).map_err(|why| RecordError::Bad { file: RECORD_FILE, line: 0, why })
    }
}

/// The text of the bundle `dir`'s file `name`.
fn bundle_text(dir: &Path, name: &str) -> Result<String, RecordError> {
    crate::files::input::read_text(&dir.join(name), READ_LIMIT).map_err(|e| match e.is_not_found() {
        true => RecordError::Read(format!(
            "{} has no {name}: it is not a run's bundle, or one written before storbench kept its record",
            dir.display()
        )),
        false => RecordError::Read(format!("{}: {e}", dir.join(name).display())),
    })
}

/// The end of a run with `facts` and no findings of its own: for tests that write a record.
#[cfg(test)]
pub(crate) fn test_end(facts: Facts) -> End {
    End {
        ended_at: "then".into(),
        facts,
        detail: serde_json::json!({}),
        added_warnings: vec![],
        streams: BTreeMap::new(),
    }
}

/// A summary as a run of `workload` starts, nothing measured: for tests that write a record.
#[cfg(test)]
pub(crate) fn test_summary(workload: &str) -> Summary {
    let started = storbench_report::testing::summary(
        workload,
        storbench_report::Results::Io(Default::default()),
        false,
    );
    Summary {
        tool: storbench_report::Tool { name: "storbench".into(), version: "test".into() },
        name: "test".into(),
        host: Default::default(),
        target: Default::default(),
        phases: Default::default(),
        ..started
    }
}

#[cfg(test)]
mod tests;
