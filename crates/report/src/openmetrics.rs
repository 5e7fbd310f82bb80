//! Live metrics as OpenMetrics and Prometheus text (the command line's `--metrics-listen`
//! serves them): the exposition of a [`Snapshot`], pure, from a run's latest per-second row
//! and its counters to bytes.
//!
//! Names follow Prometheus' conventions, derived mechanically from the `timeseries.csv` column
//! names so that a column has one name everywhere: `storbench_<column>` in base units
//! (`read_lat_p99_us` becomes `storbench_read_lat_p99_seconds`, `cpu_user_pct`
//! `storbench_cpu_user_ratio`, `_per_sec` `_per_second`). Columns with an instance in their
//! name become a label: `disk.<device>.<col>` is `storbench_device_<col>{device=...}`,
//! `rebuild.<stack>.<col>` `storbench_rebuild_<col>{stack=...}`, `power.<meter>.watts`
//! `storbench_meter_watts{meter=...}`, a background stream's `<stream>.<col>`
//! `storbench_stream_<col>{stream=...}`. A workload column counting events in the interval
//! (errors, orders, calls) is the counter `storbench_<column>_total` of the run so far instead.
//!
//! Two formats, told apart by the scraper's Accept header as Prometheus' own client libraries
//! do: OpenMetrics 1.0 (what Prometheus asks for; `# UNIT`, counters' families without
//! `_total`, `# EOF`) and the Prometheus text format 0.0.4 (what curl and `promtool check
//! metrics` get). The samples are the same.

use crate::columns::{Column, Quantity};
use crate::series::SeriesRow;

/// The labels every series carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Labels {
    /// The run (its name, else its bundle's directory name).
    pub run: String,
    pub workload: String,
    /// The evaluation's configuration; empty outside an evaluation.
    pub configuration: String,
    /// The shard identity (`I/N`); None outside a sharded run.
    pub shard: Option<String>,
}

/// What a scrape shows: the run's labels and phase, its latest row and its counters so far.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub labels: Labels,
    pub phase: String,
    /// The latest closed interval's row; None before the first.
    pub row: Option<SeriesRow>,
    /// Each counter's column name (`errors`, `ios`) and its total so far, in a fixed order.
    pub counters: Vec<(String, f64)>,
}

/// An exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    /// The Prometheus text format 0.0.4.
    Text,
}

