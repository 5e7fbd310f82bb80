//! One integrity run: create the files (the manifest first, the data file filled with first
//! generations, the journal), start the activities and the syncer, drive them through the run
//! lifecycle (`run::drive`, one-second intervals, no warm-up: an error counts whenever it
//! happens), stop and sync, then audit every page against the journal and add what it found
//! to the suspect pages.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::audit::{AuditReport, audit};
use super::faults::{FaultRules, FaultyEngine, InjectionLog};
use super::journal::{Journal, JournalError};
use super::layout::{Layout, Manifest, Sizes};
use super::page::{PAGE, PageId, write_page};
use super::recorder::{Activity, IntegrityRecorder};
use super::state::{DirtyMap, Generations, PageState, PageTable};
use super::suspects::SuspectPage;
use super::worker::{Shared, Worker, WorkerOut, shape};
use crate::engine::{AlignedBuf, EngineKind, open_files};
use crate::run::{
    Beside, Closed, Interval, Length, Lifecycle, Outcome, Pace, Progress, RunShape, SeriesColumn, Started,
    StopFlag, Take, Warmup,
};
use storbench_report::columns::integrity as col;

/// A validated integrity run. Serialized as it is to a crash cycle's writer process, so the
/// writer runs exactly the parent's spec.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct IntegritySpec {
    /// Where the files go; with `device`, where the journal and the manifest go.
    pub dir: PathBuf,
    /// A block device for the data and the log (the caller checked that it may be written).
    pub device: Option<PathBuf>,
    pub sizes: Sizes,
    pub duration: Duration,
    pub seed: u64,
    pub engine: EngineKind,
    /// O_DIRECT (SQLIOSim's NoBuffering).
    pub direct: bool,
    /// O_DSYNC on every write (SQLIOSim's WriteThrough).
    pub write_through: bool,
    /// User threads doing random I/O.
    pub users: u32,
    /// Above this an I/O throttles its activity.
    pub target_io: Duration,
    /// I/Os outstanding longer than this are delayed (SQL Server's 15 s message).
    pub delay_threshold: Duration,
    /// How often acknowledged writes are made durable and journalled (the checkpoint).
    pub sync_every: Duration,
    /// At its maximum the data file is cut by one growth increment at most this often.
    pub shrink_every: Duration,
    /// Faults to inject into every activity's engine (tests of the checker); never handed to
    /// another process.
    #[serde(skip)]
    pub faults: Option<FaultRules>,
}

/// The interval as the caller sees it.
pub type IntegrityInterval<'a> = Closed<'a, IntegrityRecorder>;

/// What a run measured.
pub type IntegrityOutcome = Outcome<IntegrityRecorder, IntegrityDetail>;

/// What only the integrity workload has in its outcome.
#[derive(Debug, Default)]
pub struct IntegrityDetail {
    /// None when the run was stopped before it.
    pub audit: Option<AuditReport>,
    pub audit_s: f64,
    pub data_initial_bytes: u64,
    pub data_final_bytes: u64,
    pub grows: u64,
    pub shrinks: u64,
    /// Writes the journal holds as acknowledged.
    pub acknowledged: u64,
    /// Errors found after the last interval closed (the activities' last moments), which no
    /// interval's records hold.
    pub late_records: Vec<super::verdict::ErrorRecord>,
    /// What the activities counted after the last interval closed (its records are
    /// `late_records`): in the totals, and in the record as its tail.
    pub tail: IntegrityRecorder,
    /// Every page found damaged (by the run's reads and the audit), once, by file and page.
    pub suspects: Vec<SuspectPage>,
    /// Shrinks that kept part or all of their increment because a damaged page lies in it.
    pub shrinks_held: u64,
    /// Why the final audit was not run, when the run was not stopped (a damaged journal, no
    /// progress).
    pub audit_failure: Option<String>,
    /// What the fault-injecting engines did, when the spec asked for faults.
    pub injections: Vec<InjectionLog>,
}

