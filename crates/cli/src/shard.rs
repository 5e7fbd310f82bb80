//! `--shard I/N` and `--start-at TIME`: a run as one of N shards that start together, the
//! unit a scale-out runs on many load hosts (Slurm tasks, Kubernetes Indexed Job pods, MPI
//! ranks). Read once per command before the command line is parsed, because `{shard}` in any
//! argument (a target, a URL, a name) becomes the shard's index first; the measured run then
//! waits for the start time after its setup (`at_run_start`), and its summary records which
//! shard it was, on which host, how late it was ready and what the kernel says of its clock.

use std::ffi::OsString;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;
use storbench_bench::run::StopFlag;
use storbench_report::{LATE_S, ShardInfo};

/// One shard of `count`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// `--shard` as given: a shard, or the engine's environment (with the count where the
/// environment lacks it, as a Kubernetes Indexed Job's does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    Given(Shard),
    Env { count: Option<u32> },
}

/// The longest a start time may lie ahead: a start a day away is a mistake, not a plan.
const MOST_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// `I/N`, `env` or `env/N` (clap's value parser and the early scan alike).
pub fn parse_shard(s: &str) -> Result<ShardArg, String> {
    let shape = "give --shard I/N (1 <= I <= N, e.g. 3/8), or --shard env to read Slurm's or MPI's \
                 rank, or --shard env/N for a Kubernetes Indexed Job's JOB_COMPLETION_INDEX";
    let (left, right) = match s.split_once('/') {
        Some((l, r)) => (l.trim(), Some(r.trim())),
        None => (s.trim(), None),
    };
    let count = |r: &str| {
        r.parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("'{s}': {r} is not a shard count; {shape}"))
    };
    if left == "env" {
        return Ok(ShardArg::Env { count: right.map(count).transpose()? });
    }
    let Some(right) = right else { return Err(format!("'{s}' is not a shard; {shape}")) };
    let n = count(right)?;
    match left.parse::<u32>() {
        Ok(i) if (1..=n).contains(&i) => Ok(ShardArg::Given(Shard { index: i, count: n })),
        Ok(i) => Err(format!("'{s}': shard {i} of {n} does not exist; shards count from 1 to {n}")),
        Err(_) => Err(format!("'{s}': {left} is not a shard number; {shape}")),
    }
}

/// The shard the environment names, and which engine named it.
fn from_env(
    count: Option<u32>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Shard, &'static str), String> {
    let num = |name: &str| env(name).and_then(|v| v.trim().parse::<u32>().ok());
    let engines =
        [("SLURM_PROCID", "SLURM_NTASKS", "slurm"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "mpi")];
    let found = engines
        .iter()
        .find_map(|(rank, size, from)| Some((num(rank)?, num(size), *from)))
        .or_else(|| Some((num("JOB_COMPLETION_INDEX")?, None, "kubernetes")));
    let Some((rank, size, from)) = found else {
        return Err("--shard env: the environment has no SLURM_PROCID, OMPI_COMM_WORLD_RANK or \
                    JOB_COMPLETION_INDEX; give --shard I/N"
            .into());
    };
    let n = match (size, count) {
        (Some(a), Some(b)) if a != b => {
            return Err(format!("--shard env/{b}: {from} says there are {a} shards; give --shard env"));
        }
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => {
            return Err(format!("--shard env: {from} gives the index, not the count; give --shard env/N"));
        }
    };
    if rank >= n {
        return Err(format!("--shard env: {from}'s rank {rank} is not below its count {n}"));
    }
    Ok((Shard { index: rank + 1, count: n }, from))
}

/// `--start-at`: RFC 3339 (`2026-11-26T18:00:00Z`) or Unix seconds.
pub fn parse_start_at(s: &str) -> Result<jiff::Timestamp, String> {
    let t = s.trim();
    let at = match t.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 => {
            jiff::Timestamp::from_millisecond((secs * 1e3) as i64).map_err(|e| format!("'{s}': {e}"))?
        }
        _ => t.parse::<jiff::Timestamp>().map_err(|_| {
            format!("'{s}' is not a time; give RFC 3339 (2026-11-26T18:00:00Z) or Unix seconds (date -d '+30 sec' +%s)")
        })?,
    };
    let now = jiff::Timestamp::now();
    if at < now {
        return Err(format!(
            "--start-at {s} has passed (now {now}); give a time far enough ahead for every shard's setup"
        ));
    }
    if at.duration_since(now).unsigned_abs() > MOST_AHEAD {
        return Err(format!("--start-at {s} is more than a day ahead; give a time within the next 24 hours"));
    }
    Ok(at)
}

