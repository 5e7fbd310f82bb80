//! `replay-trace`'s options as a user gives them, in a plan's workload table or as `storbench
//! replay-trace`'s flags (the command line converts its flags into this type). [`check`]
//! refuses the combinations no run could make sense of, naming the key and what to give
//! instead; what needs the trace or the target is checked where they are opened.
//!
//! [`check`]: ReplayTraceOptions::check

use crate::units::ByteSize;
use serde::Deserialize;
use std::path::PathBuf;

/// The keys of a replay-trace workload. Their help is `storbench replay-trace --help`'s, one
/// flag per key (target, allow_device and force are a plan configuration's).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplayTraceOptions {
    /// The trace `storbench capture` wrote.
    pub trace: PathBuf,
    /// Where to replay: a block device, a file, or a directory (default: the current one).
    pub target: Option<PathBuf>,
    /// A block device may be the target.
    pub allow_device: bool,
    /// Write where storbench would otherwise refuse (the captured device itself).
    pub force: bool,
    /// As recorded, this many times as fast (default 1).
    pub speed: Option<f64>,
    /// As fast as the target takes them, instead of at the recorded times.
    pub fast: bool,
    /// With `fast`: requests in flight (default: the trace's most).
    pub iodepth: Option<u32>,
    /// Fold the offsets into this many bytes.
    pub footprint: Option<ByteSize>,
    /// Through the page cache instead of O_DIRECT.
    pub buffered: bool,
    /// Capture the replay and compare its fingerprint with the trace's.
    pub check: bool,
}

/// The most requests a fast replay keeps in flight.
pub const MOST_IODEPTH: u32 = 4096;

impl ReplayTraceOptions {
    /// The options that cannot go together, or lack what the replay needs.
    pub fn check(&self) -> Result<(), String> {
        if self.trace.as_os_str().is_empty() {
            return Err("a replay-trace workload needs its trace: give trace = \"FILE\" (a trace \
                        `storbench capture` wrote)"
                .into());
        }
        if let (true, Some(x)) = (self.fast, self.speed) {
            return Err(format!(
                "--speed {x} with --fast: a fast replay goes as fast as the target takes the requests; give one of them"
            ));
        }
        match self.iodepth {
            Some(n) if !self.fast => Err(format!(
                "--iodepth {n} is for --fast: as recorded, the trace's own times set what is in flight; add --fast or leave it out"
            )),
            Some(n) if !(1..=MOST_IODEPTH).contains(&n) => {
                Err(format!("--iodepth {n}: give 1 to {MOST_IODEPTH}"))
            }
            _ => Ok(()),
        }
    }

    /// The trace file's stem, which names the run (`replay-trace-<stem>`).
    pub fn stem(&self) -> String {
        self.trace.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_no_replay_could_make_sense_of_is_refused_by_its_key() {
        let given = ReplayTraceOptions { trace: "prod.sbtrace".into(), ..Default::default() };
        assert_eq!(given.check(), Ok(()));
        assert_eq!(given.stem(), "prod");
        let no_trace = ReplayTraceOptions::default().check().unwrap_err();
        assert!(no_trace.contains("give trace = \"FILE\""), "{no_trace}");
        let both = ReplayTraceOptions { fast: true, speed: Some(2.0), ..given.clone() };
        assert!(both.check().unwrap_err().starts_with("--speed 2 with --fast"));
        let depth = ReplayTraceOptions { iodepth: Some(8), ..given.clone() };
        assert!(depth.check().unwrap_err().contains("add --fast"));
        let fast = ReplayTraceOptions { fast: true, ..depth };
        assert_eq!(fast.check(), Ok(()));
        let deep = ReplayTraceOptions { iodepth: Some(0), ..fast };
        assert_eq!(deep.check().unwrap_err(), "--iodepth 0: give 1 to 4096");
    }
}
