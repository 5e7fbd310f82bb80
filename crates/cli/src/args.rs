//! The flags several commands share (where output goes, steady state, the engine, `--metrics-
//! listen`), a workload's job as a plan and its flags give it ([`Job`]), and the options of the
//! commands in `args/`; a workload's own flags are in its folder (`subcommand/<kind>/args.rs`)
//! where it has moved them there. Each option is defined once: its doc comment is the `--help`
//! text, its field name the plan-file key (snake_case) and the flag (kebab-case). Nothing here
//! has side effects; `subcommand::*` validates these plain values into the library's typed jobs.

pub mod integrity;
pub mod mailbox;
pub mod oltp;
pub mod report;
pub mod trace;

use clap::{Args, ValueEnum};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;
use storbench_bench::units::Seconds;

/// `--steady-state` of the workloads besides io that have a headline figure per round (oltp,
/// the mailbox, replay); io's has its own words (IOPS, --runtime, --io-size) and the same
/// checks (`Rule::checked_round`, the library's).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct SteadyArgs {
    /// Run until the SNIA PTS steady state holds, in rounds of this length (60s; a whole number
    /// of seconds): after each round, the last 5 rounds' headline figure (oltp: OPM; mailbox:
    /// transactional IOPS; replay: calls/s) must lie within 20 % of their mean (max − min) and
    /// their least-squares line must move by at most 10 % of the mean across them. The run
    /// then ends and the results (figures, histograms, CPU, power, a mailbox's thresholds)
    /// cover only those 5 rounds. The measured phase's length (oltp --run-time, mailbox
    /// --duration) is the cap (default: 25 rounds; a replay's log is its own); a run that
    /// reaches it reports its last 5 rounds and warns that steady state was not reached.
    #[arg(long, value_name = "ROUND")]
    pub steady_state: Option<Seconds>,
}

impl SteadyArgs {
    /// Under steady state without a given length, how long a run is expected to take:
    /// steady state usually comes within a few rounds of the first five; count eight.
    pub fn expected(&self, given: Option<Duration>) -> Option<Duration> {
        match (self.steady_state, given) {
            (Some(round), None) => Some(round.0 * 8),
            _ => None,
        }
    }
}

/// A workload as the command line and a plan run it: the library's options `O` (a plan's
/// workload table deserializes into them; the flags convert into them), what only the
/// command line gives (`C`: integrity's crash cycles, oltp's extra output files; a plan's is
/// the default) and where its output goes (a plan's is the evaluation's).
#[derive(Debug, Clone, Default)]
pub struct Job<O, C = ()> {
    pub options: O,
    pub cli: C,
    pub out: OutputArgs,
}

impl<'de, O: Deserialize<'de>, C: Default> Deserialize<'de> for Job<O, C> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Job { options: O::deserialize(d)?, cli: C::default(), out: OutputArgs::default() })
    }
}