/// What the command line said of sharding, once per command.
struct Gate {
    shard: Option<(Shard, &'static str)>,
    start_at: Option<jiff::Timestamp>,
    /// The start time is for the first run only (a profile set's later jobs start when the
    /// one before ends).
    waited: AtomicBool,
}

static GATE: OnceLock<Gate> = OnceLock::new();

/// Reads `--shard` and `--start-at` from `argv` (before clap, with the same parsers), keeps
/// them for the run, and returns `argv` with `{shard}` replaced by the shard's index.
pub fn prepare(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let value = |flag: &str| -> Option<String> {
        let mut it = argv.iter().map(|a| a.to_string_lossy().into_owned());
        while let Some(a) = it.next() {
            if a == flag {
                return it.next();
            }
            if let Some(v) = a.strip_prefix(&format!("{flag}=")) {
                return Some(v.to_string());
            }
        }
        None
    };
    let shard = match value("--shard").map(|s| parse_shard(&s)).transpose()? {
        None => None,
        Some(ShardArg::Given(s)) => Some((s, "--shard")),
        Some(ShardArg::Env { count }) => Some(from_env(count, &|n| std::env::var(n).ok())?),
    };
    let start_at = value("--start-at").map(|s| parse_start_at(&s)).transpose()?;
    let _ = GATE.set(Gate { shard, start_at, waited: AtomicBool::new(false) });
    if let Some((s, _)) = shard.filter(|(s, _)| s.count > 1) {
        // The shards of one run may share a target directory (each with its own file): they
        // take its lock together, and a run that is no shard still finds it taken.
        storbench_bench::target::as_shard(s.index);
    }
    Ok(match shard {
        Some((s, _)) => argv.into_iter().map(|a| replace_shard(a, s.index)).collect(),
        None => argv,
    })
}

fn replace_shard(a: OsString, index: u32) -> OsString {
    match a.to_str() {
        Some(s) if s.contains("{shard}") => s.replace("{shard}", &index.to_string()).into(),
        _ => a,
    }
}

/// This command's shard index (1..N); None where it is no shard.
pub fn index() -> Option<u32> {
    GATE.get().and_then(|g| g.shard).map(|(s, _)| s.index)
}

/// This shard's part of a block device every shard of the run targets, of `size` bytes: the
/// index-th of count equal slices in whole `align`-byte blocks, so that no two shards write
/// the same block. The whole device for a run that is no shard.
pub fn device_slice(size: u64, align: u64) -> (u64, u64) {
    match GATE.get().and_then(|g| g.shard).map(|(s, _)| s).filter(|s| s.count > 1) {
        Some(s) => slice_of(size, align, s),
        None => (0, size),
    }
}

fn slice_of(size: u64, align: u64, s: Shard) -> (u64, u64) {
    let align = align.max(1);
    let len = size / u64::from(s.count) / align * align;
    (len * u64::from(s.index - 1), len)
}

/// A plan's text with `{shard}` made this shard's index, or shard 1's for an evaluation that
/// runs its runs as shards (`on_cluster`: its own checks are of shard 1's places; each shard
/// checks its own).
pub fn in_plan(text: &str, on_cluster: bool) -> String {
    match plan_index(on_cluster) {
        Some(i) => text.replace("{shard}", &i.to_string()),
        None => text.to_string(),
    }
}

/// The index `{shard}` stands for in a plan: this shard's, or shard 1's for an evaluation on
/// a cluster; None for a run that is no shard.
pub fn plan_index(on_cluster: bool) -> Option<u32> {
    index().or(on_cluster.then_some(1))
}

/// `I/N` for this command's shard, for labels (the live metrics'); None where it is no shard.
pub fn label() -> Option<String> {
    GATE.get().and_then(|g| g.shard).map(|(s, _)| format!("{}/{}", s.index, s.count))
}

/// This shard's share of `items` (oltp's database URLs, 001's eight clients on eight
/// databases): with at least as many items as shards, every N-th from its own (shard 2 of 4
/// takes the 2nd, 6th, ...); with fewer, the one at its turn, shared with other shards.
/// Everything where the run is no shard.
pub fn share<T: Clone>(items: Vec<T>) -> Vec<T> {
    match GATE.get().and_then(|g| g.shard) {
        Some((s, _)) => share_of(items, s),
        None => items,
    }
}

fn share_of<T: Clone>(items: Vec<T>, s: Shard) -> Vec<T> {
    let (i, n) = (s.index as usize - 1, s.count as usize);
    if items.is_empty() || items.len() < n {
        return items.get(i % items.len().max(1)).cloned().into_iter().collect();
    }
    items.into_iter().skip(i).step_by(n).collect()
}

/// Before a measured run, after its setup: waits (stoppably) for `--start-at` the first time,
/// and says what the summary records of this shard. None for a run that is no shard and has
/// no start time.
pub fn at_run_start(stop: &StopFlag) -> Option<ShardInfo> {
    let gate = GATE.get().filter(|g| g.shard.is_some() || g.start_at.is_some())?;
    let start_at = gate.start_at.filter(|_| !gate.waited.swap(true, Relaxed));
    let late_s = start_at.map(|at| wait_until(at, stop));
    if let Some(late) = late_s.filter(|l| *l > LATE_S) {
        alert!(
            "warning: this shard was ready {late:.2} s after --start-at; its measured window starts after the others'"
        );
    }
    let (shard, from) = gate.shard.unwrap_or((Shard { index: 1, count: 1 }, "--start-at"));
    Some(ShardInfo {
        index: shard.index,
        count: shard.count,
        host: storbench_bench::monitor::host().hostname,
        from: from.into(),
        start_at: gate.start_at.map(|t| t.to_string()),
        late_s,
        late: late_s.is_some_and(|l| l > LATE_S),
        clock: storbench_bench::monitor::clock::state(),
    })
}

/// Sleeps until `at` unless stopped; how many seconds after `at` it was when it got there (0
/// when it waited).
fn wait_until(at: jiff::Timestamp, stop: &StopFlag) -> f64 {
    let behind = |now: jiff::Timestamp| now.duration_since(at).as_secs_f64();
    let late = behind(jiff::Timestamp::now());
    if late >= 0.0 {
        return late;
    }
    say!("waiting for --start-at {at} ({:.1} s)", -late);
    loop {
        let left = -behind(jiff::Timestamp::now());
        if left <= 0.0 || stop.is_stopped() {
            return 0.0;
        }
        std::thread::sleep(Duration::from_secs_f64(left.min(0.05)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_i_of_n_from_1_and_a_bad_one_says_what_to_give() {
        assert_eq!(parse_shard("3/8"), Ok(ShardArg::Given(Shard { index: 3, count: 8 })));
        assert_eq!(parse_shard("env"), Ok(ShardArg::Env { count: None }));
        assert_eq!(parse_shard("env/4"), Ok(ShardArg::Env { count: Some(4) }));
        for (bad, says) in [
            ("0/2", "shards count from 1 to 2"),
            ("3/2", "shard 3 of 2 does not exist"),
            ("2/0", "not a shard count"),
            ("x/2", "not a shard number"),
            ("3", "not a shard"),
        ] {
            let e = parse_shard(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_environment_names_the_shard_as_slurm_mpi_or_kubernetes_do() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |n: &str| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string())
        };
        let slurm = env(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "4")]);
        assert_eq!(from_env(None, &slurm), Ok((Shard { index: 3, count: 4 }, "slurm")));
        let mpi = env(&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "2")]);
        assert_eq!(from_env(None, &mpi), Ok((Shard { index: 1, count: 2 }, "mpi")));
        // A Kubernetes Indexed Job gives the index; the count is the command's.
        let k8s = env(&[("JOB_COMPLETION_INDEX", "4")]);
        assert_eq!(from_env(Some(5), &k8s), Ok((Shard { index: 5, count: 5 }, "kubernetes")));
        assert!(from_env(None, &k8s).unwrap_err().contains("give --shard env/N"));
        assert!(from_env(Some(4), &k8s).unwrap_err().contains("not below its count 4"));
        assert!(from_env(Some(3), &slurm).unwrap_err().contains("slurm says there are 4 shards"));
        assert!(from_env(None, &env(&[])).unwrap_err().contains("give --shard I/N"));
    }

