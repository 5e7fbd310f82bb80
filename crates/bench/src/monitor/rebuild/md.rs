//! Linux md (software RAID): what an array is doing, from `/proc/mdstat` and
//! `/sys/block/mdX/md/{sync_action,sync_completed,sync_speed,degraded}`, and the kernel's
//! rebuild throttles `/proc/sys/dev/raid/speed_limit_{min,max}`.
//!
//! Both sources are read because each has what the other lacks: sysfs tells `repair` from
//! `resync` and counts the position exactly (512-byte sectors), mdstat tells a resync that waits
//! (`resync=DELAYED`, `PENDING`) and has the percent a user sees. Everything is read under a
//! root directory, "/" on a live system, so the tests run on recorded files.

use std::fs;
use std::path::Path;

use super::{Action, RebuildActivity, StackKind};
use crate::monitor::device::{read_text, read_value};

const MDSTAT: &str = "proc/mdstat";
const SPEED_LIMITS: &str = "proc/sys/dev/raid";
const SECTOR: u64 = 512;
const KIB: u64 = 1024;

/// One array's entry in `/proc/mdstat`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MdstatEntry {
    /// Kernel name, `md0`.
    pub name: String,
    /// `raid1`, `raid5` ...; `None` for an inactive array.
    pub level: Option<String>,
    /// `[n/m]`: devices the array has and devices working.
    pub devices: Option<(u32, u32)>,
    /// The action of the progress line; `None` when there is none (idle).
    pub action: Option<Action>,
    /// The action waits (`resync=DELAYED`, `resync=PENDING`).
    pub pending: bool,
    pub done_pct: Option<f64>,
    /// The progress line's `(done/total)`, in KiB.
    pub done_kib: Option<u64>,
    pub total_kib: Option<u64>,
    /// `finish=0.7min`, in seconds.
    pub finish_secs: Option<u64>,
    /// `speed=220629K/sec`, in KiB/s.
    pub speed_kib_per_s: Option<u64>,
}

/// The kernel's throttles on every array's resync and recovery, bytes per second: md keeps
/// at least `min` while other I/O runs and never goes beyond `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpeedLimits {
    pub min_bytes_per_s: u64,
    pub max_bytes_per_s: u64,
}

/// The throttles under `root`; `None` without md (the files exist only with md loaded).
pub fn speed_limits(root: &Path) -> Option<SpeedLimits> {
    let dir = root.join(SPEED_LIMITS);
    let kib = |file: &str| read_value::<u64>(&dir.join(file))?.checked_mul(KIB);
    Some(SpeedLimits { min_bytes_per_s: kib("speed_limit_min")?, max_bytes_per_s: kib("speed_limit_max")? })
}

/// The readings of every md array among `devices` (kernel names; others are passed over).
pub fn sample(root: &Path, devices: &[String]) -> Vec<RebuildActivity> {
    let mdstat = fs::read_to_string(root.join(MDSTAT)).map(|t| parse_mdstat(&t)).unwrap_or_default();
    devices.iter().filter_map(|name| activity(root, name, mdstat.iter().find(|e| &e.name == name))).collect()
}

/// The reading of the array `name` from its sysfs directory and its mdstat `entry`; `None`
/// when neither knows it (not an md device).
pub fn activity(root: &Path, name: &str, entry: Option<&MdstatEntry>) -> Option<RebuildActivity> {
    let dir = root.join("sys/block").join(name).join("md");
    let sys_action = read_text(&dir.join("sync_action"));
    if sys_action.is_none() && entry.is_none() {
        return None;
    }
    let entry = entry.cloned().unwrap_or_default();
    // sysfs first (it names repair and frozen); a waiting resync shows only in mdstat.
    let action = [sys_action.as_deref().and_then(sync_action), entry.action]
        .into_iter()
        .flatten()
        .find(|a| *a != Action::Idle)
        .unwrap_or(Action::Idle);
    let mut reading = RebuildActivity::new(name, StackKind::Md, action);
    reading.degraded_devices = read_value(&dir.join("degraded"))
        .or_else(|| entry.devices.map(|(all, working)| all.saturating_sub(working)));
    if action == Action::Idle {
        return Some(reading);
    }
    reading.paused = entry.pending;
    let completed = read_text(&dir.join("sync_completed")).and_then(|t| sync_completed(&t));
    let kib = |v: Option<u64>| v.and_then(|k| k.checked_mul(KIB));
    reading.bytes_done = completed.map(|c| c.0).or(kib(entry.done_kib));
    reading.bytes_total = completed.map(|c| c.1).or(kib(entry.total_kib));
    reading.done_pct = entry.done_pct.or_else(|| percent(reading.bytes_done?, reading.bytes_total?));
    reading.speed_bytes_per_s = kib(read_value(&dir.join("sync_speed")).or(entry.speed_kib_per_s));
    Some(reading)
}

