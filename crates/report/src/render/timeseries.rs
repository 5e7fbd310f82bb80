//! `timeseries.csv` read back into named columns, for charts and per-run averages.
//!
//! The file is what `export::series_header`/`series_line` write: `t_s`, `phase`, then numeric
//! columns whose names depend on the workload; an empty cell is a value that did not exist in
//! that interval. Columns are looked up by their definition (`columns`), under their name or
//! an old one, so a bundle from an older or newer storbench still renders.

use crate::columns::{self, Column, system};
use crate::model::SteadyState;
use crate::summary::Summary;

/// The rows of one run's `timeseries.csv`, column by column.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Seconds since the run started, at the end of each interval.
    pub t_s: Vec<f64>,
    /// `ramp`, `measure` or `verify`, per row.
    pub phase: Vec<String>,
    /// Every other column in file order, one value per row.
    pub columns: Vec<(String, Vec<Option<f64>>)>,
}

/// Why a `timeseries.csv` could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct SeriesError {
    pub line: usize,
    pub problem: String,
}

impl Series {
    /// The power column of a run as it went (each interval's end in seconds, phase and power
    /// reading), for its active power without reading its file back.
    pub fn of_power(rows: &[(f64, crate::series::Phase, Option<f64>)]) -> Series {
        Series {
            t_s: rows.iter().map(|r| r.0).collect(),
            phase: rows.iter().map(|r| r.1.as_str().to_string()).collect(),
            columns: vec![(system::POWER_WATTS.name.to_string(), rows.iter().map(|r| r.2).collect())],
        }
    }

    /// Keeps only the rows whose interval ends within `(from, to]` seconds (a few ms of slack
    /// for the interval clock), for figures over a window of the run.
    pub fn keep_between(&mut self, (from, to): (f64, f64)) {
        let keep: Vec<bool> = self.t_s.iter().map(|&t| inside(t, from, to)).collect();
        retain_where(&mut self.t_s, &keep);
        retain_where(&mut self.phase, &keep);
        for (_, column) in &mut self.columns {
            retain_where(column, &keep);
        }
    }

    /// Parses the CSV text; an empty file is an empty series (a run that ended at once).
    pub fn parse(text: &str) -> Result<Series, SeriesError> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else { return Ok(Series::default()) };
        let names: Vec<&str> = header.split(',').collect();
        if names.len() < 2 || names[0] != "t_s" || names[1] != "phase" {
            let problem = "the header does not start with t_s,phase".to_string();
            return Err(SeriesError { line: 1, problem });
        }
        let mut series = Series {
            columns: names[2..].iter().map(|n| (n.to_string(), Vec::new())).collect(),
            ..Series::default()
        };
        for (i, line) in lines {
            series.push_row(line, names.len()).map_err(|problem| SeriesError { line: i + 1, problem })?;
        }
        Ok(series)
    }

    fn push_row(&mut self, line: &str, width: usize) -> Result<(), String> {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != width {
            return Err(format!("{} cells where the header has {width}", cells.len()));
        }
        self.t_s.push(number(cells[0])?.ok_or("t_s is empty")?);
        self.phase.push(cells[1].to_string());
        for ((_, column), cell) in self.columns.iter_mut().zip(&cells[2..]) {
            column.push(number(cell)?);
        }
        Ok(())
    }

    /// The column, if the file has it.
    pub fn column(&self, column: Column) -> Option<&[Option<f64>]> {
        self.columns.iter().find(|(n, _)| column.answers_to(n)).map(|(_, v)| v.as_slice())
    }

    /// Background stream `stream`'s column, if the file has it (`<stream>.<column>`).
    pub fn stream_column(&self, stream: &str, column: Column) -> Option<&[Option<f64>]> {
        self.columns
            .iter()
            .find(|(n, _)| {
                n.strip_prefix(stream).and_then(|n| n.strip_prefix('.')).is_some_and(|n| column.answers_to(n))
            })
            .map(|(_, v)| v.as_slice())
    }

    /// The names of the background streams the file has columns of, in its order (the host's
    /// own namespaces, `disk.`, `rebuild.` and `power.`, are none).
    pub fn streams(&self) -> Vec<&str> {
        let host = [columns::device::PREFIX, columns::rebuild::PREFIX, columns::meter::PREFIX];
        let mut names: Vec<&str> = Vec::new();
        for (n, _) in &self.columns {
            if let Some((stream, _)) = n.split_once('.')
                && !host.contains(&stream)
                && !names.contains(&stream)
            {
                names.push(stream);
            }
        }
        names
    }

    /// Each `<prefix>.<name>.<column>` column the file has, by name in file order: each
    /// rebuilding stack's (`columns::rebuild`) values.
    pub fn each(&self, prefix: &str, column: Column) -> Vec<(&str, &[Option<f64>])> {
        self.each_named(prefix, column.name)
    }

    /// Each device's values of the disk column `column` (`columns::device`), by device.
    pub fn each_device(&self, column: Column) -> Vec<(&str, &[Option<f64>])> {
        self.each_named(columns::device::PREFIX, columns::device::short(column))
    }

    fn each_named(&self, prefix: &str, column: &str) -> Vec<(&str, &[Option<f64>])> {
        let mut out = Vec::new();
        for (n, v) in &self.columns {
            if let Some(name) = namespaced(n, prefix, column) {
                out.push((name, v.as_slice()));
            }
        }
        out
    }

    /// The column where it has at least one value.
    pub fn values(&self, column: Column) -> Option<&[Option<f64>]> {
        self.column(column).filter(|v| v.iter().any(Option::is_some))
    }

    /// The measured phase as (start, end) seconds: from the end of the row before the first
    /// measured row (0 when there is none) to the end of the last measured row.
    pub fn measure_window(&self) -> Option<(f64, f64)> {
        let first = self.phase.iter().position(|p| p == "measure")?;
        let last = self.phase.iter().rposition(|p| p == "measure")?;
        let start = if first == 0 { 0.0 } else { self.t_s[first - 1] };
        Some((start, self.t_s[last]))
    }

    /// The seconds a run's results cover: under steady state the window of its last rounds,
    /// else the measured phase.
    pub fn counted_window(&self, steady: Option<&SteadyState>) -> Option<(f64, f64)> {
        steady.map(|w| (w.window_start_s, w.window_end_s)).or_else(|| self.measure_window())
    }

    /// Mean of `name` over the rows whose interval ends in `(from, to]` (a few ms of slack for
    /// the interval clock) and that have a value.
    pub fn mean_between(&self, column: Column, window: (f64, f64)) -> Option<f64> {
        self.mean_of(self.column(column)?, window)
    }

    /// Each `<prefix>.<name>.<column>` column's mean over the measured phase, by name in file
    /// order (each named power meter's active watts).
    pub fn measured_means_each(&self, prefix: &str, column: Column) -> Vec<(&str, Option<f64>)> {
        let Some(window) = self.measure_window() else { return Vec::new() };
        self.means_of(self.each(prefix, column), window)
    }

    /// Each device's own `column` (`disk.<device>.<short>`), its mean over `window`, by device
    /// in file order.
    pub fn device_means(&self, column: Column, window: (f64, f64)) -> Vec<(&str, Option<f64>)> {
        self.means_of(self.each_device(column), window)
    }

    fn means_of<'a>(
        &self,
        each: Vec<(&'a str, &[Option<f64>])>,
        window: (f64, f64),
    ) -> Vec<(&'a str, Option<f64>)> {
        each.into_iter().map(|(name, values)| (name, self.mean_of(values, window))).collect()
    }

    fn mean_of(&self, column: &[Option<f64>], (from, to): (f64, f64)) -> Option<f64> {
        let values: Vec<f64> = column
            .iter()
            .zip(&self.t_s)
            .filter(|(_, t)| inside(**t, from, to))
            .filter_map(|(v, _)| *v)
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    }

    /// The mean of the named column over the measured rows that have a value.
    pub fn measured_mean(&self, column: Column) -> Option<f64> {
        self.mean_between(column, self.measure_window()?)
    }

    /// Average power over the seconds the run's headline covers, watts.
    pub fn active_watts(&self, summary: &Summary) -> Option<f64> {
        self.mean_between(system::POWER_WATTS, self.counted_window(summary.steady_state.as_ref())?)
    }
}

