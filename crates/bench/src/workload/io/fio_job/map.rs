//! What a fio job section's options mean as storbench's io options: each fio option storbench
//! runs, read with fio's units and defaults (psync, buffered, sequential reads, no warm-up, a
//! job that ends after its size), and every other option refused by name at its line, never
//! ignored. fio's per-job figures (io_size, rate) are scaled to storbench's totals over all
//! workers.

use super::ini::{At, Entry};
use crate::Result;
use crate::engine::EngineKind;
use crate::units::{ByteSize, Seconds};
use crate::workload::io::Share;
use crate::workload::io::options::{BlockSizes, IoOptions, Rw};
use std::path::PathBuf;
use std::time::Duration;

/// The options that shape a job's I/O, as fio's job section set them.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub name: Option<String>,
    pub stonewall: bool,
    rw: Option<Rw>,
    rwmix_read: Option<Share>,
    percentage_random: Option<Share>,
    bs: Option<BlockSizes>,
    iodepth: Option<u32>,
    numjobs: Option<u32>,
    size: Option<u64>,
    offset: Option<u64>,
    io_size: Option<u64>,
    runtime: Option<Duration>,
    time_based: bool,
    ramp: Option<Duration>,
    engine: Option<EngineKind>,
    direct: Option<bool>,
    rate_bw: Option<(u64, At)>,
    rate_iops: Option<(f64, At)>,
    distribution: Option<String>,
    fdatasync: Option<u32>,
    fsync: Option<u32>,
    verify: Option<bool>,
    filename: Option<String>,
    directory: Option<String>,
    seed: Option<u64>,
    norandommap: bool,
}

/// What a fio option is to storbench: its canonical name, or none for one it refuses.
fn canonical(key: &str) -> Option<&'static str> {
    Some(match key {
        "readwrite" | "rw" => "rw",
        "blocksize" | "bs" => "bs",
        "blocksize_range" | "bsrange" => "bsrange",
        "io_limit" | "io_size" => "io_size",
        "timeout" | "runtime" => "runtime",
        "wait_for_previous" | "stonewall" => "stonewall",
        "rwmixread" => "rwmixread",
        "rwmixwrite" => "rwmixwrite",
        "percentage_random" => "percentage_random",
        "bssplit" => "bssplit",
        "iodepth" => "iodepth",
        "numjobs" => "numjobs",
        "size" => "size",
        "offset" => "offset",
        "time_based" => "time_based",
        "ramp_time" => "ramp_time",
        "ioengine" => "ioengine",
        "direct" => "direct",
        "buffered" => "buffered",
        "rate" => "rate",
        "rate_iops" => "rate_iops",
        "random_distribution" => "random_distribution",
        "fdatasync" => "fdatasync",
        "fsync" => "fsync",
        "verify" => "verify",
        "filename" => "filename",
        "directory" => "directory",
        "randseed" => "randseed",
        "randrepeat" => "randrepeat",
        "norandommap" => "norandommap",
        "name" => "name",
        "kb_base" => "kb_base",
        // Naming and reporting: nothing about the I/O.
        "description" => "description",
        "group_reporting" => "group_reporting",
        "new_group" => "new_group",
        "thread" => "thread",
        _ => return None,
    })
}

/// Applies a job's entries in order (globals first), later ones over earlier.
pub fn settings(entries: &[&Entry]) -> Result<Settings> {
    let kb_base = kb_base(entries)?;
    let mut s = Settings::default();
    for e in entries {
        s.apply(e, kb_base)?;
    }
    Ok(s)
}

fn kb_base(entries: &[&Entry]) -> Result<u64> {
    match entries.iter().rev().find(|e| e.key == "kb_base") {
        None => Ok(1024),
        Some(e) => match e.value.as_deref() {
            Some("1024") => Ok(1024),
            Some("1000") => Ok(1000),
            _ => refuse!("{}: kb_base is 1024 or 1000", e.at),
        },
    }
}