/// `sync_action`'s word; `None` for one this code does not know.
fn sync_action(word: &str) -> Option<Action> {
    Some(match word {
        "idle" | "frozen" => Action::Idle,
        "resync" => Action::Resync,
        "recover" => Action::Recovery,
        "check" => Action::Check,
        "repair" => Action::Repair,
        "reshape" => Action::Reshape,
        _ => return None,
    })
}

/// `sync_completed`: "done / total" in sectors, as bytes; `None` for "none" or "delayed".
fn sync_completed(text: &str) -> Option<(u64, u64)> {
    let (done, total) = text.split_once('/')?;
    let bytes = |s: &str| s.trim().parse::<u64>().ok()?.checked_mul(SECTOR);
    Some((bytes(done)?, bytes(total)?))
}

fn percent(done: u64, total: u64) -> Option<f64> {
    (total > 0).then(|| done as f64 * 100.0 / total as f64)
}

/// Every array in mdstat text; lines it cannot read are passed over.
pub fn parse_mdstat(text: &str) -> Vec<MdstatEntry> {
    let mut entries: Vec<MdstatEntry> = Vec::new();
    for line in text.lines() {
        if line.starts_with(char::is_whitespace) {
            if let Some(entry) = entries.last_mut() {
                read_detail(line, entry);
            }
        } else if let Some(entry) = array_line(line) {
            entries.push(entry);
        } else {
            // "Personalities", "unused devices", or a line torn out of shape: whatever
            // follows is no array's detail.
            entries.push(MdstatEntry::default());
        }
    }
    entries.retain(|e| !e.name.is_empty());
    entries
}

/// `md0 : active raid1 sdc1[2] sda1[0]` (`active (auto-read-only)`, `inactive sdb[0](S)`).
fn array_line(line: &str) -> Option<MdstatEntry> {
    let (name, rest) = line.split_once(" : ")?;
    let name = name.trim();
    // A kernel name is one path component: a torn line never names a path elsewhere.
    if !name.starts_with("md") || name.contains(|c: char| c.is_whitespace() || c == '/') {
        return None;
    }
    let mut words = rest.split_whitespace();
    let level = match words.next()? {
        "active" => words.find(|w| !w.starts_with('(')).filter(|w| !w.contains('[')).map(str::to_owned),
        _ => None,
    };
    Some(MdstatEntry { name: name.to_owned(), level, ..MdstatEntry::default() })
}

/// One indented line of an array's entry: its size line with `[n/m]`, its progress line, or
/// something else (bitmap) that adds nothing.
fn read_detail(line: &str, entry: &mut MdstatEntry) {
    let words: Vec<&str> = line.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        if let Some(counts) = device_counts(word) {
            entry.devices = Some(counts);
        } else if let Some((action, state)) =
            word.split_once('=').filter(|(_, s)| !s.is_empty() && !s.contains('%'))
        {
            // `resync=DELAYED`, `resync=PENDING`: waiting for another array on the same disks.
            if let Some(action) = progress_action(action) {
                entry.action = Some(action);
                entry.pending = state.chars().all(|c| c.is_ascii_uppercase());
            }
        } else if let Some(action) = progress_action(word) {
            read_progress(&words[i + 1..], action, entry);
            return;
        }
    }
}

