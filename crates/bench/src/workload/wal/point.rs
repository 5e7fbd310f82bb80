//! One point of a `wal` run: its log file made (new, storbench's own; zeros written and synced
//! first where the layout is preallocated), opened for the point's method, its writers run on
//! the run driver (a warm-up not counted, then the measured time, an interval a second), and
//! the file removed. A method the filesystem or device refuses (O_DIRECT on older tmpfs, a write
//! smaller than the device's logical block under O_DIRECT) is a point not offered, with why.

use super::spec::{Layout, Point, WalSpec};
use super::writer::{Shared, WalRecorder, Writer};
use crate::engine::AlignedBuf;
use crate::files::{self, How};
use crate::run::{
    Beside, Closed, Interval, Length, Outcome, Pace, Progress, RunShape, SeriesColumn, StopFlag, Take,
    Warmup, Workload, drive,
};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use storbench_report::workloads::wal::columns as col;

/// What one point measured.
#[derive(Debug)]
pub enum Measured {
    /// The point ran: the driver's outcome over its writers' commits.
    Ran(Box<Outcome<WalRecorder>>),
    /// The platform does not offer the method here: why.
    NotOffered(String),
}

/// Measures `point` of `spec` in a new log file under `spec.dir`, the `n`th of the run;
/// `on_interval` sees each closed second.
pub fn measure(
    spec: &WalSpec,
    point: &Point,
    n: usize,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&Closed<'_, WalRecorder>),
) -> Result<Measured, String> {
    let path = spec.dir.join(format!("storbench-wal-{}-{n}.log", std::process::id()));
    let made = LogFile::make(&path, point, spec.file_bytes)?;
    let result = made.open(point).map(|file| match file {
        Opened::Refused(why) => Measured::NotOffered(why),
        Opened::File(file) => run_writers(spec, point, &file, sampler, stop, on_interval),
    });
    made.remove();
    result
}

/// A log file storbench made for one point, removed when the point ends.
struct LogFile {
    path: PathBuf,
}

/// The log file opened for a method, or why the method is refused here.
enum Opened {
    File(File),
    Refused(String),
}

impl LogFile {
    /// Creates the file (never over anything already there); for a preallocated layout,
    /// writes its zeros and syncs them, so the commits overwrite blocks that exist.
    fn make(path: &Path, point: &Point, file_bytes: u64) -> Result<LogFile, String> {
        let file = files::create(path, How::WRITE).map_err(|e| e.to_string())?;
        let made = LogFile { path: path.to_path_buf() };
        if point.layout == Layout::Preallocated
            && let Err(e) = zeros(&file, file_bytes)
        {
            made.remove();
            return Err(format!("writing the log file {} ({e})", path.display()));
        }
        Ok(made)
    }

