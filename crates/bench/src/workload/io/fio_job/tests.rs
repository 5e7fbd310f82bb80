use super::*;
use crate::engine::EngineKind;
use crate::units::{ByteSize, Seconds};
use crate::workload::io::Share;
use crate::workload::io::options::Rw;
use std::path::PathBuf;
use std::time::Duration;

/// A fixed machine: 4 CPUs, 4 KiB pages, 8 GiB, and one variable in its environment.
fn machine() -> Expand<'static> {
    Expand {
        ncpus: 4,
        pagesize: 4096,
        mb_memory: 8192,
        env: &|name| (name == "DEV_DIR").then(|| "/mnt/ssd".to_string()),
    }
}

/// The jobs of a job file with `text`, written into a directory of its own (with `more`
/// files beside it, for includes).
fn jobs_of(text: &str, more: &[(&str, &str)]) -> Result<Vec<FioJob>> {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in more {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let path = dir.path().join("job.fio");
    std::fs::write(&path, text).unwrap();
    jobs(&IoOptions { fio_job: Some(path), ..IoOptions::default() }, &machine())
}

fn only(text: &str) -> IoOptions {
    let jobs = jobs_of(text, &[]).unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    jobs[0].options.clone()
}

fn refusal(text: &str) -> String {
    jobs_of(text, &[]).unwrap_err().to_string()
}

#[test]
fn a_job_silent_on_an_option_gets_fios_default_not_storbenchs() {
    let o = only("[job]\nsize=64m\n");
    assert_eq!(o.rw, Some(Rw::Read), "fio reads sequentially by default");
    assert_eq!(o.engine, Some(EngineKind::Psync), "fio's default engine is psync");
    assert!(o.buffered, "fio goes through the page cache unless direct=1");
    assert_eq!(o.ramp, Some(Seconds(Duration::ZERO)), "fio has no warm-up unless ramp_time");
    assert_eq!((o.io_size, o.runtime), (Some(ByteSize(64 << 20)), None), "it ends after its size");
    assert_eq!((o.workers, o.bs.as_ref(), o.iodepth), (Some(1), None, None));
}

#[test]
fn every_option_storbench_runs_maps_to_its_io_option() {
    let o = only(
        "[global]\nioengine=libaio\ndirect=1\ndirectory=/data\nfilename=f.dat\n\
         [job]\nreadwrite=randrw\nrwmixwrite=30\npercentage_random=90\nblocksize=8k\n\
         iodepth=32\nnumjobs=2\nsize=1g\nruntime=1m\ntime_based\nramp_time=5s\n\
         random_distribution=zipf:1.2\nfdatasync=4\nrandseed=7\nverify=crc32c\noffset=2m\n\
         randrepeat=1\nnorandommap\nthread\ngroup_reporting\nnew_group\ndescription=x\n",
    );
    assert_eq!(o.target, Some(PathBuf::from("/data/f.dat")));
    assert_eq!(
        (o.rw, o.rwmix_read, o.percentage_random),
        (Some(Rw::RandMixed), Some(Share::percent(70)), Some(Share::percent(90)))
    );
    assert_eq!(o.bs.map(|b| b.mix.entries().to_vec()), Some(vec![(8192, 1)]));
    assert_eq!((o.iodepth, o.workers, o.size), (Some(32), Some(2), Some(ByteSize(1 << 30))));
    assert_eq!(o.offset, Some(ByteSize(2 << 20)));
    assert_eq!(
        (o.runtime, o.io_size),
        (Some(Seconds(Duration::from_secs(60))), None),
        "time_based runs its runtime"
    );
    assert_eq!(o.ramp, Some(Seconds(Duration::from_secs(5))));
    assert_eq!((o.engine, o.buffered), (Some(EngineKind::IoUring), false));
    assert_eq!(o.random_distribution.as_deref(), Some("zipf:1.2"));
    assert_eq!((o.fdatasync, o.seed, o.verify), (Some(4.0), Some(7), true));
}

#[test]
fn a_jobs_per_copy_figures_become_totals_over_its_numjobs_workers() {
    let o = only("[job]\nrw=write\nnumjobs=4\nsize=1g\nio_size=256m\nruntime=30\nrate_iops=500\n");
    assert_eq!(o.io_size, Some(ByteSize(1 << 30)), "4 copies of 256 MiB");
    assert_eq!(o.runtime, Some(Seconds(Duration::from_secs(30))), "whichever ends first");
    assert_eq!(o.rate_iops, Some(2000.0));
    let o = only("[job]\nrw=read\nnumjobs=2\nsize=1m\nrate=10m\n");
    assert_eq!(o.rate_bw, Some(ByteSize(20 << 20)));
}

#[test]
fn sizes_and_times_read_as_fio_reads_them() {
    assert_eq!(fio_size("4k", 1024), Ok(4096));
    assert_eq!(fio_size("10G", 1024), Ok(10 << 30));
    assert_eq!(fio_size("256KiB", 1000), Ok(256 << 10), "KiB stays binary");
    assert_eq!(fio_size("4kb", 1000), Ok(4000));
    assert_eq!(fio_size("1.5m", 1024), Ok(3 << 19));
    assert!(fio_size("50%", 1024).unwrap_err().contains("percent"));
    assert!(fio_size("4x", 1024).unwrap_err().contains("unit"));
    assert_eq!(fio_time("900"), Ok(Duration::from_secs(900)));
    assert_eq!(fio_time("2m"), Ok(Duration::from_secs(120)), "m is minutes in a time");
    assert_eq!(fio_time("250ms"), Ok(Duration::from_millis(250)));
    assert!(fio_time("1y").unwrap_err().contains("unit"));
    let o = only("[job]\nkb_base=1000\nsize=1k\nbs=1k\n");
    assert_eq!((o.size, o.bs.map(|b| b.mix.max())), (Some(ByteSize(1000)), Some(1000)));
}

#[test]
fn a_bsrange_draws_each_step_as_often_as_fios_draw_lands_on_it() {
    let o = only("[job]\nsize=1m\nbsrange=4k-16k\n");
    let steps = vec![(4096, 4096), (8192, 4096), (12288, 4096), (16384, 4096)];
    assert_eq!(o.bs.unwrap().mix.entries(), steps.as_slice(), "uniform over the multiples of 4k");
    // 4k to 10k: the draw 4k + 10k*u over [4k, 14k) floors to 4k, 8k and 12k→10k (capped).
    let o = only("[job]\nsize=1m\nbsrange=4k-10k\n");
    assert_eq!(o.bs.unwrap().mix.entries(), [(4096, 4096), (8192, 4096), (10240, 2048)].as_slice());
}

#[test]
fn a_bssplit_keeps_its_percents_and_shares_the_rest_among_sizes_without_one() {
    let o = only("[job]\nsize=1m\nbssplit=512/10:4k/60:64k/30\n");
    assert_eq!(o.bs.unwrap().mix.entries(), [(512, 10), (4096, 60), (65536, 30)].as_slice());
    let o = only("[job]\nsize=1m\nbssplit=4k/50:8k/:16k/\n");
    assert_eq!(
        o.bs.unwrap().mix.entries(),
        [(4096, 100), (8192, 50), (16384, 50)].as_slice(),
        "50 % and 25 % each"
    );
    assert!(refusal("[job]\nsize=1m\nbssplit=4k/80:8k/40\n").contains("more than 100"));
    assert!(refusal("[job]\nsize=1m\nbssplit=4k/50:8k/50,64k\n").contains("reads and writes one value"));
}

#[test]
fn stonewalls_order_the_jobs_and_jobs_started_at_once_are_one_with_their_workers_together() {
    let text = "[global]\nsize=1m\nrw=randread\n[a]\nnumjobs=2\n[b]\n[c]\nstonewall\nrw=write\n";
    let jobs = jobs_of(text, &[]).unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a+b", "c"]);
    assert_eq!(jobs[0].options.workers, Some(3));
    assert_eq!(jobs[0].options.io_size, Some(ByteSize(3 << 20)), "each copy moves its size");
    assert_eq!((jobs[1].options.rw, jobs[1].at.line), (Some(Rw::Write), 7));
    let e = refusal("[global]\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n");
    assert!(
        e.contains(":5: job [b] runs at the same time as [a]") && e.contains("add `stonewall` to [b]"),
        "{e}"
    );
}

#[test]
fn a_global_section_applies_to_the_jobs_after_it_and_a_jobs_own_option_wins() {
    let jobs =
        jobs_of("[global]\nsize=1m\nbs=4k\n[a]\nbs=8k\n[global]\nbs=16k\n[b]\nstonewall\n", &[]).unwrap();
    let bs: Vec<u32> = jobs.iter().map(|j| j.options.bs.as_ref().unwrap().mix.max()).collect();
    assert_eq!(bs, [8192, 16384]);
}

#[test]
fn includes_are_read_in_place_beside_the_including_file_and_a_loop_is_refused() {
    let common = ("common.inc", "size=2m\niodepth=8\ninclude more.inc\n");
    let text = "[global]\ninclude common.inc\n[a]\nrw=write\n";
    let jobs = jobs_of(text, &[common, ("more.inc", "numjobs=2\n")]).unwrap();
    let o = &jobs[0].options;
    assert_eq!((o.iodepth, o.workers, o.io_size), (Some(8), Some(2), Some(ByteSize(4 << 20))));
    let e = jobs_of("[a]\nsize=1m\ninclude job.fio\n", &[]).unwrap_err().to_string();
    assert!(e.contains("no [section]"), "{e}");
    let e = jobs_of("[a]\nsize=1m\ninclude self.inc\n", &[("self.inc", "include self.inc\n")]);
    assert!(e.unwrap_err().to_string().contains("nest deeper than 16"));
    let e = jobs_of("include common.inc\n[a]\n", &[common]).unwrap_err().to_string();
    assert!(e.contains("job.fio:1: `include` comes before any section"), "{e}");
    let e = jobs_of("[a]\ninclude missing.fio\n", &[]).unwrap_err().to_string();
    assert!(e.contains("job.fio:2: in the included file") && e.contains("missing.fio"), "{e}");
}

#[test]
fn values_expand_the_machines_figures_and_the_environment() {
    let o = only("[job]\nnumjobs=$ncpus\nsize=1m\ndirectory=${DEV_DIR}\n");
    assert_eq!((o.workers, o.target), (Some(4), Some(PathBuf::from("/mnt/ssd"))));
    let o = only("[job]\nbs=$pagesize\nsize=$mb_memory\n");
    assert_eq!((o.bs.map(|b| b.mix.max()), o.size), (Some(4096), Some(ByteSize(8192))));
    assert!(
        refusal("[job]\nsize=1m\ndirectory=${NOPE}\n").contains(":3: ${NOPE} is not set in the environment")
    );
    assert!(refusal("[job]\nsize=$foo\n").contains("`$foo` is not a value storbench knows"));
}

#[test]
fn comments_are_dropped_wherever_they_start() {
    let o = only("; a comment\n# another\n[job] \nsize=1m ; the size\nnumjobs=4\t# four\n");
    assert_eq!((o.size, o.workers), (Some(ByteSize(1 << 20)), Some(4)));
}

#[test]
fn an_option_storbench_does_not_run_is_refused_by_name_at_its_line() {
    for (text, says) in [
        ("[job]\nsize=1m\nzonemode=strided\n", ":3: fio option `zonemode` is not one storbench runs"),
        ("[job]\nsize=1m\nrw=randtrim\n", "storbench does not trim"),
        ("[job]\nsize=1m\nrw=read:8\n", "drop the `:N`"),
        ("[job]\nsize=1m\nioengine=mmap\n", "ioengine=mmap: storbench runs io_uring"),
        ("[job]\nsize=1m\nrandom_distribution=pareto:0.9\n", "pareto, normal and zoned_abs"),
        ("[job]\nsize=1m\nfilename=a:b\n", "one file or device"),
        ("[job]\nsize=50%\n", "percent"),
        ("[job]\nsize=1m\nrandrepeat=0\n", "repeats every run's draws"),
        ("[job]\nsize=1m\nrw=randrw\nrate_iops=100\n", "caps reads and writes each"),
        ("[job]\nsize=1m\nrate=1m,2m\n", "reads and writes one value"),
        ("[job]\nsize=1m\nnumjobs=0\n", "a whole number from 1"),
        ("[job]\nsize=1m\ndirect=yes\n", "a flag is 0 or 1"),
        ("[job]\nsize=1m\nkb_base=512\n", "kb_base is 1024 or 1000"),
        ("[job]\ntime_based\n", "time_based needs a runtime"),
        ("[job]\nrw=read\n", "neither size, io_size nor time_based"),
        ("[global]\nsize=1m\n", "has no job, only [global]"),
        ("size=1m\n[job]\n", ":1: `size=1m` comes before any section"),
        ("[job\nsize=1m\n", ":1: `[job` is not a section header"),
        ("[job]\nsize=1m\nbs\n", ":3: bs needs a value"),
    ] {
        let e = refusal(text);
        assert!(e.contains(says), "{text:?}: {e}");
    }
}

#[test]
fn options_given_beside_the_file_apply_over_every_job_and_a_given_end_replaces_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.fio");
    std::fs::write(&path, "[global]\nsize=1g\ndirectory=/data\n[a]\n[b]\nstonewall\nrw=write\n").unwrap();
    let given = IoOptions {
        fio_job: Some(path),
        target: Some(PathBuf::from("/mnt/x")),
        runtime: Some(Seconds(Duration::from_secs(5))),
        ..IoOptions::default()
    };
    let jobs = jobs(&given, &machine()).unwrap();
    assert_eq!(jobs.len(), 2);
    for j in &jobs {
        let o = &j.options;
        assert_eq!((o.target.as_deref(), o.fio_job.as_ref()), (Some(std::path::Path::new("/mnt/x")), None));
        assert_eq!((o.runtime, o.io_size), (Some(Seconds(Duration::from_secs(5))), None), "{}", j.name);
        assert_eq!(o.size, Some(ByteSize(1 << 30)));
    }
    assert_eq!(jobs[1].options.rw, Some(Rw::Write));
}

