//! The mailbox workload's options → what a mailbox command will do ([`MailboxSetup`]), or a
//! refusal naming the option (as its flag; a plan's reader says it as the key) and the fix,
//! before anything is created or written.

use super::{MailboxOptions, OpMix, Preset, Profile, TestType, Thresholds, cache, layout};
use crate::engine::EngineKind;
use crate::run::Rule;
use crate::units::ByteSize;
use std::path::PathBuf;
use std::time::Duration;

type Result<T> = std::result::Result<T, String>;

/// Share of the DB size kept free for growth during a run (Jetstress reserves 20 % of the
/// capacity for growth next to the 60 % of data).
const GROWTH_RESERVE_PCT: u64 = 25;

/// What a mailbox command will do.
#[derive(Debug, Clone)]
pub struct MailboxSetup {
    pub db_dir: PathBuf,
    pub log_dir: PathBuf,
    pub preset: Preset,
    pub test: TestType,
    pub profile: Profile,
    pub thresholds: Thresholds,
    pub mailboxes: u64,
    pub mailbox_bytes: u64,
    pub databases: u32,
    /// Pages per database.
    pub pages: u64,
    pub threads: u32,
    pub target_iops: Option<f64>,
    pub duration: Duration,
    /// Steady-state rounds of this length (--steady-state).
    pub steady_state: Option<Duration>,
    pub max_warmup: Duration,
    pub sample_window: Duration,
    pub log_files: u32,
    pub tune: bool,
    pub trial_duration: Duration,
    pub keep: bool,
    pub verify: bool,
    pub engine: EngineKind,
    pub seed: u64,
}

/// The options as a plan of the run, every value checked.
pub fn validate(a: &MailboxOptions) -> Result<MailboxSetup> {
    let preset = match a.preset.as_deref() {
        None => Preset::V2013,
        Some(p) => Preset::parse(p.trim()).ok_or_else(|| {
            format!("--preset {p}: unknown Jetstress generation; use 2007, 2010 or 2013 (2013 also stands for 2016 and 2019)")
        })?,
    };
    let test = a.test.unwrap_or(TestType::Performance);
    let profile = profile(a, preset)?;
    let thresholds = thresholds(a, preset, test)?;
    let db_dir = a.target.clone().unwrap_or_else(|| PathBuf::from("storbench-mailbox"));
    let log_dir = a.log_target.clone().unwrap_or_else(|| db_dir.clone());
    let databases = a.databases.unwrap_or(1);
    if databases == 0 || databases > 99 {
        refuse!("--databases {databases}: use 1 to 99 databases");
    }
    let mailbox_bytes = a.mailbox_size.map_or(250 << 20, |s| s.0);
    if mailbox_bytes < u64::from(profile.page_size) {
        refuse!(
            "--mailbox-size {mailbox_bytes}: a mailbox needs at least one {} KiB page",
            profile.page_size / 1024
        );
    }
    let capacity_pct = a.capacity_pct.unwrap_or(60);
    if !(1..=95).contains(&capacity_pct) {
        refuse!("--capacity-pct {capacity_pct}: use 1 to 95 percent of the formatted capacity");
    }
    let mailboxes = match a.mailboxes {
        Some(0) => refuse!("--mailboxes 0: at least one mailbox is needed"),
        Some(n) => n,
        None => {
            let cap =
                layout::capacity(crate::target::existing_ancestor(&db_dir)).map_err(|e| e.to_string())?;
            layout::mailboxes_for_capacity(cap, capacity_pct, mailbox_bytes)
        }
    };
    let Some(total_bytes) = mailboxes.checked_mul(mailbox_bytes) else {
        refuse!(
            "--mailboxes {mailboxes} of --mailbox-size {}: together more than 16 EiB, beyond any storage; \
             give fewer or smaller mailboxes",
            ByteSize(mailbox_bytes)
        );
    };
    let pages = (total_bytes / u64::from(databases) / u64::from(profile.page_size)).max(64);
    let target_iops = match a.iops_per_mailbox {
        Some(x) if !(x > 0.0 && x <= MAX_IOPS_PER_MAILBOX) => refuse!(
            "--iops-per-mailbox {x}: give a rate above 0 and at most {MAX_IOPS_PER_MAILBOX} (Exchange's \
             profiles ask 0.06 to 1.0), or leave it out to run unthrottled"
        ),
        Some(x) => Some(x * mailboxes as f64),
        None => None,
    };
    let threads = match a.threads {
        Some(0) => refuse!("--threads 0: at least one thread is needed (or --tune to find the count)"),
        Some(t) => t,
        None => target_iops.map_or(4 * databases, |t| ((t * 1.5 / 135.0).ceil() as u32).max(databases)),
    };
    check_memory_use(&profile, databases, threads)?;
    let duration = a.duration_or_default();
    if duration.is_zero() {
        refuse!("--duration 0: the measured phase needs at least a second");
    }
    let steady_state = steady_round(a)?;
    let log_files = a.log_files.unwrap_or(100);
    if !(1..=1_000_000).contains(&log_files) {
        refuse!("--log-files {log_files}: soft recovery replays 1 to 1000000 log files");
    }
    let plan = MailboxSetup {
        db_dir,
        log_dir,
        preset,
        test,
        profile,
        thresholds,
        mailboxes,
        mailbox_bytes,
        databases,
        pages,
        threads,
        target_iops,
        duration,
        steady_state,
        max_warmup: a.max_warmup_or_default(),
        sample_window: a.sample_window.map_or(Duration::from_secs(15), |d| d.0.max(Duration::from_secs(1))),
        log_files,
        tune: a.tune,
        trial_duration: a
            .trial_duration
            .map_or(Duration::from_secs(120), |d| d.0.max(Duration::from_secs(1))),
        keep: a.keep,
        verify: !a.no_verify,
        engine: match a.engine.unwrap_or(EngineKind::IoUring) {
            EngineKind::Null => {
                refuse!("--engine null: the mailbox workload needs real files; use io_uring or psync")
            }
            real => real,
        },
        seed: a.seed.unwrap_or(crate::rng::DEFAULT_SEED),
    };
    Ok(plan)
}

