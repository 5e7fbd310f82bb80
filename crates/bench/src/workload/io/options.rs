//! io's options as a user gives them, in a plan's workload table or as `storbench io`'s
//! flags (the command line converts its flags into this type), with the typed values a flag
//! and a key share: the access pattern ([`Rw`]), the block sizes ([`BlockSizes`]) and a rate
//! second by second ([`RateProfile`]), each checked as it is read. The command line validates
//! the options into its jobs (`IoSpec`) against the target.

use super::{BlockSizeMix, Share};
use crate::engine::EngineKind;
use crate::units::{ByteSize, Seconds};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// io's access pattern (`rw`), checked when given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    Randread,
    Randwrite,
    /// A sequential mix (`rw`).
    Mixed,
    /// A random mix (`randrw`).
    RandMixed,
}

impl Rw {
    const ALL: [Rw; 6] = [Rw::Read, Rw::Write, Rw::Randread, Rw::Randwrite, Rw::Mixed, Rw::RandMixed];

    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::Randread => "randread",
            Rw::Randwrite => "randwrite",
            Rw::Mixed => "rw",
            Rw::RandMixed => "randrw",
        }
    }

    /// The pattern of a job that is random or not and reads `read_pct` percent.
    pub fn of(random: bool, read_pct: u8) -> Rw {
        match (random, read_pct) {
            (true, 100) => Rw::Randread,
            (true, 0) => Rw::Randwrite,
            (true, _) => Rw::RandMixed,
            (false, 100) => Rw::Read,
            (false, 0) => Rw::Write,
            (false, _) => Rw::Mixed,
        }
    }
}

impl std::str::FromStr for Rw {
    type Err = String;
    fn from_str(s: &str) -> Result<Rw, String> {
        let s = if s == "readwrite" { "rw" } else { s };
        Rw::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| format!("unknown --rw '{s}'; use read, write, randread, randwrite, rw or randrw"))
    }
}

impl std::fmt::Display for Rw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

crate::deserialize_from_text!(Rw);

/// The largest block: 64 MiB.
const MAX_BLOCK: u64 = 64 << 20;

/// io's block sizes (`bs`): one size or a weighted mix, checked when given, with the text as
/// given for names and labels.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSizes {
    pub mix: BlockSizeMix,
    text: String,
}

impl BlockSizes {
    /// One size of `bytes`.
    pub fn single(bytes: u32) -> BlockSizes {
        BlockSizes { mix: BlockSizeMix::single(bytes), text: bytes.to_string() }
    }
}

impl std::str::FromStr for BlockSizes {
    type Err = String;

    /// One size (4k), or a weighted mix as fio's bssplit writes it (4k/60:64k/40).
    fn from_str(s: &str) -> Result<BlockSizes, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let mix = if parts.len() == 1 && !s.contains('/') {
            BlockSizeMix::single(block_size(s, s)?)
        } else {
            let mut entries = Vec::new();
            for part in parts {
                let Some((size, weight)) = part.split_once('/') else {
                    return Err(format!("--bs '{s}': each part of a mix is SIZE/WEIGHT, as in 4k/60:64k/40"));
                };
                let weight: u32 = match weight.parse() {
                    Ok(w) if w > 0 => w,
                    _ => return Err(format!("--bs '{s}': weight '{weight}' must be a whole number above 0")),
                };
                entries.push((block_size(s, size)?, weight));
            }
            BlockSizeMix::weighted(entries)
        };
        Ok(BlockSizes { mix, text: s.to_string() })
    }
}

/// One size of a `--bs` (`whole`): 1 byte to 64 MiB.
fn block_size(whole: &str, s: &str) -> Result<u32, String> {
    let bytes = s.parse::<ByteSize>().map_err(|e| format!("--bs '{whole}': {e}"))?.0;
    if bytes == 0 || bytes > MAX_BLOCK {
        return Err(format!("--bs '{whole}': a block is 1 byte to 64MiB, not {bytes} bytes"));
    }
    Ok(bytes as u32)
}

