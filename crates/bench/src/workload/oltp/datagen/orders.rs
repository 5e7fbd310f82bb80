//! ORDERS, ORDERLINES and CUST_HIST (one month per DS3 file), and what INVENTORY needs of them:
//! each product's SALES, the sum of its order-line quantities.
//!
//! A chunk of orders draws from three independent streams: the order fields (day, customer,
//! amount), the number of lines of each order, and the lines themselves (product and
//! quantity). So the line counts are summed without drawing anything else, and SALES is
//! recomputed from the count and line streams alone, exactly as the order lines were written,
//! without holding a single line. NETAMOUNT is independent of the lines, as in DS3.

use super::csv::Csv;
use super::{Chunk, Layout, Stream, chunk_rng};
use crate::rng::{self, WorkerRng};
use crate::workload::oltp::schema::Table;
use crate::workload::oltp::size::{MONTHS, RowCounts};
use std::thread;

/// Orders per chunk (about 100 KB of orders, 600 KB of order lines).
const CHUNK: u64 = 2_048;
/// Orders are dated in this year.
pub(super) const YEAR: u16 = 2013;
/// 8.25 % in hundredths of a percent.
const TAX_BASIS_POINTS: u64 = 825;

/// Days of `month` (1..=12) in DS3's calendar: February always has 28.
pub(super) fn days_in(month: u8) -> u64 {
    match month {
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// One segment per month: order ids `(m-1)*per_month+1 ..= m*per_month`.
pub(super) fn layout(c: &RowCounts) -> Layout {
    let months: Vec<(u64, u64)> =
        (0..MONTHS).map(|m| (m * c.orders_per_month + 1, c.orders_per_month)).collect();
    Layout::new(CHUNK, &months)
}

/// The random streams of one chunk of orders.
struct Orders {
    fields: WorkerRng,
    counts: WorkerRng,
    lines: WorkerRng,
    products: u64,
}

impl Orders {
    fn new(seed: u64, chunk: u64, products: u64) -> Self {
        Orders {
            fields: chunk_rng(seed, Stream::OrderFields, chunk),
            counts: chunk_rng(seed, Stream::LineCounts, chunk),
            lines: chunk_rng(seed, Stream::Lines, chunk),
            products,
        }
    }

    /// (day, customer, net cents) of the next order of `month`.
    fn fields(&mut self, month: u8, customers: u64) -> (u8, u64, u64) {
        let r = &mut self.fields;
        (rng::between(r, 1, days_in(month)) as u8, rng::between(r, 1, customers), rng::between(r, 1, 40_000))
    }

    fn line_count(&mut self) -> u64 {
        rng::between(&mut self.counts, 1, 9)
    }

    /// (product, quantity) from one draw over products × 3.
    fn line(&mut self) -> (u64, u64) {
        let x = rng::below(&mut self.lines, self.products * 3);
        (x / 3 + 1, x % 3 + 1)
    }
}

/// `table` (orders, orderlines or cust_hist) for one chunk of orders; returns its rows.
pub(super) fn write(seed: u64, c: &RowCounts, table: Table, chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    let month = chunk.segment as u8 + 1;
    let mut o = Orders::new(seed, chunk.index, c.products);
    let mut rows = 0;
    for id in chunk.ids.clone() {
        let (day, customer, net) = o.fields(month, c.customers);
        if table == Table::Orders {
            let tax = (net * TAX_BASIS_POINTS + 5_000) / 10_000;
            w.int(id).date(YEAR, month, day).int(customer).cents(net).cents(tax).cents(net + tax).end();
            rows += 1;
            continue;
        }
        for line in 1..=o.line_count() {
            let (prod, qty) = o.line();
            if table == Table::Orderlines {
                w.int(line).int(id).int(prod).int(qty).date(YEAR, month, day).end();
            } else {
                w.int(customer).int(id).int(prod).end();
            }
            rows += 1;
        }
    }
    rows
}

/// Exact order lines (and cust_hist rows) of the whole set, from the count streams alone.
pub(super) fn line_rows(seed: u64, c: &RowCounts) -> u64 {
    let layout = layout(c);
    (0..layout.chunks())
        .map(|i| {
            let chunk = layout.chunk(i);
            let mut o = Orders::new(seed, i, c.products);
            chunk.ids.map(|_| o.line_count()).sum::<u64>()
        })
        .sum()
}

/// Each product's SALES (index = prod_id - 1): the order-line quantities, re-drawn from the
/// same streams the order lines come from, by `threads` threads.
pub(super) fn sales(seed: u64, c: &RowCounts, threads: usize) -> Vec<u32> {
    let layout = layout(c);
    let n = layout.chunks();
    let threads = threads.clamp(1, n.max(1) as usize) as u64;
    let part = |t: u64| {
        let mut sales = vec![0u32; c.products as usize];
        for i in (t * n / threads)..((t + 1) * n / threads) {
            let mut o = Orders::new(seed, i, c.products);
            for _ in layout.chunk(i).ids {
                for _ in 0..o.line_count() {
                    let (prod, qty) = o.line();
                    sales[prod as usize - 1] += qty as u32;
                }
            }
        }
        sales
    };
    thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|t| s.spawn(move || part(t))).collect();
        let mut total = part(0);
        for h in handles {
            // A panic in a helper is a bug here; let it surface.
            let other = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            total.iter_mut().zip(other).for_each(|(a, b)| *a += b);
        }
        total
    })
}
