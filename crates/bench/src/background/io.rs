//! `io[:KEY=VALUE,...]`: one worker of the io workload beside the run, usually a sequential
//! write at a rate, on its own file `storbench-bg<N>.dat`.

use super::{Background, Place, parse_stream, rate_text, refused, shared};
use crate::Error;
use crate::engine::EngineKind;
use crate::run::StopFlag;
use crate::target::{self, CheckedTarget, TargetRequest};
use crate::workload::io::Share;
use crate::workload::io::{BlockSizeMix, End, IoSpec, IoStream, Pattern, Region};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A sequential io stream (a rebuild's copy, emulated): `io[:rw=write,bs=1M,rate=10MiB,...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct IoBackground {
    pub read: bool,
    pub bs: u32,
    /// Bytes per second; None runs as fast as the storage goes.
    pub rate: Option<u64>,
    /// The stream's file, which it goes over again and again.
    pub size: u64,
    /// Where its file goes; by default beside the run's target.
    pub dir: Option<PathBuf>,
    pub iodepth: u32,
    pub direct: bool,
}

const KEYS: &str = "rw=read|write, bs=SIZE, rate=BYTES_PER_S, size=SIZE, dir=PATH, iodepth=N, direct=yes|no";

/// The stream's file checked (None: on the null engine).
pub(super) type Planned = Option<CheckedTarget>;

impl IoBackground {
    pub(super) fn parse(rest: &str) -> Result<IoBackground, String> {
        let io = IoBackground {
            read: false,
            bs: 1 << 20,
            rate: None,
            size: 256 << 20,
            dir: None,
            iodepth: 1,
            direct: true,
        };
        parse_stream(rest, KEYS, io, IoBackground::set, |io| (io.size, io.bs))
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if let Some(done) = shared!(self).set(key, value) {
            return done;
        }
        match key {
            "rw" => {
                self.read = match value {
                    "read" => true,
                    "write" => false,
                    _ => return Err("give read or write".into()),
                }
            }
            "dir" => self.dir = Some(crate::units::place(value)?),
            _ => return Err(format!("no such key; the keys are {KEYS}")),
        }
        Ok(())
    }

    pub(super) fn will_write(&self, name: &str, spec: &Background) -> String {
        let size = crate::units::human_bytes(self.size);
        let place = self
            .dir
            .as_ref()
            .map_or("beside each workload's files".into(), |d| format!("in {}", d.display()));
        let what = if self.read { "reads" } else { "writes" };
        let rate = rate_text(self.rate);
        format!(
            "storbench-{name}.dat ({size}, made once and kept) {place}; {spec} {what} it sequentially, {rate}"
        )
    }

    /// Its file `storbench-<name>.dat` in its `dir` or the run's, checked; None on the null
    /// engine of a run without one.
    pub(super) fn plan(&self, name: &str, spec: &Background, place: Place<'_>) -> Result<Planned, Error> {
        let Some(dir) = self.dir.as_deref().or(place.dir) else {
            if place.null {
                return Ok(None);
            }
            refuse!(
                "background stream {name} ({spec}) has no directory for its file: this run's data is not in a \
                 directory of storbench's (a database server's); name one with dir=PATH"
            );
        };
        let path = dir.join(format!("storbench-{name}.dat"));
        let plan = own_file(name, &path, self.size, self.direct)?;
        check_aligned(name, self.bs, &plan.path, plan.direct.then_some(plan.direct_align))?;
        Ok(Some(plan))
    }

    /// The stream, its file made and filled (or reused as it is).
    pub(super) fn stream(
        &self,
        name: &str,
        plan: Planned,
        place: Place<'_>,
        stop: &StopFlag,
    ) -> Result<IoStream, Error> {
        let file = plan.map(|p| prepare(name, &p, place, stop)).transpose()?;
        Ok(IoStream::new(io_spec(name, self, file.is_some()), file))
    }
}

/// A file of the stream's own at `path` (one it creates, or one it proved its own), `size`
/// bytes, checked; a file of anyone else's there is refused.
pub(super) fn own_file(name: &str, path: &Path, size: u64, direct: bool) -> Result<CheckedTarget, Error> {
    let request = TargetRequest {
        path: path.to_path_buf(),
        size: Some(size),
        default_size: size,
        direct,
        allow_device: false,
        force: false,
        writes: true,
    };
    target::plan(&request).map_err(|e| refused(name, &e))
}

/// A block of `bs` is a multiple of O_DIRECT's `align` where the stream's file at `path` is
/// opened with it.
pub(super) fn check_aligned(name: &str, bs: u32, path: &Path, align: Option<u32>) -> Result<(), Error> {
    match align {
        Some(align) if !bs.is_multiple_of(align) => refuse!(
            "background stream {name}: bs={bs} is not a multiple of {align} bytes, which O_DIRECT needs on {}; \
             give such a bs, or direct=no",
            path.display()
        ),
        _ => Ok(()),
    }
}

/// A stream's own file made and filled with incompressible data (or reused as it is).
pub(super) fn prepare(
    name: &str,
    plan: &CheckedTarget,
    place: Place<'_>,
    stop: &StopFlag,
) -> Result<std::fs::File, Error> {
    let target = target::prepare(plan, crate::rng::DEFAULT_SEED, &mut |_, _| {}, stop).map_err(|e| {
        Error::Said(format!("preparing background stream {name}'s file {}: {e}", plan.path.display()))
    })?;
    if target.created {
        (place.say)(&format!(
            "created {} ({}) for background stream {name}",
            plan.path.display(),
            crate::units::human_bytes(target.size)
        ));
    }
    Ok(target.file)
}

pub(super) fn io_spec(name: &str, io: &IoBackground, on_file: bool) -> IoSpec {
    IoSpec {
        name: name.into(),
        pattern: Pattern::Sequential,
        reads: if io.read { Share::READS } else { Share::WRITES },
        random: Share::ALL,
        writes_per_flush: None,
        fsync: false,
        block_sizes: BlockSizeMix::single(io.bs),
        iodepth: io.iodepth,
        workers: 1,
        ramp: Duration::ZERO,
        end: End::Time(Duration::MAX),
        rate_iops: io.rate.map(|r| r as f64 / f64::from(io.bs)),
        rate_profile: None,
        seed: crate::rng::DEFAULT_SEED,
        verify: false,
        engine: if on_file { EngineKind::IoUring } else { EngineKind::Null },
        region: Region { start: 0, len: io.size / u64::from(io.bs) * u64::from(io.bs) },
        interval: Duration::from_secs(1),
        trace: None,
        steady_state: None,
    }
}