impl IntegritySpec {
    /// Where this run's files and regions are.
    pub fn layout(&self) -> Layout {
        match &self.device {
            Some(dev) => Layout::on_device(&self.dir, dev),
            None => Layout::new(&self.dir),
        }
    }
}

/// Creates the files of a new run in `spec.dir` (refusing if any of them exists), filling the
/// data file with every page's first generation; on a device, the rest of the data region and
/// the log region are zeroed, so nothing an earlier user left there reads as a page.
/// `progress` gets (bytes, total).
pub fn create(spec: &IntegritySpec, progress: &mut dyn FnMut(u64, u64)) -> crate::Result<Created> {
    let layout = spec.layout();
    if let Some(existing) = layout.existing().first() {
        return Err(crate::Error::InvalidJob(format!(
            "{} already exists; storbench creates its integrity files itself and never overwrites them \
             (check kept files with `storbench integrity verify --target {}`, then remove them)",
            existing.display(),
            spec.dir.display()
        )));
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let run_id = crate::rng::mix(spec.seed ^ now.as_nanos() as u64);
    let manifest = Manifest {
        version: 1,
        run_id,
        seed: spec.seed,
        page_size: PAGE as u32,
        sizes: spec.sizes,
        data_pages_now: spec.sizes.data_pages,
        clean: false,
        device: spec.device.clone(),
        files: Vec::new(),
    };
    create_manifest(&layout, &manifest)?;
    let on_device = spec.device.is_some();
    let data = open(&layout.data(), spec, !on_device)?;
    let log = open(&layout.log(), spec, !on_device)?;
    let len = |f: &File, pages: u64, path: PathBuf| {
        f.set_len(pages * PAGE as u64).map_err(|source| crate::Error::Io { op: "sizing", path, source })
    };
    if !on_device {
        len(&data, spec.sizes.data_pages, layout.data())?;
        len(&log, spec.sizes.log_pages, layout.log())?;
    }
    let mut journal = Journal::create(&layout.journal(), run_id).map_err(journal_error)?;
    // The manifest records the files by device and inode as soon as they all exist: a writer
    // killed from here on leaves files its parent (or a later run) may prove and remove.
    layout.save(&manifest)?;
    journal.reserve(spec.sizes.data_pages).map_err(journal_error)?;
    fill(&data, spec, &layout, &mut journal, progress)?;
    if on_device {
        let s = spec.sizes;
        let from = s.data_pages * PAGE as u64;
        zero(&data, from, (s.data_max_pages + s.log_pages) * PAGE as u64 - from, &layout)?;
    }
    Ok(Created { layout, manifest, data, log, journal })
}

/// The files of a run, open.
pub struct Created {
    pub layout: Layout,
    pub manifest: Manifest,
    data: File,
    log: File,
    journal: Journal,
}

fn create_manifest(layout: &Layout, manifest: &Manifest) -> crate::Result<()> {
    let path = layout.manifest();
    crate::files::create(&path, crate::files::How::WRITE).map_err(|e| crate::Error::Io {
        op: "creating",
        path,
        source: e.into(),
    })?;
    layout.save(manifest)
}

/// Creates a data or log file (`new`), or opens the device that holds them.
fn open(path: &std::path::Path, spec: &IntegritySpec, new: bool) -> crate::Result<File> {
    let how = crate::files::How::READ_WRITE.direct(spec.direct).dsync(spec.write_through);
    let opened = if new { crate::files::create(path, how) } else { crate::files::open_device(path, how) };
    opened.map_err(|e| crate::Error::Io { op: "opening", path: path.to_path_buf(), source: e.into() })
}

fn journal_error(e: super::journal::JournalError) -> crate::Error {
    match e {
        super::journal::JournalError::Io(e) => e,
        other => crate::Error::InvalidJob(other.to_string()),
    }
}

/// Writes every initial data page at generation page + 1, in 1 MiB requests, and journals them.
fn fill(
    data: &File,
    spec: &IntegritySpec,
    layout: &Layout,
    journal: &mut Journal,
    progress: &mut dyn FnMut(u64, u64),
) -> crate::Result<()> {
    use std::os::unix::fs::FileExt;
    const CHUNK: u64 = 128;
    let total = spec.sizes.data_pages;
    let mut buf = AlignedBuf::new(CHUNK as usize * PAGE)
        .map_err(|source| crate::Error::Setup { what: "allocating the fill buffer", source })?;
    let mut first = 0;
    while first < total {
        let n = (total - first).min(CHUNK);
        let bytes = &mut buf.as_mut_slice()[..n as usize * PAGE];
        for (i, page) in bytes.chunks_exact_mut(PAGE).enumerate() {
            let id = PageId { file: super::layout::DATA_ID, page: first + i as u64 };
            write_page(page, id, id.page + 1, spec.seed);
        }
        data.write_all_at(bytes, first * PAGE as u64).map_err(|source| crate::Error::Io {
            op: "filling",
            path: layout.data(),
            source,
        })?;
        journal
            .record_run(PageId { file: super::layout::DATA_ID, page: first }, first + 1, n)
            .map_err(journal_error)?;
        first += n;
        progress(first * PAGE as u64, total * PAGE as u64);
    }
    data.sync_data().map_err(|source| crate::Error::Io { op: "syncing", path: layout.data(), source })?;
    journal.sync().map_err(journal_error)
}

/// Writes zeros over `len` bytes from `at` of a device, 1 MiB at a time, and syncs them.
fn zero(device: &File, at: u64, len: u64, layout: &Layout) -> crate::Result<()> {
    use std::os::unix::fs::FileExt;
    const CHUNK: u64 = 1 << 20;
    let mut buf = AlignedBuf::new(CHUNK as usize)
        .map_err(|source| crate::Error::Setup { what: "allocating the zero buffer", source })?;
    let failed = |source| crate::Error::Io { op: "zeroing", path: layout.data(), source };
    let mut done = 0;
    while done < len {
        let n = (len - done).min(CHUNK);
        device.write_all_at(&buf.as_mut_slice()[..n as usize], at + done).map_err(failed)?;
        done += n;
    }
    device.sync_data().map_err(failed)
}

/// Runs the workload on files `create` made, then audits them.
pub fn run(
    spec: &IntegritySpec,
    created: Created,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&IntegrityInterval),
    on_audit: &mut dyn FnMut(u64, u64),
) -> crate::Result<IntegrityOutcome> {
    let stress = Stress { spec, created: Some(created), on_audit, stop: stop.clone(), running: None };
    stress.run(sampler, stop, on_interval)
}

