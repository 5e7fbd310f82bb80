//! Evaluation plans: the TOML file `storbench run` reads, parsed (`parse`), checked and
//! expanded into the list of runs (`expand`), and the commented example `storbench plan init`
//! writes (`init`).
//!
//! A plan has a `name`, a `[method]` table (the options below, also accepted on the command
//! line), `[[configuration]]` tables (the storage under test) and `[[workload]]` tables, each
//! with a `kind` of the registry's (`crate::registry::KINDS`) and that command's options under the same names as
//! its flags (snake_case), plus an optional `label`, `sweep` and search (`search`).

pub mod condition;
pub mod expand;
pub mod init;
pub mod parse;
pub mod quick;
pub mod requirements;
pub mod search;

use crate::registry::Options;
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;
use storbench_bench::target::Remedy;
use storbench_bench::units::Seconds;

/// The built-in quick evaluation `storbench run` performs without a plan: the six SQLIO
/// profiles, DVD Store on SQLite and the mailbox workload, each small and short, on the
/// current directory.
pub const QUICK_PLAN: &str = include_str!("quick.toml");

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

/// One storage configuration: where every workload's data goes. (Its keys are checked
/// before it is read: `parse::typed`.)
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Configuration {
    /// Name used in run ids and the report (letters, digits, - and _).
    pub name: String,
    /// Directory (or, with allow_device, a block device) holding the workloads' files: the io
    /// file storbench-io.dat, the SQLite database storbench-ds3.db and the mailbox databases
    /// under storbench-mailbox/.
    pub target: PathBuf,
    /// Directory for the mailbox workload's log files. Default: with the databases.
    #[serde(default)]
    pub log_target: Option<PathBuf>,
    /// Database server(s) for the oltp workload instead of SQLite on `target`, as oltp's
    /// --url (postgres://user@host/db, mysql://user@host/db); `target` should then be where
    /// the server keeps its data, for the disk counters and the disclosure. A password is
    /// better left to PGPASSWORD or MYSQL_PWD: the evaluation's copy of the plan has it hidden,
    /// so `run --resume` then needs the plan given again.
    #[serde(default)]
    pub url: Vec<String>,
    /// Let io use a block device as target (it is overwritten).
    #[serde(default)]
    pub allow_device: bool,
    /// Let io overwrite what may hold data: an io file storbench did not create, or a device
    /// with partitions, a partition table or a filesystem signature.
    #[serde(default)]
    pub force: bool,
    /// Free text for the report (disks, RAID level, controller).
    #[serde(default)]
    pub description: Option<String>,
    /// Streams to run beside every workload of this configuration, each as --background
    /// takes it: `background = ["rebuild:rate=40MiB"]` measures under an emulated rebuild's
    /// copy on the same storage (002's "Vol Rebuild"), beside a configuration on the same
    /// target without it ("Normal"); `"rebuild:dest=/other"` copies onto other storage ("Ctlr
    /// Rebuild"); `"cmd:btrfs replace start -B 2 /dev/sdc /mnt"` runs a real one; `"io:..."` is
    /// a plain sequential stream.
    #[serde(default)]
    pub background: Vec<crate::background::Background>,
    /// Its own power meter, as --power takes one (`file:/run/enclosure-watts`, `ipmi`, named
    /// meters, `none`): its runs' watts come from it instead of [method]'s power, so a meter on
    /// one enclosure is never added to another configuration's watts.
    #[serde(default)]
    pub power: Option<String>,
    /// The state its storage is measured in, a short label: "rebuild", "vol-rebuild",
    /// "ctlr-rebuild". The report puts one storage's conditions side by side ("Normal and
    /// degraded", with "% of best"). Default: "normal" without background streams, else the
    /// streams as given, joined by " + " ("io:rate=40MiB").
    #[serde(default)]
    pub condition: Option<String>,
    /// The storage it measures, as the report's "Normal and degraded" rows name it. Default:
    /// the storage of the first configuration before it on the same target (the same directory
    /// or device, however spelled), else its own name.
    #[serde(default)]
    pub storage: Option<String>,
    /// What it costs and holds, for the decision.
    #[serde(flatten)]
    pub facts: Facts,
    /// Its `set` table as the report shows it: one `<workload>: key = value, ...` each.
    #[serde(skip)]
    pub own_values: Vec<String>,
}

/// A configuration's facts for the decision: what it costs and holds. A plan's
/// `[[configuration]]` and a requirements file's (`storbench decide --requirements`) take them.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Facts {
    /// What it costs, for the decision's cost per unit of work ($ per 1,000 OPM, per TB) and
    /// its choice of the cheapest configuration that meets every requirement.
    #[serde(default)]
    pub price: Option<f64>,
    /// The price's currency, as the report shows it ("USD", "EUR").
    #[serde(default)]
    pub currency: Option<String>,
    /// Its usable capacity (binary units: 2T is 2 TiB). Default: the size of the device under
    /// its target.
    #[serde(default)]
    pub capacity: Option<storbench_bench::units::ByteSize>,
    /// How many drives it is made of, for the report.
    #[serde(default)]
    pub devices: Option<u32>,
}