/// `[2/1]`: devices in the array and devices working.
fn device_counts(word: &str) -> Option<(u32, u32)> {
    let (all, working) = word.strip_prefix('[')?.strip_suffix(']')?.split_once('/')?;
    Some((all.parse().ok()?, working.parse().ok()?))
}

fn progress_action(word: &str) -> Option<Action> {
    Some(match word {
        "resync" => Action::Resync,
        "recovery" => Action::Recovery,
        "check" => Action::Check,
        "repair" => Action::Repair,
        "reshape" => Action::Reshape,
        _ => return None,
    })
}

/// The words after the action: `= 12.6% (1323776/10476544) finish=0.7min speed=220629K/sec`
/// (`=100.0%` with no space once the percent has three digits).
fn read_progress(words: &[&str], action: Action, entry: &mut MdstatEntry) {
    entry.action = Some(action);
    for word in words {
        let word = word.trim_start_matches('=');
        if let Some(pct) = word.strip_suffix('%') {
            entry.done_pct = pct.parse().ok().filter(|p: &f64| (0.0..=100.0).contains(p));
        } else if let Some((done, total)) =
            word.strip_prefix('(').and_then(|w| w.strip_suffix(')')?.split_once('/'))
        {
            entry.done_kib = done.parse().ok();
            entry.total_kib = total.parse().ok();
        } else if let Some(minutes) = word.strip_prefix("finish=").and_then(|w| w.strip_suffix("min")) {
            entry.finish_secs =
                minutes.parse::<f64>().ok().filter(|m| m.is_finite() && *m >= 0.0).map(|m| (m * 60.0) as u64);
        } else if let Some(speed) = word.strip_prefix("speed=").and_then(|w| w.strip_suffix("K/sec")) {
            entry.speed_kib_per_s = speed.parse().ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A recorded md case under tests/data/rebuild/md/.
    fn case(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rebuild/md").join(name)
    }

    fn one(case_name: &str, device: &str) -> RebuildActivity {
        let readings = sample(&case(case_name), &[device.to_owned()]);
        assert_eq!(readings.len(), 1, "{readings:?}");
        readings.into_iter().next().unwrap()
    }

    #[test]
    fn a_raid1_recovering_after_mdadm_add_reports_recovery_progress_and_speed() {
        let r = one("raid1-recovery", "md0");
        assert_eq!((r.kind, r.action, r.paused), (StackKind::Md, Action::Recovery, false));
        assert_eq!(r.done_pct, Some(12.6));
        assert_eq!(r.speed_bytes_per_s, Some(220_629 * 1024));
        // sync_completed's sectors, exact: 2646016 and 20953088 sectors of 512 bytes.
        assert_eq!((r.bytes_done, r.bytes_total), (Some(2_646_016 * 512), Some(20_953_088 * 512)));
        assert_eq!(r.degraded_devices, Some(1));
        assert!(r.is_abnormal());
    }

    #[test]
    fn an_idle_array_reports_idle_with_nothing_in_progress() {
        let r = one("raid1-idle", "md0");
        assert_eq!(
            r,
            RebuildActivity {
                degraded_devices: Some(0),
                ..RebuildActivity::new("md0", StackKind::Md, Action::Idle)
            }
        );
        assert!(!r.is_abnormal());
    }

    #[test]
    fn a_raid5_resync_and_a_raid10_check_are_told_apart() {
        let r = one("raid5-resync", "md1");
        assert_eq!(
            (r.action, r.done_pct, r.speed_bytes_per_s),
            (Action::Resync, Some(38.2), Some(70_234 * 1024))
        );
        let r = one("raid10-check", "md2");
        assert_eq!(
            (r.action, r.done_pct, r.speed_bytes_per_s),
            (Action::Check, Some(7.5), Some(137_216 * 1024))
        );
        assert_eq!(r.bytes_total, Some(41_906_176 * 512));
        // A check is not a rebuild, but it reads every disk: a run under it is not normal.
        assert!(r.is_abnormal());
    }

    #[test]
    fn a_degraded_array_without_a_sync_is_idle_but_abnormal() {
        let r = one("raid1-degraded", "md0");
        assert_eq!((r.action, r.degraded_devices, r.done_pct), (Action::Idle, Some(1), None));
        assert!(r.is_abnormal());
    }

    #[test]
    fn devices_that_are_not_md_are_passed_over() {
        let names = ["sda".to_owned(), "md0".to_owned(), "loop0".to_owned()];
        let readings = sample(&case("raid1-recovery"), &names);
        assert_eq!(readings.iter().map(|r| r.device.as_str()).collect::<Vec<_>>(), ["md0"]);
        assert!(sample(Path::new("/nonexistent/storbench"), &names).is_empty());
    }

    #[test]
    fn speed_limits_are_read_in_bytes_per_second() {
        let limits = speed_limits(&case("raid1-idle")).unwrap();
        assert_eq!(limits, SpeedLimits { min_bytes_per_s: 1000 * 1024, max_bytes_per_s: 200_000 * 1024 });
        assert_eq!(speed_limits(Path::new("/nonexistent/storbench")), None);
    }

    #[test]
    fn mdstat_alone_gives_the_progress_line_in_kib() {
        // Without sysfs (a copied mdstat): the progress line's own figures.
        let text = fs::read_to_string(case("raid1-recovery").join(MDSTAT)).unwrap();
        let entries = parse_mdstat(&text);
        assert_eq!(entries.len(), 1);
        let e = &entries[0];
        assert_eq!((e.name.as_str(), e.level.as_deref(), e.devices), ("md0", Some("raid1"), Some((2, 1))));
        assert_eq!((e.done_kib, e.total_kib, e.finish_secs), (Some(1_323_776), Some(10_476_544), Some(42)));
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("proc")).unwrap();
        fs::write(dir.path().join(MDSTAT), text).unwrap();
        let r = &sample(dir.path(), &["md0".to_owned()])[0];
        assert_eq!(
            (r.action, r.done_pct, r.bytes_done),
            (Action::Recovery, Some(12.6), Some(1_323_776 * 1024))
        );
        assert_eq!(r.degraded_devices, Some(1));
    }

    #[test]
    fn a_delayed_resync_is_a_paused_resync_and_a_full_percent_is_read() {
        let text = "md1 : active raid1 sdd[1] sdc[0]\n      1000 blocks [2/2] [UU]\n      \tresync=DELAYED\n\
                    md0 : active raid1 sdb[1] sda[0]\n      1000 blocks [2/2] [UU]\n      \
                    [====================>]  resync =100.0% (1000/1000) finish=0.0min speed=1000K/sec\n";
        let entries = parse_mdstat(text);
        assert_eq!((entries[0].action, entries[0].pending), (Some(Action::Resync), true));
        assert_eq!((entries[1].action, entries[1].done_pct), (Some(Action::Resync), Some(100.0)));
    }

    #[test]
    fn torn_or_garbage_mdstat_gives_nothing_or_partial_entries_never_a_panic() {
        let full = fs::read_to_string(case("raid5-resync").join(MDSTAT)).unwrap();
        for cut in 0..full.len() {
            let entries = parse_mdstat(&full[..cut]);
            assert!(entries.len() <= 1);
            for e in entries {
                assert!(e.done_pct.is_none_or(|p| (0.0..=100.0).contains(&p)));
            }
        }
        for junk in [
            "",
            "\n\n",
            " : \n",
            "md : x\n",
            "   [=>]  resync = x% (/) speed=K/sec\n",
            "md0 : active\n  resync = 900%",
        ] {
            let entries = parse_mdstat(junk);
            assert!(entries.iter().all(|e| e.done_pct.is_none()), "{junk:?}: {entries:?}");
        }
        assert_eq!(sync_completed("none"), None);
        assert_eq!(sync_completed("delayed"), None);
        assert_eq!(sync_completed("99999999999999999999 / 1"), None);
        assert_eq!(sync_action("rebuild-ish"), None);
    }
}