/// An integrity run: a thread per activity and the syncer, then the final audit.
struct Stress<'a> {
    spec: &'a IntegritySpec,
    /// The files, until the run starts on them.
    created: Option<Created>,
    on_audit: &'a mut dyn FnMut(u64, u64),
    /// The user's stop: the final audit heeds it too.
    stop: StopFlag,
    running: Option<Running>,
}

/// What a started run holds until it finishes.
struct Running {
    layout: Layout,
    manifest: super::layout::Manifest,
    shared: Arc<Shared>,
    outs: Vec<Arc<WorkerOut>>,
    injections: Vec<super::faults::InjectionLog>,
    activities: Vec<std::thread::JoinHandle<()>>,
    syncer: std::thread::JoinHandle<Option<String>>,
}

impl Lifecycle for Stress<'_> {
    type Work = IntegrityWork;
    type Detail = IntegrityDetail;
    type Error = crate::Error;

    fn start(&mut self, _stop: &StopFlag) -> crate::Result<Started<IntegrityWork>> {
        let spec = self.spec;
        let Some(Created { layout, manifest, data, log, journal }) = self.created.take() else {
            return Err(crate::Error::InvalidJob("an integrity run started twice".into()));
        };
        let kinds = activities(spec);
        let outs: Vec<Arc<WorkerOut>> =
            kinds.iter().map(|&a| Arc::new(WorkerOut::new(shape(a).2 as usize))).collect();
        let shared = Arc::new(shared(spec, data, log, journal, outs.clone())?);
        let mut injections = Vec::new();
        let mut activities = Vec::new();
        for (i, &activity) in kinds.iter().enumerate() {
            let engine = engine(spec, &shared, activity, i as u64, &mut injections)?;
            let rng = crate::rng::stream(spec.seed, 1000 + i as u64);
            let worker = Worker::new(
                activity,
                engine,
                shared.clone(),
                outs[i].clone(),
                rng,
                spec.sizes.data_max_pages,
            );
            let name = format!("integrity-{}", activity.name());
            activities.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || worker.run())
                    .map_err(|source| crate::Error::Setup { what: "starting an activity thread", source })?,
            );
        }
        let syncer = start_syncer(shared.clone(), spec.sync_every)?;
        let work = IntegrityWork {
            shared: shared.clone(),
            kinds,
            named: Vec::new(),
            delay_ns: spec.delay_threshold.as_nanos() as u64,
        };
        let plan = RunShape {
            warmup: Warmup::For(Duration::ZERO),
            length: Length::For(spec.duration),
            interval: Duration::from_secs(1),
            rounds: None,
        };
        let at = shared.start;
        self.running = Some(Running { layout, manifest, shared, outs, injections, activities, syncer });
        Ok(Started { plan, work, at })
    }

    /// Stops the activities, journals their last acknowledgements, and audits every page.
    fn finish(
        self,
        _work: IntegrityWork,
        driven: Outcome<IntegrityRecorder>,
    ) -> crate::Result<IntegrityOutcome> {
        let Some(running) = self.running else {
            return Err(crate::Error::InvalidJob("an integrity run finished before it started".into()));
        };
        let Running { layout, mut manifest, shared, outs, injections, activities, syncer } = running;
        let (spec, stop) = (self.spec, &self.stop);
        shared.end.store(true, SeqCst);
        for h in activities {
            let _ = h.join();
        }
        let sync_failure = syncer.join().unwrap_or_else(|_| Some("the syncer panicked".into()));
        // The activities have stopped: their last acknowledgements go into the journal too.
        let sync_failure = sync_failure
            .or_else(|| shared.sync_point().err().map(|e| format!("journalling acknowledged writes: {e}")));
        let mut failures: Vec<String> = outs
            .iter()
            .filter_map(|o| o.failure.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .chain(sync_failure)
            .collect();
        manifest.data_pages_now = shared.data_pages.load(SeqCst);
        manifest.clean = true;
        layout.save(&manifest)?;
        let mut detail = IntegrityDetail {
            data_initial_bytes: spec.sizes.data_pages * PAGE as u64,
            data_final_bytes: manifest.data_pages_now * PAGE as u64,
            grows: shared.grows.load(Relaxed),
            shrinks: shared.shrinks.load(Relaxed),
            shrinks_held: shared.shrinks_held.load(Relaxed),
            injections,
            ..Default::default()
        };
        // The recorders may hold the last moments' counts after the last interval: they belong to
        // the run's errors too.
        let mut out = driven;
        // The driver ends a run only when nothing completed for its limit: an audit would wait
        // on the same storage.
        let no_progress = !out.failures.is_empty();
        let mut tail = IntegrityRecorder::default();
        for o in &outs {
            crate::run::IntervalData::merge(
                &mut tail,
                &std::mem::take(&mut *o.recorder.lock().unwrap_or_else(|p| p.into_inner())),
            );
        }
        fold_errors(&mut out.totals, &out.all, &tail);
        detail.late_records = std::mem::take(&mut tail.records);
        detail.tail = tail;
        if no_progress {
            detail.audit_failure = Some("not run: the storage completed nothing at the run's end".into());
        } else if !stop.is_stopped() {
            match final_audit(spec, &layout, stop, self.on_audit) {
                Ok((report, acknowledged, seconds)) => {
                    shared.suspects.audited(&report, shared.now_ns() as f64 / 1e9);
                    (detail.acknowledged, detail.audit_s, detail.audit) =
                        (acknowledged, seconds, Some(report));
                }
                Err(JournalError::Io(e)) => return Err(e),
                Err(damaged) => {
                    detail.audit_failure = Some("not judged: the journal is damaged".into());
                    failures.push(damaged.to_string());
                }
            }
        }
        detail.suspects = shared.suspects.list();
        let mut out = out.with(detail);
        out.failed(failures);
        Ok(out)
    }
}

