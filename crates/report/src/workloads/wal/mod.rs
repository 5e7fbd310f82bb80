//! The commit path (`storbench wal`) in the report: its results as a summary holds them, its
//! columns of `timeseries.csv`, and how the report judges and shows them.

pub mod columns;
pub mod render;
pub mod results;