impl Facts {
    /// These facts into an evaluation's configuration, over what it had.
    pub fn write_into(&self, c: &mut storbench_report::evaluation::Configuration) {
        c.price = self.price.or(c.price);
        c.currency = self.currency.clone().or(c.currency.take());
        c.capacity_bytes = self.capacity.map(|b| b.0).or(c.capacity_bytes);
        c.devices = self.devices.or(c.devices);
    }
}

/// The keys of [`Facts`].
pub const FACT_KEYS: [&str; 4] = ["price", "currency", "capacity", "devices"];

/// A target refusal's remedy as the plan key to set, for a plan's user: the key where the
/// plan says it (the configuration's place, the workload's size and I/O path).
pub fn key_for(remedy: Remedy) -> String {
    match remedy {
        Remedy::Force => "set force = true in the [[configuration]]",
        Remedy::AllowDevice => "set allow_device = true in the [[configuration]]",
        Remedy::SmallerSize => "set a smaller size in the [[workload]]",
        Remedy::Buffered => "set buffered = true in the [[workload]]",
    }
    .to_string()
}

/// A message of a workload's own checks in a plan's terms: each `--flag` that is a plan key
/// becomes the key (`--bs 1000` reads `bs 1000`), since a plan's user set a key, not a flag.
/// Commands quoted in back-quotes stay as they are: they are to be run as written.
pub fn in_plan_terms(text: &str) -> String {
    static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        let mut k: Vec<String> =
            crate::registry::KINDS.iter().flat_map(|kind| parse::keys_in(&(kind.command)(), &[])).collect();
        k.extend(["log_target", "url"].map(String::from));
        k.extend(search::keys());
        k
    });
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
            continue;
        }
        let mut rest = part;
        while let Some(at) = rest.find("--") {
            let name_len = rest[at + 2..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(rest.len() - at - 2);
            let key = rest[at + 2..at + 2 + name_len].replace('-', "_");
            out.push_str(&rest[..at]);
            if keys.contains(&key) {
                out.push_str(&key);
            } else {
                out.push_str(&rest[at..at + 2 + name_len]);
            }
            rest = &rest[at + 2 + name_len..];
        }
        out.push_str(rest);
    }
    out
}

/// A point of a workload: the swept key and its value (none without a sweep), and the
/// workload's options there.
pub type Point = (Option<(String, serde_json::Value)>, Box<dyn Options>);

/// One `[[workload]]`: its options, and the values of one option to sweep over.
#[derive(Debug, Clone)]
pub struct Workload {
    pub label: String,
    pub args: Box<dyn Options>,
    /// Each point's options (the sweep's key set to one of its values), in order; a workload
    /// without a sweep has one point.
    pub points: Vec<Point>,
    /// Per configuration (in the plan's order), its own options for each point where its
    /// `set` table gives this workload values of its own (003 and 004 run 17 threads on the
    /// SSDs and 73 on the HDDs).
    pub by_configuration: Vec<Option<Vec<Box<dyn Options>>>>,
    /// Its search (`search`, `latency_limit`): each run is a search for the highest load
    /// that holds the limits, the confirmed run its figures.
    pub search: Option<crate::search::SearchArgs>,
}

impl<O, C: Clone> crate::args::Job<O, C> {
    /// The same job with `options`, its output where configuration `c` puts it.
    pub fn on(&self, c: &Configuration, options: O) -> crate::args::Job<O, C> {
        crate::args::Job { options, cli: self.cli.clone(), out: c.output(&self.out) }
    }
}

impl Configuration {
    /// Its condition (after parsing, the default filled in).
    pub fn condition(&self) -> &str {
        self.condition.as_deref().unwrap_or(storbench_report::evaluation::NORMAL)
    }

    /// The storage it measures (after parsing, the default filled in).
    pub fn storage(&self) -> &str {
        self.storage.as_deref().unwrap_or(&self.name)
    }

    /// A run's output options with this configuration's background streams.
    pub fn output(&self, out: &crate::args::OutputArgs) -> crate::args::OutputArgs {
        crate::args::OutputArgs { background: self.background.clone(), ..out.clone() }
    }
}

/// A parsed, checked plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub method: Method,
    pub configurations: Vec<Configuration>,
    pub workloads: Vec<Workload>,
    /// The `[requirements]` table, checked against the workloads.
    pub requirements: Vec<storbench_report::decision::requirement::Requirement>,
}

impl Plan {
    /// The configurations with a meter of their own: `(name, power)` each.
    pub fn own_meters(&self) -> Vec<(&str, &str)> {
        self.configurations.iter().filter_map(|c| Some((c.name.as_str(), c.power.as_deref()?))).collect()
    }
}

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