/// Audits every page against the journal the run left: the report, the acknowledgements the
/// journal holds and the audit's seconds.
fn final_audit(
    spec: &IntegritySpec,
    layout: &Layout,
    stop: &StopFlag,
    on_audit: &mut dyn FnMut(u64, u64),
) -> Result<(AuditReport, u64, f64), JournalError> {
    let expected = Journal::load(&layout.journal())?;
    let started = Instant::now();
    let report = audit(&layout.regions(&spec.sizes), &expected, stop, on_audit)?;
    Ok((report, expected.acknowledgements, started.elapsed().as_secs_f64()))
}

/// The errors of the whole run (warm-up and the last moments included) go into the totals.
fn fold_errors(totals: &mut IntegrityRecorder, all: &IntegrityRecorder, tail: &IntegrityRecorder) {
    let mut errors = all.clone();
    crate::run::IntervalData::merge(&mut errors, tail);
    totals.errors = errors.errors;
    totals.records = errors.records;
    for (t, x) in totals.activities.iter_mut().zip(&tail.activities) {
        t.merge(x);
    }
}

/// What the activities of a run on `created` would share (for tests of the shared state).
#[cfg(test)]
pub(super) fn shared_of(spec: &IntegritySpec, created: Created) -> Shared {
    let Created { data, log, journal, .. } = created;
    shared(spec, data, log, journal, Vec::new()).expect("shared state")
}

