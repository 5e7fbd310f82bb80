//! DS3 on PostgreSQL: DS3's schema, a COPY bulk load, the transactions as server-side plpgsql
//! functions, a reset by database template.
//!
//! - [`load`]: schema, COPY, keys, indexes, trigger, functions, sequences, statistics, and the
//!   pristine copy that `reset` clones; what a load may replace is decided by the database
//!   layer's claim (`crate::db::postgres::claim`).
//! - [`session`]: one connection with the transactions prepared.
//! - `fidelity`: DS3's own PostgreSQL edition beside ours, for `oltp fidelity`.
//!
//! The working database holds `storbench_meta` (marker, storbench's objects, size, seed, DS2
//! flag, rows as loaded). `reset` drops the working database and creates it again from
//! `<db>_pristine`, made at the end of the load.

mod fidelity;
mod load;
mod session;
#[cfg(test)]
mod tests;

use super::{CheckReport, Ds3Database, LoadProgress, LoadReport, LoadedShape, Session};
use crate::db::DbResult;
use crate::db::postgres::Postgres;
use crate::run::StopFlag;
use crate::workload::oltp::datagen::DataSet;

impl Ds3Database for Postgres {
    fn load(
        &self,
        data: &DataSet,
        progress: &mut dyn FnMut(LoadProgress),
        stop: &StopFlag,
    ) -> DbResult<LoadReport> {
        load::load(self, data, progress, stop)
    }

    fn shape(&self) -> DbResult<LoadedShape> {
        load::shape(self)
    }

    fn reset(&self) -> DbResult<f64> {
        load::reset(self)
    }

    fn connect(&self) -> DbResult<Box<dyn Session>> {
        Ok(Box::new(session::PgDs3::new(self.session()?)?))
    }

    fn check(&self) -> DbResult<CheckReport> {
        load::shape(self)?;
        load::check(&mut self.connect_db()?)
    }
}
