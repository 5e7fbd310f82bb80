//! The DS3 data generator: every table of a size, deterministic from a seed, streaming (flat
//! memory at any size) and parallel, as DS3's CSV or as typed rows.
//!
//! Each table is cut into segments (one per DS3 file: the US and ROW customers, the months of
//! the orders) and each segment into fixed-size chunks of ids. A chunk draws from its own
//! random streams, derived from (seed, purpose, chunk index), so a chunk's bytes do not depend
//! on which thread makes it or on how many threads there are. Where a table's ids run on
//! across chunks with a random number of rows per parent (rating ids), or another table sums
//! them (SALES), the counts come from a separate stream that is cheap to replay.
//!
//! Files: `csv` writes the CSV bytes (the canonical form) and `parallel` runs chunks on worker
//! threads in order; `for_each_row` reads the same bytes back into typed fields, so every
//! backend loads the very same values. The tables: `customers` (and the driver's
//! `new_customer`), `orders` (with order lines, customer history and SALES), `products` (with
//! inventory and categories), `membership`, `reviews` (with the helpfulness ratings). `files`
//! lays out DS3's files (`DataSet::write_ds3_files`).
//!
//! One deliberate difference from DS3: a helpfulness rating's customer is a random customer,
//! not the review's author (see `reviews`).

mod csv;
mod customers;
mod files;
mod membership;
mod orders;
mod parallel;
mod products;
mod reviews;
#[cfg(test)]
mod tests;

pub use customers::new_customer;

use super::schema::{ALL_TABLES, DS2_TABLES, Field, Table};
use super::size::{DbSize, RowCounts};
use crate::rng::{self, WorkerRng};
use crate::run::StopFlag;
use csv::Csv;
use std::io;
use std::ops::Range;

/// A data set: a size, a seed, DS3 or the DS2 subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataSet {
    pub size: DbSize,
    pub counts: RowCounts,
    pub seed: u64,
    pub ds2: bool,
}

/// What `write_ds3_files` wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenReport {
    /// (path relative to the output directory, rows, bytes), in the order written.
    pub files: Vec<(String, u64, u64)>,
    pub rows: u64,
    pub bytes: u64,
}

/// The purposes of the random streams; with the chunk index they name a chunk's stream.
#[derive(Debug, Clone, Copy)]
enum Stream {
    Customers = 1,
    OrderFields,
    LineCounts,
    Lines,
    Products,
    Inventory,
    Membership,
    Reviews,
    RatingCounts,
    Ratings,
}

/// The stream of `purpose` for chunk `chunk` (chunk indexes stay far below 2^40).
fn chunk_rng(seed: u64, purpose: Stream, chunk: u64) -> WorkerRng {
    rng::stream(seed, (purpose as u64) << 40 | chunk)
}

/// How a table is cut: segments of consecutive ids `(first, count)`, each in chunks of
/// `chunk` ids (the last one of a segment shorter).
struct Layout {
    chunk: u64,
    segments: Vec<(u64, u64)>,
}

/// One chunk: its index in the table, its segment and its ids.
struct Chunk {
    index: u64,
    segment: usize,
    ids: Range<u64>,
}

impl Layout {
    fn new(chunk: u64, segments: &[(u64, u64)]) -> Self {
        Layout { chunk, segments: segments.to_vec() }
    }

    fn segments(&self) -> usize {
        self.segments.len()
    }

    fn chunks(&self) -> u64 {
        self.segments.iter().map(|&(_, n)| n.div_ceil(self.chunk)).sum()
    }

    /// The chunk indexes of segment `s`.
    fn segment_chunks(&self, s: usize) -> Range<u64> {
        let before: u64 = self.segments[..s].iter().map(|&(_, n)| n.div_ceil(self.chunk)).sum();
        before..before + self.segments[s].1.div_ceil(self.chunk)
    }

    fn chunk(&self, index: u64) -> Chunk {
        let mut i = index;
        for (segment, &(first, n)) in self.segments.iter().enumerate() {
            let chunks = n.div_ceil(self.chunk);
            if i < chunks {
                let start = first + i * self.chunk;
                return Chunk { index, segment, ids: start..(start + self.chunk).min(first + n) };
            }
            i -= chunks;
        }
        Chunk { index, segment: self.segments.len(), ids: 0..0 }
    }
}

/// What a table needs from other tables before its first chunk.
enum Context {
    Plain,
    /// INVENTORY: each product's SALES.
    Sales(Vec<u32>),
    /// REVIEWS_HELPFULNESS: the first rating id of each chunk of reviews.
    RatingStarts(Vec<u64>),
}

impl DataSet {
    pub fn new(size: DbSize, seed: u64, ds2: bool) -> Self {
        DataSet { size, counts: size.counts(), seed, ds2 }
    }