/// The activities: the users, then one of each other kind.
fn activities(spec: &IntegritySpec) -> Vec<Activity> {
    let mut kinds = vec![Activity::Random; spec.users.max(1) as usize];
    kinds.extend([Activity::ReadAhead, Activity::Bulk, Activity::LazyWriter, Activity::Log]);
    kinds
}

fn shared(
    spec: &IntegritySpec,
    data: File,
    log: File,
    journal: Journal,
    outs: Vec<Arc<WorkerOut>>,
) -> crate::Result<Shared> {
    let s = spec.sizes;
    let data_table = PageTable::new(s.data_max_pages);
    for page in 0..s.data_pages {
        data_table.release(page, PageState::written(page + 1));
    }
    let journal = Arc::new(Mutex::new(journal));
    Ok(Shared {
        data: data_table,
        log: PageTable::new(s.log_pages),
        dirty: DirtyMap::new(s.data_max_pages),
        gens: Generations::new(s.data_pages + 1, journal.clone()),
        journal,
        data_file: data,
        log_file: log,
        data_pages: AtomicU64::new(s.data_pages),
        initial_pages: s.data_pages,
        log_base: spec.layout().log_base(&s),
        on_device: spec.device.is_some(),
        growth_pages: s.growth_pages.max(1),
        append_at: AtomicU64::new(s.data_pages),
        log_pending: AtomicU64::new(0),
        grows: AtomicU64::new(0),
        shrinks: AtomicU64::new(0),
        shrinks_held: AtomicU64::new(0),
        suspects: Default::default(),
        shrink_every_ns: spec.shrink_every.as_nanos() as u64,
        last_shrink_ns: AtomicU64::new(0),
        outs,
        seed: spec.seed,
        end: AtomicBool::new(false),
        start: Instant::now(),
        target_io_ns: spec.target_io.as_nanos() as u64,
        delay_ns: spec.delay_threshold.as_nanos() as u64,
    })
}

