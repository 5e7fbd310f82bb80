//! `--background SPEC`: the streams a measuring run has beside its workload. A spec is
//! parsed from its text (a bad one is refused naming the key and the fix), checked
//! against the files and programs it names before anything is written (`check`), and built
//! into a stream when the run starts (`build`): its files made or reused, then handed to the
//! driver. Each kind is its own file: `io` (storbench's sequential stream), `rebuild` (an
//! emulated mirror rebuild's copy), `cmd` (the user's command), `capture` (the run's own
//! block requests into a trace in its bundle).

pub mod capture;
pub mod cmd;
mod io;
mod rebuild;

use crate::Error;
use crate::run::record::StreamEntry;
use crate::run::{StopFlag, Stream, Streams};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use capture::CaptureBackground;
pub use io::IoBackground;
pub use rebuild::RebuildBackground;

/// One background stream as the user asked for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Background {
    /// The spec as given, for the summary and the record.
    pub text: String,
    pub kind: StreamKind,
}

/// What a stream is.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamKind {
    /// A sequential io stream: `io[:rw=write,bs=1M,rate=10MiB,...]`.
    Io(IoBackground),
    /// An emulated mirror rebuild: `rebuild[:source=PATH,dest=PATH,rate=...]`.
    Rebuild(RebuildBackground),
    /// The user's command, run by `sh -c` from the measured phase's start: `cmd:COMMAND`.
    Cmd(String),
    /// The run's block requests into a trace in its bundle: `capture[:device=DEV]`.
    Capture(CaptureBackground),
}

const KINDS: &str =
    "io[:KEY=VALUE,...], rebuild[:KEY=VALUE,...], cmd:COMMAND or capture[:device=DEV], e.g. io:rate=10MiB";

impl FromStr for Background {
    type Err = String;

    fn from_str(text: &str) -> Result<Background, String> {
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = match name {
            "io" => StreamKind::Io(IoBackground::parse(rest)?),
            "rebuild" => StreamKind::Rebuild(RebuildBackground::parse(rest)?),
            "cmd" => StreamKind::Cmd(cmd::parse(rest)?),
            "capture" => StreamKind::Capture(CaptureBackground::parse(rest)?),
            _ => return Err(format!("'{name}' is not a background stream storbench knows; give {KINDS}")),
        };
        Ok(Background { text: crate::units::plain_text(text)?, kind })
    }
}

impl Background {
    /// `--capture[=DEV]`'s stream: the disk under the target when `device` is `auto`.
    pub fn capture(device: &Path) -> Background {
        let device = (device != Path::new("auto")).then(|| device.to_path_buf());
        let text = device.as_ref().map_or("capture".into(), |d| format!("capture:device={}", d.display()));
        Background { text, kind: StreamKind::Capture(CaptureBackground { device }) }
    }

    /// What stream `index` (0 for bg1) writes or runs, for the line an evaluation says before
    /// it runs.
    pub fn will_write(&self, index: usize) -> String {
        let name = stream_name(index);
        match &self.kind {
            StreamKind::Io(io) => io.will_write(&name, self),
            StreamKind::Rebuild(r) => r.will_write(&name, self),
            StreamKind::Cmd(command) => format!("`{command}` runs from each measured phase's start ({self})"),
            StreamKind::Capture(c) => c.will_write(&name, self),
        }
    }
}

crate::deserialize_from_text!(Background);

impl fmt::Display for Background {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Stream `index`'s name in the series and the record: bg1, bg2, ...
fn stream_name(index: usize) -> String {
    format!("bg{}", index + 1)
}

/// Where a run's streams go and how they end.
#[derive(Clone, Copy)]
pub struct Place<'a> {
    /// Where a stream's files go unless it names its own: None for a run with no directory of
    /// its own (a database server's).
    pub dir: Option<&'a Path>,
    /// The run's place (its target file or device, its database's file) where it has one on
    /// this host: a capture records the disk under it.
    pub target: Option<&'a Path>,
    /// The run's bundle directory, once made (a capture's trace goes there); None while the
    /// streams are only checked.
    pub bundle: Option<&'a Path>,
    /// The run is on the null engine: a stream without a place runs there too.
    pub null: bool,
    /// The run's end waits for its commands (`--background-wait`).
    pub wait: bool,
    /// Says a line of what was done on the user's machine (a stream's file created, tracefs
    /// mounted).
    pub say: &'a dyn Fn(&str),
}

/// A stream checked against what it names, nothing written yet.
enum Checked {
    Io(io::Planned),
    Rebuild(rebuild::Planned),
    Cmd,
    Capture(PathBuf),
}

/// Checks every stream against the files and programs it names, writing nothing: a bad one
/// is an error naming the stream and the fix (exit 2), before anything of the run is made.
pub fn check(specs: &[Background], place: Place<'_>) -> Result<(), Error> {
    check_all(specs, place).map(drop)
}

fn check_all(specs: &[Background], place: Place<'_>) -> Result<Vec<Checked>, Error> {
    let checked = specs.iter().enumerate().map(|(i, b)| {
        let name = stream_name(i);
        Ok(match &b.kind {
            StreamKind::Io(io) => Checked::Io(io.plan(&name, b, place)?),
            StreamKind::Rebuild(r) => Checked::Rebuild(r.plan(&name, b, place)?),
            StreamKind::Cmd(command) => {
                cmd::check(&name, command)?;
                Checked::Cmd
            }
            StreamKind::Capture(c) => Checked::Capture(c.plan(&name, b, place)?),
        })
    });
    checked.collect()
}