    #[test]
    fn a_start_time_is_rfc3339_or_unix_seconds_a_little_ahead() {
        let ahead = jiff::Timestamp::now().as_second() + 60;
        assert_eq!(parse_start_at(&ahead.to_string()).unwrap().as_second(), ahead);
        let rfc = jiff::Timestamp::from_second(ahead).unwrap().to_string();
        assert_eq!(parse_start_at(&rfc).unwrap().as_second(), ahead);
        assert!(parse_start_at("1000000000").unwrap_err().contains("has passed"));
        assert!(
            parse_start_at(&(ahead + 3 * 86_400).to_string()).unwrap_err().contains("more than a day ahead")
        );
        assert!(parse_start_at("tomorrow").unwrap_err().contains("RFC 3339"));
    }

    #[test]
    fn urls_are_spread_over_the_shards_and_shared_when_fewer() {
        let urls: Vec<u32> = (1..=8).collect();
        assert_eq!(share_of(urls.clone(), Shard { index: 2, count: 4 }), [2, 6]);
        assert_eq!(share_of(urls.clone(), Shard { index: 8, count: 8 }), [8]);
        assert_eq!(share_of(vec![1, 2], Shard { index: 3, count: 4 }), [1]);
        assert_eq!(share_of(Vec::<u32>::new(), Shard { index: 1, count: 2 }), Vec::<u32>::new());
    }

    #[test]
    fn shards_of_one_device_take_disjoint_slices_of_whole_blocks() {
        let size = 10 * 4096 + 100;
        let slices: Vec<(u64, u64)> =
            (1..=3).map(|i| slice_of(size, 4096, Shard { index: i, count: 3 })).collect();
        assert_eq!(slices, [(0, 3 * 4096), (3 * 4096, 3 * 4096), (6 * 4096, 3 * 4096)]);
        assert_eq!(slice_of(size, 4096, Shard { index: 1, count: 1 }), (0, 10 * 4096));
    }

    #[test]
    fn shard_in_any_argument_becomes_the_index() {
        let a: Vec<OsString> =
            ["io", "--target", "/mnt/s{shard}/f", "--name", "r{shard}"].map(OsString::from).to_vec();
        let out: Vec<OsString> = a.into_iter().map(|x| replace_shard(x, 7)).collect();
        assert_eq!(out, ["io", "--target", "/mnt/s7/f", "--name", "r7"].map(OsString::from));
    }
}
