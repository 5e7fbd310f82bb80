//! fio's job files (`storbench io JOB.fio`, `fio_job` in a plan): the file read as fio reads
//! it (`ini`: sections, `include`, `$ncpus`/`${VAR}` expansion), each job's options as
//! storbench's (`map`), and the jobs in fio's order: a `stonewall` starts a job after every
//! job before it, and jobs between stonewalls, which fio runs at once, are one storbench job
//! with their workers together where they do the same I/O (a group of different jobs at once
//! is refused, naming them).

pub mod ini;
mod map;
#[cfg(test)]
mod tests;

pub use ini::{At, Expand};
pub use map::{fio_size, fio_time};

use crate::Result;
use crate::workload::io::options::IoOptions;
use std::path::Path;

/// One job of a job file as storbench runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct FioJob {
    /// Its section's name (or its `name=`); the names of the jobs it runs at once with, after
    /// a `+`.
    pub name: String,
    /// Where its section starts.
    pub at: At,
    /// Its options, fio's defaults filled in where the file is silent.
    pub options: IoOptions,
    /// Where its I/O will differ from fio's, to say before it runs.
    pub notes: Vec<String>,
    /// Why it has no end of its own (refused unless the options given with the file end it).
    pub unended: Option<String>,
}

/// The jobs of the job file `path`, in the order they run.
pub fn read(path: &Path, expand: &Expand) -> Result<Vec<FioJob>> {
    let sections = ini::read(path, expand)?;
    let mut global: Vec<&ini::Entry> = Vec::new();
    let mut groups: Vec<Vec<(FioJob, map::Settings)>> = Vec::new();
    for section in &sections {
        if section.name == "global" {
            global.extend(&section.entries);
            continue;
        }
        let entries: Vec<&ini::Entry> = global.iter().copied().chain(&section.entries).collect();
        let settings = map::settings(&entries)?;
        let options = settings.options(&section.at)?;
        let name = settings.name.clone().unwrap_or_else(|| section.name.clone());
        let notes = settings.differences(&section.at).into_iter().collect();
        let unended = settings.end(options.workers.unwrap_or(1), &section.at).err();
        let job = FioJob { name, at: section.at.clone(), options, notes, unended };
        match groups.last_mut() {
            Some(group) if !settings.stonewall => group.push((job, settings)),
            _ => groups.push(vec![(job, settings)]),
        }
    }
    if groups.is_empty() {
        refuse!(
            "{}: the job file has no job, only [global]; add a job section such as [randread]",
            path.display()
        )
    }
    groups.into_iter().map(|g| together(g.into_iter().map(|(j, _)| j).collect())).collect()
}

/// Jobs fio starts at once, as one job: their workers, bytes and rates added up where they do
/// the same I/O.
fn together(mut jobs: Vec<FioJob>) -> Result<FioJob> {
    let mut one = jobs.remove(0);
    for other in jobs {
        if shape(&one.options) != shape(&other.options) {
            refuse!(
                "{}: job [{}] runs at the same time as [{}] (no stonewall between them) with other \
                 options, and storbench io runs one job at a time; add `stonewall` to [{}] to run \
                 it after, or give both the same options",
                other.at,
                other.name,
                one.name,
                other.name
            )
        }
        let (a, b) = (&mut one.options, &other.options);
        a.workers = Some(a.workers.unwrap_or(1) + b.workers.unwrap_or(1));
        a.io_size = a.io_size.zip(b.io_size).map(|(x, y)| crate::units::ByteSize(x.0 + y.0));
        a.rate_iops = a.rate_iops.zip(b.rate_iops).map(|(x, y)| x + y);
        a.rate_bw = a.rate_bw.zip(b.rate_bw).map(|(x, y)| crate::units::ByteSize(x.0 + y.0));
        one.notes.extend(other.notes);
        one.name = format!("{}+{}", one.name, other.name);
    }
    Ok(one)
}

/// A job's options without what adds up over jobs run at once.
fn shape(o: &IoOptions) -> IoOptions {
    IoOptions { workers: None, io_size: None, rate_iops: None, rate_bw: None, ..o.clone() }
}

/// The jobs of `given.fio_job`, each with the options `given` sets over the file's (a
/// command line's `--target`, a plan configuration's place), ready to validate as single jobs.
pub fn jobs(given: &IoOptions, expand: &Expand) -> Result<Vec<FioJob>> {
    let Some(path) = &given.fio_job else { return Ok(Vec::new()) };
    let mut jobs = read(path, expand)?;
    for job in &mut jobs {
        if let Some(why) = job.unended.take().filter(|_| given.runtime.is_none() && given.io_size.is_none()) {
            return Err(why.into());
        }
        job.options = over(given, std::mem::take(&mut job.options));
    }
    Ok(jobs)
}

/// `given`'s options where it sets them, else `file`'s.
fn over(given: &IoOptions, file: IoOptions) -> IoOptions {
    let g = given.clone();
    let ends = g.runtime.is_some() || g.io_size.is_some();
    IoOptions {
        fio_job: None,
        target: g.target.or(file.target),
        like: g.like.or(file.like),
        profile: g.profile.or(file.profile),
        rw: g.rw.or(file.rw),
        rwmix_read: g.rwmix_read.or(file.rwmix_read),
        percentage_random: g.percentage_random.or(file.percentage_random),
        fdatasync: g.fdatasync.or(file.fdatasync),
        fsync: g.fsync.or(file.fsync),
        bs: g.bs.or(file.bs),
        random_distribution: g.random_distribution.or(file.random_distribution),
        iodepth: g.iodepth.or(file.iodepth),
        workers: g.workers.or(file.workers),
        // The end given replaces the file's whole: `--runtime 10s` over a job that ends by its
        // size runs ten seconds.
        runtime: if ends { g.runtime } else { file.runtime },
        ramp: g.ramp.or(file.ramp),
        steady_state: g.steady_state.or(file.steady_state),
        size: g.size.or(file.size),
        offset: g.offset.or(file.offset),
        io_size: if ends { g.io_size } else { file.io_size },
        engine: g.engine.or(file.engine),
        buffered: g.buffered || file.buffered,
        rate_iops: g.rate_iops.or(file.rate_iops),
        rate_bw: g.rate_bw.or(file.rate_bw),
        rate_profile: g.rate_profile.or(file.rate_profile),
        seed: g.seed.or(file.seed),
        verify: g.verify || file.verify,
        allow_device: g.allow_device || file.allow_device,
        force: g.force || file.force,
        continue_on_error: g.continue_on_error || file.continue_on_error,
    }
}