    /// The tables of this set in load order (`ALL_TABLES` or `DS2_TABLES`).
    pub fn tables(&self) -> &'static [Table] {
        if self.ds2 { &DS2_TABLES } else { &ALL_TABLES }
    }

    /// Exact rows of `table` (cheap: no rows are generated; order lines and ratings replay
    /// only their count streams). Zero for a table the set does not have.
    pub fn rows(&self, table: Table) -> u64 {
        let c = &self.counts;
        if !self.tables().contains(&table) {
            return 0;
        }
        match table {
            Table::Categories => super::schema::CATEGORIES.len() as u64,
            Table::Products | Table::Inventory => c.products,
            Table::Customers => c.customers,
            Table::Orders => c.orders(),
            Table::Orderlines | Table::CustHist => orders::line_rows(self.seed, c),
            Table::Membership => c.members(),
            Table::Reviews => c.reviews(),
            Table::ReviewsHelpfulness => {
                reviews::rating_starts(self.seed, c).last().map_or(0, |&end| end - 1)
            }
            Table::Reorder => 0,
        }
    }

    /// Every row of `table` in id order, as typed fields in `Table::columns` order, on this
    /// thread.
    pub fn for_each_row(&self, table: Table, row: &mut dyn FnMut(&[Field<'_>])) {
        let kinds = csv::kinds(table);
        let (layout, context) = (self.layout(table), self.context(table, 1));
        let mut each_chunk = |bytes: &[u8], _rows: u64| {
            let mut fields = [Field::Empty; csv::MAX_COLUMNS];
            for line in bytes.strip_suffix(b"\n").unwrap_or(bytes).split(|&b| b == b'\n') {
                let n = csv::parse_row(line, kinds, &mut fields);
                row(&fields[..n]);
            }
            Ok(())
        };
        let all = 0..layout.chunks();
        // Only the sink can fail, and this one does not.
        let _ = self.csv_chunks(table, &layout, &context, all, 1, false, &StopFlag::new(), &mut each_chunk);
    }

    /// `table` as DS3 CSV (no header, comma-separated, LF), in id order, generated by
    /// `threads` threads. `out` gets consecutive pieces, each ending on a row boundary, with
    /// the rows in it. Stops early (Ok) when `stop` is set.
    pub fn csv(
        &self,
        table: Table,
        threads: usize,
        stop: &StopFlag,
        out: &mut dyn FnMut(&[u8], u64) -> io::Result<()>,
    ) -> io::Result<()> {
        let (layout, context) = (self.layout(table), self.context(table, threads));
        self.csv_chunks(table, &layout, &context, 0..layout.chunks(), threads, false, stop, out)
    }

    fn layout(&self, table: Table) -> Layout {
        let c = &self.counts;
        if !self.tables().contains(&table) {
            return Layout::new(1, &[]);
        }
        match table {
            Table::Categories => products::categories_layout(),
            Table::Products | Table::Inventory => products::layout(c),
            Table::Customers => customers::layout(c),
            Table::Orders | Table::Orderlines | Table::CustHist => orders::layout(c),
            Table::Membership => membership::layout(c),
            Table::Reviews | Table::ReviewsHelpfulness => reviews::layout(c),
            Table::Reorder => Layout::new(1, &[]),
        }
    }

    fn context(&self, table: Table, threads: usize) -> Context {
        match table {
            Table::Inventory => Context::Sales(orders::sales(self.seed, &self.counts, threads)),
            Table::ReviewsHelpfulness if !self.ds2 => {
                Context::RatingStarts(reviews::rating_starts(self.seed, &self.counts))
            }
            _ => Context::Plain,
        }
    }

    /// Chunks `chunks` of `table` as CSV, in order, to `out`.
    #[allow(clippy::too_many_arguments)]
    fn csv_chunks(
        &self,
        table: Table,
        layout: &Layout,
        context: &Context,
        chunks: Range<u64>,
        threads: usize,
        crlf: bool,
        stop: &StopFlag,
        out: &mut dyn FnMut(&[u8], u64) -> io::Result<()>,
    ) -> io::Result<()> {
        let make = |i: u64, buf: &mut Vec<u8>| {
            self.write_chunk(table, context, &layout.chunk(i), &mut Csv::new(buf, crlf))
        };
        parallel::ordered(chunks, threads, stop, make, out)
    }

    /// One chunk of `table`; returns its rows.
    fn write_chunk(&self, table: Table, context: &Context, chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
        let (seed, c) = (self.seed, &self.counts);
        match (table, context) {
            (Table::Categories, _) => products::write_categories(chunk, w),
            (Table::Products, _) => products::write_products(seed, c, chunk, w),
            (Table::Inventory, Context::Sales(sales)) => products::write_inventory(seed, sales, chunk, w),
            (Table::Customers, _) => customers::write(seed, chunk, w),
            (Table::Orders | Table::Orderlines | Table::CustHist, _) => {
                orders::write(seed, c, table, chunk, w)
            }
            (Table::Membership, _) => membership::write(seed, c, chunk, w),
            (Table::Reviews, _) => reviews::write_reviews(seed, c, chunk, w),
            (Table::ReviewsHelpfulness, Context::RatingStarts(starts)) => {
                reviews::write_ratings(seed, c, starts[chunk.index as usize], chunk, w)
            }
            _ => 0,
        }
    }
}
