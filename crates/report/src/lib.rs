//! storbench's report model and its exporters.
//!
//! The model (`model`) is what every workload's run produces and what a result bundle holds; it
//! is versioned (`SCHEMA_VERSION`), each field documented on its type here and the bundle's
//! files in README's "Output" section. Exporters (`export`) are pure functions from the model
//! to bytes or text. `disclosure` is the inventory
//! of the system under test that a full-disclosure report ends with. `render` writes the
//! HTML and Markdown reports and the comparison of two bundles; `setup` checks the disclosed
//! storage setup (alignment, block and page sizes, flushes, scheduler, TRIM, atime); `text`
//! makes user text safe to show. This crate does not depend on
//! the measuring library, so an old bundle can always be read and re-rendered.

pub mod columns;
pub mod decision;
pub mod disclosure;
pub mod evaluation;
pub mod export;
pub mod fingerprint;
pub mod model;
pub mod render;
pub mod series;
pub mod setup;
pub mod text;

pub use disclosure::*;
pub use model::*;
pub use series::{CpuSample, DeviceSample, DiskSample, RebuildSample, SeriesRow, StreamValues, SystemSample};