#[test]
fn a_random_size_mix_under_fios_random_map_is_said_to_differ_and_not_with_norandommap() {
    let with_map = jobs_of("[job]\nsize=1m\nrw=randrw\nbssplit=4k/50:16k/50\n", &[]).unwrap();
    assert!(with_map[0].notes[0].contains("job.fio:1: fio's random map shrinks"), "{:?}", with_map[0].notes);
    let without = jobs_of("[job]\nsize=1m\nrw=randrw\nbssplit=4k/50:16k/50\nnorandommap\n", &[]).unwrap();
    assert!(without[0].notes.is_empty(), "{:?}", without[0].notes);
    let one_size = jobs_of("[job]\nsize=1m\nrw=randrw\nbs=4k\n", &[]).unwrap();
    assert!(one_size[0].notes.is_empty(), "one size is the same I/O either way");
}

#[test]
fn fsync_and_fdatasync_each_flush_after_their_writes_and_one_job_takes_one_of_them() {
    let o = only("[job]\nsize=1m\nrw=randwrite\nfsync=8\n");
    assert_eq!((o.fsync, o.fdatasync), (Some(8.0), None));
    let both = IoOptions { fsync: Some(1.0), fdatasync: Some(2.0), ..only("[job]\nsize=1m\nrw=write\n") };
    let e = crate::workload::io::validate::validate(&both, None).err().unwrap();
    assert!(e.contains("give one of them"), "{e}");
    let spec =
        |o: &IoOptions| crate::workload::io::validate::validate(o, None).ok().unwrap().jobs.remove(0).spec;
    let fsync = spec(&IoOptions { engine: Some(EngineKind::Null), ..o });
    assert_eq!((fsync.writes_per_flush, fsync.fsync), (Some(800), true));
}
