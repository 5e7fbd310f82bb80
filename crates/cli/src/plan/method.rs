//! How an evaluation is run: a plan's `[method]` table, each key also a `storbench run` option.

use clap::Args;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use storbench_bench::units::Seconds;

/// How the evaluation is run: the `[method]` table of a plan; each key is also a
/// `storbench run` option, which wins over the plan.
#[derive(Args, Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Method {
    /// Runs of every workload on every configuration; the median run by the headline figure
    /// (IOPS, OPM, transactional IOPS) is reported, with its own power figures. Default: 3.
    #[arg(long, value_name = "N")]
    pub repetitions: Option<u32>,

    /// Measured phase of every workload that does not set its own (io runtime, oltp
    /// run_time, mailbox duration), e.g. 1200s. Default: each workload's own default.
    #[arg(long, value_name = "DURATION")]
    pub measure: Option<Seconds>,

    /// Warm-up of every workload that does not set its own (io ramp, oltp warmup_time,
    /// mailbox max_warmup); its figures are logged but excluded. Default: each workload's.
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<Seconds>,

    /// How long each workload's measured phase is: fixed (its own length), or steady_state:
    /// rounds of --round until the SNIA PTS rule holds on its headline figure (io IOPS, oltp
    /// OPM, mailbox transactional IOPS, fire-hose replay calls/s; 5 rounds within 20 % of their
    /// mean, fitted slope within 10 %), at most --measure or 25 rounds; the last 5 rounds are
    /// reported. Integrity, a mailbox backup, soft recovery or --tune, a time-sync replay and
    /// the steps of a search keep their fixed window. Default: fixed.
    #[arg(long, value_name = "fixed|steady_state")]
    pub window: Option<String>,

    /// Round length for window = steady_state. Default: 60s.
    #[arg(long, value_name = "DURATION")]
    pub round: Option<Seconds>,

    /// Before each run: flush dirty pages and wait up to this long for the target's device to
    /// be idle (under 10 % busy for 2 s). Default: 30s.
    #[arg(long, value_name = "DURATION")]
    pub idle_settle: Option<Seconds>,

    /// After settling, average the power reading over this long before each run: the run's
    /// idle power. Skipped without a power source. Default: 2m.
    #[arg(long, value_name = "DURATION")]
    pub idle_power: Option<Seconds>,

    /// Before a configuration's first io run, write its io file (or device) sequentially
    /// with 128 KiB blocks this many times over (SNIA-style preconditioning). Default: 0.
    #[arg(long, value_name = "PASSES")]
    pub precondition: Option<u32>,

    /// Power meter sampled every second, as the measuring commands' --power: auto, none, rapl,
    /// ipmi, file:PATH, cmd:COMMAND, redfish:URL (http or https; credentials in the URL or
    /// the environment, trust from the environment, see `storbench io --help`) or
    /// ptdaemon:HOST:PORT. Default: auto.
    #[arg(long, value_name = "SOURCE")]
    pub power: Option<String>,

    /// Seed of every workload that does not set its own. Default: 1.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

impl Method {
    /// The defaults of the durations above, each defined once: the help text, `plan init`'s
    /// example, the runner, the ETA and evaluation.json all take them from here.
    pub const IDLE_SETTLE: Duration = Duration::from_secs(30);
    pub const IDLE_POWER: Duration = Duration::from_secs(120);
    pub const ROUND: Duration = Duration::from_secs(60);

    /// How long to wait for the device to be idle before each run.
    pub fn idle_settle_or_default(&self) -> Duration {
        self.idle_settle.map_or(Self::IDLE_SETTLE, |s| s.0)
    }

    /// How long idle power is averaged before each run.
    pub fn idle_power_or_default(&self) -> Duration {
        self.idle_power.map_or(Self::IDLE_POWER, |s| s.0)
    }

    /// A steady-state round's length.
    pub fn round_or_default(&self) -> Duration {
        self.round.map_or(Self::ROUND, |s| s.0)
    }

    /// A workload's steady-state round: its own (`given`), else this method's where its
    /// window is `steady_state`.
    pub fn steady_state(&self, given: Option<Seconds>) -> Option<Seconds> {
        let steady = self.window.as_deref() == Some("steady_state");
        given.or(steady.then(|| Seconds(self.round_or_default())))
    }

    /// `self` with every option `over` sets taken from `over`.
    pub fn overridden_by(self, over: &Method) -> Method {
        Method {
            repetitions: over.repetitions.or(self.repetitions),
            measure: over.measure.or(self.measure),
            warmup: over.warmup.or(self.warmup),
            window: over.window.clone().or(self.window),
            round: over.round.or(self.round),
            idle_settle: over.idle_settle.or(self.idle_settle),
            idle_power: over.idle_power.or(self.idle_power),
            precondition: over.precondition.or(self.precondition),
            power: over.power.clone().or(self.power),
            seed: over.seed.or(self.seed),
        }
    }
}