/// Where a run's bundle goes and what stdout carries; shared by every measuring command.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Name of the run, used in the bundle directory. Default: derived from the job.
    #[arg(long, value_name = "NAME", value_parser = storbench_bench::units::plain_text)]
    pub name: Option<String>,

    /// Where result bundles go: one directory per run, <time>-<name>. Default:
    /// ./storbench-results.
    #[arg(long, value_name = "DIR", value_parser = storbench_bench::units::place)]
    pub output_dir: Option<PathBuf>,

    /// Print summary.json to stdout instead of the table (io with --profile:
    /// {"profiles": [summary, ...]}; oltp: DS3's lines then go to stderr). Progress and
    /// messages go to stderr.
    #[arg(long)]
    pub json: bool,

    /// Power meter for the power_watts column, sampled every second: auto (RAPL or IPMI where
    /// the machine has one; the default), none, rapl, ipmi, file:PATH (a file holding watts),
    /// cmd:COMMAND (prints watts within 5 s; run in a process group of its own, ended with
    /// the run), redfish:URL (http or https; credentials in the URL, https://user:pw@bmc/...,
    /// or better from STORBENCH_REDFISH_USER and STORBENCH_REDFISH_PASSWORD, which no process
    /// listing shows; a BMC's own CA or certificate as a PEM file in STORBENCH_REDFISH_CA, or
    /// STORBENCH_REDFISH_INSECURE=1 to accept any) or ptdaemon:HOST:PORT (a SPEC PTDaemon; no
    /// credentials). Several named meters, summed, each less an optional baseline: 'server=ipmi;
    /// enclosure=file:/run/w; enclosure.baseline=108.2' (a power.<name>.watts column each). A
    /// meter silent for 10 s is a warning in the summary; passwords are never printed or
    /// written.
    #[arg(long, value_name = "SOURCE")]
    pub power: Option<String>,

    /// A stream to run beside the workload, from its start to its end, with its figures in
    /// summary.json's background (an entry per stream: name bg1, bg2, ..., kind, spec). Give
    /// it again for more streams. Kinds:
    ///
    /// io[:KEY=VALUE,...], a sequential stream of storbench's, with its own columns in the
    /// time series (bg1.write_bytes_per_sec). Keys: rw=write (or read), bs=1M,
    /// rate=BYTES_PER_S (e.g. 10MiB; unthrottled without), size=256MiB (its file
    /// storbench-bg1.dat, made and filled once, then reused), dir=PATH (default: beside the
    /// run's target; the null engine for a run without one), iodepth=1, direct=yes.
    ///
    /// rebuild[:KEY=VALUE,...], an emulated mirror rebuild: it reads the source in order and
    /// writes the same bytes at the same offset of the destination, wrapping around, with io's
    /// columns (bg1.read_bytes_per_sec, bg1.write_bytes_per_sec); bytes_per_sec in the summary
    /// is what it copied. Keys: source=PATH (default: storbench-bg1-source.dat beside the
    /// target, filled with incompressible data: the measured volume rebuilds itself; a
    /// directory elsewhere puts it there, another device's being a controller's rebuild; or any
    /// readable file or block device, only read, at least size bytes), dest=PATH (default:
    /// storbench-bg1-dest.dat beside the target; a directory puts it there; a file must be one
    /// storbench made), rate=BYTES_PER_S (unthrottled without), bs=1M, size=256MiB (bytes
    /// copied before it wraps), iodepth=4 (blocks in flight), direct=yes. A destination
    /// holding data storbench did not make, or a source smaller than size, is refused before
    /// the run.
    ///
    /// cmd:COMMAND, your command (e.g. cmd:btrfs replace start -B 2 /dev/loop2 /mnt), run by sh
    /// -c from the measured phase's start in a session of its own, its output in the bundle's
    /// output.log; when the run ends it is stopped (SIGTERM, then 5 s later killed with all it
    /// started) unless --background-wait. Its entry: command, exit_code (null when storbench
    /// stopped it), seconds, stopped; a command that fails is a warning. A program that is not
    /// there or not executable is refused before the run.
    #[arg(long, value_name = "SPEC")]
    pub background: Vec<storbench_bench::background::Background>,

    /// Record the run's block requests, from the measured phase's start to its end, into
    /// bg<N>.sbtrace in its bundle: the kernel's block tracepoints (root and tracefs), only the
    /// requests' time, place, size and kind, never data. Its entry in summary.json's background
    /// has the trace's fingerprint (read and write mix, sizes, sequential share, hot set, rate,
    /// queue depth, latency per kind) and the capture's own CPU per request; the report shows
    /// them. The device is the disk under the run's target (--capture, or --capture=auto), or DEV
    /// (--capture=/dev/sdb). The
    /// same as --background capture[:device=DEV]; `storbench replay-trace` replays the trace
    /// on other storage.
    #[arg(long, value_name = "DEV", num_args = 0..=1, require_equals = true, default_missing_value = "auto")]
    pub capture: Option<PathBuf>,

    /// With a cmd: background stream: the run's end waits until the command exits (at most 24
    /// hours; Ctrl-C ends it), so that its exit_code and seconds are the whole rebuild's, e.g.
    /// how long a btrfs replace took under the workload. Without it the command is stopped
    /// when the measured phase ends.
    #[arg(long, requires = "background")]
    pub background_wait: bool,

    /// Run as shard I of N started together on many load hosts (1 <= I <= N): `{shard}` in
    /// any argument (a target, a URL, --name) becomes I, and the summary records the shard,
    /// its host and its clock for `storbench merge`. `env` reads Slurm's SLURM_PROCID and
    /// SLURM_NTASKS or MPI's OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE; `env/N` a
    /// Kubernetes Indexed Job's JOB_COMPLETION_INDEX, with N its completions.
    #[arg(long, value_name = "I/N", value_parser = crate::shard::parse_shard)]
    pub shard: Option<crate::shard::ShardArg>,

    /// Start the run at this instant, after its setup (a file's fill, a database's load): RFC
    /// 3339 (2026-11-26T18:00:00Z) or Unix seconds (date -d '+60 sec' +%s), at most a day
    /// ahead. Shards given the same time start together; one whose setup ends later says so and
    /// is marked late.
    #[arg(long, value_name = "TIME", value_parser = crate::shard::parse_start_at)]
    pub start_at: Option<jiff::Timestamp>,

    #[command(flatten)]
    pub metrics: MetricsArgs,
}

