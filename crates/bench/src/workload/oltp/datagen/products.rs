//! PRODUCTS, INVENTORY and CATEGORIES.
//!
//! A title is two title words picked by the product id (`word[(id/1000)%1000] word[id%1000]`),
//! so titles are unique up to 1,000,000 products; an actor is a random first and last name.
//! INVENTORY's SALES comes in from `orders::sales`; its stock is random, ten times larger for
//! the "hot" products (id divisible by 10,000) that the driver buys ten times as often.

use super::csv::Csv;
use super::{Chunk, Layout, Stream, chunk_rng};
use crate::rng;
use crate::workload::oltp::schema::CATEGORIES;
use crate::workload::oltp::size::RowCounts;
use crate::workload::oltp::words::{TITLE_WORDS, first_names, last_names, title_words};

/// Products (or inventory rows) per chunk.
const CHUNK: u64 = 8_192;

/// Above this many products only one in 10,000 is on special (DS3), else one in 100.
const MANY_PRODUCTS: u64 = 100_000;

pub(super) fn layout(c: &RowCounts) -> Layout {
    Layout::new(CHUNK, &[(1, c.products)])
}

pub(super) fn categories_layout() -> Layout {
    Layout::new(CATEGORIES.len() as u64, &[(1, CATEGORIES.len() as u64)])
}

pub(super) fn write_products(seed: u64, c: &RowCounts, chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    let mut r = chunk_rng(seed, Stream::Products, chunk.index);
    let (titles, first, last) = (title_words(), first_names(), last_names());
    let special_one_in = if c.products > MANY_PRODUCTS { 10_000 } else { 100 };
    let words = TITLE_WORDS as u64;
    for id in chunk.ids.clone() {
        w.int(id).int(rng::between(&mut r, 1, 16));
        let (t1, t2) = ((id / words % words) as usize, (id % words) as usize);
        w.put(titles[t1].as_bytes()).put(b" ").put(titles[t2].as_bytes()).sep();
        let a1 = rng::below(&mut r, first.len() as u64) as usize;
        let a2 = rng::below(&mut r, last.len() as u64) as usize;
        w.put(first[a1].as_bytes()).put(b" ").put(last[a2].as_bytes()).sep();
        w.cents(999 + 100 * rng::between(&mut r, 0, 20));
        w.int(u64::from(rng::below(&mut r, special_one_in) == 0));
        w.int(rng::between(&mut r, 1, c.products)).int(rng::between(&mut r, 0, 3)).end();
    }
    chunk.ids.end - chunk.ids.start
}

/// `sales[id - 1]` is product `id`'s SALES.
pub(super) fn write_inventory(seed: u64, sales: &[u32], chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    let mut r = chunk_rng(seed, Stream::Inventory, chunk.index);
    for id in chunk.ids.clone() {
        let stock = rng::between(&mut r, 0, 500) * if id % 10_000 == 0 { 10 } else { 1 };
        w.int(id).int(stock).int(u64::from(sales[id as usize - 1])).end();
    }
    chunk.ids.end - chunk.ids.start
}

pub(super) fn write_categories(chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    for id in chunk.ids.clone() {
        w.int(id).text(CATEGORIES[id as usize - 1].as_bytes()).end();
    }
    chunk.ids.end - chunk.ids.start
}
