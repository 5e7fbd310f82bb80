//! `capture[:device=DEV]` (and `--capture`): the run's own block requests recorded from the
//! kernel's tracepoints, from the measured phase's start to the run's end, into the trace
//! `<stream>.sbtrace` in the run's bundle (`blocktrace::stream`). The device is the one
//! named, or else the disk under the run's place; only the requests' time, place, size and
//! kind are recorded, never data, and nothing is written but the trace.

use super::{Background, Place, parse_keys};
use crate::Error;
use crate::blocktrace::capture;
use crate::blocktrace::stream::CaptureStream;
use crate::files;
use std::path::{Path, PathBuf};

/// A capture as asked for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaptureBackground {
    /// The block device to capture; None: the disk under the run's target.
    pub device: Option<PathBuf>,
}

const KEYS: &str = "device=DEV";

impl CaptureBackground {
    pub(super) fn parse(rest: &str) -> Result<CaptureBackground, String> {
        let mut c = CaptureBackground::default();
        parse_keys(rest, KEYS, |key, value| match key {
            "device" => {
                c.device = Some(crate::units::place(value)?);
                Ok(())
            }
            _ => Err(format!("capture has no key {key}; its key is {KEYS}")),
        })?;
        Ok(c)
    }

    /// The device whose requests it records, checked: tracing available, a block device.
    pub(super) fn plan(&self, name: &str, b: &Background, place: Place<'_>) -> Result<PathBuf, Error> {
        if let Err(why) = tracing_ready(place.say) {
            refuse!("--background {b} ({name}) cannot capture here: {why}");
        }
        // The target, or where it will be made.
        let under = place.target.filter(|t| t.exists()).or(place.dir);
        let device = match (&self.device, under) {
            (Some(d), _) => capture::request_device(&crate::files::resolve(d).map_err(|e| e.to_string())?),
            (None, Some(place)) => capture::request_device(place),
            (None, None) => {
                refuse!(
                    "--background {b} ({name}): this run has no place of its own on this host to find a \
                     device under (a database server's run, or the null engine); name the device, e.g. \
                     capture:device=/dev/sdb"
                );
            }
        };
        device.map_err(|e| {
            format!("--background {b} ({name}): {e}; name the device with capture:device=DEV").into()
        })
    }

    /// The stream: `device`'s requests into `<name>.sbtrace` in the run's bundle.
    pub(super) fn stream(
        &self,
        name: &str,
        device: PathBuf,
        place: Place<'_>,
    ) -> Result<CaptureStream, Error> {
        let bundle = place.bundle.ok_or_else(|| format!("{name}: a capture goes into a run's bundle"))?;
        Ok(CaptureStream::new(device, bundle.join(trace_name(name))))
    }

    pub(super) fn will_write(&self, name: &str, b: &Background) -> String {
        let device =
            self.device.as_ref().map_or("the disk under the target".into(), |d| d.display().to_string());
        format!(
            "{name} captures the block requests of {device} into each run's bundle as {} ({b})",
            trace_name(name)
        )
    }
}

/// The trace's file name in the bundle.
fn trace_name(stream: &str) -> String {
    format!("{stream}.sbtrace")
}

/// The kernel's tracing made ready for a capture: tracefs mounted where it is missing (one
/// line to `say` says so), else why it cannot be used, naming the fix.
pub fn tracing_ready(say: &dyn Fn(&str)) -> Result<(), String> {
    let root = Path::new(files::tracefs::ROOT);
    if let Some(at) = files::tracefs::mount_if_missing(root) {
        say(&format!("mounted tracefs at {}", at.display()));
    }
    for stale in files::tracefs::remove_stale(root) {
        say(&format!(
            "removed the tracing instance {stale} of a storbench that no longer runs (killed while capturing)"
        ));
    }
    files::tracefs::unavailable(root).map_or(Ok(()), Err)
}