/// --steady-state, capped by --duration, where the test has rounds to judge.
fn steady_round(a: &MailboxOptions) -> Result<Option<Duration>> {
    if a.steady_state.is_some() && !a.has_rounds() {
        refuse!(
            "--steady-state judges the transactional IOPS of each round, which only the performance \
             and stress tests have: a backup or soft recovery does a fixed amount of work, and \
             --tune's trials are short fixed runs; drop --steady-state (or --tune, then run the \
             chosen --threads with it)"
        );
    }
    Rule::checked_round(a.steady_state.map(|r| r.0), a.duration.map(|d| ("--duration", d.0)))
}

/// The database caches and the sessions' page buffers must fit in the memory this machine has
/// available. A cache stands for the memory the server would give it, but storbench keeps only
/// its page bookkeeping, so that is what must fit.
/// The most transactional I/Os a second per mailbox: far past Exchange's heaviest profile, and
/// low enough that the thread count drawn from it stays a count.
const MAX_IOPS_PER_MAILBOX: f64 = 1000.0;

fn check_memory_use(p: &Profile, databases: u32, threads: u32) -> Result<()> {
    let buffers = cache::buffers_for(p.cache_max, p.page_size);
    let caches = cache::bookkeeping_bytes(buffers).and_then(|b| b.checked_mul(u64::from(databases)));
    let what = format!(
        "--cache-size {} for each of {databases} database(s) ({buffers} pages of bookkeeping each)",
        ByteSize(p.cache_max)
    );
    use crate::monitor::memory::check_memory;
    check_memory(&what, caches, "give a smaller --cache-size or fewer --databases")?;
    let buffers = u64::from(threads) * u64::from(p.page_size);
    check_memory(&format!("--threads {threads}"), Some(buffers), "give fewer --threads")
}

/// The preset's engine parameters with the user's overrides.
fn profile(a: &MailboxOptions, preset: Preset) -> Result<Profile> {
    let mut p = preset.profile();
    if let Some(mix) = &a.mix {
        p.mix = parse_mix(mix)?;
    }
    if let Some(l) = a.lazy_commits {
        if l > 100 {
            refuse!("--lazy-commits {l}: a percentage is 0 to 100");
        }
        p.lazy_commit_pct = l;
    }
    if let Some(c) = a.cache_size {
        if c.0 < 64 * u64::from(p.page_size) {
            refuse!(
                "--cache-size {}: the cache needs at least 64 pages ({} KiB)",
                c.0,
                64 * p.page_size / 1024
            );
        }
        p.cache_max = c.0;
        p.cache_min = p.cache_min.min(c.0);
    }
    if let Some(d) = a.checkpoint_depth {
        p.checkpoint_depth = d.0;
    }
    if let Some(r) = a.bdm_rate {
        p.bdm_bytes_per_sec = r.0;
    }
    Ok(p)
}