impl Format {
    /// The format a scraper's `Accept` header asks for: OpenMetrics where it names it.
    pub fn for_accept(accept: &str) -> Format {
        if accept.contains("application/openmetrics-text") { Format::OpenMetrics } else { Format::Text }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Gauge,
    Counter,
}

/// One metric family: its name (a counter's without `_total`) and its samples, each with its
/// own labels besides the common ones.
struct Family {
    name: String,
    kind: Type,
    help: String,
    samples: Vec<(Option<(&'static str, String)>, f64)>,
}

/// The text a scrape returns.
pub fn render(s: &Snapshot, format: Format) -> String {
    let families = families(s);
    let common = common_labels(&s.labels);
    let mut out = String::new();
    for f in &families {
        metadata(&mut out, f, format);
        let sample_name = match f.kind {
            Type::Counter => format!("{}_total", f.name),
            Type::Gauge => f.name.clone(),
        };
        for (extra, value) in &f.samples {
            let extra =
                extra.as_ref().map(|(k, v)| format!(",{k}=\"{}\"", escape_label(v))).unwrap_or_default();
            out.push_str(&format!("{sample_name}{{{common}{extra}}} {}\n", number(*value)));
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// The families in the order they are shown: phase, elapsed time, the row's gauges, counters.
fn families(s: &Snapshot) -> Vec<Family> {
    let mut families = vec![Family {
        name: "storbench_phase".into(),
        kind: Type::Gauge,
        help: "The run's current phase (ramp, measure, verify...): 1 for it.".into(),
        samples: vec![(Some(("phase", s.phase.clone())), 1.0)],
    }];
    if let Some(row) = &s.row {
        let help = "Seconds from the run's start to the end of its latest closed interval.";
        families.push(gauge("storbench_elapsed_seconds".into(), help.into(), None, row.t_s));
        for (cell, value) in gauges_of(row) {
            let Some(value) = value else { continue };
            let (name, label, scale) = metric_of(&cell);
            let help = format!("timeseries.csv's {cell} over the latest closed interval.");
            add(&mut families, gauge(name, help, label, in_base(value, scale)));
        }
    }
    for (column, total) in &s.counters {
        let (name, _, _) = metric_of(column);
        let help = format!("The {column} of the run so far.");
        families.push(Family { kind: Type::Counter, ..gauge(name, help, None, *total) });
    }
    families
}

/// The row's cells that are gauges: all but the workload's counts of events in the interval.
fn gauges_of(row: &SeriesRow) -> Vec<(String, Option<f64>)> {
    let counted: Vec<&str> = counted_columns(row).map(|c| c.name).collect();
    let cells = row.cells().into_iter().filter(|(name, _)| !counted.contains(&name.as_ref()));
    cells.map(|(name, v)| (name.into_owned(), v)).collect()
}

/// The names of the workload's columns that count events in the interval (errors, orders,
/// calls): shown as counters of the run so far.
pub fn counted_columns(row: &SeriesRow) -> impl Iterator<Item = Column> + '_ {
    row.workload.iter().filter(|(c, _)| c.quantity == Quantity::Count).map(|(c, _)| *c)
}

fn gauge(name: String, help: String, label: Option<(&'static str, String)>, value: f64) -> Family {
    Family { name, kind: Type::Gauge, help, samples: vec![(label, value)] }
}

/// Adds `f` to its family where one of its name exists (another device's column).
fn add(families: &mut Vec<Family>, f: Family) {
    match families.iter_mut().find(|g| g.name == f.name) {
        Some(g) => g.samples.extend(f.samples),
        None => families.push(f),
    }
}

fn metadata(out: &mut String, f: &Family, format: Format) {
    let name = match (f.kind, format) {
        (Type::Counter, Format::Text) => format!("{}_total", f.name),
        _ => f.name.clone(),
    };
    let kind = if f.kind == Type::Counter { "counter" } else { "gauge" };
    out.push_str(&format!("# HELP {name} {}\n# TYPE {name} {kind}\n", escape_help(&f.help)));
    let unit = ["seconds", "bytes", "ratio", "watts"].into_iter().find(|u| name.ends_with(&format!("_{u}")));
    if let (Some(unit), Format::OpenMetrics) = (unit, format) {
        out.push_str(&format!("# UNIT {name} {unit}\n"));
    }
}

/// A column's (or cell's) metric name, the label its instance becomes, and the power of ten
/// that takes its values to the base unit.
fn metric_of(cell: &str) -> (String, Option<(&'static str, String)>, i32) {
    let (group, label, column) = match cell.split_once('.') {
        None => ("", None, cell),
        Some((space, rest)) => match (space, rest.rsplit_once('.')) {
            ("disk", Some((device, col))) => ("device_", Some(("device", device.to_string())), col),
            ("rebuild", Some((stack, col))) => ("rebuild_", Some(("stack", stack.to_string())), col),
            ("power", Some((meter, col))) => ("meter_", Some(("meter", meter.to_string())), col),
            _ => ("stream_", Some(("stream", space.to_string())), rest),
        },
    };
    let (column, scale) = base_unit(column);
    (format!("storbench_{group}{}", sanitize(&column)), label, scale)
}

/// A column name in base units (seconds, bytes, ratios) and the power of ten its values take.
fn base_unit(column: &str) -> (String, i32) {
    const SUFFIXES: [(&str, &str, i32); 5] = [
        ("_mb_per_sec", "_bytes_per_second", 6),
        ("_per_sec", "_per_second", 0),
        ("_us", "_seconds", -6),
        ("_ms", "_seconds", -3),
        ("_pct", "_ratio", -2),
    ];
    if let Some(rest) = column.strip_prefix("pct_") {
        return (format!("{rest}_ratio"), -2);
    }
    for (suffix, base, scale) in SUFFIXES {
        if let Some(stem) = column.strip_suffix(suffix) {
            return (format!("{stem}{base}"), scale);
        }
    }
    (column.to_string(), 0)
}

/// `value` times ten to `exp`; a division where `exp` is negative, so that 250 µs is exactly
/// the 0.00025 s it is written as, not 0.00025000000000000006.
fn in_base(value: f64, exp: i32) -> f64 {
    if exp < 0 { value / 10f64.powi(-exp) } else { value * 10f64.powi(exp) }
}

/// Only what a metric name may hold: a stream's or device's odd character becomes `_`.
fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

fn common_labels(l: &Labels) -> String {
    let shard = l.shard.as_deref().unwrap_or("");
    let pairs =
        [("run", &*l.run), ("workload", &l.workload), ("configuration", &l.configuration), ("shard", shard)];
    let text: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}=\"{}\"", escape_label(v))).collect();
    text.join(",")
}

/// A label value as both formats quote it.
fn escape_label(v: &str) -> String {
    v.replace('\\', r"\\").replace('"', r#"\""#).replace('\n', r"\n")
}

fn escape_help(v: &str) -> String {
    v.replace('\\', r"\\").replace('\n', r"\n")
}

/// A value as both formats write it (integers without a fraction).
fn number(v: f64) -> String {
    match v {
        v if v.is_nan() => "NaN".into(),
        v if v.is_infinite() => if v > 0.0 { "+Inf" } else { "-Inf" }.into(),
        v => format!("{v}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::io;
    use crate::series::{DeviceSample, DiskSample, Phase, SystemSample};

    fn snapshot() -> Snapshot {
        let system = SystemSample {
            devices: vec![
                DeviceSample { device: "loop1".into(), disk: Some(DiskSample::default()) },
                DeviceSample { device: "loop2".into(), disk: None },
            ],
            power_watts: Some(90.5),
            ..SystemSample::default()
        };
        let row = SeriesRow {
            t_s: 3.0,
            phase: Phase::Measure,
            workload: vec![
                (io::READ_IOPS, Some(1000.0)),
                (io::READ_LAT_P99_US, Some(250.0)),
                (io::ERRORS, Some(2.0)),
            ],
            streams: vec![],
            system,
        };
        Snapshot {
            labels: Labels { run: "say \"hi\"\\\n".into(), workload: "io".into(), ..Labels::default() },
            phase: "measure".into(),
            row: Some(row),
            counters: vec![("errors".into(), 7.0), ("ios".into(), 3000.0)],
        }
    }

    #[test]
    fn columns_are_gauges_in_base_units_with_every_label_and_openmetrics_ends_with_eof() {
        let text = render(&snapshot(), Format::OpenMetrics);
        let labels = r#"run="say \"hi\"\\\n",workload="io",configuration="",shard="""#;
        assert!(text.contains(&format!("storbench_read_iops{{{labels}}} 1000\n")), "{text}");
        assert!(text.contains(&format!("storbench_read_lat_p99_seconds{{{labels}}} 0.00025\n")), "{text}");
        assert!(text.contains("# UNIT storbench_read_lat_p99_seconds seconds\n"), "{text}");
        assert!(text.contains(&format!("storbench_phase{{{labels},phase=\"measure\"}} 1\n")), "{text}");
        assert!(text.contains(&format!("storbench_power_watts{{{labels}}} 90.5\n")), "{text}");
        assert!(
            text.contains(&format!("storbench_device_reads_per_second{{{labels},device=\"loop1\"}} 0\n"))
        );
        assert!(!text.contains("device=\"loop2\""), "a device unread that second has no sample: {text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn a_count_column_is_a_total_counter_named_as_each_format_wants_never_an_interval_gauge() {
        let om = render(&snapshot(), Format::OpenMetrics);
        assert!(om.contains("# TYPE storbench_errors counter\n"), "{om}");
        assert!(om.contains("storbench_errors_total{") && om.contains("} 7\n"), "{om}");
        assert!(!om.contains("storbench_errors{"), "no gauge of the interval's count: {om}");
        let text = render(&snapshot(), Format::Text);
        assert!(text.contains("# TYPE storbench_ios_total counter\nstorbench_ios_total{"), "{text}");
        assert!(!text.contains("# EOF") && !text.contains("# UNIT"), "{text}");
    }

    #[test]
    fn instances_in_column_names_become_labels_and_odd_characters_never_reach_a_name() {
        let stack = Some(("stack", "/srv/db.x".to_string()));
        assert_eq!(
            metric_of("rebuild./srv/db.x.pct_done"),
            ("storbench_rebuild_done_ratio".into(), stack, -2)
        );
        let stream = Some(("stream", "bg1".to_string()));
        assert_eq!(
            metric_of("bg1.write_bytes_per_sec"),
            ("storbench_stream_write_bytes_per_second".into(), stream, 0)
        );
        let meter = Some(("meter", "server".to_string()));
        assert_eq!(metric_of("power.server.watts"), ("storbench_meter_watts".into(), meter, 0));
        assert_eq!(metric_of("backup_mb_per_sec"), ("storbench_backup_bytes_per_second".into(), None, 6));
        assert_eq!(metric_of("order_rt_p99_ms").0, "storbench_order_rt_p99_seconds");
        assert_eq!(metric_of("odd-name").0, "storbench_odd_name");
        assert_eq!((in_base(250.0, -6), in_base(12.5, -2), in_base(3.0, 6)), (0.00025, 0.125, 3e6));
    }

    #[test]
    fn the_scrapers_accept_header_chooses_the_format() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::for_accept(prometheus), Format::OpenMetrics);
        assert_eq!(Format::for_accept("*/*"), Format::Text);
    }
}