impl Settings {
    fn apply(&mut self, e: &Entry, kb_base: u64) -> Result<()> {
        let Some(key) = canonical(&e.key) else {
            refuse!(
                "{}: fio option `{}` is not one storbench runs, and it refuses what it would otherwise \
                 ignore; remove it from the job, or run the job with fio",
                e.at,
                e.key
            )
        };
        let v = Value { e, kb_base };
        match key {
            "rw" => self.rw = Some(v.rw()?),
            "rwmixread" => self.rwmix_read = Some(v.share()?),
            "rwmixwrite" => self.rwmix_read = Some(Share::of_fraction(1.0 - pct(v.share()?))),
            "percentage_random" => self.percentage_random = Some(v.share()?),
            "bs" => self.bs = Some(v.block_size()?),
            "bsrange" => self.bs = Some(v.block_range()?),
            "bssplit" => self.bs = Some(v.block_split()?),
            "iodepth" => self.iodepth = Some(v.count()?),
            "numjobs" => self.numjobs = Some(v.count()?),
            "size" => self.size = Some(v.size()?),
            "io_size" => self.io_size = Some(v.size()?),
            "offset" => self.offset = Some(v.size()?),
            "runtime" => self.runtime = Some(v.time()?),
            "ramp_time" => self.ramp = Some(v.time()?),
            "time_based" => self.time_based = v.flag()?,
            "ioengine" => self.engine = Some(v.engine()?),
            "direct" => self.direct = Some(v.flag()?),
            "buffered" => self.direct = Some(!v.flag()?),
            "rate" => self.rate_bw = Some((v.size()?, e.at.clone())),
            "rate_iops" => self.rate_iops = Some((f64::from(v.count()?), e.at.clone())),
            "random_distribution" => self.distribution = v.distribution()?,
            "fdatasync" => self.fdatasync = Some(v.count()?),
            "fsync" => self.fsync = Some(v.count()?),
            "verify" => self.verify = Some(v.verify()),
            "filename" => self.filename = Some(v.filename()?),
            "directory" => self.directory = Some(v.text()?.to_string()),
            "randseed" => self.seed = Some(v.number()?),
            "randrepeat" => v.randrepeat()?,
            "name" => self.name = Some(v.text()?.to_string()),
            "stonewall" => self.stonewall = v.flag()?,
            "norandommap" => self.norandommap = v.flag()?,
            // Only how fio names, groups and reports jobs, how it runs them (threads or
            // processes), and the units (read first).
            _ => {}
        }
        Ok(())
    }

    /// The job as storbench's io options, with fio's defaults where the job is silent.
    pub fn options(&self, at: &At) -> Result<IoOptions> {
        let workers = self.numjobs.unwrap_or(1);
        let rw = self.rw.unwrap_or(Rw::Read);
        let (runtime, io_size) = self.end(workers, at).unwrap_or_default();
        Ok(IoOptions {
            target: self.target(),
            rw: Some(rw),
            rwmix_read: self.rwmix_read,
            percentage_random: self.percentage_random,
            fdatasync: self.fdatasync.map(f64::from),
            fsync: self.fsync.map(f64::from),
            bs: self.bs.clone(),
            random_distribution: self.distribution.clone(),
            iodepth: self.iodepth,
            workers: Some(workers),
            runtime: runtime.map(Seconds),
            ramp: Some(Seconds(self.ramp.unwrap_or(Duration::ZERO))),
            size: self.size.map(ByteSize),
            offset: self.offset.map(ByteSize),
            io_size: io_size.map(ByteSize),
            engine: Some(self.engine.unwrap_or(EngineKind::Psync)),
            buffered: !self.direct.unwrap_or(false),
            rate_iops: self
                .rate_iops
                .as_ref()
                .map(|(r, a)| one_way(rw, a).map(|()| r * f64::from(workers)))
                .transpose()?,
            rate_bw: self
                .rate_bw
                .as_ref()
                .map(|(r, a)| one_way(rw, a).map(|()| ByteSize(r * u64::from(workers))))
                .transpose()?,
            seed: self.seed,
            verify: self.verify.unwrap_or(false),
            ..IoOptions::default()
        })
    }

