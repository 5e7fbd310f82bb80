//! `rebuild[:source=PATH,dest=PATH,rate=RATE,bs=SIZE,size=SIZE,iodepth=N,direct=yes|no]`: an emulated
//! mirror rebuild, storbench's copy loop from a source to a destination
//! (`workload::io::CopySpec`).
//!
//! By default both are files of the stream's own beside the run's target,
//! `storbench-bg<N>-source.dat` (filled with incompressible data) and `storbench-bg<N>-dest.dat`:
//! the measured volume rebuilds itself (002's "Vol Rebuild"). A directory given for either puts
//! that file there; on another device that is 002's "Ctlr Rebuild". A source may also be any
//! readable file or block device, only ever read; a destination is always a file storbench
//! creates or proved its own, never anyone else's.

use super::io::{check_aligned, own_file, prepare};
use super::{Background, Place, parse_stream, rate_text, refused, shared};
use crate::Error;
use crate::engine::EngineKind;
use crate::run::StopFlag;
use crate::target::CheckedTarget;
use crate::target::source::{self, CheckedSource};
use crate::workload::io::{CopySpec, IoStream};
use std::path::{Path, PathBuf};

/// An emulated mirror rebuild as asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct RebuildBackground {
    /// What it reads: a directory for its own file there, or a file or device of anyone's.
    pub source: Option<PathBuf>,
    /// Where it writes: a directory for its own file there, or a file of its own.
    pub dest: Option<PathBuf>,
    /// Bytes copied a second; None copies as fast as the storage goes.
    pub rate: Option<u64>,
    pub bs: u32,
    /// Bytes copied before it wraps around to the start.
    pub size: u64,
    /// Blocks in flight, each read then written: a resync keeps several.
    pub iodepth: u32,
    pub direct: bool,
}

const KEYS: &str = "source=PATH, dest=PATH, rate=BYTES_PER_S, bs=SIZE, size=SIZE, iodepth=N, direct=yes|no";

/// Its source and destination checked (None: on the null engine).
pub(super) type Planned = Option<(Source, CheckedTarget)>;

/// A checked source.
pub(super) enum Source {
    /// A file of the stream's own, made and filled when missing.
    Own(CheckedTarget),
    /// A file or device the user named, only read.
    Named(CheckedSource),
}

impl RebuildBackground {
    pub(super) fn parse(rest: &str) -> Result<RebuildBackground, String> {
        let r = RebuildBackground {
            source: None,
            dest: None,
            rate: None,
            bs: 1 << 20,
            size: 256 << 20,
            iodepth: 4,
            direct: true,
        };
        parse_stream(rest, KEYS, r, RebuildBackground::set, |r| (r.size, r.bs))
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if let Some(done) = shared!(self).set(key, value) {
            return done;
        }
        match key {
            "source" => self.source = Some(crate::units::place(value)?),
            "dest" => self.dest = Some(crate::units::place(value)?),
            _ => return Err(format!("no such key; the keys are {KEYS}")),
        }
        Ok(())
    }

    pub(super) fn will_write(&self, name: &str, spec: &Background) -> String {
        let side = |given: &Option<PathBuf>, what: &str| match given {
            Some(p) if p.is_dir() => format!("storbench-{name}-{what}.dat in {}", p.display()),
            Some(p) => p.display().to_string(),
            None => format!("storbench-{name}-{what}.dat beside each workload's files"),
        };
        format!(
            "{spec} copies {} onto {} ({}, its own files made once and kept), {}",
            side(&self.source, "source"),
            side(&self.dest, "dest"),
            crate::units::human_bytes(self.size),
            rate_text(self.rate)
        )
    }

    /// Its source and destination, checked: nothing is written, and a destination holding
    /// data storbench did not create or a source smaller than `size` is refused.
    pub(super) fn plan(&self, name: &str, spec: &Background, place: Place<'_>) -> Result<Planned, Error> {
        let source = side(self.source.as_deref(), place.dir, name, "source");
        let dest = side(self.dest.as_deref(), place.dir, name, "dest");
        let (Some(source), Some(dest)) = (source, dest) else {
            if place.null && self.source.is_none() && self.dest.is_none() {
                return Ok(None);
            }
            refuse!(
                "background stream {name} ({spec}) has no directory for its files: this run's data is not in a \
                 directory of storbench's (a database server's); name source=PATH and dest=PATH"
            );
        };
        let source = match source {
            Side::Own(path) => Source::Own(own_file(name, &path, self.size, self.direct)?),
            Side::Named(path) => {
                Source::Named(source::plan(&path, self.size).map_err(|e| refused(name, &e))?)
            }
        };
        let dest = match dest {
            Side::Own(path) | Side::Named(path) => own_file(name, &path, self.size, self.direct)?,
        };
        let (source_path, source_align) = match &source {
            Source::Own(p) => (&p.path, p.direct_align),
            Source::Named(s) => (&s.path, s.direct_align),
        };
        if *source_path == dest.path {
            refuse!(
                "background stream {name}: source and dest are one file, {}; name two",
                dest.path.display()
            );
        }
        check_aligned(name, self.bs, source_path, self.direct.then_some(source_align))?;
        check_aligned(name, self.bs, &dest.path, self.direct.then_some(dest.direct_align))?;
        Ok(Some((source, dest)))
    }

    /// The stream, its own files made and filled (or reused), a named source opened to read.
    pub(super) fn stream(
        &self,
        name: &str,
        plan: Planned,
        place: Place<'_>,
        stop: &StopFlag,
    ) -> Result<IoStream, Error> {
        let files = match plan {
            None => None,
            Some((source, dest)) => {
                let source = match source {
                    Source::Own(p) => prepare(name, &p, place, stop)?,
                    Source::Named(s) => s.open(self.direct).map_err(|e| refused(name, &e))?,
                };
                Some((source, prepare(name, &dest, place, stop)?))
            }
        };
        Ok(IoStream::rebuild(copy_spec(self, files.is_some()), files))
    }
}

/// Where one side of the copy is: a file of the stream's own (in the directory the user gave,
/// or the run's), or the path the user named.
enum Side {
    Own(PathBuf),
    Named(PathBuf),
}

fn side(given: Option<&Path>, run_dir: Option<&Path>, name: &str, what: &str) -> Option<Side> {
    let file = format!("storbench-{name}-{what}.dat");
    match given {
        Some(p) if p.is_dir() => Some(Side::Own(p.join(file))),
        Some(p) => Some(Side::Named(p.to_path_buf())),
        None => run_dir.map(|d| Side::Own(d.join(file))),
    }
}

pub(super) fn copy_spec(r: &RebuildBackground, on_files: bool) -> CopySpec {
    let block = u64::from(r.bs);
    CopySpec {
        block: r.bs,
        len: r.size / block * block,
        // Never two blocks of one offset in flight: a write racing the read of its block.
        depth: r.iodepth.min(u32::try_from(r.size / block).unwrap_or(u32::MAX)),
        blocks_per_sec: r.rate.map(|rate| rate as f64 / block as f64),
        engine: if on_files { EngineKind::IoUring } else { EngineKind::Null },
    }
}
