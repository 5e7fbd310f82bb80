//! DS3's file layout: one CSV file per table, with the customers split into a US and a
//! rest-of-the-world file and the orders, order lines and customer history into one file per
//! month, under the directories DS3's loaders read from.
//!
//! CATEGORIES is not a DS3 file (DS3's loaders insert the 16 rows in SQL); it is written as
//! `prod/categories.csv` so that the files hold every generated table.
//!
//! Nothing is ever overwritten: every target path is checked before the first byte is written,
//! and each file is created exclusively by the file module (no link followed).

use super::{Context, DataSet, GenReport, Layout};
use crate::files;
use crate::run::StopFlag;
use crate::workload::oltp::schema::Table;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

const MONTHS: [&str; 12] =
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// The file of segment `segment` of `table`, relative to the output directory.
pub(super) fn file_name(table: Table, segment: usize) -> Option<String> {
    let month = || MONTHS.get(segment).copied();
    let name = match table {
        Table::Customers => ["cust/us_cust.csv", "cust/row_cust.csv"].get(segment)?.to_string(),
        Table::Orders => format!("orders/{}_orders.csv", month()?),
        Table::Orderlines => format!("orders/{}_orderlines.csv", month()?),
        Table::CustHist => format!("orders/{}_cust_hist.csv", month()?),
        Table::Products => "prod/prod.csv".to_string(),
        Table::Inventory => "prod/inv.csv".to_string(),
        Table::Categories => "prod/categories.csv".to_string(),
        Table::Membership => "membership/membership.csv".to_string(),
        Table::Reviews => "reviews/reviews.csv".to_string(),
        Table::ReviewsHelpfulness => "reviews/review_helpfulness.csv".to_string(),
        Table::Reorder => return None,
    };
    Some(name)
}

/// Every (table, segment, file) of the set, in the order they are written.
fn plan(ds: &DataSet) -> Vec<(Table, usize, String)> {
    let mut plan = Vec::new();
    for &table in ds.tables() {
        for segment in 0..ds.layout(table).segments() {
            if let Some(name) = file_name(table, segment) {
                plan.push((table, segment, name));
            }
        }
    }
    plan
}

fn refuse(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} already exists; storbench never overwrites a data file: remove it or pick another directory",
            path.display()
        ),
    )
}

/// An error that names the file it happened on.
fn at(path: &Path) -> impl Fn(io::Error) -> io::Error + '_ {
    move |e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn create(path: &Path) -> io::Result<File> {
    if let Some(parent) = path.parent() {
        files::create_dirs(parent).map_err(|e| at(path)(e.into()))?;
    }
    files::create(path, files::How::WRITE).map_err(|e| match e {
        files::FileError::Exists { .. } | files::FileError::Link { .. } => refuse(path),
        other => at(path)(other.into()),
    })
}

/// Where each file's chunks come from, and how they are written.
struct Writer<'a> {
    ds: &'a DataSet,
    threads: usize,
    crlf: bool,
    stop: &'a StopFlag,
}

impl Writer<'_> {
    /// Segment `segment` of `table` to a new file at `path`; `progress` as for the whole set,
    /// starting from `done` (bytes, rows). Returns (rows, bytes) written.
    fn file(
        &self,
        (table, layout, context): (Table, &Layout, &Context),
        segment: usize,
        path: &Path,
        done: (u64, u64),
        progress: &mut dyn FnMut(u64, u64),
    ) -> io::Result<(u64, u64)> {
        let mut file = create(path)?;
        let (mut rows, mut bytes) = (0, 0);
        let chunks = layout.segment_chunks(segment);
        let mut out = |b: &[u8], n: u64| {
            file.write_all(b).map_err(at(path))?;
            rows += n;
            bytes += b.len() as u64;
            progress(done.0 + bytes, done.1 + rows);
            Ok(())
        };
        self.ds.csv_chunks(table, layout, context, chunks, self.threads, self.crlf, self.stop, &mut out)?;
        Ok((rows, bytes))
    }
}

impl DataSet {
    /// DS3's file layout under `dir` (cust/us_cust.csv, orders/jan_orders.csv, ...), CRLF line
    /// ends when `crlf` (DS3's `sys=1`). `progress` gets (bytes, rows) written so far. Refuses
    /// (`AlreadyExists`), before writing anything, when any of the files exists. A stop leaves
    /// the files written so far, the last one cut at a row boundary.
    pub fn write_ds3_files(
        &self,
        dir: &Path,
        threads: usize,
        crlf: bool,
        progress: &mut dyn FnMut(u64, u64),
        stop: &StopFlag,
    ) -> io::Result<GenReport> {
        let plan = plan(self);
        if let Some((_, _, name)) = plan.iter().find(|(_, _, name)| dir.join(name).symlink_metadata().is_ok())
        {
            return Err(refuse(&dir.join(name)));
        }
        let writer = Writer { ds: self, threads, crlf, stop };
        let mut report = GenReport::default();
        let mut current: Option<(Table, Layout, Context)> = None;
        for (table, segment, name) in plan {
            if stop.is_stopped() {
                break;
            }
            // The tables' inputs (SALES, rating ids) are made once per table, not per file.
            if current.as_ref().is_none_or(|(t, _, _)| *t != table) {
                current = Some((table, self.layout(table), self.context(table, threads)));
            }
            let Some((_, layout, context)) = &current else { continue };
            let done = (report.bytes, report.rows);
            let (rows, bytes) =
                writer.file((table, layout, context), segment, &dir.join(&name), done, progress)?;
            report.files.push((name, rows, bytes));
            report.rows += rows;
            report.bytes += bytes;
        }
        Ok(report)
    }
}