/// One activity's engine on the data and log files (wrapped in the fault injector if asked).
fn engine(
    spec: &IntegritySpec,
    shared: &Shared,
    activity: Activity,
    index: u64,
    injections: &mut Vec<InjectionLog>,
) -> crate::Result<Box<dyn crate::engine::IoEngine>> {
    let (_, max_pages, depth) = shape(activity);
    let lens = vec![(max_pages as usize * PAGE) as u32; depth as usize];
    let opened = open_files(spec.engine, &[&shared.data_file, &shared.log_file], &lens)
        .map_err(|source| crate::Error::Setup { what: "opening the I/O engine", source })?;
    Ok(match &spec.faults {
        Some(plan) => {
            let faulty = FaultyEngine::new(opened.engine, plan.clone(), crate::rng::mix(spec.seed ^ index));
            injections.push(faulty.log());
            Box::new(faulty)
        }
        None => opened.engine,
    })
}

/// The checkpoint: every `every`, the writes acknowledged so far are made durable and
/// journalled, until the run ends. Returns why it failed, if it did.
fn start_syncer(
    shared: Arc<Shared>,
    every: Duration,
) -> crate::Result<std::thread::JoinHandle<Option<String>>> {
    std::thread::Builder::new()
        .name("integrity-syncer".into())
        .spawn(move || {
            let mut next = Instant::now() + every;
            while !shared.end.load(SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
                if Instant::now() >= next {
                    if let Err(e) = shared.sync_point() {
                        shared.end.store(true, SeqCst);
                        return Some(format!("journalling acknowledged writes: {e}"));
                    }
                    next += every;
                }
            }
            None
        })
        .map_err(|source| crate::Error::Setup { what: "starting the syncer", source })
}

/// The workload as the driver sees it.
struct IntegrityWork {
    shared: Arc<Shared>,
    kinds: Vec<Activity>,
    /// I/Os already named as delayed: (worker, slot, issue time).
    named: Vec<(usize, usize, u64)>,
    delay_ns: u64,
}

impl IntegrityWork {
    /// Names every I/O outstanding past the delay threshold, once.
    fn watch(&mut self, now_ns: u64, data: &mut IntegrityRecorder) {
        for (w, out) in self.shared.outs.iter().enumerate() {
            for (slot, issued) in out.issued_ns.iter().enumerate() {
                let at = issued.load(Relaxed);
                if at == 0 || now_ns.saturating_sub(at) < self.delay_ns || self.named.contains(&(w, slot, at))
                {
                    continue;
                }
                self.named.push((w, slot, at));
                let place = out.place[slot].load(Relaxed);
                let file = if place >> 56 == 1 { super::layout::LOG_FILE } else { super::layout::DATA_FILE };
                data.notices.push(format!(
                    "I/O outstanding for {:.0} s: {} request on {file} at offset {}",
                    (now_ns - at) as f64 / 1e9,
                    self.kinds[w].name(),
                    place & ((1 << 56) - 1)
                ));
            }
        }
    }
}