impl OutputArgs {
    /// The streams to run beside the workload: every --background, then --capture's.
    pub fn streams(&self) -> Vec<storbench_bench::background::Background> {
        let mut streams = self.background.clone();
        streams
            .extend(self.capture.as_ref().map(|dev| storbench_bench::background::Background::capture(dev)));
        streams
    }
}

/// `--metrics-listen`, of every measuring command and of `run`.
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve live figures for Prometheus at http://ADDR/metrics while the command runs: the
    /// latest second's row of timeseries.csv (every column, in base units: read_lat_p99_us as
    /// storbench_read_lat_p99_seconds), counters of the run so far (storbench_ios_total,
    /// storbench_errors_total, orders, calls), the phase (storbench_phase{phase="measure"}),
    /// each series labelled run, workload, configuration (in an evaluation) and shard.
    /// OpenMetrics to a scraper that asks for it (Prometheus does), else the Prometheus text
    /// format (curl, promtool). ADDR: HOST:PORT, or :PORT for every interface (:9464). An
    /// address in use or not this host's is refused before anything runs.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
}

#[cfg(test)]
mod steady_tests {
    use super::*;
    use crate::args::mailbox::MailboxJob;
    use crate::args::oltp::OltpJob;
    use crate::plan::configuration::Configuration;
    use crate::plan::method::Method;
    use crate::registry::kind::Options;
    use crate::subcommand::io::args::{IoJob, IoOptions};
    use storbench_bench::units::Minutes;

    /// An evaluation's `window = "steady_state"` reaches every workload that has rounds: its
    /// expected length is then eight rounds (here of 1 s), not its fixed measured phase.
    #[test]
    fn an_evaluations_steady_state_window_reaches_every_workload_with_rounds() {
        let secs = |s| Seconds(Duration::from_secs(s));
        let steady =
            Method { window: Some("steady_state".into()), round: Some(secs(1)), ..Method::default() };
        let (c, fixed, eight) = (Configuration::default(), Method::default(), Duration::from_secs(8));
        let io =
            IoJob { options: IoOptions { ramp: Some(secs(0)), ..IoOptions::default() }, ..IoJob::default() };
        assert_eq!(io.for_configuration(&c, &steady).expected(), eight);
        use storbench_bench::workload::oltp::options::OltpOptions;
        let oltp = OltpOptions { warmup_time: Some(Minutes(Duration::ZERO)), ..OltpOptions::default() };
        let oltp = OltpJob { options: oltp, ..OltpJob::default() };
        assert_eq!(oltp.for_configuration(&c, &steady).expected(), eight);
        assert_eq!(oltp.for_configuration(&c, &fixed).expected(), OltpOptions::RUN_TIME);
        use storbench_bench::workload::mailbox::{MailboxOptions, TestType};
        let job = |options| MailboxJob { options, cli: (), out: OutputArgs::default() };
        let mailbox = MailboxOptions { max_warmup: Some(secs(0)), ..MailboxOptions::default() };
        assert_eq!(job(mailbox.clone()).for_configuration(&c, &steady).expected(), eight);
        let backup = MailboxOptions { test: Some(TestType::Backup), ..mailbox };
        assert_eq!(
            job(backup).for_configuration(&c, &steady).expected(),
            MailboxOptions::DURATION,
            "no rounds"
        );
        // A plan's workload takes the key as the command line takes the flag.
        let planned: OltpJob = toml::from_str("steady_state = \"2s\"\nrun_time = 1").unwrap();
        assert_eq!(
            (planned.options.steady_state, planned.options.run_time),
            (Some(secs(2)), Some(Minutes(Duration::from_secs(60))))
        );
        assert!(toml::from_str::<OltpJob>("steady = \"2s\"").is_err(), "unknown keys are still refused");
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineArg {
    #[value(name = "io_uring", alias = "io-uring", alias = "uring")]
    IoUring,
    Psync,
    Null,
}

impl From<EngineArg> for storbench_bench::engine::EngineKind {
    fn from(e: EngineArg) -> Self {
        use storbench_bench::engine::EngineKind;
        match e {
            EngineArg::IoUring => EngineKind::IoUring,
            EngineArg::Psync => EngineKind::Psync,
            EngineArg::Null => EngineKind::Null,
        }
    }
}
