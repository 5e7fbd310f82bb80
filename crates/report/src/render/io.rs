//! The synthetic I/O workload (`storbench io`) in the report: IOPS (reads and writes) as its
//! headline, its failed I/Os in and outside the measured window, data verification as its
//! check, read and write latencies, and its per-second charts. A run that replayed a block
//! trace (`replay-trace`) has a section of its own: what it replayed and its fidelity check,
//! which is its check too.

use super::ReportInput;
use super::charts::{SCHEDULE_LAG, Spec, spec};
use super::doc::{Block, Table, num};
use super::spectrum::LatencyTypes;
use super::workload::{Shown, p50_ms, p99_ms};
use crate::columns::io;
use crate::decision::figures::{Figure, Value, WORD, ms, n, names, pass_fail, read};
use crate::evaluation::Headline;
use crate::fingerprint::{FidelityCheck, TraceReplay};
use crate::model::{IoErrors, IoResults};
use crate::workload::{OwnCheck, Reported, WorkloadResults};

const CHARTS: &[Spec] = &[
    spec("I/O per second", &[(io::READ_IOPS, "read"), (io::WRITE_IOPS, "write")]),
    spec(
        "Latency",
        &[
            (io::READ_LAT_P50_US, "read p50"),
            (io::READ_LAT_P99_US, "read p99"),
            (io::WRITE_LAT_P50_US, "write p50"),
            (io::WRITE_LAT_P99_US, "write p99"),
        ],
    ),
    SCHEDULE_LAG,
];

/// The figures a requirement may name (`randread.iops`), each read from the measured phase.
pub(super) const FIGURES: &[Figure<IoResults>] = &[
    Figure { name: "iops", unit: "IOPS", get: |r| n(r.read.iops + r.write.iops) },
    Figure { name: "read_iops", unit: "read IOPS", get: |r| n(r.read.iops) },
    Figure { name: "write_iops", unit: "write IOPS", get: |r| n(r.write.iops) },
    Figure {
        name: "mb_per_s",
        unit: "MB/s",
        get: |r| n((r.read.bytes_per_sec + r.write.bytes_per_sec) / 1e6),
    },
    Figure {
        name: "read_mean_ms",
        unit: "ms read mean",
        get: |r| r.read.lat_ns.as_ref().and_then(|l| n(l.mean / 1e6)),
    },
    Figure {
        name: "read_p99_ms",
        unit: "ms read p99",
        get: |r| r.read.lat_ns.as_ref().and_then(|l| ms(l.p99)),
    },
    Figure {
        name: "read_p999_ms",
        unit: "ms read p99.9",
        get: |r| r.read.lat_ns.as_ref().and_then(|l| ms(l.p999)),
    },
    Figure {
        name: "write_mean_ms",
        unit: "ms write mean",
        get: |r| r.write.lat_ns.as_ref().and_then(|l| n(l.mean / 1e6)),
    },
    Figure {
        name: "write_p99_ms",
        unit: "ms write p99",
        get: |r| r.write.lat_ns.as_ref().and_then(|l| ms(l.p99)),
    },
    Figure {
        name: "write_p999_ms",
        unit: "ms write p99.9",
        get: |r| r.write.lat_ns.as_ref().and_then(|l| ms(l.p999)),
    },
    Figure { name: "flushes_per_s", unit: "flushes/s", get: |r| r.flush.as_ref().and_then(|f| n(f.iops)) },
    Figure {
        name: "flush_p99_ms",
        unit: "ms flush p99",
        get: |r| r.flush.as_ref().and_then(|f| f.lat_ns.as_ref()).and_then(|l| ms(l.p99)),
    },
    Figure { name: "errors", unit: "failed I/Os", get: |r| n(r.errors.total as f64) },
    Figure { name: "error_rate_pct", unit: "% of I/Os failed", get: |r| n(r.error_rate_pct.unwrap_or(0.0)) },
    Figure { name: "verify", unit: WORD, get: |r| pass_fail(r.verify.mismatches == 0) },
];

/// What io reports (its registry entry's `reported`).
pub const REPORTED: Reported = Reported {
    figures: || names(FIGURES),
    latency_types: LatencyTypes::Tags(&[("read", "reads"), ("write", "writes")]),
};

impl WorkloadResults for IoResults {
    fn reported(&self) -> Reported {
        REPORTED
    }

    fn figure(&self, name: &str) -> Option<Option<Value>> {
        read(FIGURES, self, name)
    }

    fn headline(&self) -> Option<Headline> {
        Some(Headline::new("IOPS", self.read.iops + self.write.iops, true))
    }

