//! DVD Store 3 on a database: its transactions, its schema and stored procedures, its load,
//! reset, shape and check, for each backend, built on the database layer (`crate::db`).
//!
//! - [`Ds3Database`]: a database DS3 runs on: load a generated data set, put it back to the
//!   state right after the load (`reset`), say what is loaded (`shape`), check sales against
//!   order lines (`check`), and open sessions that run DS3's transactions.
//! - [`Session`]: one connection running DS3's calls (login, new customer, browse, purchase,
//!   ...), built on the backend's SQL session.
//! - [`sqlite`], [`postgres`], [`mysql`]: each backend's schema and procedure files, load,
//!   reset, check and transactions.

pub mod call;
pub mod lines;
pub mod mysql;
pub mod open;
pub mod postgres;
pub mod sqlite;

use crate::db::{Database, DbResult};
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;
use crate::workload::oltp::schema::Table;

/// LOGIN's answer: the customer (0 when user name and password matched nobody) and how many
/// history rows (title, actor, related title) came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Login {
    pub customer_id: i64,
    pub history_rows: u32,
}

/// NEW_CUSTOMER's fields (DS3 §3.2 step 1). Region is 1 for "US", else 2 (worked out from
/// the country where a log gives none). In a log, numbers may come as text.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NewCustomer {
    pub firstname: String,
    pub lastname: String,
    pub address1: String,
    pub address2: String,
    pub city: String,
    pub state: String,
    #[serde(deserialize_with = "call::int")]
    pub zip: u32,
    pub country: String,
    #[serde(default, deserialize_with = "call::int")]
    pub region: u8,
    pub email: String,
    pub phone: String,
    #[serde(deserialize_with = "call::int")]
    pub creditcardtype: u8,
    pub creditcard: String,
    /// `YYYY/MM`.
    pub creditcardexpiration: String,
    pub username: String,
    pub password: String,
    #[serde(deserialize_with = "call::int")]
    pub age: u8,
    #[serde(deserialize_with = "call::int")]
    pub income: u32,
    /// `M` or `F`.
    pub gender: char,
}

/// BROWSE_BY_*: products in a category that are on special, or whose actor or title matches
/// both words (full-text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Browse<'a> {
    Category(u8),
    /// `FIRST LAST`.
    Actor(&'a str),
    /// `WORD WORD`.
    Title(&'a str),
}

/// GET_PROD_REVIEWS_BY_ACTOR / _BY_TITLE: reviews of products whose actor or title contains
/// one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewSearch<'a> {
    Actor(&'a str),
    Title(&'a str),
}

/// GET_PROD_REVIEWS variants: most helpful first, only one star rating, or newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewOrder {
    Helpful,
    Stars(u8),
    Date,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NewReview {
    #[serde(deserialize_with = "call::int")]
    pub prod_id: i64,
    #[serde(deserialize_with = "call::int")]
    pub stars: u8,
    #[serde(deserialize_with = "call::int")]
    pub customer_id: i64,
    pub summary: String,
    pub text: String,
}

/// PURCHASE: one transaction that writes the order, its lines and the customer's history,
/// and takes the quantities from stock. At most 10 items.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Purchase {
    pub customer_id: i64,
    /// (product, quantity).
    pub items: Vec<(i64, u16)>,
    pub net_cents: i64,
    pub tax_cents: i64,
    pub total_cents: i64,
}

/// Sales tax, in basis points of the net amount (DS3's 8.25 %).
pub const TAX_BP: i64 = 825;

impl Purchase {
    /// The order of `items` at `prices` ((product, cents) as `Session::prices` gives them; a
    /// product without a price counts 0), with DS3's tax rounded to the cent.
    pub fn priced(customer_id: i64, items: Vec<(i64, u16)>, prices: &[(i64, i64)]) -> Purchase {
        let net: i64 = items
            .iter()
            .map(|(p, q)| prices.iter().find(|(id, _)| id == p).map_or(0, |(_, c)| c * i64::from(*q)))
            .sum();
        let tax = (net * TAX_BP + 5_000) / 10_000;
        Purchase { customer_id, items, net_cents: net, tax_cents: tax, total_cents: net + tax }
    }
}

/// One connection running DS3's transactions. Each call is one round trip (or one stored
/// procedure) as DS3 makes it; the user calling it times it. A call that fails leaves the session
/// usable unless the error kind is `Connection`.
pub trait Session: Send {
    fn login(&mut self, username: &str, password: &str) -> DbResult<Login>;
    /// The new customer's id, or None when the user name is taken.
    fn new_customer(&mut self, c: &NewCustomer) -> DbResult<Option<i64>>;
    /// False when the customer is already a member.
    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool>;
    /// Rows returned (at most `batch`).
    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32>;
    /// Rows returned (at most `batch`); `depth` caps the inner product-review join (DS3.5's
    /// search_depth).
    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, depth: u32) -> DbResult<u32>;
    /// Rows returned (at most `batch`).
    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32>;
    /// The new review's id.
    fn new_review(&mut self, r: &NewReview) -> DbResult<i64>;
    /// The new rating's id.
    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64>;
    /// Prices in cents of the given products, into `out` as (product, cents); the user sums
    /// the order from them outside the timed section, as DS3 does.
    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()>;
    /// The new order's id, or None when an item was out of stock and the whole order was
    /// rolled back. The inventory rows are locked while read and updated, so concurrent
    /// purchases never lose a sale.
    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>>;
    /// Whether a sale that leaves fewer than 3 in stock restocks the product (the default) or
    /// sells it out, as DS3's MySQL edition does (its restock trigger is a stub), for this
    /// session's purchases. A backend without the choice answers with an error of kind `Query`.
    fn set_restock(&mut self, on: bool) -> DbResult<()>;
}