impl crate::run::Workload for IntegrityWork {
    type Data = IntegrityRecorder;
    const COLUMNS: &'static [&'static [SeriesColumn<Self>]] = &[COLUMNS];

    fn pace(&self) -> Pace {
        Pace::Timer
    }

    fn take(&mut self, _index: u64, now_ns: u64) -> Take<Self::Data> {
        let mut data = IntegrityRecorder::default();
        for out in &self.shared.outs {
            let taken = std::mem::take(&mut *out.recorder.lock().unwrap_or_else(|p| p.into_inner()));
            crate::run::IntervalData::merge(&mut data, &taken);
        }
        data.data_file_bytes = self.shared.data_pages.load(Relaxed) * PAGE as u64;
        data.outstanding = self.shared.outs.iter().map(|o| o.in_flight.load(Relaxed)).sum();
        self.watch(now_ns, &mut data);
        Take::Closed { end_ns: now_ns, data }
    }

    /// A failed activity or syncer ends the run.
    fn ended(&self) -> bool {
        self.shared.end.load(Relaxed)
    }

    /// Stuck when requests were made and none completed: every one failed, or none came back.
    fn progress(&self, data: &IntegrityRecorder) -> Progress {
        use super::verdict::ErrorClass::{ReadErrors, WriteErrors};
        let failed =
            [("read_errors", data.count_of(ReadErrors)), ("write_errors", data.count_of(WriteErrors))];
        Progress::of_requests(crate::run::IntervalData::ops(data), failed, data.outstanding)
    }

    /// At least the delay threshold: an I/O is only late past it.
    fn no_progress_limit(&self) -> Duration {
        Duration::from_nanos(self.delay_ns).max(crate::run::NO_PROGRESS_LIMIT)
    }
}

type Of<'a> = Interval<'a, IntegrityRecorder>;

fn iops(a: Activity, i: &Of) -> Option<f64> {
    Some(i.data.activities[a.index()].ios() as f64 / i.span_s())
}

fn avg_ms(a: Activity, i: &Of) -> Option<f64> {
    let c = &i.data.activities[a.index()];
    let n = c.ios();
    (n > 0).then(|| c.io_time_ns as f64 / n as f64 / 1e6)
}

/// The workload's columns of `timeseries.csv`.
const COLUMNS: &[SeriesColumn<IntegrityWork>] = &[
    SeriesColumn { column: col::IOPS, value: |_, i| Some(i.data.total().ios() as f64 / i.span_s()) },
    SeriesColumn {
        column: col::AVG_MS,
        value: |_, i| {
            let t = i.data.total();
            (t.ios() > 0).then(|| t.io_time_ns as f64 / t.ios() as f64 / 1e6)
        },
    },
    SeriesColumn { column: col::RANDOM_IOPS, value: |_, i| iops(Activity::Random, i) },
    SeriesColumn { column: col::RANDOM_AVG_MS, value: |_, i| avg_ms(Activity::Random, i) },
    SeriesColumn { column: col::READ_AHEAD_IOPS, value: |_, i| iops(Activity::ReadAhead, i) },
    SeriesColumn { column: col::READ_AHEAD_AVG_MS, value: |_, i| avg_ms(Activity::ReadAhead, i) },
    SeriesColumn { column: col::BULK_IOPS, value: |_, i| iops(Activity::Bulk, i) },
    SeriesColumn { column: col::BULK_AVG_MS, value: |_, i| avg_ms(Activity::Bulk, i) },
    SeriesColumn { column: col::LAZY_WRITER_IOPS, value: |_, i| iops(Activity::LazyWriter, i) },
    SeriesColumn { column: col::LAZY_WRITER_AVG_MS, value: |_, i| avg_ms(Activity::LazyWriter, i) },
    SeriesColumn { column: col::LOG_IOPS, value: |_, i| iops(Activity::Log, i) },
    SeriesColumn { column: col::LOG_AVG_MS, value: |_, i| avg_ms(Activity::Log, i) },
    SeriesColumn { column: col::DATA_FILE_BYTES, value: |_, i| Some(i.data.data_file_bytes as f64) },
    SeriesColumn { column: col::ERRORS, value: |_, i| Some(i.data.errors_total() as f64) },
    SeriesColumn { column: col::THROTTLED, value: |_, i| Some(i.data.total().throttled as f64) },
    SeriesColumn { column: col::DELAYED, value: |_, i| Some(i.data.total().delayed as f64) },
    SeriesColumn { column: col::OUTSTANDING, value: |_, i| Some(i.data.outstanding as f64) },
];
