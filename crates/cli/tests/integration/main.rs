//! storbench's integration tests: the binary as a user runs it. One test binary, a module per
//! concern. Exact checks use the null engine; the behaviour that matters runs real io_uring
//! and psync I/O on temporary files.

// Tests say why they skipped on std's stderr, which cargo captures.
#![allow(clippy::disallowed_macros)]

mod background;
mod capture;
mod cluster;
mod conditions;
mod device;
mod errors;
mod evaluation;
mod fallback;
mod faultfs;
mod fio_jobs;
mod integrity;
mod interrupt;
mod io_runs;
mod mailbox;
mod merge;
mod metrics;
mod oltp;
mod oltp_servers;
mod private_pg;
mod rebuild;
mod replay;
mod replay_record;
mod report;
mod schema;
mod search;
mod server_restart;
mod shards;
mod steady;
mod summarize;
mod support;
mod terminal;
mod trust_commands;
mod trust_databases;
mod trust_db_ownership;
mod trust_errors;
mod trust_files;
mod trust_limits;
mod trust_numbers;
mod trust_rules;
mod trust_secrets;
mod wal;