/// `40/20/5/35`: insert, delete, replace, read; they must add up to 100.
pub fn parse_mix(s: &str) -> Result<OpMix> {
    let parts: Vec<&str> = s.split('/').map(str::trim).collect();
    let nums: Option<Vec<u32>> = parts.iter().map(|p| p.parse().ok()).collect();
    let Some([insert, delete, replace, read]) = nums.as_deref().and_then(|n| <[u32; 4]>::try_from(n).ok())
    else {
        refuse!("--mix {s}: give four whole percentages INSERT/DELETE/REPLACE/READ, e.g. 40/20/5/35");
    };
    let mix = OpMix { insert, delete, replace, read };
    if [insert, delete, replace, read].iter().any(|&share| share > 100) {
        refuse!("--mix {s}: each share is a percentage, 0 to 100");
    }
    if mix.total() != 100 {
        refuse!("--mix {s}: the shares add up to {}, not 100", mix.total());
    }
    if delete > insert {
        refuse!(
            "--mix {s}: more deletes than inserts would drain the mailboxes; keep DELETE at or below INSERT"
        );
    }
    Ok(mix)
}

fn thresholds(a: &MailboxOptions, preset: Preset, test: TestType) -> Result<Thresholds> {
    let mut t = preset.thresholds(test);
    // Latency limits up to an hour; stalls up to a million a second: past either, the limit
    // judges nothing.
    const HOUR_MS: f64 = 3_600_000.0;
    for (name, given, slot, most) in [
        ("db-read-avg-ms", a.db_read_avg_ms, &mut t.db_read_avg_ms, HOUR_MS),
        ("db-read-max-ms", a.db_read_max_ms, &mut t.db_read_max_ms, HOUR_MS),
        ("log-write-avg-ms", a.log_write_avg_ms, &mut t.log_write_avg_ms, HOUR_MS),
        ("log-write-max-ms", a.log_write_max_ms, &mut t.log_write_max_ms, HOUR_MS),
        ("page-fault-stalls", a.page_fault_stalls, &mut t.page_fault_stalls_per_sec, 1e6),
    ] {
        if let Some(v) = given {
            if !(v >= 0.0 && v <= most) {
                refuse!("--{name} {v}: a limit is a number from 0 to {most}");
            }
            *slot = v;
        }
    }
    Ok(t)
}

impl MailboxSetup {
    pub fn db_bytes(&self) -> u64 {
        self.pages * u64::from(self.profile.page_size)
    }

    /// Bytes the databases need (with room to grow) and the logs need.
    pub fn space_needed(&self) -> (u64, u64) {
        // Saturating: a need beyond 64 bits is more than any free space, and refused as such.
        let data =
            self.db_bytes().saturating_mul(u64::from(self.databases)) / 100 * (100 + GROWTH_RESERVE_PCT);
        let logs_per_db = match self.test {
            TestType::SoftRecovery => u64::from(self.log_files) + 4,
            _ => self.profile.checkpoint_depth / u64::from(self.profile.log_file_size) + 8,
        };
        let logs = logs_per_db.saturating_mul(u64::from(self.profile.log_file_size));
        (data, logs.saturating_mul(u64::from(self.databases)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_must_name_four_shares_that_add_up_to_100() {
        assert_eq!(parse_mix("40/20/5/35").unwrap(), OpMix { insert: 40, delete: 20, replace: 5, read: 35 });
        let err = |s| parse_mix(s).unwrap_err().to_string();
        assert!(err("40/20/5/30").contains("add up to 95"));
        assert!(err("40/20/5").contains("four whole percentages"));
        assert!(err("20/40/5/35").contains("drain"));
        assert!(err("4294967295/4294967295/2/0").contains("0 to 100"), "no overflow adding them up");
    }

    #[test]
    fn a_cache_is_checked_by_the_bookkeeping_storbench_keeps_not_by_the_memory_it_stands_for() {
        let p = |cache_max| Profile { cache_max, ..Preset::V2010.profile() };
        // 99 databases of 1 GiB stand for 99 GiB of server memory, more than this machine has;
        // storbench keeps about 3 MiB of page bookkeeping for each.
        check_memory_use(&p(1 << 30), 99, 17).expect("a large simulated cache is allowed");
        let err = check_memory_use(&p(1 << 50), 2, 1).unwrap_err().to_string();
        assert!(err.contains("give a smaller --cache-size"), "{err}");
    }
}