impl std::fmt::Display for BlockSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

crate::deserialize_from_text!(BlockSizes);

/// `rate_profile`: I/Os a second, second by second.
#[derive(Debug, Clone, PartialEq)]
pub struct RateProfile(pub Vec<f64>);

impl std::str::FromStr for RateProfile {
    type Err = String;

    fn from_str(s: &str) -> Result<RateProfile, String> {
        let rates = s
            .split(',')
            .map(|r| r.trim().parse::<f64>().map_err(|_| format!("'{r}' in '{s}' is not a number of I/Os")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RateProfile(rates))
    }
}

/// From a plan: a list of numbers, or the command line's text.
impl<'de> Deserialize<'de> for RateProfile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RateProfile, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            List(Vec<f64>),
            Text(String),
        }
        match Given::deserialize(d)? {
            Given::List(rates) => Ok(RateProfile(rates)),
            Given::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The keys of an io workload. Their help is `storbench io --help`'s, one flag per key
/// (target, allow_device and force are a plan configuration's).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IoOptions {
    /// A fio job file whose jobs to run (`fio_job::jobs`): the other options, where given,
    /// over each job's.
    pub fio_job: Option<PathBuf>,
    pub target: Option<PathBuf>,
    /// A trace whose fingerprint gives the options not given.
    pub like: Option<PathBuf>,
    /// A named set of jobs (sqlio).
    pub profile: Option<String>,
    pub rw: Option<Rw>,
    pub rwmix_read: Option<Share>,
    pub percentage_random: Option<Share>,
    pub fdatasync: Option<f64>,
    pub fsync: Option<f64>,
    pub bs: Option<BlockSizes>,
    pub random_distribution: Option<String>,
    pub iodepth: Option<u32>,
    pub workers: Option<u32>,
    pub runtime: Option<Seconds>,
    pub ramp: Option<Seconds>,
    /// Steady-state rounds of this length.
    pub steady_state: Option<Seconds>,
    pub size: Option<ByteSize>,
    /// Where the job's part of the target starts.
    pub offset: Option<ByteSize>,
    pub io_size: Option<ByteSize>,
    pub engine: Option<EngineKind>,
    pub buffered: bool,
    pub rate_iops: Option<f64>,
    pub rate_bw: Option<ByteSize>,
    pub rate_profile: Option<RateProfile>,
    pub seed: Option<u64>,
    pub verify: bool,
    pub allow_device: bool,
    pub force: bool,
    pub continue_on_error: bool,
}

impl IoOptions {
    /// The defaults of the durations, each defined once: validation, the evaluation's ETA and
    /// the help text (held to them by a test) take them from here.
    pub const RUNTIME: Duration = Duration::from_secs(30);
    pub const RAMP: Duration = Duration::from_secs(2);
    /// The defaults of the job's shape, likewise: validation, an evaluation's labels and the
    /// help text.
    pub const RW: Rw = Rw::Randread;
    pub const BS: &'static str = "4k";
    pub const IODEPTH: u32 = 1;

    pub fn ramp_or_default(&self) -> Duration {
        self.ramp.map_or(Self::RAMP, |r| r.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_and_patterns_are_checked_as_they_are_read_naming_the_option() {
        let mix: BlockSizes = "4k/60:64k/40".parse().unwrap();
        assert_eq!((mix.mix.max(), mix.to_string().as_str()), (64 << 10, "4k/60:64k/40"));
        assert!("4k/0".parse::<BlockSizes>().unwrap_err().contains("weight '0'"));
        assert!("128MiB".parse::<BlockSizes>().unwrap_err().contains("1 byte to 64MiB"));
        assert!("4k:64k".parse::<BlockSizes>().unwrap_err().contains("SIZE/WEIGHT"));
        assert_eq!("readwrite".parse(), Ok(Rw::Mixed));
        assert!("sideways".parse::<Rw>().unwrap_err().starts_with("unknown --rw 'sideways'"));
        assert_eq!("10, 20".parse(), Ok(RateProfile(vec![10.0, 20.0])));
    }
}
