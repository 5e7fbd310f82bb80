//! The storage under test: a plan's `[[configuration]]` tables, what each costs and holds, and
//! what it gives every workload run on it (its place, its background streams).

use super::table::{PlanError, Source};
use serde::Deserialize;
use std::ops::Range;
use std::path::PathBuf;
use storbench_bench::target::Remedy;

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
    pub background: Vec<storbench_bench::background::Background>,
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

/// A directory or device as its device and inode, whatever the spelling; None where it cannot
/// be read.
pub fn place_id(p: &std::path::Path) -> Option<(u64, u64)> {
    storbench_bench::files::entry(p).ok().flatten().map(|e| (e.id.dev, e.id.ino))
}

/// Names become run ids and directory names: letters, digits, `-`, `_` and `.` only.
/// A price, where given, is a finite amount of at least 0.
pub(crate) fn check_price(src: &Source, price: Option<f64>, span: Range<usize>) -> Result<(), PlanError> {
    match price {
        Some(p) if !p.is_finite() || p < 0.0 => {
            let fix = Some(
                "give the price as an amount such as price = 12000, its currency as currency = \"USD\""
                    .into(),
            );
            Err(src.error(span, format!("price {p} is not an amount"), fix))
        }
        _ => Ok(()),
    }
}
