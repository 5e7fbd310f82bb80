//! The OLTP workload: DVD Store 3 (DS3) on a real database. One entry point per task:
//! `datagen` (the data set), the backends' `load` (in `crate::db`), and `run` (the driver).
//!
//! - [`size`]: `--db-size` and the row counts it implies.
//! - [`schema`]: the tables, their columns and the typed fields of a generated row.
//! - [`words`]: the vocabularies of titles, actors and reviews.
//! - [`datagen`]: the deterministic, streaming, parallel data generator (typed rows and DS3 CSV).
//! - [`driver`]: DS3's driver: threads per target, the per-order sequence, per-second intervals.

pub mod datagen;
pub mod driver;
pub mod ds3;
pub mod schema;
pub mod size;
pub mod words;

pub use driver::{OltpOutcome, OltpSpec, run};
pub use size::{DbSize, RowCounts};
