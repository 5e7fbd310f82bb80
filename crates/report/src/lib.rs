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
//!
//! Its layers go one way. At the bottom the model: `model`, `evaluation` (with the one run
//! status), `workload` (what each workload's results say of a run), `latency`, `input` (what
//! a report is made from), `stability` (results whose runs disagree, and why) and `format`
//! (how a number is written). Above it `decision`, and
//! above that `render`, the pages. No lower layer imports a higher one.

pub mod columns;
pub mod decision;
pub mod disclosure;
pub mod evaluation;
pub mod export;
pub mod fingerprint;
pub mod format;
pub mod input;
pub mod latency;
pub mod model;
pub mod openmetrics;
pub mod render;
pub mod series;
pub mod setup;
pub mod stability;
pub mod summary;
pub mod testing;
pub mod text;
pub mod workload;
pub mod workloads;

pub use disclosure::*;
pub use model::*;
pub use series::{CpuSample, DeviceSample, DiskSample, RebuildSample, SeriesRow, StreamValues, SystemSample};
pub use summary::*;
pub use workloads::Results;
