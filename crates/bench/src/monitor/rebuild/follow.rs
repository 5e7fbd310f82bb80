//! Rebuild activity once a second for a run's series, and what the series says happened, for
//! the run's warnings.
//!
//! The host sampler takes a reading every second and must not wait: md is read from sysfs and
//! procfs at once (a few small files), btrfs on a thread of its own, whose latest reading the
//! sampler takes (at most a second old). btrfs-progs' status commands take tens of
//! milliseconds each, so the thread asks only what can be running: `replace status` and
//! `balance status` while the filesystem's `exclusive_operation` names one (or on a kernel
//! without that file), `scrub status` every [`SCRUB_EVERY`] readings while no scrub runs
//! (a scrub is not an exclusive operation and has no cheaper sign) and every reading while one
//! does.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use storbench_report::RebuildSample;

use super::btrfs::{self, Operation};
use super::{Action, Watched, md};
use crate::monitor::device;
use crate::run::StopFlag;

/// How often the btrfs thread reads.
const EVERY: Duration = Duration::from_secs(1);
/// While no scrub runs, `btrfs scrub status` is asked every this many readings: a scrub that
/// starts during a run shows within this many seconds.
pub const SCRUB_EVERY: u64 = 5;

/// Every md array and btrfs filesystem under a run's paths, one sample each per call.
#[derive(Debug)]
pub struct RebuildSampler {
    root: PathBuf,
    md: Vec<String>,
    btrfs: Option<BtrfsThread>,
}

impl RebuildSampler {
    /// Reads the md arrays among `watched`'s devices under `root` ("/" on a live system), and
    /// its btrfs mounts on a thread started here; `None` when there is neither.
    pub fn start(watched: &Watched, root: &Path) -> Option<RebuildSampler> {
        let md: Vec<String> = md::sample(root, &watched.devices).into_iter().map(|r| r.device).collect();
        let btrfs = (!watched.btrfs_mounts.is_empty()).then(|| BtrfsThread::start(&watched.btrfs_mounts));
        (!md.is_empty() || btrfs.is_some()).then(|| RebuildSampler { root: root.into(), md, btrfs })
    }

    /// One sample per stack in a fixed order, the md arrays (read now) then the btrfs mounts
    /// (the thread's latest reading); a stack that could not be read has no action.
    pub fn sample(&self) -> Vec<RebuildSample> {
        let readings = md::sample(&self.root, &self.md);
        let md = self.md.iter().map(|name| match readings.iter().find(|r| &r.device == name) {
            Some(reading) => reading.to_sample(),
            None => unread(name),
        });
        md.chain(self.btrfs.iter().flat_map(BtrfsThread::latest)).collect()
    }
}

fn unread(stack: &str) -> RebuildSample {
    RebuildSample { stack: stack.to_owned(), ..RebuildSample::default() }
}

/// The thread that reads the btrfs filesystems; stopped and joined on drop.
#[derive(Debug)]
struct BtrfsThread {
    latest: Arc<Mutex<Vec<RebuildSample>>>,
    stop: StopFlag,
    thread: Option<JoinHandle<()>>,
}

impl BtrfsThread {
    fn start(mounts: &[PathBuf]) -> BtrfsThread {
        let filesystems: Vec<Filesystem> = mounts.iter().map(|m| Filesystem::of(m)).collect();
        let first = filesystems.iter().map(|f| unread(&f.stack)).collect();
        let latest = Arc::new(Mutex::new(first));
        let stop = StopFlag::new();
        let (into, until) = (Arc::clone(&latest), stop.clone());
        let thread = std::thread::Builder::new()
            .name("rebuild".into())
            .spawn(move || follow(filesystems, &into, &until));
        // Without a thread the mounts stay unread: the run goes on.
        BtrfsThread { latest, stop, thread: thread.ok() }
    }