/// Keeps the items of `v` whose `keep` is true.
/// The `<name>` of a `<prefix>.<name>.<column>` header cell (the name may hold dots: a mount
/// point).
fn namespaced<'a>(header: &'a str, prefix: &str, column: &str) -> Option<&'a str> {
    let (name, last) = header.strip_prefix(prefix)?.strip_prefix('.')?.rsplit_once('.')?;
    (last == column).then_some(name)
}

fn retain_where<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().unwrap_or(&false));
}

/// An interval ending at `t` lies in `(from, to]`, with a few ms of slack for the interval
/// clock.
fn inside(t: f64, from: f64, to: f64) -> bool {
    t > from + 1e-3 && t <= to + 1e-3
}

fn number(cell: &str) -> Result<Option<f64>, String> {
    let cell = cell.trim();
    if cell.is_empty() {
        return Ok(None);
    }
    let v: f64 = cell.parse().map_err(|_| format!("{cell:?} is not a number"))?;
    // NaN or infinity is no measurement; a chart could not place it.
    Ok(v.is_finite().then_some(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::{Quantity, Unit, io};

    const CSV: &str = "t_s,phase,read_iops,power_watts\n\
                       1.000,ramp,10,\n2.000,measure,20,100\n3.000,measure,30,110\n4.000,verify,5,\n";

    #[test]
    fn columns_are_read_by_name_with_empty_cells_as_missing_values() {
        let s = Series::parse(CSV).unwrap();
        assert_eq!(s.t_s, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.column(io::READ_IOPS).unwrap(), [Some(10.0), Some(20.0), Some(30.0), Some(5.0)]);
        assert_eq!(s.column(system::POWER_WATTS).unwrap()[0], None);
        assert_eq!(s.measure_window(), Some((1.0, 3.0)));
        assert_eq!(s.measured_mean(io::READ_IOPS), Some(25.0));
        assert_eq!(s.measured_mean(system::POWER_WATTS), Some(105.0));
        assert!(s.values(io::WRITE_IOPS).is_none());
    }

    #[test]
    fn a_bundle_written_before_a_rename_is_read_under_the_old_name() {
        let renamed = Column { name: "reads_per_second", old_names: &["read_iops"], ..io::READ_IOPS };
        assert_eq!(Series::parse(CSV).unwrap().measured_mean(renamed), Some(25.0));
    }

    #[test]
    fn a_malformed_file_names_the_line_and_the_problem() {
        let e = Series::parse("t_s,phase,a\n1,measure,x\n").unwrap_err();
        assert_eq!(e.to_string(), "line 2: \"x\" is not a number");
        let e = Series::parse("t_s,phase,a\n1,measure\n").unwrap_err();
        assert!(e.to_string().contains("1 cells") || e.to_string().contains("2 cells"), "{e}");
        assert!(Series::parse("time,a\n").is_err());
        let a = Column::new("a", Unit::Count, Quantity::Count);
        assert_eq!(Series::parse("t_s,phase,a\n1,measure,NaN\n").unwrap().column(a).unwrap(), [None]);
        assert_eq!(Series::parse("").unwrap(), Series::default());
    }
}
