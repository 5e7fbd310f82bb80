//! `--background SPEC`: the streams a measuring command runs beside its workload. A spec is
//! parsed with the command line (a bad one is exit 2 naming the key and the fix) and built
//! into a stream when the run starts: its file made or reused, then handed to the driver.

use crate::units::ByteSize;
use anyhow::{Context, Result};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;
use storbench_bench::engine::EngineKind;
use storbench_bench::run::record::StreamEntry;
use storbench_bench::run::{StopFlag, Streams};
use storbench_bench::target::{self, TargetRequest};
use storbench_bench::workload::io::{BlockSizeMix, End, IoSpec, IoStream, Pattern, Region};

/// One background stream as the user asked for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Background {
    /// The spec as given, for the summary and the record.
    pub text: String,
    pub io: IoBackground,
}

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

impl FromStr for Background {
    type Err = String;

    fn from_str(text: &str) -> Result<Background, String> {
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        if kind != "io" {
            return Err(format!(
                "'{kind}' is not a background stream storbench knows; give io[:{KEYS}], e.g. io:rate=10MiB"
            ));
        }
        let mut io = IoBackground {
            read: false,
            bs: 1 << 20,
            rate: None,
            size: 256 << 20,
            dir: None,
            iodepth: 1,
            direct: true,
        };
        for pair in rest.split(',').filter(|p| !p.is_empty()) {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(format!("'{pair}' is not KEY=VALUE; the keys are {KEYS}"));
            };
            io.set(key, value).map_err(|why| format!("{key}={value}: {why}"))?;
        }
        if io.size < u64::from(io.bs) {
            return Err(format!("size {} is less than one block of {}", io.size, io.bs));
        }
        Ok(Background { text: crate::units::plain_text(text)?, io })
    }
}

impl Background {
    /// What stream `index` (0 for bg1) writes, for the line an evaluation says before it runs.
    pub fn will_write(&self, index: usize) -> String {
        let name = format!("storbench-bg{}.dat", index + 1);
        let size = crate::units::human_bytes(self.io.size);
        let place = self
            .io
            .dir
            .as_ref()
            .map_or("beside each workload's files".into(), |d| format!("in {}", d.display()));
        let rate =
            self.io.rate.map_or("unthrottled".into(), |r| format!("{}/s", crate::units::human_bytes(r)));
        let what = if self.io.read { "reads" } else { "writes" };
        format!("{name} ({size}, made once and kept) {place}; {self} {what} it sequentially, {rate}")
    }
}

impl IoBackground {
    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let size = |v: &str| v.parse::<ByteSize>().map(|b| b.0);
        match key {
            "rw" => {
                self.read = match value {
                    "read" => true,
                    "write" => false,
                    _ => return Err("give read or write".into()),
                }
            }
            "bs" => {
                // io's own block sizes and limits; one size, as a copy moves whole blocks.
                let sizes: crate::args::BlockSizes = value.parse()?;
                if !sizes.mix.is_single() {
                    return Err("give one block size; a mix is for io's --bs".into());
                }
                self.bs = sizes.mix.max();
            }
            "rate" => {
                self.rate = match size(value.trim_end_matches("/s"))? {
                    0 => return Err("a rate is above 0; leave rate out to run unthrottled".into()),
                    r => Some(r),
                }
            }
            "size" => self.size = size(value)?,
            "dir" => self.dir = Some(crate::units::place(value)?),
            "iodepth" => {
                self.iodepth = match value.parse() {
                    Ok(n @ 1..=1024) => n,
                    _ => return Err("give a whole number from 1 to 1024".into()),
                }
            }
            "direct" => self.direct = value.parse::<crate::units::YesNo>()?.0,
            _ => return Err(format!("no such key; the keys are {KEYS}")),
        }
        Ok(())
    }
}

crate::units::deserialize_from_text!(Background);