    fn latest(&self) -> Vec<RebuildSample> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for BtrfsThread {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn follow(mut filesystems: Vec<Filesystem>, latest: &Mutex<Vec<RebuildSample>>, stop: &StopFlag) {
    for reading in 0.. {
        let started = Instant::now();
        for (i, filesystem) in filesystems.iter_mut().enumerate() {
            let sample = filesystem.read(reading, stop);
            if stop.is_stopped() {
                return;
            }
            latest.lock().unwrap_or_else(PoisonError::into_inner)[i] = sample;
        }
        while started.elapsed() < EVERY {
            if stop.is_stopped() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// One btrfs mount the thread reads.
struct Filesystem {
    mount: PathBuf,
    stack: String,
    /// Its UUID, for `exclusive_operation`; `None` when sysfs does not tell it.
    fsid: Option<String>,
    /// A scrub ran at the last reading.
    scrubbing: bool,
}

impl Filesystem {
    fn of(mount: &Path) -> Filesystem {
        let sys = Path::new("/sys");
        let source = device::resolve_device(mount).ok().flatten();
        Filesystem {
            mount: mount.to_path_buf(),
            stack: mount.to_string_lossy().into_owned(),
            fsid: source.and_then(|d| btrfs::fsid_of_device(sys, &d.name)),
            scrubbing: false,
        }
    }

    /// The operations that can be running at the `reading`-th reading.
    fn operations(&self, reading: u64) -> Vec<Operation> {
        let exclusive = self.fsid.as_deref().and_then(|id| btrfs::exclusive_operation(Path::new("/sys"), id));
        let shows = |word: &str| exclusive.as_deref().is_none_or(|op| op.contains(word));
        let mut asked = Vec::new();
        if shows("replace") {
            asked.push(Operation::Replace);
        }
        if shows("balance") {
            asked.push(Operation::Balance);
        }
        if self.scrubbing || reading.is_multiple_of(SCRUB_EVERY) {
            asked.push(Operation::Scrub);
        }
        asked
    }

    /// The filesystem's sample: its first operation running (a replace before a balance
    /// before a scrub), or idle; unread when a status command failed.
    fn read(&mut self, reading: u64, stop: &StopFlag) -> RebuildSample {
        let Ok(readings) = btrfs::sample_of(&self.mount, &self.operations(reading), stop) else {
            return unread(&self.stack);
        };
        self.scrubbing = readings.iter().any(|r| r.action == Action::Scrub);
        readings.first().map_or_else(|| unread(&self.stack), |r| r.to_sample())
    }
}

/// What each stack did during a run, from its rows (each row's end in seconds since the run
/// started and its samples), for the run's warnings: one for each stack that rebuilt,
/// resynced, scrubbed, balanced or ran degraded in any row, saying what, when and how far,
/// and whether it finished (a later row idle).
pub fn during(rows: &[(f64, Vec<RebuildSample>)]) -> Vec<String> {
    let mut stacks: Vec<&str> = Vec::new();
    for (_, samples) in rows {
        for s in samples.iter().filter(|s| s.is_abnormal()) {
            if !stacks.contains(&s.stack.as_str()) {
                stacks.push(&s.stack);
            }
        }
    }
    stacks.into_iter().map(|stack| stack_during(rows, stack)).collect()
}

fn stack_during(rows: &[(f64, Vec<RebuildSample>)], stack: &str) -> String {
    let of_stack =
        rows.iter().filter_map(|(t, samples)| Some((*t, samples.iter().find(|s| s.stack == stack)?)));
    let busy: Vec<(f64, &RebuildSample)> = of_stack.clone().filter(|(_, s)| s.is_abnormal()).collect();
    let (first, last) = (busy[0], busy[busy.len() - 1]);
    let finished =
        of_stack.skip_while(|(t, _)| *t <= last.0).any(|(_, s)| s.action.is_some() && !s.is_abnormal());
    let mut actions: Vec<&str> = Vec::new();
    for action in busy.iter().filter_map(|(_, s)| s.action.as_deref()).filter(|a| *a != "idle") {
        if !actions.contains(&action) {
            actions.push(action);
        }
    }
    let what = if actions.is_empty() { "degraded".to_owned() } else { actions.join(" and ") };
    let mut text = format!("{stack}: {what} during the run, seen from {:.0} s to {:.0} s", first.0, last.0);
    let done: Vec<f64> = busy.iter().filter_map(|(_, s)| s.pct_done).collect();
    if let (Some(from), Some(to)) = (done.first(), done.last()) {
        text.push_str(&format!(", {from:.1} % to {to:.1} % done"));
    }
    if finished {
        text.push_str(", then finished");
    }
    text + ": these figures are of storage rebuilding, not of normal storage"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(stack: &str, action: &str, pct: Option<f64>) -> RebuildSample {
        RebuildSample {
            stack: stack.into(),
            action: Some(action.into()),
            pct_done: pct,
            ..RebuildSample::default()
        }
    }

    #[test]
    fn a_replace_that_finished_during_the_run_is_told_with_its_progress() {
        let rows = vec![
            (1.0, vec![sample("/mnt", "idle", None), sample("md0", "idle", None)]),
            (2.0, vec![sample("/mnt", "replace", Some(10.8)), sample("md0", "idle", None)]),
            (3.0, vec![sample("/mnt", "replace", Some(55.0)), sample("md0", "idle", None)]),
            (4.0, vec![sample("/mnt", "idle", None), sample("md0", "idle", None)]),
        ];
        assert_eq!(
            during(&rows),
            [
                "/mnt: replace during the run, seen from 2 s to 3 s, 10.8 % to 55.0 % done, then finished: these \
              figures are of storage rebuilding, not of normal storage"
            ]
        );
        assert!(during(&rows[..1]).is_empty());
    }

    #[test]
    fn a_degraded_array_and_an_unread_second_are_told_apart_from_a_finish() {
        let degraded = RebuildSample { degraded_devices: Some(1), ..sample("md0", "idle", None) };
        let rows = vec![(1.0, vec![degraded.clone()]), (2.0, vec![unread("md0")])];
        let said = during(&rows);
        assert_eq!(said.len(), 1);
        assert!(said[0].starts_with("md0: degraded during the run, seen from 1 s to 1 s:"), "{said:?}");
    }

    #[test]
    fn md_arrays_are_sampled_from_the_root_every_call_and_other_devices_are_passed_over() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rebuild/md/raid1-recovery");
        let watched = Watched { devices: vec!["dm-0".into(), "md0".into()], btrfs_mounts: Vec::new() };
        let sampler = RebuildSampler::start(&watched, &root).unwrap();
        let samples = sampler.sample();
        assert_eq!(samples.len(), 1);
        assert_eq!((samples[0].stack.as_str(), samples[0].action.as_deref()), ("md0", Some("recovery")));
        assert_eq!(samples[0].pct_done, Some(12.6));
        let nothing = Watched { devices: vec!["dm-0".into()], btrfs_mounts: Vec::new() };
        assert!(RebuildSampler::start(&nothing, &root).is_none());
    }

    #[test]
    fn an_idle_btrfs_is_asked_only_about_a_scrub_and_that_every_few_readings() {
        let Some(raid) = crate::monitor::rebuild::btrfs::tests::LoopRaid1::new() else { return };
        let mut filesystem = Filesystem::of(&raid.mount);
        assert_eq!(filesystem.fsid.as_deref(), Some(raid.fsid.as_str()));
        // exclusive_operation says none: no replace or balance can run, nothing to ask.
        assert_eq!(filesystem.operations(0), [Operation::Scrub]);
        assert!((1..SCRUB_EVERY).all(|reading| filesystem.operations(reading).is_empty()));
        filesystem.scrubbing = true;
        assert_eq!(filesystem.operations(1), [Operation::Scrub]);
        let idle = filesystem.read(0, &StopFlag::new());
        assert_eq!(
            (idle.stack.as_str(), idle.action.as_deref()),
            (raid.mount.to_str().unwrap(), Some("idle"))
        );
        assert!(!filesystem.scrubbing);
    }
}
