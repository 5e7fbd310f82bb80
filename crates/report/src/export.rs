//! Pure exporters: model in, bytes or text out.

use crate::series::SeriesRow;
use crate::summary::Summary;

/// `summary.json` text (pretty, newline-terminated).
pub fn summary_json(summary: &Summary) -> String {
    let mut s = serde_json::to_string_pretty(summary).expect("summary serialises");
    s.push('\n');
    s
}

/// `{"profiles": [summary, ...]}` for a set of runs shown together.
pub fn profiles_json(summaries: &[Summary]) -> String {
    let v = serde_json::json!({ "profiles": summaries });
    let mut s = serde_json::to_string_pretty(&v).expect("summaries serialise");
    s.push('\n');
    s
}

/// The CSV header for rows shaped like `row`.
pub fn series_header(row: &SeriesRow) -> String {
    let mut s = String::from("t_s,phase");
    for (name, _) in row.cells() {
        s.push(',');
        s.push_str(&name);
    }
    s.push('\n');
    s
}

/// One CSV line; empty cells for values that do not exist in that interval.
pub fn series_line(row: &SeriesRow) -> String {
    let mut s = format!("{:.3},{}", row.t_s, row.phase.as_str());
    for (_, v) in row.cells() {
        s.push(',');
        if let Some(v) = v {
            s.push_str(&format_number(v));
        }
    }
    s.push('\n');
    s
}

/// Integers without a fraction, others with enough digits to be useful.
fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v:.3}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::io;
    use crate::series::{Phase, SystemSample};

    #[test]
    fn csv_line_has_one_cell_per_header_column_and_blanks_for_missing_values() {
        let row = SeriesRow {
            t_s: 1.0,
            phase: Phase::Measure,
            workload: vec![(io::READ_IOPS, Some(10.0)), (io::READ_LAT_P99_US, None)],
            streams: vec![],
            system: SystemSample::default(),
        };
        let header = series_header(&row);
        let line = series_line(&row);
        assert_eq!(header.split(',').count(), line.split(',').count());
        assert!(line.starts_with("1.000,measure,10,,"), "{line}");
        assert!(header.starts_with("t_s,phase,read_iops,read_lat_p99_us,disk_reads_per_sec"));
    }

    #[test]
    fn a_background_streams_columns_follow_the_workloads_under_its_name_in_one_header() {
        use crate::series::StreamValues;
        let row = SeriesRow {
            t_s: 2.0,
            phase: Phase::Measure,
            workload: vec![(io::READ_IOPS, Some(100.0))],
            streams: vec![StreamValues {
                stream: "bg1".into(),
                values: vec![(io::READ_IOPS, None), (io::WRITE_BYTES_PER_SEC, Some(10485760.0))],
            }],
            system: SystemSample::default(),
        };
        let header = series_header(&row);
        assert!(
            header.starts_with("t_s,phase,read_iops,bg1.read_iops,bg1.write_bytes_per_sec,disk_"),
            "{header}"
        );
        assert!(series_line(&row).starts_with("2.000,measure,100,,10485760,"));
        assert_eq!(header.split(',').count(), series_line(&row).split(',').count());
        assert_eq!(row.stream_value("bg1", io::WRITE_BYTES_PER_SEC), Some(10485760.0));
        assert_eq!(
            (row.stream_value("bg1", io::READ_IOPS), row.value(io::WRITE_BYTES_PER_SEC)),
            (None, None)
        );
        assert_eq!(row.stream_value("bg2", io::WRITE_BYTES_PER_SEC), None);
    }
}