impl fmt::Display for Background {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The streams for `specs`, named bg1, bg2, ... with their record entries. Each io stream's
/// file is `storbench-bg<N>.dat` in its `dir`, else in `default_dir`; a run on the null
/// engine (`null`) runs its streams there too.
pub fn build(
    specs: &[Background],
    default_dir: Option<&Path>,
    null: bool,
    stop: &StopFlag,
) -> Result<(Streams, Vec<StreamEntry>)> {
    let mut streams = Streams::new();
    let mut entries = Vec::new();
    for (i, b) in specs.iter().enumerate() {
        let name = format!("bg{}", i + 1);
        let file = match (b.io.dir.as_deref().or(default_dir), null) {
            (Some(dir), _) => Some(open_file(&name, &b.io, dir, stop)?),
            (None, true) => None,
            (None, false) => anyhow::bail!(
                "background stream {name} ({b}) has no directory for its file: this run's data is not in a \
                 directory of storbench's (a database server's); name one with dir=PATH"
            ),
        };
        streams.add(name.clone(), Box::new(IoStream::new(io_spec(&name, &b.io, file.is_some()), file)));
        entries.push(StreamEntry { name, kind: "io".into(), spec: b.text.clone() });
    }
    Ok((streams, entries))
}

/// The stream's own file in `dir`: created and filled at its size, or reused as it is.
fn open_file(name: &str, io: &IoBackground, dir: &Path, stop: &StopFlag) -> Result<std::fs::File> {
    let path = dir.join(format!("storbench-{name}.dat"));
    let request = TargetRequest {
        path: path.clone(),
        size: Some(io.size),
        default_size: io.size,
        direct: io.direct,
        allow_device: false,
        force: false,
        writes: true,
    };
    let refused =
        |e: target::Refusal| anyhow::anyhow!("background stream {name}: {}", e.message(&|r| r.neutral()));
    let plan = target::plan(&request).map_err(refused)?;
    if plan.direct && !io.bs.is_multiple_of(plan.direct_align) {
        anyhow::bail!(
            "background stream {name}: bs={} is not a multiple of {} bytes, which O_DIRECT needs on {}; \
             give such a bs, or direct=no",
            io.bs,
            plan.direct_align,
            dir.display()
        );
    }
    let target = target::prepare(&plan, storbench_bench::rng::DEFAULT_SEED, &mut |_, _| {}, stop)
        .with_context(|| format!("preparing background stream {name}'s file {}", path.display()))?;
    if target.created {
        say!(
            "created {} ({}) for background stream {name}",
            path.display(),
            crate::units::human_bytes(target.size)
        );
    }
    Ok(target.file)
}

fn io_spec(name: &str, io: &IoBackground, on_file: bool) -> IoSpec {
    IoSpec {
        name: name.into(),
        pattern: Pattern::Sequential,
        read_pct: if io.read { 100 } else { 0 },
        block_sizes: BlockSizeMix::single(io.bs),
        iodepth: io.iodepth,
        workers: 1,
        ramp: Duration::ZERO,
        end: End::Time(Duration::MAX),
        rate_iops: io.rate.map(|r| r as f64 / f64::from(io.bs)),
        seed: storbench_bench::rng::DEFAULT_SEED,
        verify: false,
        engine: if on_file { EngineKind::IoUring } else { EngineKind::Null },
        region: Region { start: 0, len: io.size / u64::from(io.bs) * u64::from(io.bs) },
        interval: Duration::from_secs(1),
        steady_state: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_reads_its_keys_and_its_defaults_are_a_1_mib_sequential_write() {
        let b: Background = "io:rate=10MiB/s,bs=64k,rw=read,iodepth=4,direct=no".parse().unwrap();
        assert_eq!(
            (b.io.rate, b.io.bs, b.io.read, b.io.iodepth, b.io.direct),
            (Some(10 << 20), 65536, true, 4, false)
        );
        let d: Background = "io".parse().unwrap();
        assert_eq!(
            (d.io.rate, d.io.bs, d.io.read, d.io.size, d.io.dir),
            (None, 1 << 20, false, 256 << 20, None)
        );
        let spec = io_spec("bg1", &b.io, true);
        assert_eq!(spec.rate_iops, Some(160.0), "10 MiB/s in 64 KiB requests");
        assert_eq!(spec.pattern, Pattern::Sequential);
    }

    #[test]
    fn a_stream_of_a_run_on_a_database_server_needs_a_directory_of_its_own() {
        let specs = ["io:rate=1MiB".parse().unwrap()];
        let err = build(&specs, None, false, &StopFlag::new()).err().expect("refused").to_string();
        assert!(err.contains("bg1") && err.contains("dir=PATH"), "{err}");
        let (streams, entries) = build(&specs, None, true, &StopFlag::new()).unwrap();
        assert!(!streams.is_empty(), "a run on the null engine runs its stream there too");
        assert_eq!(entries[0].spec, "io:rate=1MiB");
    }
}