    /// Where storbench's I/O will differ from fio's on this job, said before it runs: fio's
    /// random map (on unless norandommap) fits a random job's blocks into the gaps it has not
    /// touched, so a size mix comes out smaller than drawn; storbench draws as fio's
    /// norandommap does.
    pub fn differences(&self, at: &At) -> Option<String> {
        let random = matches!(self.rw, Some(Rw::Randread | Rw::Randwrite | Rw::RandMixed));
        let mix = self.bs.as_ref().is_some_and(|b| !b.mix.is_single());
        (random && mix && !self.norandommap && !self.time_based).then(|| {
            format!(
                "{at}: fio's random map shrinks a random job's mixed blocks to fit what it has not \
                 touched; storbench draws its sizes as fio does with norandommap (add it to the \
                 job to compare like with like)"
            )
        })
    }

    /// fio's end: a time_based job runs for its runtime; any other transfers its io_size (else
    /// its size) in each of its numjobs copies, or stops at its runtime if that comes first.
    /// Without an end storbench can know before it starts, why (refused unless the options
    /// given beside the file end the job).
    pub fn end(&self, workers: u32, at: &At) -> std::result::Result<(Option<Duration>, Option<u64>), String> {
        if self.time_based {
            let Some(runtime) = self.runtime else {
                return Err(format!(
                    "{at}: time_based needs a runtime (fio would run until stopped); add runtime=60, or give --runtime"
                ));
            };
            return Ok((Some(runtime), None));
        }
        match self.io_size.or(self.size) {
            Some(bytes) => Ok((self.runtime, Some(bytes * u64::from(workers)))),
            None => Err(format!(
                "{at}: the job gives neither size, io_size nor time_based with runtime, so it has \
                 no end storbench can know before it starts; add size=1g, or time_based and \
                 runtime=60, or give --runtime"
            )),
        }
    }

    fn target(&self) -> Option<PathBuf> {
        match (&self.directory, &self.filename) {
            (Some(d), Some(f)) => Some(PathBuf::from(d).join(f)),
            (Some(d), None) => Some(PathBuf::from(d)),
            (None, Some(f)) => Some(PathBuf::from(f)),
            (None, None) => None,
        }
    }
}

/// fio caps reads and writes each at a job's rate; storbench caps their total, which is the
/// same only where the job does one of them.
fn one_way(rw: Rw, at: &At) -> Result<()> {
    if matches!(rw, Rw::Mixed | Rw::RandMixed) {
        refuse!(
            "{at}: fio caps reads and writes each at a mixed job's rate, storbench their total; \
             give the rate to a job that only reads or only writes, or pace the mix with \
             storbench io --rate-iops (the total)"
        )
    }
    Ok(())
}

fn pct(s: Share) -> f64 {
    f64::from(s.hundredths()) / 10_000.0
}

/// One entry's value, read as the option's type, each error naming the option and its line.
struct Value<'a> {
    e: &'a Entry,
    kb_base: u64,
}

