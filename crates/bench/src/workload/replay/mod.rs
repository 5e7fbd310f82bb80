//! Replay: requests from a production log run against a database, fire-hose or paced by the
//! log's own times. `log` reads the logs.

pub mod log;