    fn io_errors(&self) -> Option<IoErrors<'_>> {
        Some(IoErrors {
            failed: self.errors.total,
            completed: self.read.ios.saturating_add(self.write.ios),
            outside: self.errors_outside_window,
            by_kind: &self.errors.by_kind,
        })
    }

    /// Data verification where it ran (every block read back as written), and a trace
    /// replay's fidelity figures where it was checked.
    fn checks(&self) -> Vec<OwnCheck> {
        let mut out = Vec::new();
        if self.verify.enabled {
            out.push(OwnCheck {
                name: "verify".into(),
                measured: Some(format!(
                    "{} of {} blocks differ",
                    self.verify.mismatches, self.verify.blocks_checked
                )),
                limit: "none differs".into(),
                held: Some(self.verify.mismatches == 0),
            });
        }
        let Some(check) = self.replay_check() else { return out };
        for f in check.figures.iter().filter(|f| f.held) {
            out.push(OwnCheck {
                name: format!("the replay's {}", f.name),
                measured: Some(format!("{} {} from the trace's", num(f.distance), f.unit)),
                limit: format!("at most {} {}", num(f.limit), f.unit),
                held: Some(f.pass),
            });
        }
        if !check.pass && !out.iter().any(|c| c.held == Some(false)) {
            // A check failed as a whole (as an older bundle records it) still fails.
            let whole = "the replay's fidelity to its trace";
            out.push(OwnCheck {
                name: whole.into(),
                measured: Some("failed".into()),
                limit: "as captured".into(),
                held: Some(false),
            });
        }
        out
    }
}

impl Shown for IoResults {
    fn beside(&self) -> Vec<(&'static str, Option<f64>, bool)> {
        vec![("MB/s", Some((self.read.bytes_per_sec + self.write.bytes_per_sec) / 1e6), false)]
    }

    fn latencies(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![
            ("read p50", p50_ms(&self.read.lat_ns)),
            ("read p99", p99_ms(&self.read.lat_ns)),
            ("write p50", p50_ms(&self.write.lat_ns)),
            ("write p99", p99_ms(&self.write.lat_ns)),
        ]
    }

    fn charts(&self) -> &'static [Spec] {
        CHARTS
    }

    fn section(&self, input: &ReportInput) -> Vec<Block> {
        let replays: Vec<(String, &TraceReplay)> = input
            .evaluation
            .runs
            .iter()
            .filter_map(|r| {
                let t = input.runs.get(&r.id)?.summary.results.get::<IoResults>()?.trace.as_deref()?;
                Some((format!("{} · {} ({})", r.configuration, r.workload, r.id), t))
            })
            .collect();
        if replays.is_empty() {
            return Vec::new();
        }
        let mut out = vec![
            Block::Heading(2, "Trace replays".into()),
            Block::Para(
                "Each run that replayed a block trace: the trace, and with its check the run's own \
                 capture against the trace, figure by figure. Queue depth and latency are the \
                 storage's answer, not the workload's ask: they are in the results, not held here."
                    .into(),
            ),
        ];
        for (what, t) in replays {
            out.push(Block::Heading(3, what));
            out.push(Block::Para(replayed(t)));
            if let Some(c) = &t.check {
                out.push(Block::Table(check_table(c)));
            }
        }
        out
    }
}

impl IoResults {
    /// A trace replay's fidelity check, where it had one.
    fn replay_check(&self) -> Option<&FidelityCheck> {
        self.trace.as_ref()?.check.as_ref()
    }
}

/// What a replay replayed, in a sentence.
fn replayed(t: &TraceReplay) -> String {
    let pace = match t.speed {
        Some(x) => format!("as recorded at speed {x}"),
        None => "as fast as the storage took them".into(),
    };
    let skipped: Vec<String> = t.not_replayed.iter().map(|(kind, n)| format!("{n} {kind}(s)")).collect();
    let skipped =
        if skipped.is_empty() { String::new() } else { format!("; not replayed: {}", skipped.join(", ")) };
    format!(
        "{}, {pace}: {} requests over {} s as recorded ({} IOPS){skipped}.",
        t.trace,
        t.recorded_requests,
        num(t.recorded_s),
        num(t.recorded_iops)
    )
}

fn check_table(c: &FidelityCheck) -> Table {
    let mut table = Table::new(&["figure", "trace", "replay", "apart", "limit", "verdict"]);
    for f in &c.figures {
        let value = |v: f64| if f.name == "sizes" { "—".into() } else { num(v) };
        table.push(vec![
            f.name.clone(),
            value(f.original),
            value(f.replayed),
            format!("{} {}", num(f.distance), f.unit),
            if f.held { num(f.limit) } else { "—".into() },
            f.verdict().into(),
        ]);
    }
    table
}