/// Loading progress: rows written so far of one table, and of the whole set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadProgress {
    pub table: Table,
    /// `"load"`, `"index"`, `"analyze"`, ...: the step under way.
    pub step: &'static str,
    pub rows_done: u64,
    pub rows_total: u64,
}

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    /// Rows per table, as loaded.
    pub rows: Vec<(Table, u64)>,
    pub load_s: f64,
    pub index_s: f64,
    /// Bytes the database takes on disk after the load, where the backend can tell.
    pub size_bytes: Option<u64>,
}

/// What the loaded database holds: enough to check that `--db-size` matches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadedShape {
    /// Customers and products as loaded (before any run added customers).
    pub customers: u64,
    pub products: u64,
    /// Whether the DS3 tables (membership, reviews) are there; false for a `--ds2` load.
    pub ds3: bool,
}

/// `oltp check`: every product's SALES and stock against the order lines written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckReport {
    pub products_checked: u64,
    /// Products whose inventory SALES differs from the sum of their order-line quantities:
    /// (product, sales in inventory, sum of order lines); at most 100.
    pub mismatches: Vec<(i64, i64, i64)>,
    pub mismatch_count: u64,
    /// Orders without lines or lines without an order.
    pub orphans: u64,
}

/// A database DS3 runs on: the database layer's facts and sessions, plus DS3's own work.
pub trait Ds3Database: Database {
    /// Loads `data` from scratch (dropping what storbench loaded there before), leaving the
    /// database pristine: `reset` returns to exactly this state. The caller holds
    /// `lock_writer`. A database holding anything storbench did not create is refused before
    /// the first write (see `crate::db::ownership`).
    fn load(
        &self,
        data: &DataSet,
        progress: &mut dyn FnMut(LoadProgress),
        stop: &StopFlag,
    ) -> DbResult<LoadReport>;
    /// What is loaded, or an error of kind `Missing` when nothing is.
    fn shape(&self) -> DbResult<LoadedShape>;
    /// Puts the database back to the state right after the load. Returns the seconds it took.
    /// The caller holds `lock_writer`.
    fn reset(&self) -> DbResult<f64>;
    /// A session running DS3's transactions (one per simulated-user thread).
    fn connect(&self) -> DbResult<Box<dyn Session>>;
    fn check(&self) -> DbResult<CheckReport>;
}
