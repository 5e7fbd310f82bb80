//! The OLTP workload: DVD Store 3 (DS3) on a real database. One entry point per task:
//! `datagen` (the data set), a database's `load` (`ds3::Ds3Database`), and `run` (the
//! simulated users).
//!
//! - [`size`]: `--db-size` and the row counts it implies.
//! - [`schema`]: the tables, their columns and the typed fields of a generated row.
//! - [`words`]: the vocabularies of titles, actors and reviews.
//! - [`datagen`]: the deterministic, streaming, parallel data generator (typed rows and DS3 CSV).
//! - [`ds3`]: DS3 on each database backend: its transactions, schema and procedures, load,
//!   reset, shape and check, built on the database layer (`crate::db`).
//! - [`options`]: an oltp run's keys as a user gives them.
//! - [`users`]: DS3's simulated users (what DS3 calls its driver): threads per target, the
//!   per-order sequence, per-second intervals, run by the run driver (`crate::run::drive`).

pub mod bundle;
pub mod datagen;
pub mod ds3;
pub mod entry;
pub mod options;
pub mod requests;
pub mod schema;
pub mod size;
pub mod summary;
pub mod users;
pub mod words;

pub use size::{DbSize, RowCounts};
pub use users::{OltpOutcome, OltpSpec, run};
