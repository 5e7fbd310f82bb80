//! Writes a DVD Store 3 data set as DS3's CSV files and prints what it took, for the
//! side-by-side benchmark against DS3's C generators:
//!
//! `cargo run --release --example oltp_gen -- SIZE OUTDIR [THREADS] [--seed N] [--crlf] [--ds2]`
//!
//! SIZE is a DS3 size (S, M, L, 50MB, 20GB, ...); THREADS defaults to the available cores.
//! Prints one `key=value` line: rows, bytes, wall_s, user_s, sys_s, cpu_s, threads, size.

// A benchmark helper run by a script, not the CLI: std printing is what it wants.
#![allow(clippy::disallowed_macros)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use storbench_bench::monitor::cpu::self_cpu_times;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::oltp::DbSize;
use storbench_bench::workload::oltp::datagen::DataSet;

struct Args {
    size: DbSize,
    dir: PathBuf,
    threads: usize,
    seed: u64,
    crlf: bool,
    ds2: bool,
}

const USAGE: &str = "usage: oltp_gen SIZE OUTDIR [THREADS] [--seed N] [--crlf] [--ds2]";

fn parse() -> Result<Args, String> {
    let mut positional = Vec::new();
    let (mut seed, mut crlf, mut ds2) = (1, false, false);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => seed = it.next().and_then(|s| s.parse().ok()).ok_or("--seed takes a whole number")?,
            "--crlf" => crlf = true,
            "--ds2" => ds2 = true,
            _ => positional.push(a),
        }
    }
    let [size, dir, rest @ ..] = positional.as_slice() else { return Err(USAGE.into()) };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match rest {
        [] => cores,
        [t] => t.parse().ok().filter(|&t| t > 0).ok_or(format!("THREADS '{t}' is not a positive number"))?,
        _ => return Err(USAGE.into()),
    };
    Ok(Args { size: size.parse()?, dir: PathBuf::from(dir), threads, seed, crlf, ds2 })
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let ds = DataSet::new(args.size, args.seed, args.ds2);
    let (start, cpu0) = (Instant::now(), self_cpu_times());
    let report = ds.write_ds3_files(&args.dir, args.threads, args.crlf, &mut |_, _| {}, &StopFlag::new());
    let (wall, cpu1) = (start.elapsed().as_secs_f64(), self_cpu_times());
    match report {
        Ok(r) => {
            let (user, sys) = ((cpu1.0 - cpu0.0).as_secs_f64(), (cpu1.1 - cpu0.1).as_secs_f64());
            println!(
                "size={} threads={} rows={} bytes={} wall_s={wall:.2} user_s={user:.2} sys_s={sys:.2} cpu_s={:.2}",
                args.size,
                args.threads,
                r.rows,
                r.bytes,
                user + sys
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("oltp_gen: {e}");
            ExitCode::from(2)
        }
    }
}