/// The streams for `specs`, named bg1, bg2, ... with their record entries: each checked,
/// then its files made (or reused) in `place`.
pub fn build(
    specs: &[Background],
    place: Place<'_>,
    stop: &StopFlag,
) -> Result<(Streams, Vec<StreamEntry>), Error> {
    let checked = check_all(specs, place)?;
    let mut streams = Streams::new();
    let mut entries = Vec::new();
    for (i, (b, planned)) in specs.iter().zip(checked).enumerate() {
        let name = stream_name(i);
        let stream: Box<dyn Stream> = match (&b.kind, planned) {
            (StreamKind::Io(io), Checked::Io(plan)) => Box::new(io.stream(&name, plan, place, stop)?),
            (StreamKind::Rebuild(r), Checked::Rebuild(plan)) => Box::new(r.stream(&name, plan, place, stop)?),
            (StreamKind::Cmd(command), _) => Box::new(crate::run::CommandStream::new(command, place.wait)),
            (StreamKind::Capture(c), Checked::Capture(device)) => Box::new(c.stream(&name, device, place)?),
            _ => unreachable!("each stream is checked as its own kind"),
        };
        entries.push(StreamEntry { name: name.clone(), kind: stream.kind().into(), spec: b.text.clone() });
        streams.add(name, stream);
    }
    Ok((streams, entries))
}

/// The keys an io and a rebuild stream share, each set on its field: `rate`, `bs`, `size`,
/// `iodepth`, `direct`; None for a key that is not one of them.
struct Shared<'a> {
    rate: &'a mut Option<u64>,
    bs: &'a mut u32,
    size: &'a mut u64,
    iodepth: &'a mut u32,
    direct: &'a mut bool,
}

/// The shared keys' fields of a stream (`io`'s or `rebuild`'s), which name them alike.
macro_rules! shared {
    ($stream:expr) => {
        super::Shared {
            rate: &mut $stream.rate,
            bs: &mut $stream.bs,
            size: &mut $stream.size,
            iodepth: &mut $stream.iodepth,
            direct: &mut $stream.direct,
        }
    };
}
use shared;

impl Shared<'_> {
    fn set(self, key: &str, value: &str) -> Option<Result<(), String>> {
        let set = || -> Result<(), String> {
            match key {
                "rate" => *self.rate = Some(parse_rate(value)?),
                "bs" => *self.bs = parse_block(value)?,
                "size" => *self.size = parse_size(value)?,
                "iodepth" => *self.iodepth = parse_depth(value)?,
                _ => *self.direct = value.parse::<crate::units::YesNo>()?.0,
            }
            Ok(())
        };
        ["rate", "bs", "size", "iodepth", "direct"].contains(&key).then(set)
    }
}

/// A stream's keys read from `rest` into `stream` by `set`, and its size checked against one
/// block.
fn parse_stream<T>(
    rest: &str,
    keys: &str,
    mut stream: T,
    set: impl Fn(&mut T, &str, &str) -> Result<(), String>,
    size_and_block: impl Fn(&T) -> (u64, u32),
) -> Result<T, String> {
    parse_keys(rest, keys, |key, value| set(&mut stream, key, value))?;
    let (size, bs) = size_and_block(&stream);
    if size < u64::from(bs) {
        return Err(format!("size {size} is less than one block of {bs}"));
    }
    Ok(stream)
}

/// A rate key's value: bytes a second above 0 (`10MiB`, `10MiB/s`).
fn parse_rate(value: &str) -> Result<u64, String> {
    match parse_size(value.trim_end_matches("/s"))? {
        0 => Err("a rate is above 0; leave rate out to run unthrottled".into()),
        r => Ok(r),
    }
}

/// An iodepth key's value: requests (io) or blocks (rebuild) in flight.
fn parse_depth(value: &str) -> Result<u32, String> {
    match value.parse() {
        Ok(n @ 1..=1024) => Ok(n),
        _ => Err("give a whole number from 1 to 1024".into()),
    }
}

fn parse_size(value: &str) -> Result<u64, String> {
    value.parse::<crate::units::ByteSize>().map(|b| b.0)
}

/// A bs key's value: one of io's block sizes (a copy moves whole blocks).
fn parse_block(value: &str) -> Result<u32, String> {
    let sizes: crate::workload::io::options::BlockSizes = value.parse()?;
    if !sizes.mix.is_single() {
        return Err("give one block size; a mix is for io's --bs".into());
    }
    Ok(sizes.mix.max())
}

/// The `KEY=VALUE` pairs of a spec's rest, each handed to `set`; a bad one names itself and
/// the keys there are.
fn parse_keys(
    rest: &str,
    keys: &str,
    mut set: impl FnMut(&str, &str) -> Result<(), String>,
) -> Result<(), String> {
    for pair in rest.split(',').filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("'{pair}' is not KEY=VALUE; the keys are {keys}"));
        };
        set(key, value).map_err(|why| format!("{key}={value}: {why}"))?;
    }
    Ok(())
}

/// The rate as the evaluation's line says it.
fn rate_text(rate: Option<u64>) -> String {
    rate.map_or("unthrottled".into(), |r| format!("{}/s", crate::units::human_bytes(r)))
}

/// A refusal of a stream's file, worded for `--background`: a stream has no --force and
/// writes no device.
fn refused(name: &str, e: &crate::target::Refusal) -> Error {
    use crate::target::Remedy;
    let how = |r: Remedy| {
        match r {
            Remedy::Force => {
                "move it away (a background stream never overwrites a file storbench did not make)"
            }
            Remedy::AllowDevice => "name a file or a directory (a background stream writes no device)",
            Remedy::SmallerSize => "give a smaller size=",
            Remedy::Buffered => "give direct=no",
        }
        .to_string()
    };
    Error::Said(format!("background stream {name}: {}", e.message(&how)))
}

#[cfg(test)]
mod tests;
