//! A file a meter daemon keeps rewriting with the watts. Only a regular file is read, and at
//! most [`MAX_READ`] of it: a device (`/dev/zero`), a FIFO or a huge file is no meter.

use super::{Meter, PowerError, watts_in};
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::time::Instant;

/// Largest part of the file read at each sample; a reading is a line.
const MAX_READ: u64 = 4 << 10;

#[derive(Debug)]
pub(super) struct MeterFile {
    path: PathBuf,
}

const FILE_FIX: &str = "the meter daemon must keep writing the watts into this file";

impl MeterFile {
    /// The meter at `path`, which must be a regular file already.
    pub(super) fn open(path: PathBuf) -> Result<Self, PowerError> {
        let meter = MeterFile { path };
        meter.open_regular()?;
        Ok(meter)
    }

    /// Opens the file when it is a regular file, without blocking (a FIFO put in its place
    /// must not hang the sampler).
    fn open_regular(&self) -> Result<File, PowerError> {
        let what = self.path.display().to_string();
        crate::files::input::open_input(&self.path).map_err(|e| match e {
            crate::files::FileError::Io { source, .. } => {
                PowerError::Read { meter: "file", what, error: source, fix: FILE_FIX }
            }
            refused => PowerError::Unusable {
                meter: "file",
                problem: refused.to_string(),
                fix: "give the file a meter daemon rewrites with the watts, or use cmd:COMMAND \
                      for a meter read by a program",
            },
        })
    }
}

impl Meter for MeterFile {
    fn read(&mut self, _now: Instant) -> Result<Option<f64>, PowerError> {
        let what = self.path.display().to_string();
        let mut bytes = Vec::new();
        self.open_regular()?.take(MAX_READ).read_to_end(&mut bytes).map_err(|error: io::Error| {
            PowerError::Read { meter: "file", what: what.clone(), error, fix: FILE_FIX }
        })?;
        watts_in("file", what, &String::from_utf8_lossy(&bytes), FILE_FIX).map(Some)
    }

    fn describe(&self) -> String {
        format!("file {}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PowerSampler, PowerSource};
    use super::*;
    use std::fs;

    #[test]
    fn file_source_reads_the_file_at_every_sample() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watts");
        fs::write(&path, "412.25\n").unwrap();
        let mut sampler = PowerSampler::new(PowerSource::File { path: path.clone() }).unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(412.25));
        fs::write(&path, "power=398 W\n").unwrap();
        assert_eq!(sampler.sample().unwrap(), Some(398.0));
        fs::remove_file(&path).unwrap();
        assert!(sampler.sample().unwrap_err().to_string().starts_with("file: cannot read"));
    }

    #[test]
    fn a_file_meter_that_is_no_regular_file_is_refused_up_front() {
        let err = PowerSampler::new(PowerSource::File { path: "/dev/zero".into() }).unwrap_err().to_string();
        assert!(err.contains("/dev/zero is a character device, not a regular file"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err =
            PowerSampler::new(PowerSource::File { path: dir.path().to_owned() }).unwrap_err().to_string();
        assert!(err.contains("is a directory, not a regular file"), "{err}");
    }

    #[test]
    fn a_file_meter_reads_only_the_start_of_a_large_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watts");
        fs::write(&path, format!("{}1", " ".repeat(MAX_READ as usize))).unwrap();
        let err = PowerSampler::new(PowerSource::File { path }).unwrap().sample().unwrap_err().to_string();
        assert!(err.contains("no power reading"), "{err}");
    }
}