impl Value<'_> {
    fn text(&self) -> Result<&str> {
        match self.e.value.as_deref() {
            Some(v) if !v.is_empty() => Ok(v),
            _ => refuse!("{}: {} needs a value ({}=...)", self.e.at, self.e.key, self.e.key),
        }
    }

    fn bad(&self, why: &str) -> crate::Error {
        let v = self.e.value.as_deref().unwrap_or("");
        format!("{}: {}={v}: {why}", self.e.at, self.e.key).into()
    }

    /// A bare flag is set; else 0 or 1.
    fn flag(&self) -> Result<bool> {
        match self.e.value.as_deref() {
            None | Some("1") => Ok(true),
            Some("0") => Ok(false),
            Some(_) => Err(self.bad("a flag is 0 or 1, or its name alone")),
        }
    }

    fn number(&self) -> Result<u64> {
        self.text()?.parse().map_err(|_| self.bad("give a whole number"))
    }

    fn count(&self) -> Result<u32> {
        match self.number()? {
            n @ 1..=1_000_000 => Ok(n as u32),
            _ => Err(self.bad("give a whole number from 1")),
        }
    }

    fn share(&self) -> Result<Share> {
        let t = self.one_way_text()?;
        t.parse().map_err(|e: String| self.bad(&e))
    }

    /// The value where it is one for reads and writes alike (fio's `read,write` form with both
    /// the same, or one value).
    fn one_way_text(&self) -> Result<&str> {
        let t = self.text()?;
        let mut parts = t.split(',').map(str::trim);
        let first = parts.next().unwrap_or("");
        if parts.any(|p| !p.is_empty() && p != first) || first.is_empty() {
            return Err(self.bad(
                "storbench gives reads and writes one value here; give one (a job of its own for \
                 each direction can have its own)",
            ));
        }
        Ok(first)
    }

    fn size(&self) -> Result<u64> {
        fio_size(self.one_way_text()?, self.kb_base).map_err(|why| self.bad(&why))
    }

    fn time(&self) -> Result<Duration> {
        fio_time(self.text()?).map_err(|why| self.bad(&why))
    }

    fn rw(&self) -> Result<Rw> {
        let t = self.text()?;
        if t.contains(':') {
            return Err(self.bad("storbench does not skip offsets within a sequential job; drop the `:N`"));
        }
        if t.contains("trim") {
            return Err(self.bad("storbench does not trim; run read and write jobs"));
        }
        t.parse().map_err(|e: String| self.bad(&e))
    }

    fn block_size(&self) -> Result<BlockSizes> {
        let bytes = self.size()?;
        self.blocks(&bytes.to_string())
    }

    fn blocks(&self, text: &str) -> Result<BlockSizes> {
        text.parse().map_err(|e: String| self.bad(&e))
    }

    /// fio draws a size from `min` to `max` in steps of `min` (its draw, `min + max * u`
    /// rounded down to a multiple of `min` and capped at `max`): each step weighted by how
    /// much of that draw lands on it.
    fn block_range(&self) -> Result<BlockSizes> {
        let t = self.one_way_text()?;
        let Some((lo, hi)) = t.split_once('-').or_else(|| t.split_once(':')) else {
            return Err(self.bad("a range is MIN-MAX, as in 4k-64k"));
        };
        let sizes = |s: &str| fio_size(s.trim(), self.kb_base).map_err(|why| self.bad(&why));
        let (lo, hi) = (sizes(lo)?, sizes(hi)?);
        if lo == 0 || hi < lo {
            return Err(self.bad("a range's MIN is above 0 and at most its MAX"));
        }
        if hi / lo > 4096 {
            return Err(self.bad("storbench draws at most 4096 sizes from a range; narrow it or use bssplit"));
        }
        let mut steps: Vec<(u64, u64)> = Vec::new();
        let mut k = 1;
        while k * lo < lo + hi {
            let (from, to) = (k * lo, ((k + 1) * lo).min(lo + hi));
            let size = (k * lo).min(hi);
            match steps.last_mut() {
                Some((s, w)) if *s == size => *w += to - from,
                _ => steps.push((size, to - from)),
            }
            k += 1;
        }
        let text: Vec<String> = steps.iter().map(|(s, w)| format!("{s}/{w}")).collect();
        self.blocks(&text.join(":"))
    }

    /// fio's `4k/60:64k/40`; a size with no percent shares what the others leave.
    fn block_split(&self) -> Result<BlockSizes> {
        let t = self.one_way_text()?;
        let mut given: Vec<(u64, Option<u64>)> = Vec::new();
        for part in t.split(':') {
            let (size, weight) = part.split_once('/').unwrap_or((part, ""));
            let size = fio_size(size.trim(), self.kb_base).map_err(|why| self.bad(&why))?;
            let weight = match weight.trim() {
                "" => None,
                w => Some(w.parse::<u64>().map_err(|_| self.bad("a percent is a whole number"))?),
            };
            given.push((size, weight));
        }
        let said: u64 = given.iter().filter_map(|(_, w)| *w).sum();
        let blank = given.iter().filter(|(_, w)| w.is_none()).count() as u64;
        if said > 100 || (blank > 0 && said == 100) {
            return Err(self.bad("the percents add up to more than 100"));
        }
        // Whole numbers throughout: the given weights times the blanks, each blank the rest.
        let text: Vec<String> = given
            .iter()
            .filter(|(_, w)| *w != Some(0))
            .map(|(s, w)| format!("{s}/{}", w.map_or(100 - said, |w| w * blank.max(1))))
            .collect();
        self.blocks(&text.join(":"))
    }

    fn engine(&self) -> Result<EngineKind> {
        Ok(match self.text()? {
            "io_uring" | "libaio" => EngineKind::IoUring,
            "psync" | "sync" | "pvsync" | "pvsync2" => EngineKind::Psync,
            "null" => EngineKind::Null,
            _ => {
                return Err(self.bad(
                    "storbench runs io_uring (for io_uring and libaio), psync (for psync, sync, \
                     pvsync, pvsync2) and null; pick one of those",
                ));
            }
        })
    }

    fn distribution(&self) -> Result<Option<String>> {
        let t = self.one_way_text()?;
        if t == "random" {
            return Ok(None);
        }
        if t.starts_with("zipf:") || t.starts_with("zoned:") {
            crate::workload::io::validate::parse_distribution(t).map_err(|e| self.bad(&e.to_string()))?;
            return Ok(Some(t.to_string()));
        }
        Err(self.bad("storbench draws random (uniform), zipf:THETA and zoned:...; pareto, normal and zoned_abs it does not"))
    }

    /// Any check method is storbench's own (a crc32c in each block's header).
    fn verify(&self) -> bool {
        !matches!(self.e.value.as_deref(), Some("0" | "null"))
    }

    fn filename(&self) -> Result<String> {
        let t = self.text()?;
        if t.contains(':') {
            return Err(self.bad("storbench io runs a job on one file or device; give one"));
        }
        Ok(t.to_string())
    }

    /// storbench repeats its random draws from the seed, as fio's randrepeat=1 (its default).
    fn randrepeat(&self) -> Result<()> {
        match self.flag()? {
            true => Ok(()),
            false => Err(self.bad(
                "storbench repeats every run's draws from its seed; remove randrepeat and give \
                 randseed a new value for other draws",
            )),
        }
    }
}

