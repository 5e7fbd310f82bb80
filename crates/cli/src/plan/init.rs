//! `storbench plan init`: a commented example plan. Every key's comment is the doc comment of
//! the option it sets (the same text `--help` shows), so the example cannot drift from the code.

use super::method::Method;
use super::table::{NOT_PLAN_KEYS, keys_in};
use crate::registry::KINDS;
use clap::Args;

/// The example plan's text.
pub fn example() -> String {
    let mut s = String::from(HEAD);
    s.push_str("\n[method]\n");
    let duration = |d| format!("\"{}\"", humantime::format_duration(d));
    let repetitions = super::expand::DEFAULT_REPETITIONS.to_string();
    let (settle, idle) = (duration(Method::IDLE_SETTLE), duration(Method::IDLE_POWER));
    s.push_str(&documented(
        &Method::augment_args(clap::Command::new("plan")),
        &[],
        &[("repetitions", &repetitions), ("idle_settle", &settle), ("idle_power", &idle)],
    ));
    s.push_str(BODY);
    for kind in KINDS {
        let skip = [kind.reserved, &NOT_PLAN_KEYS].concat();
        s.push_str(&format!("\n# ---- Every key of a kind = \"{}\" workload ----\n", kind.name));
        s.push_str(&documented(&(kind.command)(), &skip, &[]));
    }
    s.push_str(&format!(
        "\n# ---- The search, in an {} workload: each run the most load that holds a latency limit ----\n",
        crate::search::kinds_listed()
    ));
    s.push_str(&documented(
        &crate::registry::kind::command_of::<crate::search::args::SearchArgs>(),
        &[],
        &[],
    ));
    s
}

/// Each key `cmd` defines as a comment block: its help text, then the key, commented out
/// unless `set` gives it a value.
fn documented(cmd: &clap::Command, skip: &[&str], set: &[(&str, &str)]) -> String {
    let keys = keys_in(cmd, skip);
    let mut out = String::new();
    for arg in
        cmd.get_arguments().filter(|a| keys.iter().any(|k| k == a.get_id().as_str()) && !a.is_hide_set())
    {
        let id = arg.get_id().as_str();
        let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
        for line in wrap(&help, 94) {
            out.push_str(&format!("# {line}\n"));
        }
        match set.iter().find(|(k, _)| *k == id) {
            Some((_, v)) => out.push_str(&format!("{id} = {v}\n\n")),
            None => {
                let value = arg
                    .get_value_names()
                    .and_then(|v| v.first())
                    .map_or("true".to_string(), |v| format!("<{v}>"));
                out.push_str(&format!("# {id} = {value}\n\n"))
            }
        }
    }
    out
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for para in text.lines() {
        let mut line = String::new();
        for word in para.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}

const HEAD: &str = r#"# A storbench evaluation plan. Run it with:  storbench run THIS_FILE
#
# The plan names the storage under test ([[configuration]]), what runs on it ([[workload]]) and
# how ([method]). Every workload runs on every configuration, `repetitions` times, and the run
# with the median headline figure (IOPS, OPM, transactional IOPS) is reported. Results go to
# one evaluation bundle (./storbench-results/<time>-<name>/); `storbench report` turns it into
# HTML and Markdown, and `storbench run --resume DIR` finishes an interrupted evaluation.
#
# Workload keys are the options of `storbench io`, `storbench oltp run` and `storbench mailbox`
# in snake_case (iodepth, n_threads, mailbox_size); the end of this file lists them all.

name = "ssd-vs-hdd"
"#;

const BODY: &str = r#"
# ---- The storage under test: one table per configuration ----

[[configuration]]
name = "ssd"
# The directory the workloads' files go in (mount the storage under test there).
target = "/mnt/ssd"
description = "6 x SSD, RAID 10"
# What it costs, for the decision: the cheapest configuration that meets every requirement is
# chosen, and the report gives the cost per 1,000 OPM or IOPS and per TB.
price = 12000
currency = "USD"
# Its usable capacity; default: the size of the device under target.
# capacity = "2T"
# devices = 6

[[configuration]]
name = "hdd"
target = "/mnt/hdd"
description = "12 x 15k HDD, RAID 10"
# For the mailbox workload's logs on their own volume:
# log_target = "/mnt/hdd-logs"
# For oltp on a database server instead of SQLite in target:
# url = ["postgres://postgres@127.0.0.1/ds3"]
# Let io use a block device as target (overwritten):
# allow_device = true
# Let io overwrite what may hold data (a file storbench did not create, a formatted device):
# force = true
# Workload values of this configuration's own, by workload label or kind (the label wins);
# the report lists them beside the configuration:
# set.oltp = { n_threads = 73 }
# set.mailbox = { mailboxes = 550 }
# Streams beside every workload here, as --background gives them: an emulated rebuild's copy
# at 40 MiB/s on this storage (compare with a configuration on the same target without it);
# "rebuild:dest=/other" copies onto other storage, "cmd:COMMAND" runs a real rebuild
# (btrfs replace, mdadm --add) from the start of each measured phase:
# background = ["rebuild:rate=40MiB"]
# The state the storage is measured in, a short label: "rebuild", "vol-rebuild", "ctlr-rebuild".
# The report puts one storage's conditions side by side ("Normal and degraded", with "% of
# best"). Default: "normal" without background streams, else the streams as given.
# condition = "vol-rebuild"
# The storage it measures, as those rows name it. Default: the storage of the first
# configuration before it on the same target (the same directory or device), else its name.
# storage = "hdd"

# ---- What runs on every configuration, in this order ----

# The six SQLIO profiles of the SATA study (8k random, 64k sequential).
[[workload]]
kind = "io"
profile = "sqlio"
runtime = "60s"

# A scaling curve: random 8k reads at growing queue depths.
[[workload]]
kind = "io"
label = "randread-depth"
rw = "randread"
bs = "8k"
runtime = "30s"
sweep = { iodepth = [1, 2, 4, 8, 16, 32] }

# DVD Store orders per minute (loaded once per configuration, reset before every run).
[[workload]]
kind = "oltp"
db_size = "1GB"
n_threads = 16
run_time = "10m"
warmup_time = "2m"
# Or each run a search from n_threads up for the most OPM at which the order's p99 holds
# (every key at the end of this file); "oltp.opm" below then reads "the most OPM at p99 <= 50
# ms is at least 20000", and "oltp.search_load" is the thread count found:
# search = "threads"
# latency_limit = "order:p99<=50ms"

# The Exchange mailbox workload, judged by Jetstress's thresholds. A sweep may also count
# targets: sweep = { targets = [1, 2, 4] } runs 1, 2 and 4 databases (for oltp: the first N
# of the configuration's urls).
[[workload]]
kind = "mailbox"
mailboxes = 200
mailbox_size = "250MB"
threads = 16
duration = "30m"

# ---- What the storage must deliver: the report's first screen judges every configuration ----
# A key is a workload's label or kind (or "power", every workload) and one of its figures; a
# value is a limit. A configuration meets a limit only where every repetition does; where they
# lie either side of it, the report says "not shown either way". `storbench decide DIR
# --requirements FILE` judges an evaluation against other requirements, runs nothing.
[requirements]
"oltp.opm" = ">= 20000"
"oltp.order_p99_ms" = "<= 50"
"mailbox.result" = "pass"
"power.active_w" = "<= 400"
# Exchange's sizing as a demand: 200 mailboxes at 0.5 IOPS each need 100 transactional IOPS.
# "mailbox.mailboxes" = 200
# "mailbox.iops_per_mailbox" = 0.5
"#;