    /// Opens the file for `point`'s method; O_DIRECT refused by the filesystem is a method
    /// not offered, not an error.
    fn open(&self, point: &Point) -> Result<Opened, String> {
        match files::open(&self.path, point.method.how()) {
            Ok(file) => Ok(Opened::File(file)),
            Err(e) if point.method.direct() && e.os_error() == Some(libc::EINVAL) => Ok(Opened::Refused(
                format!("{}: the filesystem refuses O_DIRECT (tmpfs before Linux 6.6 does)", point.method),
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    fn remove(&self) {
        // Best effort: the file is ours by its inode, so nothing else is ever removed.
        let _ = files::remove_own(&self.path);
    }
}

/// Writes `len` bytes of zeros from the start of `file`, then makes them durable.
fn zeros(file: &File, len: u64) -> std::io::Result<()> {
    let chunk = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(chunk.len() as u64);
        file.write_all_at(&chunk[..n as usize], at)?;
        at += n;
    }
    file.sync_all()
}

/// The bytes every commit of `point` writes: random from `seed`, aligned for O_DIRECT.
fn commit_bytes(point: &Point, seed: u64) -> Result<AlignedBuf, String> {
    let mut buf =
        AlignedBuf::new(point.size as usize).map_err(|e| format!("allocating a commit's buffer: {e}"))?;
    let mut x = crate::rng::mix(seed ^ u64::from(point.size));
    for chunk in buf.as_mut_slice().chunks_mut(8) {
        x = crate::rng::mix(x);
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    Ok(buf)
}

/// Runs the point's writers on the driver and ends them.
fn run_writers(
    spec: &WalSpec,
    point: &Point,
    file: &File,
    sampler: &mut dyn Beside,
    stop: &StopFlag,
    on_interval: &mut dyn FnMut(&Closed<'_, WalRecorder>),
) -> Measured {
    let mut buf = match commit_bytes(point, spec.seed) {
        Ok(b) => b,
        Err(why) => return Measured::NotOffered(why),
    };
    // The buffer is a whole page at least: a commit writes its size of it.
    let data: &[u8] = &buf.as_mut_slice()[..point.size as usize];
    if let Some(why) = direct_refused(point, file, data) {
        return Measured::NotOffered(why);
    }
    let shared = Arc::new(Shared::new(point, spec.file_bytes));
    let plan = RunShape {
        warmup: Warmup::For(spec.warmup),
        length: Length::For(spec.seconds),
        interval: Duration::from_secs(1),
        rounds: None,
    };
    let start = Instant::now();
    let out = std::thread::scope(|scope| {
        for id in 0..point.writers as usize {
            let w = Writer { id, point: *point, file, data, shared: &shared, stop };
            scope.spawn(move || w.run());
        }
        let mut work = WalWork { shared: Arc::clone(&shared) };
        let out = drive(&plan, &mut work, start, sampler, stop, on_interval);
        shared.done.store(true, Ordering::Relaxed);
        out
    });
    Measured::Ran(Box::new(out))
}

/// Under O_DIRECT, one trial write at the file's start: a size the device cannot write
/// directly (smaller than its logical block) makes the method not offered at this size.
fn direct_refused(point: &Point, file: &File, data: &[u8]) -> Option<String> {
    if !point.method.direct() {
        return None;
    }
    match file.write_all_at(data, 0) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Some(format!(
            "{}: O_DIRECT refuses {} B writes here (smaller than the device's logical block)",
            point.method, point.size
        )),
        _ => None,
    }
}

/// The point as the run driver sees it.
struct WalWork {
    shared: Arc<Shared>,
}

type Of<'a> = Interval<'a, WalRecorder>;

fn per_sec(n: u64, i: &Of) -> Option<f64> {
    let secs = i.end_s - i.start_s;
    (secs > 0.0).then(|| n as f64 / secs)
}

fn quantile_us(i: &Of, q: f64) -> Option<f64> {
    let h = &i.data.latency;
    (!h.is_empty()).then(|| h.quantile_ns(q) as f64 / 1e3)
}

const COLUMNS: &[SeriesColumn<WalWork>] = &[
    SeriesColumn { column: col::COMMITS_PER_SEC, value: |_, i| per_sec(i.data.commits, i) },
    SeriesColumn { column: col::BYTES_PER_SEC, value: |_, i| per_sec(i.data.bytes, i) },
    SeriesColumn { column: col::COMMIT_P50_US, value: |_, i| quantile_us(i, 0.5) },
    SeriesColumn { column: col::COMMIT_P99_US, value: |_, i| quantile_us(i, 0.99) },
    SeriesColumn { column: col::COMMIT_ERRORS, value: |_, i| Some(i.data.errors as f64) },
];

impl Workload for WalWork {
    type Data = WalRecorder;
    const COLUMNS: &'static [&'static [SeriesColumn<Self>]] = &[COLUMNS];

    fn pace(&self) -> Pace {
        Pace::Timer
    }

    fn take(&mut self, _index: u64, now_ns: u64) -> Take<WalRecorder> {
        Take::Closed { end_ns: now_ns, data: self.shared.take() }
    }

    /// Stuck while commits fail and none completes: the point ends as failed with why.
    fn progress(&self, data: &WalRecorder) -> Progress {
        match (data.commits, &data.first_error) {
            (0, Some(e)) => Progress::Stuck(format!("every commit failed; the first: {e}")),
            (0, None) => Progress::Idle,
            _ => Progress::Working,
        }
    }

    fn wind_down(&mut self) {
        self.shared.done.store(true, Ordering::Relaxed);
    }
}