/// A fio size: a whole number or a decimal one, with k, m, g, t or p (and an optional i and
/// b) after it: powers of 1024, or of 1000 under kb_base=1000 (where KiB stays 1024).
pub fn fio_size(text: &str, kb_base: u64) -> std::result::Result<u64, String> {
    if text.ends_with('%') {
        return Err(
            "storbench does not take a size as a percent of the target; give it in bytes (10g)".into()
        );
    }
    let lower = text.to_ascii_lowercase();
    let digits = lower.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(lower.len());
    let (number, unit) = lower.split_at(digits);
    let number: f64 =
        number.parse().map_err(|_| format!("'{text}' is not a size; write it like 4k, 256k or 10g"))?;
    let unit = unit.strip_suffix('b').unwrap_or(unit);
    let (unit, binary) = match unit.strip_suffix('i') {
        Some(u) => (u, true),
        None => (unit, false),
    };
    let power = match unit {
        "" => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return Err(format!("'{text}' has a unit storbench does not know; use k, m, g, t or p")),
    };
    let base = if binary { 1024 } else { kb_base } as f64;
    let bytes = (number * base.powi(power)).floor();
    if bytes > crate::units::MAX_BYTES as f64 {
        return Err(format!("'{text}' is more than 1 EiB, larger than any storage"));
    }
    Ok(bytes as u64)
}

/// A fio duration: seconds, or with us, ms, s, m, h or d after it.
pub fn fio_time(text: &str) -> std::result::Result<Duration, String> {
    let lower = text.to_ascii_lowercase();
    let digits = lower.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(lower.len());
    let (number, unit) = lower.split_at(digits);
    let number: f64 =
        number.parse().map_err(|_| format!("'{text}' is not a time; write it like 60, 60s or 2m"))?;
    let seconds = match unit {
        "" | "s" | "sec" => 1.0,
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return Err(format!("'{text}' has a unit storbench does not know; use us, ms, s, m, h or d")),
    };
    let s = number * seconds;
    match Duration::try_from_secs_f64(s) {
        Ok(d) if d <= crate::units::MAX_DURATION => Ok(d),
        _ => Err(format!("'{text}' is longer than any test runs (at most 365 days)")),
    }
}
